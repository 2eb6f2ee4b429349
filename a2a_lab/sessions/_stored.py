"""Work sessions from per-session aggregates: the dashboard's query without its events.

A history store keeps one row per work session (``a2a_lab.materialize``, the
``work_sessions`` table). :func:`session_aggregates` makes those rows from a session's
events with :func:`work_sessions` itself; :func:`sessions_from_aggregates` applies the clock,
the overrides, the order and the filters to the rows alone, and builds the threads of the
page's sessions only (their events, a second small query). Without role, type or time
filters the events enter the sessions whole, so the result is that of
:func:`work_sessions` on every event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab._frames import ms_to_seconds, ms_to_time
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.sessions._build import (
    _SESSION_COLUMNS,
    WorkSessionsResult,
    _is_terminal,
    filter_sessions,
    work_sessions,
)
from a2a_lab.sessions._js import _as_string, _csv_values, _now_ms, limit_count
from a2a_lab.sessions._overrides import session_columns, with_overrides
from a2a_lab.sessions._session_query import STATUSES, SessionQuery

__all__ = ["AGGREGATE_COLUMNS", "session_aggregates", "session_id_expr", "sessions_from_aggregates"]

#: The columns the sessions query reads from an enriched frame.
AGGREGATE_COLUMNS = (
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
    lazy = events.select(AGGREGATE_COLUMNS)
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
        *session_columns(overridden, "_event_category"),
    )


def sessions_from_aggregates(
    rows: pl.DataFrame,
    enriched: pl.LazyFrame,
    query: SessionQuery | None = None,
    *,
    now: Any,
    overrides: Mapping[str, Any] | None = None,
    threads: bool = True,
    rules: RuleSet = TASK_MONITOR_V1,
) -> WorkSessionsResult:
    """:func:`work_sessions` of every event of ``enriched``, from its sessions' aggregates.

    Parameters
    ----------
    rows
        :func:`session_aggregates` of every event, with ``_fr``: the reading rank of the
        file of each session's first event (``_first_file``), which breaks ties.
    enriched
        The enriched frame in reading order (read only for the page's threads).
    query, now
        As for :func:`work_sessions`; of the query, only ``status``, ``view_category``,
        ``sub_tag`` and ``limit`` (a role, type or time filter changes which events make a
        session and needs the events: a ``ValueError``).
    overrides
        Valid overrides (:func:`load_overrides`), or None.
    threads
        Build the threads (and event membership) of the page's sessions, which ``to_api``
        writes: a second query, on the page's events only. False: ``threads`` is empty.

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
    sessions = _with_overrides(rows, overrides, now_ms, rules).sort(
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
