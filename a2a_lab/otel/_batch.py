"""What the export's two ends share: the conventions followed, one batch and its text."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import IO, Final

import polars as pl

from a2a_lab._version import __version__

__all__ = [
    "DEFAULT_PROJECT",
    "SCHEMA_URL",
    "SCOPE_NAME",
    "SEMCONV_VERSION",
    "Batch",
    "OtlpExportError",
]

#: The OpenTelemetry semantic conventions release followed (GenAI agent spans are
#: "Development" status there): the one the pinned ``opentelemetry-semantic-conventions``
#: 0.66b2 generates its ``gen_ai.*`` names from.
SEMCONV_VERSION: Final = "1.44.0"
SCHEMA_URL: Final = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
#: The instrumentation scope of every span.
SCOPE_NAME: Final = "a2a_lab"
#: ``openinference.project.name`` of the resources (Phoenix files the traces under it).
DEFAULT_PROJECT: Final = "a2a-lab"


class OtlpExportError(RuntimeError):
    """The receiver refused or could not be reached (one clear line)."""


@dataclass(frozen=True)
class Batch:
    """One ``ExportTraceServiceRequest`` and what it holds.

    ``frame`` has one row per span (``service``, ``_j``: the span's JSON, with a leading
    comma unless it is the first of its service's run), sorted by service. The text stays
    in Polars until :meth:`write` streams it: making it one Python string cost as much
    as encoding it.
    """

    frame: pl.DataFrame
    exchanges: int
    spans: int
    span_events: int
    project: str = DEFAULT_PROJECT

    @property
    def line(self) -> str:
        """The request as one line of JSON (with its newline)."""
        buf = io.BytesIO()
        self.write(buf)
        return buf.getvalue().decode("utf-8")

    def write(self, fh: IO[bytes]) -> None:
        """Append the request to a binary file as one line."""
        fh.write(b'{"resourceSpans":[')
        runs = self.frame.select(pl.col("service").rle()).unnest("service")
        offset = 0
        for k, (length, service) in enumerate(runs.iter_rows()):
            fh.write((("," if k else "") + _resource_head(service, self.project)).encode())
            self.frame.slice(offset, length).select("_j").write_csv(
                fh, include_header=False, quote_style="never", line_terminator=""
            )
            fh.write(_RESOURCE_TAIL)
            offset += length
        fh.write(b"]}\n")


def _resource_head(service: str, project: str) -> str:
    attrs = [
        {"key": "service.name", "value": {"stringValue": service}},
        {"key": "openinference.project.name", "value": {"stringValue": project}},
    ]
    scope = {"name": SCOPE_NAME, "version": __version__}
    return (
        '{"resource":{"attributes":'
        + json.dumps(attrs, ensure_ascii=False, separators=(",", ":"))
        + '},"scopeSpans":[{"scope":'
        + json.dumps(scope, separators=(",", ":"))
        + ',"schemaUrl":"'
        + SCHEMA_URL
        + '","spans":['
    )


_RESOURCE_TAIL: Final = (']}],"schemaUrl":"' + SCHEMA_URL + '"}').encode()
