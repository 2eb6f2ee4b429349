"""The package's one time module: instants, the clock, time zones and their formatting.

Everything in a2a_lab that parses, formats or resolves a time imports it from here:

- **instants** (:func:`to_epoch_ms`, :func:`instant_ms`, :func:`window_ms`,
  :func:`in_window`): an ISO 8601 string, a datetime or epoch ms; naive means UTC;
- **the clock** (:func:`now_ms`): ``now`` when given, else the wall clock, as the reference
  dashboard's ``Date.now()`` — the one default of the report, the CLI and the notebooks;
- **zones** (:func:`check_tz`, :func:`default_tz`): IANA names, one
  parameter name ``tz``, default UTC in the library and ``$A2A_LAB_TZ`` else UTC in the CLI;
  :func:`check_tz` resolves a name once into a :class:`Zone` (a ``str`` carrying the zone's
  event-time expressions, :class:`EventTime`), which is not checked again;
- **JavaScript's times** (:func:`iso_to_ms_expr`, :func:`event_ms_expr`,
  :func:`with_event_time`, :data:`MAX_TIME_MS`): ``Date.parse`` and the event time of
  rules §2, as Polars expressions, within ``Date``'s ±8.64e15 ms;
- **formatting** (:func:`format_time`, :func:`python_safe`): strftime and rows for Python
  that never panic over that whole range;
- **time-of-day exposure** (:func:`hour_exposure`): the hours a span spent in each local
  hour of the day, to turn counts per hour of the day into rates.

The parsing and zone half imports no Polars at import time (the CLI's ``--help`` stays
light); the expression half loads Polars when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2a_lab.time._parse import (
    MAX_TIME_MS,
    TZ_ENV,
    Instant,
    in_window,
    instant_ms,
    now_ms,
    to_epoch_ms,
    window_ms,
)

if TYPE_CHECKING:
    from a2a_lab.time._exposure import MAX_GRID_HOURS, hour_exposure
    from a2a_lab.time._format import STRFTIME_MAX_MS, format_time, python_safe
    from a2a_lab.time._js import (
        EventTime,
        Zone,
        check_tz,
        default_tz,
        event_ms_expr,
        iso_to_ms_expr,
        with_event_time,
    )

__all__ = [
    "MAX_GRID_HOURS",
    "MAX_TIME_MS",
    "STRFTIME_MAX_MS",
    "TZ_ENV",
    "EventTime",
    "Instant",
    "Zone",
    "check_tz",
    "default_tz",
    "event_ms_expr",
    "format_time",
    "hour_exposure",
    "in_window",
    "instant_ms",
    "iso_to_ms_expr",
    "now_ms",
    "python_safe",
    "to_epoch_ms",
    "window_ms",
    "with_event_time",
]

_FORMAT = ("STRFTIME_MAX_MS", "format_time", "python_safe")
_JS = (
    "EventTime",
    "Zone",
    "check_tz",
    "default_tz",
    "event_ms_expr",
    "iso_to_ms_expr",
    "with_event_time",
)
_EXPOSURE = ("MAX_GRID_HOURS", "hour_exposure")


def __getattr__(name: str) -> Any:
    # the Polars half on first use: ``from a2a_lab.time import format_time`` works as usual
    if name in _FORMAT:
        from a2a_lab.time import _format

        return getattr(_format, name)
    if name in _EXPOSURE:
        from a2a_lab.time import _exposure

        return getattr(_exposure, name)
    if name in _JS:
        from a2a_lab.time import _js

        return getattr(_js, name)
    raise AttributeError(f"module 'a2a_lab.time' has no attribute {name!r}")
