"""Sending OTLP batches with the OpenTelemetry SDK's OTLP/HTTP exporter.

The batches :func:`a2a_lab.otel.otlp_lines` encodes are read back into the SDK's
``ReadableSpan`` objects (through :func:`a2a_lab.otel._import.spans_of`, the reader
:func:`a2a_lab.load_otlp` uses) and handed to ``OTLPSpanExporter``: the receiver gets the
SDK's own protobuf encoding, and the file and the receiver see the same spans.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from a2a_lab._version import __version__
from a2a_lab.otel._batch import SCHEMA_URL, SCOPE_NAME, Batch, OtlpExportError
from a2a_lab.otel._import import SpanView, spans_of

__all__ = ["readable_spans", "send_lines"]

_KINDS = {
    1: SpanKind.INTERNAL,
    2: SpanKind.SERVER,
    3: SpanKind.CLIENT,
    4: SpanKind.PRODUCER,
    5: SpanKind.CONSUMER,
}
_SCOPE = InstrumentationScope(SCOPE_NAME, __version__, SCHEMA_URL)


def _context(trace_id: bytes, span_id: bytes) -> SpanContext:
    return SpanContext(
        int.from_bytes(trace_id, "big"),
        int.from_bytes(span_id, "big"),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )


def readable_spans(line: str) -> list[ReadableSpan]:
    """The spans of one OTLP/JSON request line as the SDK's ``ReadableSpan`` objects."""
    resources: dict[tuple[tuple[str, Any], ...], Resource] = {}
    out = []
    view: SpanView
    for view in spans_of(line):
        key = tuple(sorted(view.resource.items()))
        resource = resources.get(key)
        if resource is None:
            resource = resources[key] = Resource(view.resource, SCHEMA_URL)
        status = (
            Status(StatusCode.ERROR, view.status_message or None)
            if view.status_code == 2
            else Status(StatusCode.UNSET)
        )
        out.append(
            ReadableSpan(
                name=view.name,
                context=_context(view.trace_id, view.span_id),
                parent=_context(view.trace_id, view.parent_span_id)
                if view.parent_span_id
                else None,
                resource=resource,
                attributes=view.attributes,
                events=[Event(name, attrs, ts) for name, ts, attrs in view.events],
                links=[Link(_context(t, s), attrs) for t, s, attrs in view.links],
                kind=_KINDS[view.kind],
                status=status,
                start_time=view.start_ns,
                end_time=view.end_ns,
                instrumentation_scope=_SCOPE,
            )
        )
    return out


def send_lines(
    lines: Iterable[Batch], endpoint: str, *, timeout_s: float = 30.0
) -> Iterator[Batch]:
    """Send each batch to ``endpoint`` (OTLP/HTTP protobuf); yield it once accepted.

    The exporter retries transient failures (with backoff, up to ``timeout_s``) and logs
    each; those log records are kept and the last one ends the error message instead of
    reaching stderr as several lines.

    Raises
    ------
    OtlpExportError
        The exporter reports a failure (refused, unreachable, timed out): the batch number,
        the endpoint and the exporter's last word, in one line.
    """
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s)
    said: list[str] = []
    handler = _Keep(said)
    logger = logging.getLogger("opentelemetry.exporter.otlp.proto.http")
    old = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for n, batch in enumerate(lines, start=1):
            result = exporter.export(readable_spans(batch.line))
            if result is not SpanExportResult.SUCCESS:
                # the exporter's closing "failed ... due to timeout" says less than the
                # reason it last retried for
                reasons = [m for m in said if "due to timeout, max retries" not in m] or said
                last = reasons[-1] if reasons else "no answer"
                raise OtlpExportError(
                    f"the OTLP receiver at {endpoint} did not accept batch {n} "
                    f"({batch.spans} spans): {_one_line(last)}"
                )
            yield batch
    finally:
        logger.removeHandler(handler)
        logger.propagate = old
        exporter.shutdown()  # type: ignore[no-untyped-call]


class _Keep(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self._sink.append(record.getMessage())


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    # the exporter's messages repeat urllib3's nesting; the innermost reason is what helps
    for marker in ("Failed to establish a new connection: ", "Caused by "):
        if marker in text:
            text = text.split(marker, 1)[1].split('")', 1)[0].strip()
            break
    return text[:300]
