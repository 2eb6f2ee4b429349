"""Work sessions and threads (rules §7-§8): :func:`work_sessions`, :class:`WorkSessionsResult`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal, Never

import polars as pl

from a2a_lab._frames import ms_to_seconds, ms_to_time
from a2a_lab._options import reject_removed_keywords
from a2a_lab.reference.jsstr import js_lower, js_string_expr, utf16_sort_key_expr
from a2a_lab.reference.rules import TASK_MONITOR_V1, RuleSet
from a2a_lab.sessions._js import Now, _now_ms, limit_count
from a2a_lab.sessions._objects import _event_objects, _event_rows, _json_number, event_objects
from a2a_lab.sessions._overrides import load_overrides, session_columns, with_overrides
from a2a_lab.sessions._session_query import SessionQuery
from a2a_lab.time import in_window, python_safe

#: ``id`` of the session that ``SessionQuery(unassigned=True)`` builds from events without a
#: workSessionId (it cannot collide with a real session, whose id always starts with ``ws:``).
UNASSIGNED_SESSION_ID = "unassigned"

#: The lifecycle events that end a task, terminal with ``SessionQuery(lifecycle_terminal=True)``.
LIFECYCLE_TERMINAL_TYPES: tuple[str, ...] = ("task.completed", "task.cancelled")

_SESSION_COLUMNS = (
    "id",
    "work_session_id",
    "status",
    "start_time",
    "last_time",
    "duration_s",
    "thread_count",
    "event_count",
    "collab_category",
    "collab_sub_tags",
    "category_source",
    "role_counts",
)
_THREAD_COLUMNS = (
    "work_session_id",
    "id",
    "conversation_id",
    "from_agent",
    "to_agent",
    "start_time",
    "last_time",
    "event_count",
    "collab_category",
    "collab_sub_tags",
)
#: The §8.1 session fields of :meth:`WorkSessionsResult.to_api` (JSON key → column of
#: :attr:`WorkSessionsResult.sessions`); the times come from the float ms columns.
_SESSION_API: dict[str, str] = {
    "id": "id",
    "workSessionId": "work_session_id",
    "status": "status",
    "startTime": "_start_ms",
    "lastTime": "_last_ms",
    "durationMs": "_duration_ms",
    "threadCount": "thread_count",
    "eventCount": "event_count",
    "collabCategory": "collab_category",
    "collabSubTags": "collab_sub_tags",
    "categorySource": "category_source",
    "roleCounts": "role_counts",
}


# ---------------------------------------------------------------------------------------
# The session rules, vectorised
# ---------------------------------------------------------------------------------------


def _data(name: str) -> pl.Expr:
    return pl.col("data").struct.field(name)


def _js_integer_string(number: pl.Expr) -> pl.Expr:
    """``String(n)`` of an integral double, as JavaScript writes it.

    Below 1e21 JavaScript writes every digit; from 1e21 on it writes the shortest
    round-trip form with an exponent (``1e+21``), which is also how Polars casts a float.
    """
    return (
        pl.when(number.abs() < 1e21)
        .then(number.cast(pl.Int128).cast(pl.String))
        .otherwise(number.cast(pl.String))
    )


def _session_events(
    enriched: pl.LazyFrame,
    *,
    roles: list[str],
    types: list[str],
    unassigned: bool,
    rules: RuleSet,
    chunk_rows: int | None = None,
) -> pl.DataFrame:
    """The events that enter work sessions, in the reference's processing order.

    ``_seq`` numbers them in that order (time, ties in frame order). ``_thread`` identifies
    an event's session and thread in one canonical string that is cheap to group by: the
    length-prefixed workSessionId, then ``c<conversationId>``, else ``p<len>:<a><b>`` for
    the unordered pair of agents (in code-point order), else ``e<bucket>:<type>``; the
    length prefixes keep it unambiguous. The printed thread id (pair in UTF-16 order) is
    made per thread by :func:`_thread_id`.

    With ``chunk_rows``, the lazy frame is collected ``chunk_rows`` rows at a time (every
    column is computed row by row, so the chunks concatenated are the whole): a lazy
    source's enrichment (texts scored for the category) is then never held for more rows.
    """
    if chunk_rows is not None:
        n = int(enriched.select(pl.len()).collect().item())
        if n > chunk_rows:
            return _ordered(
                pl.concat(
                    [
                        _session_rows(
                            enriched.slice(off, chunk_rows), roles, types, unassigned, rules
                        )
                        for off in range(0, n, chunk_rows)
                    ]
                )
            )
    return _ordered(_session_rows(enriched, roles, types, unassigned, rules))


def _ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """The session events in processing order, numbered ``_seq``."""
    # A stable sort by time: ties keep the frame's order (file order for a loaded log);
    # -0.0 and 0.0 compare equal, as with the reference's comparator a - b. A loaded frame
    # is already in this order, and a stable sort of a sorted column changes nothing.
    if not frame.get_column("ts").is_sorted():
        frame = frame.sort("ts", maintain_order=True)
    # contiguous columns: the many gathers by _seq that follow are then much cheaper
    return frame.with_row_index("_seq").rechunk()


def _session_rows(
    enriched: pl.LazyFrame, roles: list[str], types: list[str], unassigned: bool, rules: RuleSet
) -> pl.DataFrame:
    """The rows of :func:`_session_events` in frame order, collected."""
    events = enriched.select(
        "file",
        "line",
        "type",
        pl.col("event_ms").alias("ts"),
        "event_role",
        "collab_category",
        "collab_sub_tags",
        "from_agent",
        "to_agent",
        js_string_expr(_data("workSessionId")).alias("work_session_id"),
        _data("conversationId").alias("_conversation"),
        _data("status").alias("_dataStatus"),
        pl.col("status").alias("_topStatus"),
    )
    if types:
        events = events.filter(pl.col("type").is_in(types))
    if roles:
        events = events.filter(pl.col("event_role").is_in(roles))
    if not unassigned:
        events = events.filter(pl.col("work_session_id").is_not_null())
    from_agent = pl.col("from_agent").fill_null("unknown")
    to_agent = pl.col("to_agent").fill_null("unknown")
    by_conversation = pl.col("conversation_id").is_not_null()
    # "<a>_<b>" is "unknown_unknown" only for a == b == "unknown" ("_" sits at index 7 only)
    no_pair = (from_agent == "unknown") & (to_agent == "unknown")
    # the parts of the other kinds of key are null where unused, which keeps them cheap
    low = pl.when(~by_conversation & ~no_pair).then(pl.min_horizontal(from_agent, to_agent))
    high = pl.when(~by_conversation & ~no_pair).then(pl.max_horizontal(from_agent, to_agent))
    bucket_ts = pl.when(~by_conversation & no_pair).then(pl.col("ts"))
    # + 0.0 makes floor(-0.0) the same bucket as 0.0, as String(-0) is "0"
    bucket = ((bucket_ts / rules.thread_bucket_ms).floor() + 0.0).cast(pl.String)
    session = pl.col("work_session_id")
    thread = pl.concat_str(
        # the session, length-prefixed; "-" (never a digit) for events without one
        pl.concat_str(session.str.len_bytes().cast(pl.String), pl.lit(":"), session).fill_null("-"),
        pl.coalesce(
            pl.lit("c") + pl.col("conversation_id"),
            pl.concat_str(pl.lit("p"), low.str.len_bytes().cast(pl.String), pl.lit(":"), low, high),
            pl.concat_str(pl.lit("e"), bucket, pl.lit(":"), pl.col("type")),
        ),
    )
    # every column is computed row by row inside the (streaming) collect, and the strings
    # that repeat (paths, ids, agents, types, roles, categories, the thread key) are kept as
    # categoricals: the frame holds each distinct string once (issue 12: memory)
    return (
        events.with_columns(js_string_expr(pl.col("_conversation")).alias("conversation_id"))
        .with_columns(thread.alias("_thread"))
        .drop("_conversation")
        .with_columns(pl.col(_CATEGORICAL).cast(pl.Categorical))
        .collect()
    )


#: Rows of a lazy source :func:`work_sessions` collects at a time (issue 12: memory).
CHUNK_ROWS = 400_000

#: The event columns :func:`_session_events` keeps as categoricals (read back as strings
#: by :func:`_gathered` and :meth:`WorkSessionsResult._thread_events`).
_CATEGORICAL: Final = (
    "file",
    "type",
    "event_role",
    "collab_category",
    "from_agent",
    "to_agent",
    "work_session_id",
    "conversation_id",
    "_thread",
)


_FROM_U_E000 = "[\\x{E000}-\\x{10FFFF}]"


def _thread_id(rules: RuleSet) -> pl.Expr:
    """``conv:<id>``, else ``pair:<a>_<b>`` in UTF-16 order, else ``event:<type>:<bucket>``.

    Evaluated per thread on the values of its first event (``conversation_id``,
    ``from_agent``, ``to_agent``, ``_type``, ``_ts``): every event of a thread gives the same id.
    """
    # only threads without a conversation id need the pair: null elsewhere keeps it cheap
    by_pair = pl.col("conversation_id").is_null()
    from_agent = pl.when(by_pair).then(pl.col("from_agent"))
    to_agent = pl.when(by_pair).then(pl.col("to_agent"))
    # UTF-16 and code-point order differ only for characters from U+E000 on; the (slow)
    # UTF-16 sort keys are computed for the pairs with such characters alone
    high = from_agent.str.contains(_FROM_U_E000) | to_agent.str.contains(_FROM_U_E000)
    from_first = (
        pl.when(high)
        .then(
            utf16_sort_key_expr(pl.when(high).then(from_agent))
            <= utf16_sort_key_expr(pl.when(high).then(to_agent))
        )
        .otherwise(from_agent <= to_agent)
    )
    pair = (
        pl.when(from_first).then(from_agent + "_" + to_agent).otherwise(to_agent + "_" + from_agent)
    )
    bucket = _js_integer_string((pl.col("_ts") / rules.thread_bucket_ms).floor())
    return (
        pl.when(pl.col("conversation_id").is_not_null())
        .then(pl.lit("conv:") + pl.col("conversation_id"))
        .when(pair != "unknown_unknown")
        .then(pl.lit("pair:") + pair)
        .otherwise(pl.concat_str(pl.lit("event:"), pl.col("_type"), pl.lit(":"), bucket))
    )


def _is_terminal(rules: RuleSet, *, lifecycle_terminal: bool) -> pl.Expr:
    """Rules §7 terminal event, on the latest event's ``_type``, ``_dataStatus``, ``_topStatus``."""
    event_type = pl.col("_type")
    data_status = js_string_expr(pl.col("_dataStatus"))
    task_status = pl.coalesce(data_status, js_string_expr(pl.col("_topStatus")))
    spawn_error = (event_type == rules.spawn_result_type) & data_status.is_in(
        list(rules.spawn_result_terminal_statuses)
    )
    task_end = event_type.str.starts_with(rules.task_type_prefix) & task_status.is_in(
        list(rules.task_terminal_statuses)
    )
    terminal = (
        event_type.is_in(list(rules.terminal_types))
        | spawn_error.fill_null(False)
        | task_end.fill_null(False)
    )
    if lifecycle_terminal:
        terminal = terminal | event_type.is_in(list(LIFECYCLE_TERMINAL_TYPES))
    return terminal


def _role_counts(rules: RuleSet) -> list[pl.Expr]:
    return [
        (pl.col("event_role") == role).sum().cast(pl.Int64).alias(role)
        for role in rules.event_roles
    ]


def _thread_table(events: pl.DataFrame, rules: RuleSet) -> pl.DataFrame:
    """One row per thread: times, counts, and the ``_seq`` of the events its values come from.

    "The first event whose category is not the default" and "the first non-empty sub-tag
    list" are found as the smallest ``_seq`` among those events, then gathered.
    """
    default = rules.default_category
    return events.group_by("_thread").agg(
        pl.col("_seq").min().alias("_first"),
        pl.col("_seq").max().alias("_last"),
        pl.col("_seq").alias("_members"),
        pl.col("ts").min().alias("_start_ms"),
        pl.col("ts").max().alias("_last_ms"),
        pl.len().cast(pl.Int64).alias("event_count"),
        pl.when(pl.col("collab_category") != default)
        .then(pl.col("_seq"))
        .min()
        .alias("_categorySeq"),
        pl.when(pl.col("collab_sub_tags").list.len() > 0)
        .then(pl.col("_seq"))
        .min()
        .alias("_subTagSeq"),
        *_role_counts(rules),
    )


def _gathered(events: pl.DataFrame, column: str, index: pl.Series) -> pl.Series:
    """``events[column][index]`` (null where the index is null), categoricals as strings."""
    values = events.get_column(column).gather(index)
    return values.cast(pl.String) if values.dtype == pl.Categorical else values


def _first_values(table: pl.DataFrame, events: pl.DataFrame, rules: RuleSet) -> pl.DataFrame:
    """The category and sub-tags of a thread or session, from the events they come from."""
    empty = pl.lit([], dtype=pl.List(pl.String))
    return table.with_columns(
        _gathered(events, "collab_category", table["_categorySeq"])
        .fill_null(rules.default_category)
        .alias("_eventCategory"),
        _gathered(events, "collab_sub_tags", table["_subTagSeq"]).alias("collab_sub_tags"),
    ).with_columns(pl.col("collab_sub_tags").fill_null(empty))


# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkSessionsResult:
    """Work sessions as the dashboard builds and filters them.

    Attributes
    ----------
    sessions
        One row per session that passed the status / viewCategory / subTag filters, in the
        reference's order (last activity descending, ties by first appearance); the
        fields of a §8.1 session except ``threads``, snake_case: ``id, work_session_id,
        status, start_time, last_time`` (UTC datetimes), ``duration_s`` (seconds),
        ``thread_count, event_count, collab_category, collab_sub_tags, category_source,
        role_counts``.
    threads
        One row per thread of those sessions, sessions in order and, inside each, threads in
        the reference's order; the key ``work_session_id`` plus the §8.1 thread fields
        except ``events``: ``id, conversation_id, from_agent, to_agent, start_time,
        last_time, event_count, collab_category, collab_sub_tags``.
    category_counts
        Sessions per category over ``sessions`` (before the limit), in order of first
        appearance, as the reference counts them.
    total_sessions
        Sessions built after the role / type filters (``totalSessions``).
    limit_count
        How many sessions :meth:`to_api` returns at most (None: all), from ``limit``.
    query
        The echo of the filters: ``role``, ``type``, ``status``, ``viewCategory``, ``subTag``.
    """

    sessions: pl.DataFrame
    threads: pl.DataFrame
    category_counts: dict[str, int]
    total_sessions: int
    limit_count: int | None
    query: dict[str, Any]
    _members: pl.Series = field(repr=False)
    _events: pl.DataFrame = field(repr=False)
    _enriched: pl.LazyFrame = field(repr=False)
    # the times as the reference's float ms, row by row beside ``sessions`` / ``threads``:
    # ``to_api`` writes them exactly (a Datetime keeps neither fractions of a ms nor -0.0)
    _session_ms: pl.DataFrame = field(repr=False)
    _thread_ms: pl.DataFrame = field(repr=False)

    @property
    def total_matched(self) -> int:
        """Sessions after the status / viewCategory / subTag filters (``totalMatched``)."""
        return self.sessions.height

    @cached_property
    def thread_events(self) -> pl.DataFrame:
        """The thread-event membership (built on first use).

        ``work_session_id, thread_id, file, line, ts, type`` (``ts``: the event time in epoch
        ms, rules §2): one row per event of
        :attr:`threads`, threads in their order and, inside each, events in time order
        (stable), as the reference lists them.
        """
        return self._thread_events(self.threads.height)

    def _thread_events(self, n_threads: int) -> pl.DataFrame:
        """The membership of the first ``n_threads`` threads."""
        members = (
            self.threads.head(n_threads)
            .select(
                "work_session_id", pl.col("id").alias("thread_id"), self._members.head(n_threads)
            )
            .explode("_members")
        )
        index = members.get_column("_members")
        return members.drop("_members").with_columns(
            _gathered(self._events, name, index) for name in ("file", "line", "ts", "type")
        )

    def event_object_batches(self, count: int, batch_rows: int = 5000) -> Iterator[list[Any]]:
        """The first ``count`` thread events' objects, in ``to_api()`` order, a batch at a time.

        For a writer that streams the body: the page's rows (narrow columns and the original
        lines) are read once, and only one batch of objects is held at a time.
        """
        keys = self.thread_events.head(count).select("file", "line")
        rows = _event_rows(self._enriched, keys) if keys.height else None
        for start in range(0, keys.height, batch_rows):
            assert rows is not None
            yield event_objects(rows.slice(start, batch_rows))

    def to_api(self, *, thread_events: Literal["full", "summary"] = "full") -> dict[str, Any]:
        """The JSON body of ``GET /api/work-sessions`` (rules §8.1), exactly.

        Parameters
        ----------
        thread_events
            ``"full"`` (the reference): each thread's events are the enriched event
            objects. ``"summary"``: ``{line, ts, type}`` per event (the shape of the
            conformance data, much smaller).

        Returns
        -------
        dict
            ``{sessions, count, totalMatched, totalSessions, role, type, status,
            viewCategory, subTag, categoryCounts}``; a thread without a conversationId has
            no ``conversationId`` key, as ``JSON.stringify`` drops undefined.
        """
        sessions = pl.concat([self.sessions, self._session_ms], how="horizontal")
        if self.limit_count is not None:
            sessions = sessions.head(self.limit_count)
        n_threads = int(sessions.get_column("thread_count").sum())
        threads = pl.concat([self.threads, self._thread_ms], how="horizontal").head(n_threads)
        members = self._thread_events(n_threads)
        if thread_events == "full":
            objects = _event_objects(self._enriched, members.select("file", "line"))
        else:
            objects = [
                {"line": line, "ts": _json_number(ts), "type": event_type}
                for line, ts, event_type in members.select("line", "ts", "type").iter_rows()
            ]
        events_by_thread: dict[tuple[Any, str], list[Any]] = {}
        for (ws_id, thread_id), obj in zip(
            members.select("work_session_id", "thread_id").iter_rows(), objects, strict=True
        ):
            events_by_thread.setdefault((ws_id, thread_id), []).append(obj)
        threads_by_session: dict[Any, list[dict[str, Any]]] = {}
        for row in python_safe(threads).iter_rows(named=True):
            thread = {
                "id": row["id"],
                "conversationId": row["conversation_id"],
                "fromAgent": row["from_agent"],
                "toAgent": row["to_agent"],
                "startTime": _json_number(row["_start_ms"]),
                "lastTime": _json_number(row["_last_ms"]),
                "eventCount": row["event_count"],
                "collabCategory": row["collab_category"],
                "collabSubTags": row["collab_sub_tags"],
                "events": events_by_thread[(row["work_session_id"], row["id"])],
            }
            if thread["conversationId"] is None:
                del thread["conversationId"]
            threads_by_session.setdefault(row["work_session_id"], []).append(thread)
        body_sessions = []
        for row in python_safe(sessions).iter_rows(named=True):
            session = {key: row[column] for key, column in _SESSION_API.items()}
            for name in ("startTime", "lastTime", "durationMs"):
                session[name] = _json_number(session[name])
            session["threads"] = threads_by_session[row["work_session_id"]]
            body_sessions.append(session)
        return {
            "sessions": body_sessions,
            "count": len(body_sessions),
            "totalMatched": self.total_matched,
            "totalSessions": self.total_sessions,
            "role": list(self.query["role"]),
            "type": list(self.query["type"]),
            "status": list(self.query["status"]),
            "viewCategory": self.query["viewCategory"],
            "subTag": self.query["subTag"],
            "categoryCounts": dict(self.category_counts),
        }


def filter_sessions(
    sessions: pl.DataFrame, status: list[str], view: str | None, tag: str | None
) -> pl.DataFrame:
    """Built sessions kept by the status, viewCategory and subTag filters (rules §8).

    ``status``: valid statuses (none: no filter); ``view``: JS-trimmed category (``"all"``
    or None: no filter); ``tag``: JS-trimmed sub-tag, compared JS-lower-cased.
    """
    matched = sessions
    if status:
        matched = matched.filter(pl.col("status").is_in(status))
    if view is not None and view != "all":
        matched = matched.filter(pl.col("collab_category") == view)
    if tag is not None:
        needle = js_lower(tag)
        matched = matched.filter(
            pl.col("collab_sub_tags")
            .list.eval(pl.element().str.to_lowercase() == needle)
            .list.any()
        )
    return matched


def work_sessions(
    enriched: pl.DataFrame | pl.LazyFrame,
    query: SessionQuery | None = None,
    *,
    now: Now,
    overrides: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    rules: RuleSet = TASK_MONITOR_V1,
    **removed: Never,
) -> WorkSessionsResult:
    """Build and filter the work sessions of enriched events (rules §7-§8).

    Parameters
    ----------
    enriched
        Events enriched by :func:`a2a_lab.enrich` (any row order; ties in time keep it, so
        pass a loaded frame as it comes: time-ordered with ties in file order).
    query
        Which sessions, and how many in :meth:`WorkSessionsResult.to_api`: the dashboard's
        filters (``roles``, ``types``, ``status``, ``view_category``, ``sub_tag``,
        ``limit``), the two non-default modes (``lifecycle_terminal``, ``unassigned``) and
        a time window (``since``, ``until``); see :class:`SessionQuery`. Default: no
        filter, the reference's behaviour.
    now
        The clock for ARCHIVED: epoch milliseconds, an ISO 8601 string or a datetime
        (naive = UTC; :func:`a2a_lab.to_epoch_ms`).
    overrides
        Category overrides in the reference file's shape, or that file's path (see
        :func:`load_overrides`).
    rules
        The rule set (archive window, bucket size, terminal rules, roles, categories).
    **removed
        None accepted: a filter passed as a keyword (the form before the options object,
        ``roles=…``) raises a ``TypeError`` naming :class:`SessionQuery`.

    Returns
    -------
    WorkSessionsResult
        The sessions, threads and membership frames, counts, and ``to_api()``.

    Raises
    ------
    TypeError
        If ``query`` is not a :class:`SessionQuery`, or a filter is passed as a keyword.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.from_records([
    ...     {"type": "a2a.send", "ts": 1000, "data": {"workSessionId": "ws_1",
    ...      "conversationId": "c1", "fromAgent": "ruda", "toAgent": "eden"}},
    ...     {"type": "a2a.complete", "ts": 2000, "data": {"workSessionId": "ws_1",
    ...      "conversationId": "c1", "fromAgent": "ruda", "toAgent": "eden"}},
    ... ])
    >>> res = work_sessions(al.enrich(ev), now=60_000)
    >>> res.sessions.select("id", "status", "event_count", "thread_count").row(0)
    ('ws:ws_1', 'QUIET', 2, 1)
    >>> res.to_api(thread_events="summary")["sessions"][0]["threads"][0]["events"]
    [{'line': 1, 'ts': 1000, 'type': 'a2a.send'}, {'line': 2, 'ts': 2000, 'type': 'a2a.complete'}]
    >>> work_sessions(al.enrich(ev), al.SessionQuery(status="ACTIVE"), now=60_000).total_matched
    0
    """
    reject_removed_keywords("work_sessions", removed, SessionQuery, parameter="query")
    if query is None:
        query = SessionQuery()
    elif not isinstance(query, SessionQuery):
        raise TypeError(f"query must be a SessionQuery, not {type(query).__name__}")
    now_ms = _now_ms(now)
    echo = query.echo(rules)
    valid_overrides = load_overrides(overrides, rules=rules) if overrides is not None else {}

    lazy = in_window(enriched.lazy(), query.since, query.until)
    events = _session_events(
        lazy,
        roles=echo["role"],
        types=echo["type"],
        unassigned=query.unassigned,
        rules=rules,
        chunk_rows=CHUNK_ROWS if isinstance(enriched, pl.LazyFrame) else None,
    )
    threads = _threads(events, rules)
    sessions = _sessions(
        threads,
        events,
        rules,
        _session_status(now_ms, rules, lifecycle_terminal=query.lifecycle_terminal),
        valid_overrides,
    )
    return _result(sessions, _matched(sessions, echo), threads, events, lazy, query, echo)


def _result(
    sessions: pl.DataFrame,
    matched: pl.DataFrame,
    threads: pl.DataFrame,
    events: pl.DataFrame,
    enriched: pl.LazyFrame,
    query: SessionQuery,
    echo: dict[str, Any],
) -> WorkSessionsResult:
    """The matched sessions and their threads in the reference's order, with their times."""
    threads = threads.join(
        matched.select("work_session_id", "_rank"),
        on="work_session_id",
        how="inner",
        nulls_equal=True,
    ).sort(["_rank", "_last_ms", "_first"], descending=[False, True, False])
    times = [
        ms_to_time(pl.col("_start_ms")).alias("start_time"),
        ms_to_time(pl.col("_last_ms")).alias("last_time"),
    ]
    matched = matched.with_columns(
        *times, ms_to_seconds(pl.col("_duration_ms")).alias("duration_s")
    )
    threads = threads.with_columns(*times)
    return WorkSessionsResult(
        sessions=matched.select(_SESSION_COLUMNS),
        threads=threads.select(_THREAD_COLUMNS),
        category_counts=dict(
            matched.group_by("collab_category", maintain_order=True).len().iter_rows()
        ),
        total_sessions=sessions.height,
        limit_count=limit_count(query.limit),
        query=echo,
        _members=threads.get_column("_members"),
        _events=events.select("file", "line", "ts", "type"),
        _enriched=enriched,
        _session_ms=matched.select("_start_ms", "_last_ms", "_duration_ms"),
        _thread_ms=threads.select("_start_ms", "_last_ms"),
    )


def _threads(events: pl.DataFrame, rules: RuleSet) -> pl.DataFrame:
    """One row per thread with the values of its first event and its printed ``id``."""
    threads = _first_values(_thread_table(events, rules), events, rules)
    first = threads["_first"]
    return threads.with_columns(
        _gathered(events, "work_session_id", first),
        _gathered(events, "conversation_id", first),
        _gathered(events, "from_agent", first).fill_null("unknown"),
        _gathered(events, "to_agent", first).fill_null("unknown"),
        _gathered(events, "type", first).alias("_type"),
        _gathered(events, "ts", first).alias("_ts"),
        pl.col("_eventCategory").alias("collab_category"),
    ).with_columns(_thread_id(rules).alias("id"))


def _session_status(now_ms: float, rules: RuleSet, *, lifecycle_terminal: bool) -> pl.Expr:
    """Rules §7 status of a session row: ARCHIVED by ``now``, else QUIET if it ended."""
    return (
        pl.when(now_ms - pl.col("_last_ms") > rules.archive_window_ms)
        .then(pl.lit("ARCHIVED"))
        .when(_is_terminal(rules, lifecycle_terminal=lifecycle_terminal))
        .then(pl.lit("QUIET"))
        .otherwise(pl.lit("ACTIVE"))
    )


def _sessions(
    threads: pl.DataFrame,
    events: pl.DataFrame,
    rules: RuleSet,
    status: pl.Expr,
    overrides: dict[str, dict[str, Any]],
) -> pl.DataFrame:
    """One row per session built from its threads, in the reference's order (``_rank``).

    The category is the override's where one applies, else the first non-default one of
    its events; ``status`` is the rules §7 expression on the latest event.
    """
    sessions = threads.group_by("work_session_id").agg(
        pl.col("_first").min(),
        pl.col("_last").max(),
        pl.col("_start_ms").min(),
        pl.col("_last_ms").max(),
        pl.col("event_count").sum(),
        pl.len().cast(pl.Int64).alias("thread_count"),
        pl.col("_categorySeq").min(),
        pl.col("_subTagSeq").min(),
        *(pl.col(role).sum() for role in rules.event_roles),
    )
    sessions = _first_values(sessions, events, rules)
    # the latest event is the last one in processing order (ties: the later one wins)
    sessions = sessions.with_columns(
        _gathered(events, "type", sessions["_last"]).alias("_type"),
        _gathered(events, "_dataStatus", sessions["_last"]),
        _gathered(events, "_topStatus", sessions["_last"]),
    )
    joined, overridden = with_overrides(sessions, overrides)
    return (
        joined.with_columns(
            pl.when(pl.col("work_session_id").is_null())
            .then(pl.lit(UNASSIGNED_SESSION_ID))
            .otherwise(pl.lit("ws:") + pl.col("work_session_id"))
            .alias("id"),
            status.alias("status"),
            *session_columns(overridden, "_eventCategory"),
            pl.struct(rules.event_roles).alias("role_counts"),
        )
        .sort(["_last_ms", "_first"], descending=[True, False])
        .with_row_index("_rank")
    )


def _matched(sessions: pl.DataFrame, echo: Mapping[str, Any]) -> pl.DataFrame:
    """The sessions that pass the status / viewCategory / subTag filters of ``echo``."""
    return filter_sessions(sessions, echo["status"], echo["viewCategory"], echo["subTag"])
