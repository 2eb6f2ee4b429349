"""Moved: the event time of rules §2 is in :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time._js import event_ms_expr as event_ms_expr
from a2a_lab.time._js import iso_to_ms_expr as iso_to_ms_expr
from a2a_lab.time._js import with_event_time as with_event_time
from a2a_lab.time._parse import MAX_TIME_MS as MAX_TIME_MS
