"""Instants and zones: the ``now`` / ``since`` / ``until`` and ``tz`` arguments of the package.

Every public function that takes an instant accepts the same three spellings: an ISO 8601
string, a :class:`datetime.datetime`, or epoch milliseconds. A value without a zone
(a naive datetime, an ISO string without offset) means UTC, everywhere, whatever the
machine's ``TZ`` — so the same call gives the same answer on every machine.

Options that mirror the dashboard's HTTP parameters (``events --since``) do NOT use this
parser: they keep the reference's ``Date.parse`` behaviour (rules §8.0), where an
unparsable date matches nothing instead of failing.
"""

from __future__ import annotations

import math
import time as _time
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import polars as pl

    F = TypeVar("F", pl.DataFrame, pl.LazyFrame)
else:
    F = TypeVar("F")

__all__ = [
    "MAX_TIME_MS",
    "TZ_ENV",
    "Instant",
    "in_window",
    "instant_ms",
    "now_ms",
    "to_epoch_ms",
    "window_ms",
]

#: What ``now=`` / ``since=`` / ``until=`` accept.
Instant = str | datetime | date | int | float

#: JavaScript's time range (ECMAScript TimeClip): ±100,000,000 days around the epoch, in ms.
MAX_TIME_MS = 8_640_000_000_000_000


def to_epoch_ms(value: Instant, *, name: str = "time") -> float:
    """Epoch milliseconds of an instant; naive means UTC.

    Parameters
    ----------
    value
        An ISO 8601 string (``"2026-02-18"``, ``"2026-02-18T09:00"``, ``"…Z"``,
        ``"…+09:00"``), a datetime or date, or epoch milliseconds (int or float).
    name
        The parameter's name, used in the error message.

    Returns
    -------
    float
        Milliseconds since 1970-01-01T00:00:00Z.

    Raises
    ------
    ValueError
        The value is not a valid instant (unparsable or impossible date, NaN, infinite, or
        beyond JavaScript's ±8.64e15 ms range), naming ``name``.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name}: expected an ISO date, a datetime or epoch ms, not {value!r}")
    if isinstance(value, int | float):
        ms = float(value)
    elif isinstance(value, datetime):
        ms = _aware(value).timestamp() * 1000.0
    elif isinstance(value, date):
        ms = datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp() * 1000.0
    elif isinstance(value, str):
        text = value.strip()
        try:
            # "Z" is accepted by fromisoformat since 3.11; a bare date is midnight UTC.
            ms = _aware(datetime.fromisoformat(text)).timestamp() * 1000.0
        except ValueError:
            raise ValueError(f"{name}: not an ISO 8601 date or time: {value!r}") from None
    else:
        raise ValueError(
            f"{name}: expected an ISO date, a datetime or epoch ms, not {type(value).__name__}"
        )
    if not math.isfinite(ms) or abs(ms) > MAX_TIME_MS:
        raise ValueError(f"{name}: {value!r} is outside the representable range (±8.64e15 ms)")
    return ms


def instant_ms(value: Instant | None, name: str = "time") -> float | None:
    """:func:`to_epoch_ms` of ``value``, ``None`` for ``None`` (an option not given)."""
    return None if value is None else to_epoch_ms(value, name=name)


def now_ms(now: Instant | None = None) -> float:
    """The package's one clock: ``now`` as epoch ms, else the wall clock at this call.

    The default is the reference dashboard's (rules §7 take ``now_ms``; its server passes
    ``Date.now()``): a session is ARCHIVED 24 h after its last event *by the clock on the
    wall*, so the report, every CLI command and the notebooks agree with the dashboard and
    with each other for the same log and the same ``now``. Pin ``now`` to reproduce a result.

    Raises
    ------
    ValueError
        ``now`` is not a valid instant (see :func:`to_epoch_ms`).

    Examples
    --------
    >>> now_ms("2026-02-19T09:00:00Z")
    1771491600000.0
    >>> now_ms() > 1.7e12
    True
    """
    if now is None:
        # ms as Date.now() gives them: whole milliseconds
        return float(_time.time_ns() // 1_000_000)
    return to_epoch_ms(now, name="now")


def window_ms(since: Instant | None, until: Instant | None) -> tuple[float | None, float | None]:
    """``(since_ms, until_ms)`` of a time window; ``None`` leaves that side open.

    Raises
    ------
    ValueError
        Either bound is invalid, or ``since`` lies after ``until``.
    """
    lo = None if since is None else to_epoch_ms(since, name="since")
    hi = None if until is None else to_epoch_ms(until, name="until")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"since ({since!r}) is after until ({until!r})")
    return lo, hi


def in_window(frame: F, since: Instant | None, until: Instant | None) -> F:
    """The rows of ``frame`` whose ``event_ms`` lies in ``[since, until]`` (both inclusive).

    Lazy in, lazy out; ``None`` leaves that side open, so ``in_window(f, None, None)`` is
    ``f`` itself. The bounds are checked as by :func:`window_ms`.
    """
    import polars as pl

    lo, hi = window_ms(since, until)
    if lo is not None:
        frame = frame.filter(pl.col("event_ms") >= lo)
    if hi is not None:
        frame = frame.filter(pl.col("event_ms") <= hi)
    return frame


def _aware(value: datetime) -> datetime:
    """The datetime with UTC attached when it has no zone (naive means UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


# ---------------------------------------------------------------------------------------
# Time zones: one parameter name (``tz``), one environment variable (the validation, the
# default rule and the resolved :class:`~a2a_lab.time._js.Zone` are in ``_js``: Polars')
# ---------------------------------------------------------------------------------------
#: The environment variable the CLI and notebook setup read for the default ``tz``.
TZ_ENV = "A2A_LAB_TZ"
