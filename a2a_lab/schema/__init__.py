"""Event schema: pydantic models (source of truth) and the Polars schema derived from them.

The models load on first use (PEP 562), and the dtype functions load them when first
called: a store query that reads no log line imports neither pydantic nor the models
(``a2a-lab work-sessions STORE``, issue 24).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2a_lab.schema._names import FRAME_COLUMN_NAMES, LOG_FIELD_NAMES, REFERENCE_FIELD_ORDER
from a2a_lab.schema._polars import data_dtype, polars_schema, raw_event_dtype, struct_dtype

if TYPE_CHECKING:
    from a2a_lab.schema.event import CoordinationEvent, EventData

__all__ = [
    "FRAME_COLUMN_NAMES",
    "LOG_FIELD_NAMES",
    "REFERENCE_FIELD_ORDER",
    "CoordinationEvent",
    "EventData",
    "data_dtype",
    "polars_schema",
    "raw_event_dtype",
    "struct_dtype",
]


def __getattr__(name: str) -> Any:
    # the two pydantic models, imported (with pydantic) when first named
    if name not in ("CoordinationEvent", "EventData"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from a2a_lab.schema import event

    model = getattr(event, name)
    globals()[name] = model
    return model
