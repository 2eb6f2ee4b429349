"""One parser for the ``now`` / ``since`` / ``until`` arguments of the whole package.

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
from datetime import UTC, date, datetime

__all__ = ["Instant", "to_epoch_ms", "window_ms"]

#: What ``now=`` / ``since=`` / ``until=`` accept.
Instant = str | datetime | date | int | float

#: The largest instant JavaScript's Date (and so the reference) can hold, in ms.
_MAX_MS = 8.64e15


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
    if not math.isfinite(ms) or abs(ms) > _MAX_MS:
        raise ValueError(f"{name}: {value!r} is outside the representable range (±8.64e15 ms)")
    return ms


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


def _aware(value: datetime) -> datetime:
    """The datetime with UTC attached when it has no zone (naive means UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
