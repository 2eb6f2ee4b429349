"""``to_otlp``: the exchanges of a log as OTLP traces, to a file or an OTLP/HTTP receiver."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl
from tqdm.auto import tqdm

from a2a_lab.analysis.logs import (
    bucket_frames,
    chunked_exchange_events,
    spill_dir,
    spill_exchanges,
)
from a2a_lab.io import resolve_source
from a2a_lab.otel._batch import (
    DEFAULT_PROJECT,
    SCHEMA_URL,
    SCOPE_NAME,
    SEMCONV_VERSION,
    Batch,
    OtlpExportError,
)
from a2a_lab.otel._json import attr, attributes, jstr
from a2a_lab.otel._spans import ms_to_ns, span_events, span_events_of, span_rows
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules
from a2a_lab.time import check_tz

__all__ = [
    "DEFAULT_PROJECT",
    "SCHEMA_URL",
    "SCOPE_NAME",
    "SEMCONV_VERSION",
    "OtlpExportError",
    "OtlpExportResult",
    "log_otlp_lines",
    "otlp_lines",
    "to_otlp",
    "write_otlp",
]

#: Exchanges per ``ExportTraceServiceRequest`` (one line of the file, one HTTP request).
BATCH_EXCHANGES: Final = 2_000

_DATA_PREFIX: Final = "a2a.data."
#: ``SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`` with is-remote false, as the SDK sets it on
#: every span and link it makes (a span of the log is never remote)
_FLAGS: Final = 0x100


@dataclass(frozen=True)
class OtlpExportResult:
    """What :func:`to_otlp` wrote or sent.

    Attributes
    ----------
    exchanges
        Exchanges exported (one trace and one root span each).
    spans
        Spans exported.
    span_events
        Span events (one per exchange event of the log).
    requests
        ``ExportTraceServiceRequest`` batches (file lines or HTTP requests).
    target
        The file written or the endpoint sent to.
    """

    exchanges: int
    spans: int
    span_events: int
    requests: int
    target: str


def to_otlp(
    source: str | os.PathLike[str] | pl.DataFrame | pl.LazyFrame,
    *,
    output: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    project: str = DEFAULT_PROJECT,
    batch_exchanges: int = BATCH_EXCHANGES,
    progress: bool = True,
    intent_rules: IntentRules = INTENT_RULES_V1,
    timeout_s: float = 30.0,
) -> OtlpExportResult:
    """Export every A2A exchange as an OpenTelemetry GenAI ``invoke_agent`` trace.

    One exchange is one trace: the requester's ``invoke_agent`` CLIENT span over the whole
    exchange (the root), the target's run (SERVER) as its child, each ping-pong turn and the
    announce step as children; every event of the log is a span event with its file and
    line. See docs/otel.md for every attribute, the ids and the semantic-conventions version
    (:data:`SEMCONV_VERSION`).

    Parameters
    ----------
    source
        A log file or directory (read by :func:`a2a_lab.load`) or an event frame.
    output
        Write OTLP/JSON here: one ``ExportTraceServiceRequest`` per line (the OpenTelemetry
        Collector file exporter's format; :func:`a2a_lab.load_otlp` reads it back).
    endpoint
        Or send to this OTLP/HTTP traces endpoint (e.g. ``http://127.0.0.1:6006/v1/traces``)
        with the OpenTelemetry SDK's exporter (protobuf over HTTP).
    project
        ``openinference.project.name`` of the resources (the Phoenix project).
    batch_exchanges
        Exchanges per request; progress (tqdm, on stderr) counts them.
    progress
        Show the progress bar.
    intent_rules
        As for :func:`a2a_lab.conversations`.
    timeout_s
        HTTP timeout per request.

    Returns
    -------
    OtlpExportResult

    Raises
    ------
    ValueError
        Neither or both of ``output`` and ``endpoint``; a batch size below 1.
    OtlpExportError
        The receiver refused a batch or could not be reached.
    """
    if (output is None) == (endpoint is None):
        raise ValueError("to_otlp: give exactly one of output= (a file) or endpoint= (a URL)")
    if batch_exchanges < 1:
        raise ValueError("to_otlp: batch_exchanges must be at least 1")
    if isinstance(source, (pl.DataFrame, pl.LazyFrame)) or _is_store(source):
        lines = otlp_lines(
            _events_of(source),
            project=project,
            batch_exchanges=batch_exchanges,
            intent_rules=intent_rules,
        )
    else:
        # a log: read once, a bucket of whole conversations at a time (bounded memory)
        lines = log_otlp_lines(
            source, project=project, batch_exchanges=batch_exchanges, intent_rules=intent_rules
        )
    return write_otlp(
        lines, output=output, endpoint=endpoint, progress=progress, timeout_s=timeout_s
    )


def write_otlp(
    lines: Iterator[Batch],
    *,
    output: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    progress: bool = True,
    timeout_s: float = 30.0,
) -> OtlpExportResult:
    """Write the requests ``lines`` to the file ``output`` or send them to ``endpoint`` (one
    of them), as :func:`to_otlp` does."""
    exchanges = spans = n_events = requests = 0
    if output is not None:
        target = str(output)
        with open(output, "wb") as fh, _bar(progress) as bar:
            for batch in lines:
                batch.write(fh)
                exchanges, spans, n_events, requests = _add(
                    (exchanges, spans, n_events, requests), batch
                )
                bar.update(batch.exchanges)
    else:
        assert endpoint is not None
        target = endpoint
        from a2a_lab.otel._sdk import send_lines

        with _bar(progress) as bar:
            for batch in send_lines(lines, endpoint, timeout_s=timeout_s):
                exchanges, spans, n_events, requests = _add(
                    (exchanges, spans, n_events, requests), batch
                )
                bar.update(batch.exchanges)
    return OtlpExportResult(exchanges, spans, n_events, requests, target)


def _is_store(source: str | os.PathLike[str]) -> bool:
    from a2a_lab.io import is_store

    return is_store(source)


def _add(totals: tuple[int, int, int, int], batch: Batch) -> tuple[int, int, int, int]:
    e, s, n, r = totals
    return e + batch.exchanges, s + batch.spans, n + batch.span_events, r + 1


def _bar(progress: bool) -> Any:
    return tqdm(total=None, unit=" exchanges", file=sys.stderr, disable=not progress)


def _events_of(
    source: str | os.PathLike[str] | pl.DataFrame | pl.LazyFrame,
) -> pl.DataFrame | pl.LazyFrame:
    if isinstance(source, (pl.DataFrame, pl.LazyFrame)):
        return source
    from a2a_lab.io import load

    return load(Path(source)).events


def otlp_lines(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    project: str = DEFAULT_PROJECT,
    batch_exchanges: int = BATCH_EXCHANGES,
    intent_rules: IntentRules = INTENT_RULES_V1,
) -> Iterator[Batch]:
    """The OTLP/JSON requests of the exchanges of ``events``, ``batch_exchanges`` at a time."""
    ev, conv = span_events(events, intent_rules=intent_rules)
    conv, root_attrs = _numbered(conv, batch_exchanges)
    # per batch: the row positions of its events (gathered one batch at a time, so only
    # one batch's JSON text is in memory)
    ev_rows = _rows_by_batch(ev.select("_key"), conv.select("_key", "_batch"))
    for b, conv_b in enumerate(conv.partition_by("_batch", maintain_order=True)):
        ev_b = ev[ev_rows.get(b, pl.Series([], dtype=pl.UInt32))]
        yield _batch(ev_b, conv_b, root_attrs, project)


def log_otlp_lines(
    source: str | os.PathLike[str],
    *,
    tz: str = "UTC",
    project: str = DEFAULT_PROJECT,
    batch_exchanges: int = BATCH_EXCHANGES,
    intent_rules: IntentRules = INTENT_RULES_V1,
) -> Iterator[Batch]:
    """:func:`otlp_lines` of the log ``source``, byte for byte, a bucket of whole
    conversations at a time (:mod:`a2a_lab.analysis._chunked`): the peak is one bucket's.

    Each bucket's span events are kept in a Parquet file sorted by exchange key; a batch
    (a run of exchanges in key order) is then a slice of each file. A missing source
    raises :class:`a2a_lab.io.SourceError` here, before any batch is asked for.
    """
    resolve_source(source)
    return _log_batches(source, tz, project, batch_exchanges, intent_rules)


def _log_batches(
    source: str | os.PathLike[str],
    tz: str,
    project: str,
    batch_exchanges: int,
    intent_rules: IntentRules,
) -> Iterator[Batch]:
    with spill_dir() as tmp:
        spill = spill_exchanges(source, Path(tmp), event_time=check_tz(tz).event_time)
        files: list[Path] = []
        convs: list[pl.DataFrame] = []
        for i, frame in enumerate(bucket_frames(spill, ranked=True)):
            x = chunked_exchange_events(frame, intent_rules=intent_rules)
            del frame
            ev, conv_i = span_events_of(x.lazy(), intent_rules)
            del x
            files.append(Path(tmp) / f"ev-{i}.parquet")
            _by_key(ev).write_parquet(
                files[-1], compression="lz4", row_group_size=_ROW_GROUP, statistics=False
            )
            del ev
            convs.append(conv_i.with_columns(pl.lit(i, pl.UInt32).alias("_bucket")))
        if not convs:
            return
        conv, root_attrs = _numbered(pl.concat(convs).sort("_key"), batch_exchanges)
        del convs
        offsets = [0] * len(files)
        for conv_b in conv.partition_by("_batch", maintain_order=True):
            parts = []
            for i, n in (
                conv_b.group_by("_bucket").agg(pl.col("events").sum()).sort("_bucket").rows()
            ):
                parts.append(pl.scan_parquet(files[i]).slice(offsets[i], n).collect())
                offsets[i] += n
            ev_b = pl.concat(parts).sort(_EV_ORDER, nulls_last=True)
            yield _batch(ev_b, conv_b.drop("_bucket"), root_attrs, project)


def _by_key(ev: pl.DataFrame) -> pl.DataFrame:
    """:func:`span_events` rows (each exchange's rows together) with the exchanges in key
    order: the runs of ``_key`` are sorted, not the rows (a string sort of every row cost
    more than the rest of the spill)."""
    runs = ev.select(pl.col("_key").rle()).unnest("_key")
    order = runs["value"].arg_sort()
    starts = (runs["len"].cum_sum() - runs["len"]).gather(order)
    rows = pl.DataFrame({"s": starts, "n": runs["len"].gather(order)}).select(
        pl.int_ranges("s", pl.col("s") + pl.col("n"), dtype=pl.UInt32).explode()
    )
    return ev[rows.to_series()]


#: Rows per row group of a bucket's span events (a batch reads a slice of them).
_ROW_GROUP: Final = 8_192
#: The order of :func:`a2a_lab.exchange_events` (and of :func:`span_events`).
_EV_ORDER: Final = ["conversation_id", "requester", "target", "exchange", "event_ms", "seq"]


def _numbered(conv: pl.DataFrame, batch_exchanges: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The exchanges (in key order) with their ``_batch``, and their root attributes."""
    conv = conv.with_row_index("_i").with_columns(
        (pl.col("_i") // batch_exchanges).cast(pl.Int64).alias("_batch")
    )
    return conv, _root_attribute_frame(conv)


def _batch(ev: pl.DataFrame, conv: pl.DataFrame, root_attrs: pl.DataFrame, project: str) -> Batch:
    """One request: the exchanges ``conv`` and their span events ``ev`` (in event order)."""
    spans = span_rows(ev, conv)
    spans = spans.join(root_attrs, on="_key", how="left", maintain_order="left").with_columns(
        *[
            pl.when(pl.col("step") == "root").then(pl.col(c)).alias(c)
            for c in root_attrs.columns
            if c != "_key"
        ]
    )
    # spans grouped by the agent that emits them: one ResourceSpans per agent
    spans = spans.with_columns(pl.col("service").fill_null("unknown")).sort(
        "service", maintain_order=True
    )
    data_dtype = ev.schema["data"]
    assert isinstance(data_dtype, pl.Struct)
    ev_text = (
        ev.select("span_id", _event_json(data_dtype).alias("_j"))
        .group_by("span_id", maintain_order=True)
        .agg(pl.col("_j").str.join(","))
    )
    text = spans.join(ev_text, on="span_id", how="left", maintain_order="left").select(
        "service", _span_json(spans.schema).alias("_j")
    )
    return Batch(text, conv.height, spans.height, ev.height, project)


def _rows_by_batch(keys: pl.DataFrame, batch_of: pl.DataFrame) -> dict[int, pl.Series]:
    rows = (
        keys.with_row_index("_row")
        .join(batch_of, on="_key", how="left")
        .group_by("_batch")
        .agg(pl.col("_row").sort())
    )
    return {int(b): r for b, r in zip(rows["_batch"], rows["_row"], strict=True)}


def _root_attribute_frame(conv: pl.DataFrame) -> pl.DataFrame:
    """The exchange's attributes and its work-session link, one row per exchange."""
    ws = pl.col("work_session_id")
    first = (
        conv.filter(ws.is_not_null())
        .sort("_first_ms", "_key")
        .group_by("work_session_id", maintain_order=True)
        .agg(
            pl.col("trace_id").first().alias("_ws_trace"),
            pl.col("root_span_id").first().alias("_ws_span"),
        )
    )
    out = conv.join(first, on="work_session_id", how="left", maintain_order="left")
    return out.select(
        "_key",
        pl.col("from_agent").alias("r_requester"),
        pl.col("to_agent").alias("r_target"),
        pl.col("exchange").alias("r_exchange"),
        pl.col("outcome").alias("r_outcome"),
        pl.col("outcome_reason").alias("r_outcome_reason"),
        pl.col("turns").alias("r_turns"),
        pl.col("intent").alias("r_intent"),
        pl.col("intent_source").alias("r_intent_source"),
        pl.col("queue_wait_ms").alias("r_queue_wait_ms"),
        pl.col("_first_reply_ms").alias("r_first_reply_ms"),
        pl.col("work_session_id").alias("r_work_session_id"),
        pl.col("task_id").alias("r_task_id"),
        pl.col("run_id").alias("r_run_id"),
        pl.col("retries").alias("r_retries"),
        pl.col("responses").alias("r_responses"),
        pl.col("announced").alias("r_announced"),
        pl.col("termination_reason").alias("r_termination_reason"),
        pl.col("parent_conversation_id").alias("r_parent_conversation_id"),
        pl.col("ambiguous").alias("r_ambiguous"),
        pl.col("has_send").alias("r_has_send"),
        pl.col("has_complete").alias("r_has_complete"),
        pl.col("events").alias("r_events"),
        pl.when(pl.col("_ws_span") != pl.col("root_span_id"))
        .then(pl.col("_ws_trace"))
        .alias("r_link_trace"),
        pl.when(pl.col("_ws_span") != pl.col("root_span_id"))
        .then(pl.col("_ws_span"))
        .alias("r_link_span"),
    )


#: Root-span attribute names (``a2a_lab.<name>``) of the ``r_<name>`` columns.
_ROOT_ATTRS: Final = (
    "requester",
    "target",
    "exchange",
    "outcome",
    "outcome_reason",
    "turns",
    "intent",
    "intent_source",
    "queue_wait_ms",
    "first_reply_ms",
    "work_session_id",
    "task_id",
    "run_id",
    "retries",
    "responses",
    "announced",
    "termination_reason",
    "parent_conversation_id",
    "ambiguous",
    "has_send",
    "has_complete",
    "events",
)


def _span_json(schema: pl.Schema) -> pl.Expr:
    pairs = [
        attr("gen_ai.operation.name", pl.lit("invoke_agent"), pl.String()),
        attr("gen_ai.agent.name", pl.col("agent").fill_null("unknown"), pl.String()),
        attr("gen_ai.conversation.id", pl.col("conversation_id"), pl.String()),
        attr("openinference.span.kind", pl.lit("AGENT"), pl.String()),
        attr("a2a_lab.step", pl.col("step"), pl.String()),
        attr("a2a_lab.log.file", pl.col("file"), pl.String()),
        attr("a2a_lab.log.line", pl.col("line"), pl.Int64()),
        attr("session.id", pl.col("r_work_session_id"), pl.String()),
        *[attr("a2a_lab." + n, pl.col("r_" + n), schema["r_" + n]) for n in _ROOT_ATTRS],
    ]
    link = pl.when(pl.col("r_link_span").is_not_null()).then(
        pl.concat_str(
            [
                pl.lit('[{"traceId":"'),
                pl.col("r_link_trace"),
                pl.lit('","spanId":"'),
                pl.col("r_link_span"),
                pl.lit(
                    '","attributes":[{"key":"a2a_lab.link","value":{"stringValue":"work_session"}}],'
                    f'"flags":{_FLAGS}}}]'
                ),
            ]
        )
    )
    status = (
        pl.when(pl.col("status_message").is_not_null())
        .then(
            pl.concat_str(
                [pl.lit('{"code":2,"message":'), jstr(pl.col("status_message")), pl.lit("}")]
            )
        )
        .otherwise(pl.lit("{}"))
    )
    parent = pl.when(pl.col("parent_span_id").is_not_null()).then(
        pl.concat_str([pl.lit('"parentSpanId":"'), pl.col("parent_span_id"), pl.lit('",')])
    )
    # a comma before every span but the first of its agent's run of rows: the spans of one
    # ResourceSpans are then written back to back, without joining them into one string
    lead = (
        pl.when(pl.col("service") == pl.col("service").shift(1))
        .then(pl.lit(","))
        .otherwise(pl.lit(""))
    )
    body = pl.concat_str(
        [
            lead,
            pl.lit('{"traceId":"'),
            pl.col("trace_id"),
            pl.lit('","spanId":"'),
            pl.col("span_id"),
            pl.lit('",'),
            parent.fill_null(""),
            pl.lit('"name":'),
            jstr(pl.col("name")),
            pl.lit(',"kind":'),
            pl.col("kind").cast(pl.String),
            pl.lit(',"startTimeUnixNano":"'),
            pl.col("start_ns").cast(pl.String),
            pl.lit('","endTimeUnixNano":"'),
            pl.col("end_ns").cast(pl.String),
            pl.lit('","attributes":'),
            attributes(pairs),
            pl.lit(',"events":['),
            pl.col("_j").fill_null(""),
            pl.lit("]"),
            pl.concat_str([pl.lit(',"links":'), link]).fill_null(""),
            pl.lit(',"status":'),
            status,
            pl.lit(f',"flags":{_FLAGS}}}'),
        ]
    )
    return body.alias("_j")


def _event_json(data: pl.Struct) -> pl.Expr:
    d = pl.col("data")
    pairs = [
        attr("a2a_lab.log.file", pl.col("file"), pl.String()),
        attr("a2a_lab.log.line", pl.col("line"), pl.Int64()),
        attr("a2a_lab.seq", pl.col("seq"), pl.Int64()),
        attr("a2a.from_agent", pl.col("from_agent"), pl.String()),
        attr("a2a.to_agent", pl.col("to_agent"), pl.String()),
        *[attr(_DATA_PREFIX + f.name, d.struct.field(f.name), f.dtype) for f in data.fields],
    ]
    return pl.concat_str(
        [
            pl.lit('{"timeUnixNano":"'),
            ms_to_ns(pl.col("event_ms")).cast(pl.String),
            pl.lit('","name":'),
            jstr(pl.col("type")),
            pl.lit(',"attributes":'),
            attributes(pairs),
            pl.lit("}"),
        ]
    )
