"""``GET /api/events``: :func:`events_query` and its :class:`EventsResult` (rules §8, §8.0)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io import rotation_key
from a2a_lab.sessions._js import (
    Filter,
    Limit,
    _as_string,
    _csv_values,
    _date_parse_ms,
    _now_ms,
    limit_count,
)
from a2a_lab.sessions._objects import event_objects


# ---------------------------------------------------------------------------------------
# GET /api/events
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EventsResult:
    """The dashboard's event list (``GET /api/events``).

    Attributes
    ----------
    events
        The matched events kept by the limit (the LAST ones in file order), in file order:
        the enriched frame's rows.
    total
        All events given (``total``).
    total_matched
        Events that passed the filters, before the limit (``totalMatched``).
    category_counts
        Matched events per category, in order of first appearance (file order).
    query
        The echo: ``role`` (JS-trimmed or None), ``type`` (split, trimmed list),
        ``viewCategory`` (JS-trimmed or None).
    """

    events: pl.DataFrame
    total: int
    total_matched: int
    category_counts: dict[str, int]
    query: dict[str, Any]

    def to_api(self) -> dict[str, Any]:
        """The JSON body of ``GET /api/events``, exactly.

        Returns
        -------
        dict
            ``{events, count, total, totalMatched, role, type, viewCategory,
            categoryCounts}``; the events are the enriched event objects.
        """
        objects = event_objects(self.events)
        return {
            "events": objects,
            "count": len(objects),
            "total": self.total,
            "totalMatched": self.total_matched,
            "role": self.query["role"],
            "type": list(self.query["type"]),
            "viewCategory": self.query["viewCategory"],
            "categoryCounts": dict(self.category_counts),
        }


def _file_rank(frame: pl.LazyFrame, files: Iterable[str] | None) -> pl.Expr:
    """Rank of each row's file in reading order: the given order, else the loader's.

    The loader reads a log directory's rotated files oldest first (by their names) and the
    live file last; files named otherwise keep their name order, per directory.
    """
    if files is None:
        names = frame.select(pl.col("file").unique()).collect().get_column("file").to_list()
        files = sorted(names, key=lambda name: (str(Path(name).parent), rotation_key(Path(name))))
    order = {name: rank for rank, name in enumerate(files)}
    return pl.col("file").replace_strict(order, default=len(order), return_dtype=pl.Int64)


def events_query(
    enriched: pl.DataFrame | pl.LazyFrame,
    *,
    since: str | datetime | None = None,
    role: str | None = None,
    types: Filter = None,
    view_category: str | None = None,
    limit: Limit = None,
    files: Iterable[str] | None = None,
    tz: str = "UTC",
) -> EventsResult:
    """Filter enriched events as ``GET /api/events`` does (rules §8, §8.0).

    Parameters
    ----------
    enriched
        Events enriched by :func:`a2a_lab.enrich`.
    since
        Keep events whose time is at or after this instant: an ISO-8601 string (parsed as
        JavaScript ``Date.parse`` does; unparsable → NO event matches, an empty string → no
        filter) or a datetime (naive = UTC).
    role
        One event role, JS-trimmed, compared exactly (so ``"a,b"`` matches nothing).
    types
        Event types: a list or comma-separated values, JS-trimmed, empties dropped.
    view_category
        Exactly this category (JS-trimmed); ``"all"`` or None: all.
    limit
        ``Number(limit) || 100`` semantics; keeps the LAST ``max(1, limit)`` matched events
        in file order.
    files
        The files in reading order, e.g. ``LoadResult.report.files``. By default, the order
        in which the loader reads a log directory: rotated files oldest first (by name),
        the live file last.
    tz
        Zone of a ``since`` date-time without an offset (the reference host's local time).

    Returns
    -------
    EventsResult
        The kept rows, the counts, and ``to_api()``.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.enrich(al.from_records([
    ...     {"type": "a2a.send", "ts": 1000, "data": {"fromAgent": "ruda", "toAgent": "main"}},
    ...     {"type": "task.started", "ts": 2000, "data": {"taskId": "t1"}},
    ... ]))
    >>> res = events_query(ev, role="orchestration.task")
    >>> res.total, res.total_matched, res.events["type"].to_list()
    (2, 1, ['task.started'])
    """
    role_filter = _as_string(role)
    type_filters = _csv_values(types)
    view = _as_string(view_category)
    lazy = enriched.lazy()
    keep = _since_expr(since, tz)
    if role_filter is not None:
        keep = keep & (pl.col("event_role") == role_filter)
    if type_filters:
        keep = keep & pl.col("type").is_in(type_filters)
    if view is not None and view != "all":
        keep = keep & (pl.col("collab_category") == view)
    # the filters and the file order on a few narrow columns; the rows kept are gathered last
    matched = (
        lazy.select(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"),
            "file",
            "line",
            "collab_category",
            keep.alias("_keep"),
        )
        .filter("_keep")
        .with_columns(_file_rank(lazy, files).alias("_fileRank"))
        .sort(["_fileRank", "line"], maintain_order=True)
    )
    count = limit_count(limit)
    kept_rows, count_frame, total_frame = pl.collect_all(
        [
            (matched if count is None else matched.tail(count)).select("_row"),
            matched.group_by("collab_category", maintain_order=True).len(),
            lazy.select(pl.len()),
        ]
    )
    return EventsResult(
        events=_gather(enriched, kept_rows),
        total=int(total_frame.item()),
        total_matched=int(count_frame["len"].sum()),
        category_counts={str(k): int(v) for k, v in count_frame.iter_rows()},
        query={"role": role_filter, "type": type_filters, "viewCategory": view},
    )


def _since_expr(since: str | datetime | None, tz: str) -> pl.Expr:
    """``since`` as the reference reads it: ``Date.parse`` of a string, a datetime as given.

    An empty string or None is no filter; an unparsable string keeps no event.
    """
    if isinstance(since, datetime):
        return pl.col("event_ms") >= _now_ms(since, "since")
    if not since:
        return pl.lit(True)
    since_ms = _date_parse_ms(since, tz)
    # an unparsable date is NaN for the reference, and no time is >= NaN
    return pl.col("event_ms") >= float(since_ms) if since_ms is not None else pl.lit(False)


def _gather(enriched: pl.DataFrame | pl.LazyFrame, kept_rows: pl.DataFrame) -> pl.DataFrame:
    """The rows numbered ``kept_rows["_row"]``, in that order (a lazy frame is joined)."""
    if isinstance(enriched, pl.DataFrame):
        return enriched[kept_rows.get_column("_row")]
    return (
        enriched.lazy()
        .with_row_index("_row")
        .join(kept_rows.lazy().with_row_index("_order"), on="_row", how="inner")
        .sort("_order")
        .drop("_row", "_order")
        .collect()
    )
