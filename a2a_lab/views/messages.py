"""A work session's threads as one row per message, ready to read.

This module assembles, per message of a session's threads: sender, receiver, time in a
display time zone, a message number, what happened in words (:mod:`~a2a_lab.views.labels`),
the thread's and the task's titles (:mod:`~a2a_lab.views.titles`), the text with Discord
mentions resolved (:mod:`~a2a_lab.views.mentions`) and its rendered markdown
(:mod:`~a2a_lab.views.markdown`), plus a search filter. Everything is vectorised Polars.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Never

import polars as pl

from a2a_lab._options import reject_removed_keywords
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.sessions import WorkSessionsResult
from a2a_lab.time import Zone, check_tz, format_time, python_safe
from a2a_lab.views.labels import TEXT_FIELDS, add_labels, words_expr
from a2a_lab.views.markdown import markdown_html_expr
from a2a_lab.views.mentions import mentions_expr
from a2a_lab.views.titles import task_titles

__all__ = [
    "MESSAGE_COLUMNS",
    "MessageOptions",
    "search_filter",
    "session_messages",
    "thread_messages",
]

#: Columns of :func:`thread_messages`, in order.
MESSAGE_COLUMNS: tuple[str, ...] = (
    "thread_id",
    "thread_title",
    "n",
    "time",
    "sender",
    "receiver",
    "type",
    "kind",
    "label",
    "turn",
    "max_turns",
    "task_id",
    "title",
    "text",
    "html",
    "file",
    "line",
)

_D = pl.col("data").struct


@dataclass(frozen=True, kw_only=True)
class MessageOptions:
    """Which messages of a session :func:`thread_messages` and ``thread_view`` show, and how.

    Attributes
    ----------
    discord_users
        Discord user id → name, to resolve ``<@id>`` mentions (:func:`mentions_expr`).
    search
        Keep only messages whose sender, receiver, label or text contains this,
        case-insensitively. Message numbers ``n`` are counted before the search, so a
        filtered row keeps its place in the thread.
    regex
        Read ``search`` as a regular expression (Rust / Polars syntax), case-insensitive.
    threads
        Keep only these thread ids.
    max_wait_ms
        The wait ceiling named in a timeout label when the text does not say it (runtime
        §2: 300 s).

    Examples
    --------
    >>> MessageOptions(search="no reply|refused", regex=True).regex
    True
    """

    discord_users: Mapping[str, str] | None = None
    search: str | None = None
    regex: bool = False
    threads: Iterable[str] | None = None
    max_wait_ms: float = 300_000


def _session_row(result: WorkSessionsResult, session: str) -> dict[str, Any]:
    """The session row of ``session`` (an ``id`` such as ``ws:…``, or a workSessionId)."""
    rows = result.sessions.filter(
        (pl.col("id") == session) | (pl.col("work_session_id") == session)
    )
    if rows.height == 0:
        raise KeyError(f"no work session {session!r} in this result (was it filtered out?)")
    return python_safe(rows).row(0, named=True)


def search_filter(frame: pl.DataFrame, search: str | None, *, regex: bool) -> pl.DataFrame:
    """Keep the rows whose sender, receiver, label or text matches ``search``."""
    if search is None or search == "":
        return frame
    haystack = pl.concat_str(
        [pl.col(c).fill_null("") for c in ("sender", "receiver", "label", "text")], separator="\n"
    )
    if regex:
        pattern = f"(?i){search}"
        try:
            pl.select(pl.lit("").str.contains(pattern))
        except pl.exceptions.ComputeError as exc:
            raise ValueError(f"invalid search regex {search!r}: {exc}") from exc
        return frame.filter(haystack.str.contains(pattern))
    return frame.filter(
        haystack.str.to_lowercase().str.contains(pl.lit(search).str.to_lowercase(), literal=True)
    )


def session_messages(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    session: str,
    options: MessageOptions,
    *,
    tz: str,
    titles: pl.DataFrame | None,
) -> tuple[dict[str, Any], pl.DataFrame]:
    """The session row and every message of its threads (before any search)."""
    row = _session_row(result, session)
    ws_id = row["work_session_id"]
    members = result.thread_events.filter(pl.col("work_session_id").eq_missing(ws_id))
    thread_rows = result.threads.filter(pl.col("work_session_id").eq_missing(ws_id))
    if options.threads is not None:
        wanted = list(options.threads)
        members = members.filter(pl.col("thread_id").is_in(wanted))
        thread_rows = thread_rows.filter(pl.col("id").is_in(wanted))
    titles = task_titles(enriched) if titles is None else titles
    frame = _message_rows(members, enriched, tz, options.discord_users)
    frame = _with_task_titles(add_labels(frame, max_wait_ms=options.max_wait_ms), titles)
    messages = (
        frame.join(_thread_titles(frame, thread_rows, tz), on="thread_id", how="left")
        .with_columns(
            pl.coalesce("_taskTitle", "_fallback", "thread_id").alias("thread_title"),
            markdown_html_expr(pl.col("text")).fill_null("").alias("html"),
        )
        .sort("_order")
        .select(MESSAGE_COLUMNS)
        .collect()
    )
    return row, messages


def _message_rows(
    members: pl.DataFrame,
    enriched: pl.DataFrame | pl.LazyFrame,
    tz: str,
    discord_users: Mapping[str, str] | None,
) -> pl.LazyFrame:
    """The threads' events in order (``_order``), with who, when, the turn and the text."""
    texts = pl.coalesce(*(js_string_expr(_D.field(name)) for name in TEXT_FIELDS))
    return (
        members.lazy()
        .select("thread_id", "file", "line")
        .with_row_index("_order")
        .join(
            enriched.lazy().select(
                "file", "line", "type", "event_time", "from_agent", "to_agent", "data"
            ),
            on=["file", "line"],
            how="left",
        )
        .sort("_order")
        .with_columns(
            pl.col("from_agent").alias("sender"),
            pl.col("to_agent").alias("receiver"),
            js_string_expr(_D.field("taskId")).alias("task_id"),
            pl.int_range(1, pl.len() + 1).over("thread_id").alias("n"),
            pl.col("event_time").dt.convert_time_zone(tz).alias("time"),
            _D.field("turn").cast(pl.Int64, strict=False).alias("turn"),
            _D.field("maxTurns").cast(pl.Int64, strict=False).alias("max_turns"),
            mentions_expr(texts, discord_users).alias("text"),
        )
    )


def _with_task_titles(frame: pl.LazyFrame, titles: pl.DataFrame) -> pl.LazyFrame:
    """A message's task ``title``: its own task's, else that of the task its payload is about.

    A delegation or a status report names the delegated task in its payload.
    """
    title_of = titles.lazy().select("task_id", "title")
    return (
        frame.with_columns(
            js_string_expr(_D.field("payloadJson").str.json_path_match("$.taskId")).alias(
                "_payloadTask"
            )
        )
        .join(title_of, on="task_id", how="left")
        .join(
            title_of.rename({"task_id": "_payloadTask", "title": "_payloadTitle"}),
            on="_payloadTask",
            how="left",
        )
        .with_columns(pl.coalesce("title", "_payloadTitle").alias("title"))
    )


def _thread_titles(frame: pl.LazyFrame, thread_rows: pl.DataFrame, tz: str) -> pl.LazyFrame:
    """Per thread, the first task title its messages name (``_taskTitle``) and a fallback.

    The fallback (``_fallback``) is ``from ↔ to``, ``<agent> · <families> events`` for a
    thread keyed by one agent alone (its own task, plan, … events), or ``<type> events from
    <time>`` for a thread of agent-less events.
    """
    start_time = pl.col("start_time").dt.convert_time_zone(tz)
    from_known, to_known = pl.col("from_agent") != "unknown", pl.col("to_agent") != "unknown"
    one_agent = pl.concat_str(
        pl.when(from_known).then(pl.col("from_agent")).otherwise(pl.col("to_agent")),
        pl.lit(" · "),
        pl.col("_families"),
        pl.lit(" events"),
    )
    event_title = pl.concat_str(
        words_expr(pl.col("id").str.extract(r"^event:(.*):[^:]*$", 1)),
        pl.lit(" events from "),
        format_time(start_time, "%m-%d %H:%M"),
    )
    per_thread = frame.group_by("thread_id").agg(
        pl.col("title").sort_by("_order").drop_nulls().first().alias("_taskTitle"),
        pl.col("type")
        .sort_by("_order")
        .str.split(".")
        .list.first()
        .unique(maintain_order=True)
        .str.join(", ")
        .str.replace_all("_", " ")
        .alias("_families"),
    )
    return (
        thread_rows.lazy()
        .select("from_agent", "to_agent", "start_time", "id", pl.col("id").alias("thread_id"))
        .join(per_thread, on="thread_id", how="left")
        .select(
            "thread_id",
            "_taskTitle",
            pl.when(pl.col("id").str.starts_with("event:"))
            .then(event_title)
            .when(from_known & to_known)
            .then(pl.concat_str(pl.col("from_agent"), pl.lit(" ↔ "), pl.col("to_agent")))
            .otherwise(one_agent)
            .alias("_fallback"),
        )
    )


def thread_messages(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    session: str,
    options: MessageOptions | None = None,
    *,
    tz: str | None = None,
    titles: pl.DataFrame | None = None,
    **removed: Never,
) -> pl.DataFrame:
    """One row per message of a work session's threads, ready to read.

    Parameters
    ----------
    result
        Work sessions (:func:`a2a_lab.work_sessions`); their role / type filters decide
        which events the threads hold.
    enriched
        The enriched events ``result`` was built from.
    session
        The session: its ``id`` (``ws:…``, or ``unassigned``) or its workSessionId.
    options
        Which messages, and how they read (:class:`MessageOptions`: ``discord_users``,
        ``search``, ``regex``, ``threads``, ``max_wait_ms``); default: every message.
    tz
        IANA time zone of the ``time`` column (default UTC). An unknown zone raises
        ``ValueError`` naming ``tz``.
    titles
        :func:`task_titles` of ``enriched``, if already computed.
    **removed
        None accepted: an option passed as a keyword (``search=…``, the form before
        :class:`MessageOptions`) raises a ``TypeError`` naming it.

    Returns
    -------
    pl.DataFrame
        :data:`MESSAGE_COLUMNS`, threads in the dashboard's order, messages in time order:
        ``thread_id``, ``thread_title`` (the title of the first task its messages name, else
        ``from ↔ to``, else ``<type> events from <time>``), ``n`` (1-based message number in
        the thread), ``time`` (in ``tz``), ``sender`` → ``receiver``, ``type``,
        ``kind`` (``message, reply, turn, no_reply, refused, outcome, complete, retry, spawn,
        spawn_result, auto_route``, or the event family such as ``task``), ``label`` (what
        happened, in words), ``turn`` / ``max_turns`` (ping-pong turn), ``task_id`` and its
        ``title``, ``text`` (the message with mentions resolved), ``html`` (rendered) and
        the provenance ``file`` / ``line``.

    Raises
    ------
    KeyError
        If the session is not in ``result``.
    ValueError
        If ``regex`` is set and ``search`` is not a valid pattern.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.enrich(al.from_records([
    ...     {"type": "a2a.send", "ts": 1000, "data": {"workSessionId": "ws_1", "conversationId": "c",
    ...      "fromAgent": "ruda", "toAgent": "eden", "message": "<@42> please **deploy**"}},
    ...     {"type": "a2a.response", "ts": 2000, "data": {"workSessionId": "ws_1", "conversationId": "c",
    ...      "fromAgent": "ruda", "toAgent": "eden", "outcome": "no_reply", "waitStatus": "timeout"}},
    ... ]))
    >>> res = al.work_sessions(ev, now=10_000)
    >>> msgs = thread_messages(res, ev, "ws_1", MessageOptions(discord_users={"42": "eden"}))
    >>> for row in msgs.select("n", "sender", "receiver", "label", "text").iter_rows():
    ...     print(row)
    (1, 'ruda', 'eden', 'message', '@eden please **deploy**')
    (2, 'ruda', 'eden', 'no reply: waited more than 300 s', None)
    >>> msgs["html"][0]
    '@eden please <strong>deploy</strong>'
    """
    options = message_options(options, removed, where="thread_messages")
    # a resolved Zone (the report's, per session) is not checked again
    zone = tz if isinstance(tz, Zone) else check_tz("UTC" if tz is None else tz)
    _, messages = session_messages(result, enriched, session, options, tz=zone, titles=titles)
    return search_filter(messages, options.search, regex=options.regex)


def message_options(
    options: MessageOptions | None, removed: Mapping[str, Any], *, where: str
) -> MessageOptions:
    """``options`` checked (default: every message), or the ``TypeError`` of the old form."""
    reject_removed_keywords(
        where, removed, MessageOptions, parameter="options", renamed={"timezone": "tz"}
    )
    if options is None:
        return MessageOptions()
    if not isinstance(options, MessageOptions):
        raise TypeError(f"options must be a MessageOptions, not {type(options).__name__}")
    return options
