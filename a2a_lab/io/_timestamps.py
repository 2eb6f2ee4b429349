"""The event time of rules §2, vectorised: timestampMs, else ts, else ISO ``timestamp``."""

from __future__ import annotations

import polars as pl

from a2a_lab.reference.jsstr import js_trim_expr

# The largest |epoch ms| an event time may have: a JavaScript Date stops at 8.64e15 (TimeClip;
# beyond it Date is NaN), and Polars panics formatting a Datetime past the year 262142
# (+262142-12-31T23:59:59.999Z), so the smaller bound holds; beyond it a time is absent.
MAX_DATE_MS = 8_210_266_876_799_999

# ECMAScript date-time string format (Date.parse's ISO subset), plus a space for 'T' as V8
# accepts. Groups: year, month, day, hour, minute, second, fraction, zone.
_ISO = (
    r"^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$"
)


def iso_to_ms_expr(expr: pl.Expr, timezone: str = "UTC") -> pl.Expr:
    """Parse ISO-8601 strings to epoch ms as JavaScript ``Date.parse`` does; null if unparsable.

    The text is JS-trimmed first, as the reference trims before parsing. A date-only string is UTC; a date-time with ``Z`` or an offset is exact; a date-time
    without an offset is read in ``timezone`` (the reference host's local time; default UTC).
    Fractions beyond milliseconds are truncated, as V8 does.

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
    frac = g.struct.field("7").str.pad_end(3, "0").str.slice(0, 3).cast(pl.Int32, strict=False).fill_null(0)
    zone = g.struct.field("8")
    in_range = (
        month.is_between(1, 12)
        & day.is_between(1, 31)
        & (hour.is_null() | (hour.is_between(0, 23) | ((hour == 24) & (minute == 0) & (second == 0) & (frac == 0))))
        & (minute.is_null() | minute.is_between(0, 59))
        & second.is_between(0, 59)
    )
    # Date.parse rolls a day past the month's end over (2026-02-30 is 2026-03-02), so the
    # day is added to the month's first day. Days from the civil date by integer arithmetic
    # (H. Hinnant's days_from_civil): pl.date raises on bad components and stops at year
    # 262143, while JavaScript dates reach +275760.
    y = year.cast(pl.Int64) - (month <= 2).cast(pl.Int64)
    m = month.cast(pl.Int64)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * pl.when(m > 2).then(m - 3).otherwise(m + 9) + 2) // 5
    days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
    base = (days + day.cast(pl.Int64) - 1) * 86_400_000
    clock = (hour.fill_null(0).cast(pl.Int64) * 3_600_000 + minute.fill_null(0).cast(pl.Int64) * 60_000
             + second.cast(pl.Int64) * 1000 + frac.cast(pl.Int64))
    utc_ms = base + clock
    sign = pl.when(zone.str.starts_with("-")).then(-1).otherwise(1)
    offset_ms = sign * (
        zone.str.slice(1, 2).cast(pl.Int64, strict=False) * 3_600_000
        + zone.str.slice(4, 2).cast(pl.Int64, strict=False) * 60_000
    )
    if timezone == "UTC":
        local_ms = utc_ms
    else:
        local_ms = (
            utc_ms.cast(pl.Datetime("ms"))
            .dt.replace_time_zone(timezone, ambiguous="earliest", non_existent="null")
            .dt.epoch("ms")
        )
    result = (
        pl.when(zone == "Z").then(utc_ms)
        .when(zone.is_not_null()).then(utc_ms - offset_ms)
        .when(hour.is_null()).then(utc_ms)  # date-only forms are UTC
        .otherwise(local_ms)
    )
    # Beyond MAX_DATE_MS the time is absent (JavaScript: NaN; +275760 is past Polars).
    return pl.when(in_range & year.is_not_null() & (result.abs() <= MAX_DATE_MS)).then(result).otherwise(None)


def event_ms_expr(timezone: str = "UTC") -> pl.Expr:
    """Rules §2 on the event frame's ``timestamp_ms``, ``ts`` and ``timestamp`` columns.

    A zero falls through (**quirk** of the reference); nothing usable gives 0.
    """
    tms = pl.col("timestamp_ms")
    ts = pl.col("ts")
    iso = iso_to_ms_expr(pl.col("timestamp"), timezone).cast(pl.Float64)
    return (
        pl.when(tms.is_not_null() & (tms != 0)).then(tms)
        .when(ts.is_not_null() & (ts != 0)).then(ts)
        .otherwise(iso.fill_null(0.0))
        .alias("event_ms")
    )


def with_event_time(events: pl.DataFrame, timezone: str = "UTC") -> pl.DataFrame:
    """Add ``event_ms`` (rules §2) and ``event_time`` to an event frame.

    Same result as ``with_columns(event_ms_expr(timezone))``, but the ISO parser only runs
    when some row needs it (no usable number and a ``timestamp`` string), and only on those
    rows: parsing a column that is null almost everywhere would allocate for every row.
    Everything stays an expression on the frame, so its chunks are not copied.
    """
    tms, ts = pl.col("timestamp_ms"), pl.col("ts")
    numeric = pl.when(tms.is_not_null() & (tms != 0)).then(tms).when(ts.is_not_null() & (ts != 0)).then(ts)
    needs_iso = events.select((numeric.is_null() & pl.col("timestamp").is_not_null()).any()).item()
    if needs_iso:
        iso = iso_to_ms_expr(pl.when(numeric.is_null()).then(pl.col("timestamp")), timezone).cast(pl.Float64)
        event_ms = pl.coalesce(numeric, iso)
    else:
        event_ms = numeric
    return events.with_columns(event_ms.fill_null(0.0).alias("event_ms")).with_columns(
        pl.col("event_ms").cast(pl.Int64, strict=False).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC").alias("event_time"),
    )
