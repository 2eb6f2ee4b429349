"""Answers from a history store's tables: the server never holds the whole event frame.

``a2a-lab ingest`` (and each refresh of a server following its log into a store, see
:class:`~a2a_lab.serve.LiveEvents`) materialises the narrow enriched columns and one row
per work session (``a2a_lab.materialize``). :class:`StoredView` is one committed state of
those tables: the sessions rows are held in memory (one row a session: kilobytes to a few
MB), the enriched columns stay on disk as a lazy scan, so a query reads only the columns
and rows it needs (projection and predicate pushdown).

- ``/api/work-sessions`` without a role or type filter is answered from the sessions rows
  (:func:`a2a_lab.sessions.sessions_from_aggregates`: the clock, overrides, order and
  filters on the rows alone, then the threads of the page's sessions from their events);
  a role or type filter changes which events make a session, so it runs the sessions
  query on the enriched columns (lazily: the narrow columns only).
- ``/api/events`` filters the enriched columns lazily and gathers the kept rows.
- The event objects of a body are written from the original lines (``raw``), read from the
  store's event parts for the rows a body needs only.

The tables an update rewrites (the sessions table is replaced at every refresh) may be
deleted while a request still reads an older state: the sessions rows are therefore read
into memory when the view is made; the enriched and event parts are only ever added to by
an append (a rebuild replaces them: a request that then fails is retried on the new view
by the caller).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

from a2a_lab.enrich import ENRICHMENT_COLUMNS
from a2a_lab.io import StoreSnapshot
from a2a_lab.materialize import ENRICHED_TABLE, sessions_query_source
from a2a_lab.sessions import (
    AGGREGATE_COLUMNS,
    EventsResult,
    SessionQuery,
    WorkSessionsResult,
    events_query,
    limit_count,
    session_aggregates,
    session_id_expr,
    sessions_from_aggregates,
    work_sessions,
)

#: The store table :mod:`a2a_lab.materialize` keeps the work sessions' rows in (it does not
#: export the name; :func:`open_view` finds no table, and answers None, if it changes).
SESSIONS_TABLE = "work_sessions"

#: The columns of an enriched row the event objects are written from (``raw`` added):
#: its keys, the enrichment, and the event's own fields an object may be written from.
ROW_COLUMNS = (
    "file",
    "line",
    *ENRICHMENT_COLUMNS,
    *["type", "agent_id", "ts", "timestamp_ms", "timestamp", "status", "data"],
)


#: The columns ``GET /api/events`` filters and orders by.
EVENT_FILTER_COLUMNS = ("file", "line", "event_ms", "event_role", "type", "collab_category")


#: How many ``GET /api/events`` answers on the stored rows a view keeps (by query).
EVENT_ANSWERS = 8


class SessionEvents:
    """The stored events of the sessions appended lines touched lately, by session id (and
    the stored rows' answers of ``GET /api/events``, :func:`stored_events`).

    A live log appends to the same few sessions again and again: their stored events are
    read from the enriched table once (a scan of the whole table by session id) and kept,
    so the next append re-makes those sessions from memory. At most ``budget_rows`` events
    are kept (least recently used sessions dropped first); one instance serves one state of
    the tables (a view made again from them starts a new one).
    """

    def __init__(self, budget_rows: int = 300_000) -> None:
        self.budget_rows = budget_rows
        #: ``GET /api/events`` answers on the stored rows, by query (see :func:`stored_events`)
        self.events: dict[tuple[tuple[str, str], ...], EventsResult] = {}
        self._kept: dict[str, pl.DataFrame] = {}
        self._lock = threading.Lock()

    def of(self, ids: list[str], stored: pl.LazyFrame) -> pl.DataFrame:
        """The stored events of sessions ``ids`` (:data:`AGGREGATE_COLUMNS`), each in
        reading order, session after session."""
        with self._lock:
            kept = {i: self._kept.pop(i) for i in ids if i in self._kept}
        missing = [i for i in ids if i not in kept]
        if missing:
            found = (
                stored.filter(
                    session_id_expr().is_in(pl.Series(missing, dtype=pl.String).implode())
                )
                .select(*AGGREGATE_COLUMNS, session_id_expr().alias("_id"))
                .collect()
            )
            parts = found.partition_by("_id", as_dict=True, include_key=False)
            empty = found.clear().drop("_id")
            kept.update({i: parts.get((i,), empty) for i in missing})
        with self._lock:
            self._kept.update(kept)  # the most recently used last
            total = sum(frame.height for frame in self._kept.values())
            while total > self.budget_rows and self._kept:
                total -= self._kept.pop(next(iter(self._kept))).height
        return pl.concat([kept[i] for i in ids]) if ids else found_empty(stored)


def found_empty(stored: pl.LazyFrame) -> pl.DataFrame:
    """No events, with the columns :meth:`SessionEvents.of` gives."""
    return pl.DataFrame(schema=stored.select(AGGREGATE_COLUMNS).collect_schema())


@dataclass(frozen=True)
class StoredView:
    """One committed state of a store's materialised tables, and the events ingested since.

    Attributes
    ----------
    snap
        The store's verified state.
    stored
        The materialised enriched columns in the loader's reading order (lazy: on disk).
    table_rows
        The sessions table's rows with ``_fr``, the reading rank of each session's first
        event's file (as :func:`a2a_lab.materialize.stored_work_sessions` joins it).
    files, names
        The store's files in reading order, and its :meth:`StoreSnapshot.files` frame.
    tail
        The enriched events ingested after the tables were made (the stored columns and
        ``raw``, in reading order after every stored event), empty when they are current.
    touched
        The work sessions the tail's events belong to.
    memo
        The stored events of sessions touched lately (:class:`SessionEvents`).
    """

    snap: StoreSnapshot
    stored: pl.LazyFrame
    table_rows: pl.DataFrame
    files: list[str]
    names: pl.DataFrame
    tail: pl.DataFrame
    touched: frozenset[str] = frozenset()
    memo: SessionEvents = dataclasses.field(default_factory=SessionEvents, compare=False)

    @property
    def events(self) -> int:
        """Events the server answers from."""
        return self.snap.events + self.tail.height

    @property
    def enriched(self) -> pl.LazyFrame:
        """Every event's enriched columns in reading order: the stored ones, then the tail."""
        if self.tail.height == 0:
            return self.stored
        return pl.concat([self.stored, _as(self.tail.lazy(), self.stored.collect_schema())])

    @functools.cached_property
    def rows(self) -> pl.DataFrame:
        """One row per work session: the table's, those of the sessions the tail touched
        made again from all their events (made when first asked, then kept)."""
        if not self.touched:
            return self.table_rows
        ids = sorted(self.touched)
        wanted = pl.Series(ids, dtype=pl.String).implode()
        tail = _as(self.tail.lazy(), self.stored.collect_schema()).filter(
            session_id_expr().is_in(wanted)
        )
        events = pl.concat([self.memo.of(ids, self.stored).lazy(), tail.select(AGGREGATE_COLUMNS)])
        fresh = session_aggregates(events)
        return pl.concat(
            [
                self.table_rows.filter(~pl.col("work_session_id").is_in(wanted)),
                fresh.join(_first_ranks(self.names), on="_first_file", how="left"),
            ],
            how="vertical_relaxed",
        )

    def last_times(self) -> pl.Series:
        """Instants at which a session may turn ARCHIVED, less the window, sorted: every
        session's last event time in the tables, and every tail event's time (a superset
        of the sessions' last times: a cached body's validity ends no later than it must).
        """
        return (
            pl.concat(
                [
                    self.table_rows.get_column("_last_ms").cast(pl.Float64),
                    self.tail.get_column("event_ms").cast(pl.Float64),
                ]
            )
            .drop_nulls()
            .sort()
        )


Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def _as(frame: Frame, schema: pl.Schema) -> Frame:
    """``frame``'s columns of ``schema``, in its order and of its types."""
    return frame.select([pl.col(c).cast(t) for c, t in schema.items()])


def open_view(
    store: str | os.PathLike[str], *, main_agents: Any = None, tz: str | None = None
) -> StoredView | None:
    """The store's current view, or None when its tables do not answer for these options
    (not materialised for these main agents, another zone than ``tz``, behind its events)."""
    found = sessions_query_source(store, main_agents=main_agents, tz=tz)
    if found is None:
        return None
    snap, enriched = found
    table = snap.scan_table(SESSIONS_TABLE)
    if table is None:
        return None
    names = snap.files()
    rows = table.collect().join(_first_ranks(names), on="_first_file", how="left")
    tail = pl.DataFrame(schema={"raw": pl.String, **enriched.collect_schema()})
    return StoredView(snap, enriched, rows, names.get_column("file").to_list(), names, tail)


def _first_ranks(names: pl.DataFrame) -> pl.DataFrame:
    return names.select(pl.col("file").alias("_first_file"), pl.col("_rank").alias("_fr"))


def with_tail(view: StoredView, new: pl.DataFrame, names: pl.DataFrame) -> StoredView:
    """``view`` with the enriched events ``new`` (appended to files already read) added.

    The sessions the new events belong to are made again, from all their events, when the
    new view's :attr:`~StoredView.rows` are first asked for; the others keep their rows.
    ``names`` is the store's files now (:meth:`StoreSnapshot.files`).
    """
    touched = (
        new.lazy()
        .select(session_id_expr().alias("id"))
        .drop_nulls()
        .unique()
        .collect()
        .get_column("id")
        .to_list()
    )
    return dataclasses.replace(
        view,
        tail=pl.concat([view.tail, new.select(view.tail.columns)], how="vertical_relaxed"),
        touched=view.touched | frozenset(touched),
        names=names,
    )


def stored_sessions(
    view: StoredView, query: SessionQuery, now_ms: float, overrides: Any
) -> tuple[WorkSessionsResult, bool]:
    """The sessions query on the store's events, and whether the sessions rows answered it
    (False: a role or type filter, run on the enriched columns).

    The result is that of :func:`a2a_lab.sessions.work_sessions` on every stored event
    (``tests/serve/test_serve_store.py`` checks the bodies byte for byte).
    """
    try:
        with pl.Config(engine_affinity="streaming"):
            result = sessions_from_aggregates(
                view.rows, view.enriched, query, now=now_ms, overrides=overrides
            )
        return result, True
    except ValueError:  # a filter that changes which events make a session
        result = work_sessions(view.enriched, query, now=now_ms, overrides=overrides)
        return result, False


def event_times(view: StoredView) -> pl.Series:
    """Every event's time (ms), sorted, nulls dropped."""
    return (
        view.enriched.select(pl.col("event_ms").cast(pl.Float64))
        .drop_nulls()
        .sort("event_ms")
        .collect()
        .to_series()
    )


def stored_rows(view: StoredView, keys: pl.DataFrame) -> pl.DataFrame:
    """The enriched rows at ``keys`` (``file, line``), in that order, with their ``raw`` line.

    Only the rows asked for are gathered: the predicates (the keys' lines) reach the
    Parquet reader of the enriched table, which keeps the original lines; the tail's rows
    come from memory.
    """
    columns = [*ROW_COLUMNS, "raw"]
    order = keys.select("file", "line").with_row_index("_order")
    from_tail = order.join(view.tail.select(columns), on=["file", "line"], how="inner")
    rest = order.join(from_tail.select("file", "line"), on=["file", "line"], how="anti")
    table = view.snap.scan_table(ENRICHED_TABLE)
    parts = [from_tail]
    if rest.height and table is not None:
        wanted = view.snap.named(
            table.filter(pl.col("line").is_in(rest.get_column("line").unique().implode()))
        ).select(columns)
        parts.append(rest.lazy().join(wanted, on=["file", "line"], how="left").collect())
    schema = pl.Schema({"_order": pl.UInt32(), **view.tail.select(columns).schema})
    found = pl.concat([_as(p, schema) for p in parts])
    return found.sort("_order").drop("_order")


def _events_of(
    frame: pl.DataFrame | pl.LazyFrame, params: dict[str, str], files: list[str]
) -> EventsResult:
    return events_query(
        frame,
        since=params.get("since"),
        role=params.get("role"),
        types=params.get("type"),
        view_category=params.get("viewCategory"),
        limit=params.get("limit"),
        files=files,
    )


def stored_events(view: StoredView, params: dict[str, str]) -> EventsResult:
    """``GET /api/events`` on the store's events (the kept rows with their original lines).

    The filters are row by row and the tail's rows come after every stored row in reading
    order, so the answer is the stored rows' answer (kept per view state and query: the
    tables do not change until the view is made again) joined with the tail's: counts
    added, categories in order of first appearance, the last ``limit`` rows of both.
    """
    key = tuple(sorted(params.items()))
    stored = view.memo.events.get(key)
    if stored is None:
        # the filters read these columns only, on the rows as they lie (the query sorts
        # what it keeps by file rank and line itself); the kept rows are gathered after
        table = view.snap.scan_table(ENRICHED_TABLE)
        assert table is not None
        narrow = view.snap.named(table).select(EVENT_FILTER_COLUMNS)
        stored = _events_of(narrow, params, view.files)
        view.memo.events[key] = stored
        while len(view.memo.events) > EVENT_ANSWERS:  # the oldest answers dropped
            view.memo.events.pop(next(iter(view.memo.events)), None)
    result = stored
    if view.tail.height:
        tail = _events_of(view.tail.select(EVENT_FILTER_COLUMNS), params, view.files)
        counts = dict(stored.category_counts)
        for category, n in tail.category_counts.items():
            counts[category] = counts.get(category, 0) + n
        count = limit_count(params.get("limit"))
        kept = pl.concat([stored.events, tail.events], how="vertical_relaxed")
        result = dataclasses.replace(
            tail,
            events=kept if count is None else kept.tail(count),
            total=stored.total + tail.total,
            total_matched=stored.total_matched + tail.total_matched,
            category_counts=counts,
        )
    return dataclasses.replace(
        result, events=stored_rows(view, result.events.select("file", "line"))
    )
