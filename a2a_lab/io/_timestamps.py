"""Moved: the event time of rules §2 is in :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time import MAX_TIME_MS as MAX_TIME_MS
from a2a_lab.time import event_ms_expr as event_ms_expr
from a2a_lab.time import iso_to_ms_expr as iso_to_ms_expr
from a2a_lab.time import with_event_time as with_event_time
