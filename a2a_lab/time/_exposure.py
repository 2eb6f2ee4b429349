"""Hours a span of time spent in each local hour of the day (time-of-day exposure).

A log rarely covers every hour of the day equally often: one that starts at 14:00 on one
day and ends at 14:00 two days later covered the hours 14-23 twice and 0-13 twice, but one
from 00:00 to 14:00 the next day covered 0-13 twice and 14-23 once. Counts per hour of the
day divided by :func:`hour_exposure` are rates that do not show a false drop at the hour
the log started or ended (notebooks 01 and 03; the calibration's hourly profile).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import polars as pl

__all__ = ["MAX_GRID_HOURS", "hour_exposure"]

#: Longest span (hours, ~23 years) whose hourly exposure is counted hour by hour (exact
#: across daylight-saving changes); longer spans spread their hours evenly over the day.
MAX_GRID_HOURS: Final = 200_000

_HOUR_MS: Final = 3_600_000.0


def hour_exposure(start_ms: float, end_ms: float, tz: str) -> np.ndarray:
    """Hours of ``[start_ms, end_ms]`` spent in each local hour of the day (24 values).

    The log is cut at whole UTC hours, each piece labelled with its local hour: exact in
    every time zone whose offset is a whole number of hours. A span longer than
    :data:`MAX_GRID_HOURS` is spread evenly over the 24 hours (off by at most a few hours
    a year at daylight-saving changes), so the memory used never grows with the span.

    Examples
    --------
    >>> e = hour_exposure(0.0, 36 * 3_600_000.0, "UTC")
    >>> e[:3].tolist(), e[12:15].tolist(), float(e.sum())
    ([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], 36.0)
    >>> long = hour_exposure(0.0, 1e15, "UTC")  # 31,700 years: no hourly grid
    >>> bool(np.allclose(long, 1e15 / 3_600_000.0 / 24))
    True
    """
    span_h = (end_ms - start_ms) / _HOUR_MS
    if span_h > MAX_GRID_HOURS:
        return np.full(24, span_h / 24.0)
    first = math.floor(start_ms / _HOUR_MS) * _HOUR_MS
    bounds = np.arange(first, end_ms, _HOUR_MS)
    spans = (np.minimum(bounds + _HOUR_MS, end_ms) - np.maximum(bounds, start_ms)) / _HOUR_MS
    hours = (
        pl.Series(bounds)
        .cast(pl.Int64)
        .cast(pl.Datetime("ms", "UTC"))
        .dt.convert_time_zone(tz)
        .dt.hour()
        .to_numpy()
    )
    return np.bincount(hours, weights=spans, minlength=24)
