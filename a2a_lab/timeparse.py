"""Moved: the time parser is :mod:`a2a_lab.time` now; this old path re-exports it."""

from a2a_lab.time._parse import (
    MAX_TIME_MS,
    TZ_ENV,
    Instant,
    check_tz,
    default_tz,
    in_window,
    instant_ms,
    now_ms,
    resolve_tz,
    to_epoch_ms,
    window_ms,
)

__all__ = [
    "MAX_TIME_MS",
    "TZ_ENV",
    "Instant",
    "check_tz",
    "default_tz",
    "in_window",
    "instant_ms",
    "now_ms",
    "resolve_tz",
    "to_epoch_ms",
    "window_ms",
]
