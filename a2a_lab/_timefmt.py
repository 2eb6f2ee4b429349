"""Times anywhere in JavaScript's range (±8.64e15 ms), formatted and handed to Python safely.

An event time can be any instant ``Date`` holds: up to ±8.64e15 ms (the years -271821 to
+275760). Polars stores them, but its ``dt.strftime`` panics beyond the years ±262142
(≈ ±8.2e15 ms) and Python's ``datetime`` stops at the years 1 and 9999. Two helpers keep
every rendering and every row handed to Python working over the whole range:

- :func:`format_time` is ``dt.strftime`` for the formats the package displays; instants
  beyond Polars' range are formatted by integer arithmetic (in UTC: no time zone has rules
  that far out), in the same style (``+271324-04-11T15:06:40Z``);
- :func:`python_safe` nulls the datetimes a Python ``datetime`` cannot hold before rows go
  to Python (``iter_rows``, ``row``): such a value is absent, never a crash.
"""

from __future__ import annotations

import re

import polars as pl

#: Beyond this (ms from the epoch, either sign) Polars' strftime panics (year ±262142);
#: kept a day inside so that a time-zone offset cannot push a value over.
STRFTIME_MAX_MS = 8_210_000_000_000_000
#: Python ``datetime`` holds the years 1..9999; a day inside each end, for time-zone offsets.
PY_MIN_MS = -62_135_596_800_000 + 86_400_000
PY_MAX_MS = 253_402_300_799_999 - 86_400_000

_DAY_MS = 86_400_000
_TOKEN = re.compile(r"%\.3f|%:z|%[YmdHMS%]")


def _two(e: pl.Expr) -> pl.Expr:
    return e.cast(pl.String).str.zfill(2)


def _civil(ms: pl.Expr) -> dict[str, pl.Expr]:
    """Proleptic Gregorian date and time of epoch ms (UTC), by H. Hinnant's ``civil_from_days``."""
    days = ms // _DAY_MS
    rem = ms - days * _DAY_MS
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = pl.when(mp < 10).then(mp + 3).otherwise(mp - 9)
    year = yoe + era * 400 + pl.when(month <= 2).then(1).otherwise(0)
    # chrono's %Y: four digits within 0..9999, else a sign and the digits
    year_text = (
        pl.when(year > 9999)
        .then(pl.lit("+") + year.cast(pl.String))
        .when(year < 0)
        .then(pl.lit("-") + (-year).cast(pl.String).str.zfill(4))
        .otherwise(year.cast(pl.String).str.zfill(4))
    )
    return {
        "%Y": year_text,
        "%m": _two(month),
        "%d": _two(day),
        "%H": _two(rem // 3_600_000),
        "%M": _two((rem // 60_000) % 60),
        "%S": _two((rem // 1000) % 60),
        "%.3f": pl.lit(".") + (rem % 1000).cast(pl.String).str.zfill(3),
        "%:z": pl.lit("+00:00"),
        "%%": pl.lit("%"),
    }


def _manual(ms: pl.Expr, fmt: str) -> pl.Expr:
    parts = _civil(ms)
    pieces: list[pl.Expr] = []
    pos = 0
    for m in _TOKEN.finditer(fmt):
        if m.start() > pos:
            pieces.append(pl.lit(fmt[pos : m.start()]))
        pieces.append(parts[m.group()])
        pos = m.end()
    if pos < len(fmt):
        pieces.append(pl.lit(fmt[pos:]))
    return pl.concat_str(pieces)


def format_time(time: pl.Expr, fmt: str) -> pl.Expr:
    """``time.dt.strftime(fmt)`` that never panics: instants beyond Polars' range in UTC.

    ``fmt`` may use ``%Y %m %d %H %M %S %.3f %:z %%`` and literal text (the formats the
    package displays); a null time gives null.

    Examples
    --------
    >>> t = pl.DataFrame({"t": [0, 8_500_000_000_000_000, -8_640_000_000_000_000, None]})
    >>> t = t.cast(pl.Datetime("ms", "UTC"))
    >>> t.select(format_time(pl.col("t"), "%Y-%m-%dT%H:%M:%S%.3fZ"))["t"].to_list()
    ['1970-01-01T00:00:00.000Z', '+271324-04-11T15:06:40.000Z', '-271821-04-20T00:00:00.000Z', None]
    """
    bad = set(re.findall(r"%[^%]", _TOKEN.sub("", fmt)))
    if bad:
        raise ValueError(f"format_time: unsupported directives {sorted(bad)} in {fmt!r}")
    ms = time.dt.epoch("ms")
    # not ``abs()``: the Int64 minimum is its own absolute value (it overflows)
    inside = ms.is_between(-STRFTIME_MAX_MS, STRFTIME_MAX_MS)
    return pl.coalesce(
        pl.when(inside).then(time).dt.strftime(fmt),
        pl.when(~inside).then(_manual(ms, fmt)),
    )


def python_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every datetime a Python ``datetime`` cannot hold set to null.

    Examples
    --------
    >>> f = pl.DataFrame({"t": pl.Series([0, 3 * 10**14]).cast(pl.Datetime("ms", "UTC"))})
    >>> python_safe(f)["t"].to_list()
    [datetime.datetime(1970, 1, 1, 0, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), None]
    """
    cols = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Datetime)]
    if not cols:
        return frame
    return frame.with_columns(
        pl.when(pl.col(c).dt.epoch("ms").is_between(PY_MIN_MS, PY_MAX_MS)).then(pl.col(c)).alias(c)
        for c in cols
    )
