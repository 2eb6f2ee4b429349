"""Event schema: pydantic models (source of truth) and the Polars schema derived from them."""

from a2a_lab.schema._polars import data_dtype, polars_schema, raw_event_dtype, struct_dtype
from a2a_lab.schema.event import (
    FRAME_COLUMN_NAMES,
    LOG_FIELD_NAMES,
    REFERENCE_FIELD_ORDER,
    CoordinationEvent,
    EventData,
)

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
