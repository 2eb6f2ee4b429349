"""The stretch of time a fit reads: bounded by what the log holds, never by its extremes.

A single event far from the rest (a ``ts`` of 8.64e15 ms, the year 275760, is a valid
JavaScript time) would stretch the log's span, dilute every rate to nothing and make any
grid over the span as large as the timestamp. So the fit reads the *core* of the log: the
run of event times around the median event with no silence longer than :data:`FAR_GAP_MS`
in it. Events outside the core are left out of the fit and reported (:class:`FitWarning`).
The hourly exposure (:func:`a2a_lab.time.hour_exposure`, re-exported here) is computed on
a grid only for spans up to :data:`MAX_GRID_HOURS`.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from a2a_lab.time import MAX_GRID_HOURS, hour_exposure

__all__ = ["FAR_GAP_MS", "MAX_GRID_HOURS", "FitWarning", "core_window", "hour_exposure"]

#: A silence longer than a year splits a log: what lies beyond it is not the same gateway
#: run as the bulk (rates over such a span would describe the silence).
FAR_GAP_MS: Final = 366 * 86_400_000.0


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
