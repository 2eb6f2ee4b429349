"""Moved: the event time of rules §2 is in :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time._js import MAX_TIME_MS, event_ms_expr, iso_to_ms_expr, with_event_time

__all__ = ["MAX_TIME_MS", "event_ms_expr", "iso_to_ms_expr", "with_event_time"]
