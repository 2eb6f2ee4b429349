"""OpenTelemetry: the exchanges of a log as GenAI agent traces (OTLP), and OTLP back to events.

- :func:`to_otlp`: one trace per exchange, to an OTLP/JSON file or an OTLP/HTTP receiver;
- :func:`otlp_lines`, :func:`log_otlp_lines` and :func:`write_otlp`: the same in steps (the
  OTLP/JSON request lines of a frame or of a log read a bucket at a time, and their writer),
  as the CLI's ``export-otlp`` runs them;
- :func:`load_otlp`: OTLP/JSON GenAI agent spans (a2a_lab's, or another framework's) into
  the event schema, with a report of the spans the mapping cannot place.

docs/otel.md describes the mapping, the ids and the semantic-conventions version followed.
"""

from a2a_lab.otel._export import (
    SEMCONV_VERSION,
    OtlpExportError,
    OtlpExportResult,
    log_otlp_lines,
    otlp_lines,
    to_otlp,
    write_otlp,
)
from a2a_lab.otel._import import load_otlp

__all__ = [
    "SEMCONV_VERSION",
    "OtlpExportError",
    "OtlpExportResult",
    "load_otlp",
    "log_otlp_lines",
    "otlp_lines",
    "to_otlp",
    "write_otlp",
]
