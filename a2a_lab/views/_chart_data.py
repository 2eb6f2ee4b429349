"""A chart's data, made safe to draw: bounded rows, neutralised text, time buckets.

Shared by the charts of :mod:`a2a_lab.views.plots`. Times anywhere in JavaScript's
``Date`` range (±8.64e15 ms) are bucketed and labelled without a panic: Polars' calendar
ends at the years ±262142, so beyond it buckets are computed in UTC by fixed widths and
labels by :func:`a2a_lab._timefmt.format_time`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from a2a_lab._timefmt import STRFTIME_MAX_MS, format_time
from a2a_lab.views.safe_html import neutralize, neutralize_expr

#: Most rows any chart embeds.
MAX_ROWS = 5_000


def _guard(frame: pl.DataFrame, what: str) -> pl.DataFrame:
    """``frame`` as a chart's data: bounded rows, text with control and bidi characters
    shown as ``⟨U+XXXX⟩`` (a chart spec is displayed as the HTML text is, issue 27)."""
    if frame.height > MAX_ROWS:
        raise ValueError(
            f"{what}: {frame.height} rows to draw (at most {MAX_ROWS}); aggregate or filter first"
        )
    text = [c for c, t in frame.schema.items() if t == pl.String]
    return frame.with_columns(neutralize_expr(pl.col(c)) for c in text) if text else frame


def _shown(values: list[Any]) -> list[Any]:
    """A sort order of chart values, neutralised as :func:`_guard` neutralises the data."""
    return [neutralize(v) if isinstance(v, str) else v for v in values]


def _wall_clock(col: str, tz: str, alias: str) -> list[pl.Expr]:
    """A UTC datetime column as wall-clock time in ``tz``, for a ``utc`` scale, and a label."""
    local = pl.col(col).dt.convert_time_zone(tz)  # works on any tz-aware column
    # Beyond the years ±262142 (Date reaches ±275760) Polars has no zone rules and its
    # strftime panics: such a time is shown in UTC, formatted by format_time.
    utc_ms = pl.col(col).dt.epoch("ms")
    inside = utc_ms.is_between(-STRFTIME_MAX_MS, STRFTIME_MAX_MS)
    return [
        pl.coalesce(
            pl.when(inside).then(local).dt.replace_time_zone(None).dt.epoch("ms"), utc_ms
        ).alias(alias),
        format_time(local, "%Y-%m-%d %H:%M").alias(alias + "_label"),
    ]


#: Bucket starts and ends are computed in the display zone within this distance (ms) of
#: the epoch: Polars' calendar ends at the years ±262142 (Date's at ±275760), and a month's
#: truncation or offset must stay inside it.
_CALENDAR_MS = STRFTIME_MAX_MS - 400 * 86_400_000


def _buckets(time: pl.Expr, every: str, tz: str) -> tuple[pl.Expr, pl.Expr]:
    """Start and end (UTC datetimes) of the ``every`` bucket of ``time`` in ``tz``.

    Beyond Polars' calendar (a time Date holds past the year 262142, fuzzed logs have them)
    there are no zone rules and ``dt.truncate`` panics: such a time is bucketed in UTC by
    the bucket's fixed width (a month as 31 days), so no time is lost from the chart and
    the chart's size stays the number of buckets the events fill, never the span.
    """
    ms = time.dt.epoch("ms")
    inside = ms.is_between(-_CALENDAR_MS, _CALENDAR_MS)
    local = pl.when(inside).then(time).dt.convert_time_zone(tz).dt.truncate(every)
    width = _every_ms(every)
    far = pl.when(~inside).then((ms // width) * width)
    start = pl.coalesce(
        local.dt.convert_time_zone("UTC"), far.cast(pl.Datetime("ms")).dt.replace_time_zone("UTC")
    )
    end = pl.coalesce(
        local.dt.offset_by(every).dt.convert_time_zone("UTC"),
        (far + width).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC"),
    )
    return start, end


def _every_ms(every: str) -> int:
    """The width of a bucket ``every`` in ms, counted from the epoch (``1mo``: 31 days)."""
    width: int = pl.select(
        pl.lit(0).cast(pl.Datetime("ms")).dt.offset_by(every).dt.epoch("ms")
    ).item()
    if width <= 0:
        raise ValueError(f"every: {every!r} is no positive duration")
    return width
