"""JavaScript's times, vectorised: ``Date.parse`` of ISO text, the event time of rules §2
(timestampMs, else ts, else ISO ``timestamp``) and ``Date``'s range (±8.64e15 ms); and the
zones they are read in, resolved once (:func:`check_tz` → :class:`Zone`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.time._parse import MAX_TIME_MS, TZ_ENV

# ECMAScript date-time string format (Date.parse's ISO subset), plus a space for 'T' as V8
# accepts. Groups: year, month, day, hour, minute, second, fraction, zone.
_ISO = (
    r"^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$"
)


def iso_to_ms_expr(expr: pl.Expr, tz: str = "UTC") -> pl.Expr:
    """Parse ISO-8601 strings to epoch ms as JavaScript ``Date.parse`` does; null if unparsable.

    The text is JS-trimmed first, as the reference trims before parsing. A date-only string is UTC; a date-time with ``Z`` or an offset is exact; a date-time
    without an offset is read in ``tz`` (the reference host's local time; default UTC).
    Fractions beyond milliseconds are truncated, as V8 does. A day past the end of its month
    rolls over as JavaScript's ``MakeDay`` does (``2026-02-30`` is 2026-03-02); a month outside
    1-12, a day outside 1-31 or a time outside ±8.64e15 ms is NaN there, null here.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["2026-02-19T11:21:41.500+09:00", "2026-02-19", "nope"]})
    >>> df.select(iso_to_ms_expr(pl.col("t"))).to_series().to_list()
    [1771467701500, 1771459200000, None]
    """
    g = js_trim_expr(expr).str.extract_groups(_ISO)
    year = g.struct.field("1").cast(pl.Int32, strict=False)
    month = g.struct.field("2").cast(pl.Int8, strict=False).fill_null(1)
    day = g.struct.field("3").cast(pl.Int8, strict=False).fill_null(1)
    hour = g.struct.field("4").cast(pl.Int8, strict=False)
    minute = g.struct.field("5").cast(pl.Int8, strict=False)
    second = g.struct.field("6").cast(pl.Int8, strict=False).fill_null(0)
    frac = (
        g.struct.field("7")
        .str.pad_end(3, "0")
        .str.slice(0, 3)
        .cast(pl.Int32, strict=False)
        .fill_null(0)
    )
    zone = g.struct.field("8")
    in_range = (
        month.is_between(1, 12)
        & day.is_between(1, 31)
        & (
            hour.is_null()
            | (
                hour.is_between(0, 23)
                | ((hour == 24) & (minute == 0) & (second == 0) & (frac == 0))
            )
        )
        & (minute.is_null() | minute.is_between(0, 59))
        & second.is_between(0, 59)
    )
    # days from the civil date as integer arithmetic: pl.date raises on 2026-02-30 or on
    # years beyond chrono's range, and JavaScript rolls the day over (MakeDay) instead
    utc_ms = (_days_from_civil(year, month) + day.cast(pl.Int64) - 1) * _DAY_MS + (
        hour.fill_null(0).cast(pl.Int64) * 3_600_000
        + minute.fill_null(0).cast(pl.Int64) * 60_000
        + second.cast(pl.Int64) * 1000
        + frac.cast(pl.Int64)
    )
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    offset_ms = sign * (
        zone.str.slice(1, 2).cast(pl.Int64, strict=False) * 3_600_000
        + zone.str.slice(4, 2).cast(pl.Int64, strict=False) * 60_000
    )
    if tz == "UTC":
        local_ms = utc_ms
    else:
        # chrono's calendar ends before JavaScript's (year 262143 vs 275760): beyond it the
        # zone's offset is unknown here and the time is read as UTC
        in_chrono = utc_ms.abs() < _CHRONO_MAX_MS
        local_ms = (
            pl.when(in_chrono)
            .then(
                pl.when(in_chrono)
                .then(utc_ms)
                .cast(pl.Datetime("ms"))
                .dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
                .dt.epoch("ms")
            )
            .otherwise(utc_ms)
        )
    result = (
        pl.when(zone == "Z")
        .then(utc_ms)
        .when(zone.is_not_null())
        .then(utc_ms - offset_ms)
        .when(hour.is_null())
        .then(utc_ms)  # date-only forms are UTC
        .otherwise(local_ms)
    )
    # TimeClip: beyond ±8.64e15 ms JavaScript's time value is NaN; so is the year -000000
    valid = in_range & year.is_not_null() & (g.struct.field("1") != "-000000")
    return pl.when(valid & (result.abs() <= MAX_TIME_MS)).then(result).otherwise(None)


_DAY_MS = 86_400_000
_CHRONO_MAX_MS = 8_200_000_000_000_000


def _days_from_civil(year: pl.Expr, month: pl.Expr) -> pl.Expr:
    """Days from 1970-01-01 to the first of ``month`` in ``year`` (proleptic Gregorian).

    H. Hinnant's ``days_from_civil``; integer floor division keeps negative years exact.
    """
    y = year.cast(pl.Int64) - (month <= 2).cast(pl.Int64)
    era = y // 400
    yoe = y - era * 400
    mp = (month.cast(pl.Int64) + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


#: Rules §2's number: timestampMs, else ts (a zero falls through, **quirk** of the reference).
_NUMERIC = (
    pl.when(pl.col("timestamp_ms").is_not_null() & (pl.col("timestamp_ms") != 0))
    .then(pl.col("timestamp_ms"))
    .when(pl.col("ts").is_not_null() & (pl.col("ts") != 0))
    .then(pl.col("ts"))
)


def event_ms_expr(tz: str = "UTC") -> pl.Expr:
    """Rules §2 on the event frame's ``timestamp_ms``, ``ts`` and ``timestamp`` columns.

    A zero falls through (**quirk** of the reference); nothing usable gives 0.
    """
    iso = iso_to_ms_expr(pl.col("timestamp"), tz).cast(pl.Float64)
    return _NUMERIC.otherwise(iso.fill_null(0.0)).alias("event_ms")


@dataclass(frozen=True)
class EventTime:
    """Rules §2's event time in one zone, its ISO parser built once (:attr:`Zone.event_time`).

    A load applies it to chunk after chunk of every file: the zone is resolved once, not
    once per chunk.
    """

    #: ``Date.parse`` of ``timestamp`` in the zone, on the rows without a usable number.
    iso: pl.Expr

    def add(self, events: pl.DataFrame) -> pl.DataFrame:
        """``events`` with ``event_ms`` and ``event_time`` (see :func:`with_event_time`)."""
        needs_iso = events.select(
            (_NUMERIC.is_null() & pl.col("timestamp").is_not_null()).any()
        ).item()
        event_ms = pl.coalesce(_NUMERIC, self.iso) if needs_iso else _NUMERIC
        return events.with_columns(event_ms.fill_null(0.0).alias("event_ms")).with_columns(
            # beyond JavaScript's time range there is no instant (and chrono would panic)
            pl.when(pl.col("event_ms").abs() <= MAX_TIME_MS)
            .then(pl.col("event_ms"))
            .cast(pl.Int64, strict=False)
            .cast(pl.Datetime("ms"))
            .dt.replace_time_zone("UTC")
            .alias("event_time"),
        )


class Zone(str):
    """An IANA time zone name checked once (:func:`check_tz`): the resolved ``tz``.

    A ``str``, so every ``tz=`` of the package takes it as it takes the name; code that
    holds one does not check it again, and a load reads every file's timestamps with its
    :attr:`event_time`, built when the zone was resolved.
    """

    #: The event time of rules §2 in this zone.
    event_time: EventTime

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # the expressions are rebuilt, not pickled
        return check_tz, (str(self),)


def check_tz(tz: object, *, name: str = "tz") -> Zone:
    """``tz`` resolved (a :class:`Zone`) if it is an IANA time zone name Polars knows, else
    ``ValueError`` naming ``name``. A :class:`Zone` is returned as it is.

    Examples
    --------
    >>> check_tz("Asia/Seoul")
    'Asia/Seoul'
    >>> check_tz("Mars/Olympus")
    Traceback (most recent call last):
    ...
    ValueError: tz: unknown time zone 'Mars/Olympus' (an IANA name such as 'Asia/Seoul' or 'UTC')
    """
    if isinstance(tz, Zone):
        return tz
    if not isinstance(tz, str) or not tz:
        raise ValueError(f"{name}: expected an IANA time zone name, not {tz!r}")
    try:
        pl.select(pl.lit(0).cast(pl.Datetime("ms", "UTC")).dt.convert_time_zone(tz))
    except (pl.exceptions.PolarsError, ValueError, TypeError):
        raise ValueError(
            f"{name}: unknown time zone {tz!r} (an IANA name such as 'Asia/Seoul' or 'UTC')"
        ) from None
    zone = Zone(tz)
    iso = iso_to_ms_expr(pl.when(_NUMERIC.is_null()).then(pl.col("timestamp")), str(tz))
    zone.event_time = EventTime(iso.cast(pl.Float64))
    return zone


def with_event_time(events: pl.DataFrame, tz: str = "UTC") -> pl.DataFrame:
    """Add ``event_ms`` (rules §2) and ``event_time`` to an event frame.

    Same result as ``with_columns(event_ms_expr(tz))``, but the ISO parser only runs
    when some row needs it (no usable number and a ``timestamp`` string), and only on those
    rows: parsing a column that is null almost everywhere would allocate for every row.
    Everything stays an expression on the frame, so its chunks are not copied.
    """
    return check_tz(tz).event_time.add(events)


def default_tz(environ: Mapping[str, str] | None = None) -> Zone:
    """The default ``tz`` of the CLI and notebooks: ``$A2A_LAB_TZ`` if set, else ``"UTC"``.

    Library functions do not read the environment: their ``tz`` defaults to UTC, so a call
    means the same on every machine.

    Raises
    ------
    ValueError
        ``A2A_LAB_TZ`` names no known time zone.

    Examples
    --------
    >>> default_tz({}), default_tz({"A2A_LAB_TZ": "Asia/Seoul"})
    ('UTC', 'Asia/Seoul')
    """
    env = os.environ if environ is None else environ
    value = env.get(TZ_ENV, "").strip()
    return check_tz(value, name=TZ_ENV) if value else check_tz("UTC")
