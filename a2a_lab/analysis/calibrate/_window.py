"""The stretch of time a fit reads: bounded by what the log holds, never by its extremes.

A single event far from the rest (a ``ts`` of 8.64e15 ms, the year 275760, is a valid
JavaScript time) would stretch the log's span, dilute every rate to nothing and make any
grid over the span as large as the timestamp. So the fit reads the *core* of the log: the
run of event times around the median event with no silence longer than :data:`FAR_GAP_MS`
in it. Events outside the core are left out of the fit and reported (:class:`FitWarning`).
The hourly exposure is computed on a grid only for spans up to :data:`MAX_GRID_HOURS`.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import polars as pl

__all__ = ["FAR_GAP_MS", "MAX_GRID_HOURS", "FitWarning", "core_window", "hour_exposure"]

#: A silence longer than a year splits a log: what lies beyond it is not the same gateway
#: run as the bulk (rates over such a span would describe the silence).
FAR_GAP_MS: Final = 366 * 86_400_000.0
#: Longest span (hours, ~23 years) whose hourly exposure is counted hour by hour (exact
#: across daylight-saving changes); longer spans spread their hours evenly over the day.
MAX_GRID_HOURS: Final = 200_000

_HOUR_MS: Final = 3_600_000.0


class FitWarning(UserWarning):
    """Something in the log makes part of a fit unreliable or leaves data out of it."""


def core_window(times: pl.Series) -> tuple[float, float, int]:
    """The core of a log's event times: ``(first_ms, last_ms, left_out)``.

    Parameters
    ----------
    times
        Event times (epoch ms, finite, at least one).

    Returns
    -------
    tuple[float, float, int]
        The first and last time of the run of sorted times around the median one with no
        gap longer than :data:`FAR_GAP_MS`, and how many times lie outside it.

    Examples
    --------
    >>> t = pl.Series([1.77e12, 1.77e12 + 5e6, 1.77e12 + 9e6, 8.64e15])
    >>> core_window(t)
    (1770000000000.0, 1770009000000.0, 1)
    """
    s = times.sort()
    segment = (s.diff().fill_null(0.0) > FAR_GAP_MS).cum_sum()
    core = segment[(s.len() - 1) // 2]
    inside = s.filter(segment == core)
    return float(inside[0]), float(inside[-1]), s.len() - inside.len()


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
