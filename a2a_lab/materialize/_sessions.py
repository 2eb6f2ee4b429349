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

from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab._frames import ms_to_seconds, ms_to_time
from a2a_lab.io import StoreSnapshot, TableUpdate
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.sessions import (
    STATUSES,
    SessionQuery,
    WorkSessionsResult,
    work_sessions,
)
from a2a_lab.sessions._build import (
    _SESSION_COLUMNS,
    _is_terminal,
    filter_sessions,
)
from a2a_lab.sessions._js import _as_string, _csv_values, _now_ms, limit_count
from a2a_lab.sessions._overrides import with_overrides

#: The derived table: one row per work session of the store's events.
SESSIONS_TABLE = "work_sessions"
#: Sessions re-made per batch of an incremental update (bounded memory).
SESSIONS_BATCH = 20_000

#: The columns the sessions query reads from the enriched table.
_QUERY_COLUMNS = (
    "file",
    "line",
    "type",
    "event_ms",
    "event_role",
    "collab_category",
    "collab_sub_tags",
    "from_agent",
    "to_agent",
    "data",
    "status",
)


def session_id_expr() -> pl.Expr:
    """An event's work session (the JS-trimmed ``workSessionId``, null when none)."""
    return js_string_expr(pl.col("data").struct.field("workSessionId"))


def session_aggregates(events: pl.LazyFrame, rules: RuleSet = TASK_MONITOR_V1) -> pl.DataFrame:
    """One row per work session of ``events`` (whole sessions, in the loader's reading order).

    Columns: ``work_session_id, _start_ms, _last_ms, thread_count, event_count,
    _event_category, collab_sub_tags, role_counts, _terminal, _first_ts, _first_file,
    _first_line``. Everything but the last four is what ``work_sessions`` gives the session
    (no overrides); ``_terminal`` is rules §7 on its latest event; ``_first_*`` is its first
    event in processing order (time, then reading order).
    """
    lazy = events.select(_QUERY_COLUMNS)
    result = work_sessions(lazy, now=0, rules=rules)
    members = (
        result.threads.select("work_session_id")
        .with_columns(result._members.alias("_seq"))
        .explode("_seq")
        .group_by("work_session_id")
        .agg(pl.col("_seq").min().alias("_firstSeq"), pl.col("_seq").max().alias("_lastSeq"))
    )
    seq_events = result._events.with_row_index("_seq").with_columns(pl.col("file").cast(pl.String))
    first = members.join(seq_events, left_on="_firstSeq", right_on="_seq").select(
        "work_session_id",
        pl.col("ts").alias("_first_ts"),
        pl.col("file").alias("_first_file"),
        pl.col("line").alias("_first_line"),
    )
    last_keys = members.join(seq_events, left_on="_lastSeq", right_on="_seq").select(
        "work_session_id", "file", "line"
    )
    # the latest event's statuses (the membership frame has only its type)
    last = (
        last_keys.lazy()
        .join(
            lazy.select(
                "file",
                "line",
                pl.col("type").alias("_type"),
                pl.col("data").struct.field("status").alias("_dataStatus"),
                pl.col("status").alias("_topStatus"),
            ),
            on=["file", "line"],
            how="left",
        )
        .select("work_session_id", _is_terminal(rules, lifecycle_terminal=False).alias("_terminal"))
        .collect()
    )
    sessions = pl.concat([result.sessions, result._session_ms], how="horizontal")
    return (
        sessions.select(
            "work_session_id",
            "_start_ms",
            "_last_ms",
            "thread_count",
            "event_count",
            pl.col("collab_category").alias("_event_category"),
            "collab_sub_tags",
            "role_counts",
        )
        .join(last, on="work_session_id", how="left")
        .join(first, on="work_session_id", how="left")
    )


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
        rows = session_aggregates(ordered)
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


def _with_overrides(
    sessions: pl.DataFrame, overrides: Mapping[str, Any] | None, now_ms: float, rules: RuleSet
) -> pl.DataFrame:
    """Status at ``now_ms``, the category with overrides, the fields of the sessions frame."""
    valid = overrides or {}
    joined, overridden = with_overrides(sessions, valid)
    return joined.with_columns(
        (pl.lit("ws:") + pl.col("work_session_id")).alias("id"),
        pl.when(now_ms - pl.col("_last_ms") > rules.archive_window_ms)
        .then(pl.lit("ARCHIVED"))
        .when(pl.col("_terminal"))
        .then(pl.lit("QUIET"))
        .otherwise(pl.lit("ACTIVE"))
        .alias("status"),
        (pl.col("_last_ms") - pl.col("_start_ms")).clip(lower_bound=0.0).alias("_duration_ms"),
        pl.coalesce("_overrideCategory", "_event_category").alias("collab_category"),
        pl.when(overridden.fill_null(False))
        .then(pl.lit("manual_override"))
        .otherwise(pl.lit("event"))
        .alias("category_source"),
    )


def stored_work_sessions(
    snap: StoreSnapshot,
    enriched: pl.LazyFrame,
    query: SessionQuery | None = None,
    *,
    now: Any,
    overrides: Mapping[str, Any] | None = None,
    threads: bool = True,
    rules: RuleSet = TASK_MONITOR_V1,
) -> WorkSessionsResult:
    """:func:`~a2a_lab.sessions.work_sessions` of every stored event, from the sessions table.

    Parameters
    ----------
    snap
        The store, whose :data:`SESSIONS_TABLE` is current (the caller checks its meta).
    enriched
        Its materialised enriched frame in reading order (read only for the page's threads).
    query, now
        As for :func:`~a2a_lab.sessions.work_sessions`; of the query, only ``status``,
        ``view_category``, ``sub_tag`` and ``limit`` (a role, type or time filter changes
        which events make a session and needs the events: a ``ValueError``).
    overrides
        Valid overrides (:func:`~a2a_lab.sessions.load_overrides`), or None.
    threads
        Build the threads (and event membership) of the page's sessions, which ``to_api``
        writes: a second query, on the page's events only. False: ``threads`` is empty
        (the sessions table, CSV or ``-o`` output need only the sessions).

    Returns
    -------
    WorkSessionsResult
        The same sessions, counts and (with ``threads``) page body as ``work_sessions``.
    """
    now_ms = _now_ms(now)
    query = SessionQuery() if query is None else query
    if query.roles or query.types or query.since is not None or query.until is not None:
        raise ValueError("the sessions table answers no role, type or time filter")
    if query.lifecycle_terminal or query.unassigned:
        raise ValueError("the sessions table is built with the default rules §7 options")
    status_filters = [s for s in _csv_values(query.status) if s in STATUSES]
    view, tag = _as_string(query.view_category), _as_string(query.sub_tag)
    table = snap.scan_table(SESSIONS_TABLE)
    assert table is not None
    ranks = snap.files().select(pl.col("file").alias("_first_file"), pl.col("_rank").alias("_fr"))
    sessions = _with_overrides(
        table.collect().join(ranks, on="_first_file", how="left"), overrides, now_ms, rules
    ).sort(
        ["_last_ms", "_first_ts", "_fr", "_first_line"],
        descending=[True, False, False, False],
    )
    matched = filter_sessions(sessions, status_filters, view, tag).with_columns(
        ms_to_time(pl.col("_start_ms")).alias("start_time"),
        ms_to_time(pl.col("_last_ms")).alias("last_time"),
        ms_to_seconds(pl.col("_duration_ms")).alias("duration_s"),
    )
    count = limit_count(query.limit)
    page_ids = matched.get_column("work_session_id")
    page_ids = page_ids if count is None else page_ids.head(count)
    keep = session_id_expr().is_in(page_ids.implode()) if threads else pl.lit(False)
    page = work_sessions(enriched.filter(keep), now=now_ms, overrides=overrides, rules=rules)
    return WorkSessionsResult(
        sessions=matched.select(_SESSION_COLUMNS),
        threads=page.threads,
        category_counts=dict(
            matched.group_by("collab_category", maintain_order=True).len().iter_rows()
        ),
        total_sessions=sessions.height,
        limit_count=count,
        query={
            "role": [],
            "type": [],
            "status": status_filters,
            "viewCategory": view,
            "subTag": tag,
        },
        _members=page._members,
        _events=page._events,
        _enriched=page._enriched,
        _session_ms=matched.select("_start_ms", "_last_ms", "_duration_ms"),
        _thread_ms=page._thread_ms,
    )
