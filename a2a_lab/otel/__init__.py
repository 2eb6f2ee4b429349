"""OpenTelemetry: the exchanges of a log as GenAI agent traces (OTLP), and OTLP back to events.

- :func:`to_otlp`: one trace per exchange, to an OTLP/JSON file or an OTLP/HTTP receiver;
- :func:`load_otlp`: OTLP/JSON GenAI agent spans (a2a_lab's, or another framework's) into
  the event schema, with a report of the spans the mapping cannot place.

docs/otel.md describes the mapping, the ids and the semantic-conventions version followed.
"""

from a2a_lab.otel._export import (
    SEMCONV_VERSION,
    OtlpExportError,
    OtlpExportResult,
    otlp_lines,
    to_otlp,
)
from a2a_lab.otel._import import load_otlp

__all__ = [
    "SEMCONV_VERSION",
    "OtlpExportError",
    "OtlpExportResult",
    "load_otlp",
    "otlp_lines",
    "to_otlp",
]
