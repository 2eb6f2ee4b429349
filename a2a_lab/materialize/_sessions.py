"""Per-work-session aggregates kept in a history store: the dashboard's query without events.

``GET /api/work-sessions`` (and ``a2a-lab work-sessions``) builds every work session from
every event, then sorts and filters the sessions. Without role, type or time filters the
events enter the sessions whole, and what a session shows depends on its own events only,
except two things: its status (the clock: ARCHIVED after the archive window) and its place
among the others (last time descending, ties by its first event in processing order). So
the table :data:`SESSIONS_TABLE` holds, per session, what
:func:`a2a_lab.sessions.work_sessions` computes from the session's events (times, counts,
category, sub-tags, role counts), whether its latest event is terminal, and the key of its
first event (time, file, line); :func:`stored_work_sessions` applies the clock, the
overrides, the order and the filters to these rows alone.

The aggregates are made by :func:`a2a_lab.sessions.work_sessions` itself, on the events of
the sessions concerned (a session's events are all of one ``workSessionId``): new lines
re-make only the sessions they touch. The file of the first event is stored by name and
ranked when read; the table records the files' reading ranks it was made with, and a store
whose files came to be read in another order is rebuilt (the ties could then change).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from a2a_lab.io import StoreSnapshot, TableUpdate
from a2a_lab.sessions import (
    SessionQuery,
    WorkSessionsResult,
    session_aggregates,
    session_id_expr,
    sessions_from_aggregates,
)

#: The derived table: one row per work session of the store's events.
SESSIONS_TABLE = "work_sessions"
#: Sessions re-made per batch of an incremental update (bounded memory).
SESSIONS_BATCH = 20_000
#: Stored events per hash class of work sessions when every session is made again: a
#: class's events are what one :func:`session_aggregates` holds, whatever the density in
#: time (issue 24: the whole store at once grows with the events, 10 M in one month).
CLASS_EVENTS = 500_000


def _reading_order(snap: StoreSnapshot, frame: pl.LazyFrame) -> pl.LazyFrame:
    return snap.named(frame).sort("_rank", "line").drop("_rank")


def ranks_meta(snap: StoreSnapshot) -> list[list[Any]]:
    """The store's files and their reading ranks, as the table records them."""
    return [[name, rank] for name, rank in snap.files().select("file", "_rank").iter_rows()]


def _ranks_moved(old: list[list[Any]], new: list[list[Any]]) -> bool:
    """Whether a file the table knew is now read at another rank relative to the others."""
    known = {name for name, _ in old}
    before = [name for name, _ in sorted(old, key=lambda r: r[1])]
    after = [name for name, _ in sorted(new, key=lambda r: r[1]) if name in known]
    return before != after


def update_sessions(
    update: TableUpdate,
    enriched: pl.LazyFrame,
    touched: pl.Series | None,
    meta: dict[str, Any],
) -> tuple[int, str | None]:
    """Re-make the sessions ``touched`` (None: all) from the ``enriched`` table's rows.

    ``meta`` is what a current table records (rule set, zone, events) without the ranks.
    Returns the sessions re-made and why everything was rebuilt (or None).
    """
    snap = update.snapshot
    table = snap.table(SESSIONS_TABLE)
    ranks = ranks_meta(snap)
    old_meta = dict(table.meta)
    rebuilt = None
    if touched is None:
        rebuilt = "the enriched columns were rebuilt"
    elif not table.files:
        rebuilt = "no table yet"
    elif {k: v for k, v in old_meta.items() if k not in ("ranks", "events")} != {
        k: v for k, v in meta.items() if k != "events"
    }:
        rebuilt = "another rule set, zone or table version"
    elif _ranks_moved(old_meta.get("ranks", []), ranks):
        rebuilt = "the store's files are read in another order"
    ordered = _reading_order(snap, enriched)
    if rebuilt is None and touched is not None and touched.len() == 0:
        update.set_meta(SESSIONS_TABLE, {**meta, "ranks": ranks})
        return 0, None
    if rebuilt is not None:
        update.drop(SESSIONS_TABLE)
        rows = _all_sessions(ordered, snap.events)
        n = rows.height
    else:
        assert touched is not None
        ids = touched.unique().sort()
        old = snap.scan_table(SESSIONS_TABLE)
        assert old is not None
        kept = old.filter(~pl.col("work_session_id").is_in(ids.implode())).collect()
        fresh = [
            session_aggregates(
                ordered.filter(session_id_expr().is_in(ids.slice(i, SESSIONS_BATCH).implode()))
            )
            for i in range(0, ids.len(), SESSIONS_BATCH)
        ]
        rows = pl.concat([kept, *fresh], how="vertical_relaxed")
        n = ids.len()
        update.drop(SESSIONS_TABLE)
    update.write(SESSIONS_TABLE, rows)
    update.set_meta(SESSIONS_TABLE, {**meta, "ranks": ranks})
    return n, rebuilt


def _all_sessions(ordered: pl.LazyFrame, events: int) -> pl.DataFrame:
    """:func:`session_aggregates` of every session of ``ordered`` (``events`` rows), a
    hash class of session ids at a time: a session's events are all of its id, so its row
    is the same whichever other sessions share its batch (as in an incremental update)."""
    k = max(1, -(-events // CLASS_EVENTS))
    if k == 1:
        return session_aggregates(ordered)
    # events of no session make none (as in an incremental update): left out, not all
    # put in one class
    key = session_id_expr()
    of_class = pl.when(key.is_not_null()).then(key.hash(seed=0) % k)
    parts = [session_aggregates(ordered.filter(of_class == i)) for i in range(k)]
    return pl.concat(parts, how="vertical_relaxed")


def touched_sessions(enriched: pl.DataFrame) -> pl.Series:
    """The work sessions the rows of ``enriched`` belong to."""
    return (
        enriched.lazy()
        .select(session_id_expr().alias("work_session_id"))
        .drop_nulls()
        .unique()
        .collect()
        .to_series()
    )


def stored_work_sessions(
    snap: StoreSnapshot, enriched: pl.LazyFrame, query: SessionQuery | None = None, **options: Any
) -> WorkSessionsResult:
    """:func:`~a2a_lab.sessions.work_sessions` of every stored event, from the sessions table.

    ``snap``'s :data:`SESSIONS_TABLE` must be current (the caller checks its meta);
    ``enriched`` is its materialised enriched frame in reading order; ``query`` and the
    keyword ``options`` (``now``, ``overrides``, ``threads``, ``rules``) are those of
    :func:`~a2a_lab.sessions.sessions_from_aggregates`, run with Polars' streaming engine.
    """
    table = snap.scan_table(SESSIONS_TABLE)
    assert table is not None
    ranks = snap.files().select(pl.col("file").alias("_first_file"), pl.col("_rank").alias("_fr"))
    rows = table.collect().join(ranks, on="_first_file", how="left")
    with pl.Config(engine_affinity="streaming"):
        return sessions_from_aggregates(rows, enriched, query, **options)
