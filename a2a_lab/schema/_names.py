"""Names of the log's fields and of the event frame's columns (no pydantic needed to read them)."""

from __future__ import annotations

#: Top-level fields in the reference's write order (rules §9); others follow.
REFERENCE_FIELD_ORDER: tuple[str, ...] = ("type", "agentId", "ts", "data")

#: Top-level log fields whose event-frame column is named otherwise: the frame's columns
#: are snake_case, the ``data`` struct keeps the log's own field names.
FRAME_COLUMN_NAMES: dict[str, str] = {"agentId": "agent_id", "timestampMs": "timestamp_ms"}
#: The inverse of :data:`FRAME_COLUMN_NAMES`: the log field of an event-frame column.
LOG_FIELD_NAMES: dict[str, str] = {v: k for k, v in FRAME_COLUMN_NAMES.items()}
