"""Work sessions and their threads as a readable conversation.

The reference dashboard lists a work session's threads as raw events. Reading one is hard:
Discord mentions are bare ids (``<@1300…>``), markdown is shown as source, no-reply outcomes
are Korean ``[outcome] …`` sentences, threads are named by ids (``conv:<uuid>``), and there is
no search. This module turns one session of a :class:`~a2a_lab.sessions.WorkSessionsResult`
into one row per message with:

* Discord user mentions ``<@id>`` / ``<@!id>`` resolved to names (a mapping you give:
  neither the log nor ``openclaw.json`` records which Discord user is which agent);
* the text rendered as HTML from a safe subset of markdown (:func:`markdown_html_expr`);
* a clear label per message, the outcomes of runtime §3b included ("no reply: waited more
  than 300 s", "refused: concurrency limit", …);
* thread and session titles from the task (a task or plan event's ``title``, else a
  ``task_delegation`` payload's ``taskTitle``) instead of raw ids (:func:`task_titles`);
* sender, receiver, time in a display time zone and a message number on every row;
* a search filter (case-insensitive substring or regular expression).

:func:`thread_messages` returns the frame, :func:`thread_view` an HTML view (with a search
box), :func:`sessions_table` the dashboard's session list with status badges and
:func:`search_chart` a Vega-Lite message index with a search box that works without a
kernel. Everything up to the final HTML is vectorised Polars; only the HTML of the (limited)
rows shown is assembled in Python. The HTML is deterministic: the same input gives the same
bytes (no random ids, no clock).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.exchanges import outcome_text_expr, wait_reason_expr
from a2a_lab.sessions import WorkSessionsResult

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "MESSAGE_COLUMNS",
    "SessionsTable",
    "ThreadView",
    "markdown_html_expr",
    "mentions_expr",
    "render_markdown",
    "search_chart",
    "session_titles",
    "sessions_table",
    "task_titles",
    "thread_messages",
    "thread_view",
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

# ---------------------------------------------------------------------------------------
# Markdown: a safe subset, vectorised
# ---------------------------------------------------------------------------------------
# One alternation cuts a text into tokens, leftmost-first: fenced code, code span, link,
# bare URL, bold, italic, line break, a run of plain text, any other single character.
# A plain run stops before "`", "[", "h", "*" and newlines, so that a token that may start
# there is tried at that position. Tokens do not nest (no bold inside a link); every
# character that is not markup is HTML-escaped, so no input can inject a tag.
_FENCE = r"```(?:[^\n`]*\n)?(.*?)```"
_CODE = r"`([^`\n]+)`"
_LINK = r"\[([^\]\n]+)\]\(((?:https?://|mailto:)[^\s()<>]+)\)"
_URL = r"https?://[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]}*]"
_BOLD = r"\*\*([^*\n]+)\*\*"
_ITALIC = r"\*([^*\s](?:[^*\n]*[^*\s])?)\*"
_TOKEN = "(?s)" + "|".join((_FENCE, _CODE, _LINK, _URL, _BOLD, _ITALIC, r"\n", r"[^`\[h*\n]+", "."))
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}


def _escape(expr: pl.Expr) -> pl.Expr:
    """``html.escape(text, quote=True)``, vectorised."""
    return expr.str.replace_many(list(_ESCAPES), list(_ESCAPES.values()))


def _anchored(pattern: str) -> str:
    return f"(?s)^(?:{pattern})$"


def _token_html() -> pl.Expr:
    """The HTML of one token (``pl.element()`` inside ``list.eval``)."""
    token = pl.element()

    def group(pattern: str, index: int) -> pl.Expr:
        return _escape(token.str.extract(_anchored(pattern), index))

    def is_(pattern: str) -> pl.Expr:
        return token.str.contains(_anchored(pattern))

    def link(href: pl.Expr, text: pl.Expr) -> pl.Expr:
        return pl.concat_str(
            pl.lit('<a href="'), href, pl.lit('" target="_blank" rel="noopener noreferrer">'), text, pl.lit("</a>")
        )

    return (
        pl.when(is_(_FENCE))
        .then(pl.lit("<pre><code>") + group(_FENCE, 1) + pl.lit("</code></pre>"))
        .when(is_(_CODE))
        .then(pl.lit("<code>") + group(_CODE, 1) + pl.lit("</code>"))
        .when(is_(_LINK))
        .then(link(group(_LINK, 2), group(_LINK, 1)))
        .when(is_(_URL))
        .then(link(_escape(token), _escape(token)))
        .when(is_(_BOLD))
        .then(pl.lit("<strong>") + group(_BOLD, 1) + pl.lit("</strong>"))
        .when(is_(_ITALIC))
        .then(pl.lit("<em>") + group(_ITALIC, 1) + pl.lit("</em>"))
        .when(token == "\n")
        .then(pl.lit("<br>"))
        .otherwise(_escape(token))
    )


def markdown_html_expr(text: pl.Expr) -> pl.Expr:
    """Render a safe subset of markdown to HTML, as a Polars expression.

    Supported: fenced code blocks, code spans, ``**bold**``, ``*italic*``, links
    ``[text](https://…)`` (``http``, ``https`` and ``mailto`` only), bare ``http(s)`` URLs
    (trailing punctuation left out) and line breaks. Markup does not nest (a code span
    inside bold stays literal). Everything else is HTML-escaped as :func:`html.escape`
    does, so a message cannot inject markup: ``<script>`` comes out as ``&lt;script&gt;``.
    The ``markdown`` package is not a dependency; this subset is what agents' chat messages
    use.

    Parameters
    ----------
    text
        A String expression.

    Returns
    -------
    pl.Expr
        The HTML; null stays null.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["**ok**: `x<y`, [a](https://e.com).", "<b>hi</b>\\nbye", None]})
    >>> for html_text in df.select(markdown_html_expr(pl.col("t"))).to_series():
    ...     print(html_text)
    <strong>ok</strong>: <code>x&lt;y</code>, <a href="https://e.com" target="_blank" rel="noopener noreferrer">a</a>.
    &lt;b&gt;hi&lt;/b&gt;<br>bye
    None
    """
    return text.str.extract_all(_TOKEN).list.eval(_token_html()).list.join("")


def render_markdown(text: str | None) -> str:
    """Render one text with :func:`markdown_html_expr` (``""`` for None).

    Examples
    --------
    >>> render_markdown("[docs](https://example.com)")
    '<a href="https://example.com" target="_blank" rel="noopener noreferrer">docs</a>'
    >>> render_markdown("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> render_markdown("[x](javascript:alert(1))")
    '[x](javascript:alert(1))'
    """
    if text is None:
        return ""
    return pl.select(markdown_html_expr(pl.lit(text, dtype=pl.String))).item()


# ---------------------------------------------------------------------------------------
# Mentions and titles
# ---------------------------------------------------------------------------------------
def mentions_expr(text: pl.Expr, discord_users: Mapping[str, str] | None) -> pl.Expr:
    """Replace Discord user mentions ``<@id>`` and ``<@!id>`` by ``@name``.

    Parameters
    ----------
    text
        A String expression.
    discord_users
        Discord user id → the name to show (e.g. the agent id of a bot user). Ids not in
        the mapping are left as they are.

    Returns
    -------
    pl.Expr
        The text with the known mentions replaced.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["<@130> ping <@!130>, cc <@999>"]})
    >>> df.select(mentions_expr(pl.col("t"), {"130": "ruda"})).item()
    '@ruda ping @ruda, cc <@999>'
    """
    if not discord_users:
        return text
    patterns: list[str] = []
    names: list[str] = []
    for user_id, name in discord_users.items():
        patterns += [f"<@{user_id}>", f"<@!{user_id}>"]
        names += [f"@{name}", f"@{name}"]
    return text.str.replace_many(patterns, names)


def task_titles(enriched: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The title of every task the log names.

    A task's title is the ``title`` of its earliest event that has both ``taskId`` and
    ``title`` (task and plan events carry it), else the ``taskTitle`` of its earliest
    ``task_delegation`` payload (runtime §8; the payload's own ``taskId``). Strings are
    JS-trimmed; blank counts as absent; payloads that are not JSON are skipped.

    Parameters
    ----------
    enriched
        An event frame (loaded or enriched).

    Returns
    -------
    pl.DataFrame
        ``taskId, title, titleSource`` (``"event"`` or ``"payload"``), sorted by taskId.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...     {"type": "a2a.send", "ts": 1, "data": {"payloadType": "task_delegation",
    ...      "payloadJson": '{"type":"task_delegation","taskId":"t2","taskTitle":"Fix CI"}'}},
    ...     {"type": "plan.submitted", "ts": 2, "data": {"taskId": "t1", "title": " Rollout "}},
    ... ])
    >>> task_titles(ev).rows()
    [('t1', 'Rollout', 'event'), ('t2', 'Fix CI', 'payload')]
    """
    lf = enriched.lazy().with_row_index("_row")
    from_events = lf.select(
        js_string_expr(_D.field("taskId")).alias("task_id"),
        js_string_expr(_D.field("title")).alias("title"),
        pl.lit("event").alias("title_source"),
        pl.lit(0).alias("_rank"),
        "event_ms",
        "_row",
    )
    payload = _D.field("payloadJson")
    delegations = lf.filter(payload.is_not_null()).select(
        payload.str.json_path_match("$.type").alias("_kind"),
        js_string_expr(payload.str.json_path_match("$.taskId")).alias("task_id"),
        js_string_expr(payload.str.json_path_match("$.taskTitle")).alias("title"),
        pl.lit("payload").alias("title_source"),
        pl.lit(1).alias("_rank"),
        "event_ms",
        "_row",
    )
    from_payloads = delegations.filter(pl.col("_kind") == "task_delegation").drop("_kind")
    return (
        pl.concat([from_events, from_payloads])
        .filter(pl.col("task_id").is_not_null() & pl.col("title").is_not_null())
        .sort("_rank", "event_ms", "_row")
        .group_by("task_id", maintain_order=True)
        .first()
        .select("task_id", "title", "title_source")
        .sort("task_id")
        .collect()
    )


def session_titles(enriched: pl.DataFrame | pl.LazyFrame, titles: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per work session, the task it works on, that task's title and its first message.

    The session's task is the ``taskId`` of its earliest event whose task has a title
    (:func:`task_titles`), else of its earliest event with a ``taskId``. Many tasks have no
    title in a log (only plans and delegations carry one), so the session's first
    ``message`` (JS-trimmed, in time order) is returned too: it says what the work is about.

    Parameters
    ----------
    enriched
        An event frame.
    titles
        :func:`task_titles` of it, if already computed.

    Returns
    -------
    pl.DataFrame
        ``work_session_id, task_id, title, first_message`` (null where absent), one row per
        workSessionId of the events, sorted by it.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...     {"type": "task.started", "ts": 1, "data": {"taskId": "t1", "workSessionId": "ws_1"}},
    ...     {"type": "plan.submitted", "ts": 2, "data": {"taskId": "t1", "title": "Rollout"}},
    ...     {"type": "a2a.spawn", "ts": 3, "data": {"workSessionId": "ws_2", "message": "Check logs"}},
    ... ])
    >>> session_titles(ev).rows()
    [('ws_1', 't1', 'Rollout', None), ('ws_2', None, None, 'Check logs')]
    """
    titles = task_titles(enriched) if titles is None else titles
    titled = pl.col("title").is_not_null()
    return (
        enriched.lazy()
        .with_row_index("_row")
        .select(
            js_string_expr(_D.field("workSessionId")).alias("work_session_id"),
            js_string_expr(_D.field("taskId")).alias("task_id"),
            js_string_expr(_D.field("message")).alias("message"),
            "event_ms",
            "_row",
        )
        .filter(pl.col("work_session_id").is_not_null())
        .join(titles.lazy().select("task_id", "title"), on="task_id", how="left")
        .sort("event_ms", "_row")
        .group_by("work_session_id")
        .agg(
            pl.coalesce(pl.col("task_id").filter(titled).first(), pl.col("task_id").drop_nulls().first()).alias(
                "task_id"
            ),
            pl.col("title").drop_nulls().first(),
            pl.col("message").drop_nulls().first().alias("first_message"),
        )
        .sort("work_session_id")
        .collect()
    )


# ---------------------------------------------------------------------------------------
# Labels (runtime §3b)
# ---------------------------------------------------------------------------------------
def _text(field: str) -> pl.Expr:
    return js_string_expr(_D.field(field))


def _words(expr: pl.Expr) -> pl.Expr:
    """``task.backlog_added`` → ``task backlog added``."""
    return expr.str.replace_all(r"[._]", " ")


def _int_text(expr: pl.Expr) -> pl.Expr:
    """A logged number as an integer string (null when absent or not finite)."""
    return pl.when(expr.is_finite()).then(expr.floor().cast(pl.Int64).cast(pl.String))


_TIMEOUT_SECONDS = r"대기 시간 (\d+)초 초과"
_TEXT_FIELDS = ("message", "replyPreview", "summary", "reason", "description", "label", "errorMessage", "waitError")


def _labelled(frame: pl.LazyFrame, *, max_wait_ms: float) -> pl.LazyFrame:
    """Add ``kind`` and ``label`` to thread rows in thread order (``thread_id`` set).

    A ``blocked`` response is a concurrency refusal when the next ``a2a.complete`` of the
    same thread and agent pair says ``concurrencyBlocked`` (runtime §3b: that always wins);
    otherwise it is a no-reply in the older wording.
    """
    kind_of = pl.col("type")
    is_resp = kind_of == "a2a.response"
    is_complete = kind_of == "a2a.complete"
    outcome = _text("outcome")
    parsed = outcome_text_expr(pl.coalesce(_D.field("message"), _D.field("replyPreview")))
    text_kind, text_reason = parsed.struct.field("kind"), parsed.struct.field("reason")
    field_reason = wait_reason_expr()
    pair_low = pl.min_horizontal(pl.col("sender").fill_null(""), pl.col("receiver").fill_null(""))
    pair_high = pl.max_horizontal(pl.col("sender").fill_null(""), pl.col("receiver").fill_null(""))
    blocked_complete = pl.when(is_complete).then(_D.field("concurrencyBlocked").fill_null(False))
    frame = frame.with_columns(
        blocked_complete.backward_fill().over("thread_id", pair_low, pair_high).fill_null(False).alias("_refusedNext"),
        outcome.alias("_outcome"),
        text_kind.alias("_textKind"),
        pl.coalesce(field_reason, pl.when(text_kind == "no_reply").then(text_reason)).alias("_reason"),
        text_reason.alias("_textReason"),
        pl.coalesce(_D.field("message"), _D.field("replyPreview"))
        .str.extract(_TIMEOUT_SECONDS, 1)
        .alias("_waitSeconds"),
    )
    blocked = (pl.col("_outcome") == "blocked") | (pl.col("_textKind") == "blocked")
    refused = (is_resp & blocked & pl.col("_refusedNext")) | (
        is_complete & _D.field("concurrencyBlocked").fill_null(False)
    )
    no_reply = is_resp & (
        (pl.col("_outcome") == "no_reply") | (pl.col("_textKind") == "no_reply") | blocked
    )
    other_outcome = is_resp & (pl.col("_outcome").is_not_null() | pl.col("_textKind").is_not_null())
    turn = _D.field("turn")
    seconds = pl.coalesce(pl.col("_waitSeconds"), pl.lit(str(math.floor(max_wait_ms / 1000))))
    reason = pl.col("_reason")
    no_reply_label = (
        pl.when(reason == "timeout")
        .then(pl.concat_str(pl.lit("no reply: waited more than "), seconds, pl.lit(" s")))
        .when(reason == "not_found")
        .then(pl.lit("no reply: run not found"))
        .when(reason == "error")
        .then(pl.lit("no reply: run error"))
        .when(reason.is_not_null())
        .then(pl.lit("no reply: ") + reason)
        .otherwise(pl.lit("no reply"))
    )
    outcome_name = pl.coalesce(pl.col("_outcome"), pl.col("_textKind"))
    outcome_label = pl.concat_str(
        pl.lit("outcome: "), outcome_name, pl.lit(": ") + pl.col("_textReason"), ignore_nulls=True
    )
    payload_type = _text("payloadType")
    payload = _D.field("payloadJson")
    payload_status = js_string_expr(payload.str.json_path_match("$.status"))
    # what a payload is about: a delegation's task title, a status report's status and progress
    payload_detail = pl.coalesce(
        js_string_expr(payload.str.json_path_match("$.taskTitle")),
        pl.when(payload_status.is_not_null()).then(
            pl.concat_str(
                payload_status,
                pl.lit(", ") + payload.str.json_path_match("$.progressPercent") + pl.lit(" %"),
                ignore_nulls=True,
            )
        ),
    )
    termination = _text("terminationReason")
    kind = (
        pl.when(refused)
        .then(pl.lit("refused"))
        .when(no_reply)
        .then(pl.lit("no_reply"))
        .when(other_outcome)
        .then(pl.lit("outcome"))
        .when(is_resp & turn.is_not_null())
        .then(pl.lit("turn"))
        .when(is_resp)
        .then(pl.lit("reply"))
        .when(kind_of == "a2a.send")
        .then(pl.lit("message"))
        .when(is_complete)
        .then(pl.lit("complete"))
        .when(kind_of.str.starts_with("a2a."))
        .then(kind_of.str.slice(4))
        .otherwise(kind_of.str.split(".").list.first())
    )
    label = (
        pl.when(refused)
        .then(pl.lit("refused: concurrency limit"))
        .when(no_reply)
        .then(no_reply_label)
        .when(other_outcome)
        .then(outcome_label)
        .when(is_resp & turn.is_not_null())
        .then(
            pl.concat_str(
                pl.lit("turn "),
                _int_text(turn),
                pl.lit("/") + _int_text(_D.field("maxTurns")),
                pl.lit(" · ended: ") + termination,
                ignore_nulls=True,
            )
        )
        .when(is_resp)
        .then(pl.lit("reply"))
        .when(kind_of == "a2a.send")
        .then(
            pl.when(payload_type.is_not_null())
            .then(pl.concat_str(_words(payload_type), pl.lit(": ") + payload_detail, ignore_nulls=True))
            .otherwise(pl.lit("message"))
        )
        .when(is_complete)
        .then(
            pl.concat_str(
                pl.lit("exchange complete"),
                pl.lit(" · ")
                + _int_text(_D.field("actualTurns"))
                + pl.when(_D.field("actualTurns") == 1).then(pl.lit(" turn")).otherwise(pl.lit(" turns")),
                pl.lit(" · ended: ") + termination,
                ignore_nulls=True,
            )
        )
        .when(kind_of == "a2a.retry")
        .then(
            pl.concat_str(
                pl.lit("retry "),
                _int_text(_D.field("attempt")),
                pl.lit("/") + _int_text(_D.field("maxAttempts")),
                pl.lit(": ") + _text("errorCode"),
                ignore_nulls=True,
            )
        )
        .when(kind_of == "a2a.spawn")
        .then(pl.lit("spawned a sub-agent"))
        .when(kind_of == "a2a.spawn_result")
        .then(pl.concat_str(pl.lit("sub-agent run"), pl.lit(": ") + _text("status"), ignore_nulls=True))
        .when(kind_of == "a2a.auto_route")
        .then(pl.lit("auto-routed mention"))
        .otherwise(pl.concat_str(_words(kind_of), pl.lit(": ") + _text("status"), ignore_nulls=True))
    )
    return frame.with_columns(kind.alias("kind"), label.alias("label")).drop(
        "_refusedNext", "_outcome", "_textKind", "_reason", "_textReason", "_waitSeconds"
    )


# ---------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------
def _session_row(result: WorkSessionsResult, session: str) -> dict[str, Any]:
    """The session row of ``session`` (an ``id`` such as ``ws:…``, or a workSessionId)."""
    rows = result.sessions.filter((pl.col("id") == session) | (pl.col("work_session_id") == session))
    if rows.height == 0:
        raise KeyError(f"no work session {session!r} in this result (was it filtered out?)")
    return rows.row(0, named=True)


def _search_filter(frame: pl.DataFrame, search: str | None, *, regex: bool) -> pl.DataFrame:
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
    return frame.filter(haystack.str.to_lowercase().str.contains(pl.lit(search).str.to_lowercase(), literal=True))


def _all_messages(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    session: str,
    *,
    discord_users: Mapping[str, str] | None,
    timezone: str,
    threads: Iterable[str] | None,
    max_wait_ms: float,
    titles: pl.DataFrame | None,
) -> tuple[dict[str, Any], pl.DataFrame]:
    """The session row and every message of its threads (before any search)."""
    row = _session_row(result, session)
    ws_id = row["work_session_id"]
    members = result.thread_events.filter(pl.col("work_session_id").eq_missing(ws_id))
    thread_rows = result.threads.filter(pl.col("work_session_id").eq_missing(ws_id))
    if threads is not None:
        wanted = list(threads)
        members = members.filter(pl.col("thread_id").is_in(wanted))
        thread_rows = thread_rows.filter(pl.col("id").is_in(wanted))
    titles = task_titles(enriched) if titles is None else titles
    texts = pl.coalesce(*(js_string_expr(_D.field(name)) for name in _TEXT_FIELDS))
    frame = (
        members.lazy()
        .select("thread_id", "file", "line")
        .with_row_index("_order")
        .join(
            enriched.lazy().select("file", "line", "type", "event_time", "from_agent", "to_agent", "data"),
            on=["file", "line"],
            how="left",
        )
        .sort("_order")
        .with_columns(
            pl.col("from_agent").alias("sender"),
            pl.col("to_agent").alias("receiver"),
            js_string_expr(_D.field("taskId")).alias("task_id"),
            pl.int_range(1, pl.len() + 1).over("thread_id").alias("n"),
            pl.col("event_time").dt.convert_time_zone(timezone).alias("time"),
            _D.field("turn").cast(pl.Int64, strict=False).alias("turn"),
            _D.field("maxTurns").cast(pl.Int64, strict=False).alias("max_turns"),
            mentions_expr(texts, discord_users).alias("text"),
        )
    )
    # a message's task title: its own task's, else that of the task its payload is about
    # (a delegation or a status report names the delegated task)
    title_of = titles.lazy().select("task_id", "title")
    frame = (
        _labelled(frame, max_wait_ms=max_wait_ms)
        .with_columns(js_string_expr(_D.field("payloadJson").str.json_path_match("$.taskId")).alias("_payloadTask"))
        .join(title_of, on="task_id", how="left")
        .join(title_of.rename({"task_id": "_payloadTask", "title": "_payloadTitle"}), on="_payloadTask", how="left")
        .with_columns(pl.coalesce("title", "_payloadTitle").alias("title"))
    )
    start_time = pl.col("start_time").dt.convert_time_zone(timezone)
    from_known, to_known = pl.col("from_agent") != "unknown", pl.col("to_agent") != "unknown"
    # a thread keyed by one agent alone holds that agent's own events (task, plan, …)
    one_agent = pl.concat_str(
        pl.when(from_known).then(pl.col("from_agent")).otherwise(pl.col("to_agent")),
        pl.lit(" · "),
        pl.col("_families"),
        pl.lit(" events"),
    )
    event_title = pl.concat_str(
        _words(pl.col("id").str.extract(r"^event:(.*):[^:]*$", 1)),
        pl.lit(" events from "),
        start_time.dt.strftime("%m-%d %H:%M"),
    )
    per_thread = frame.group_by("thread_id").agg(
        pl.col("title").sort_by("_order").drop_nulls().first().alias("_taskTitle"),
        pl.col("type").sort_by("_order").str.split(".").list.first().unique(maintain_order=True).str.join(", ")
        .str.replace_all("_", " ")
        .alias("_families"),
    )
    fallback = (
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
    messages = (
        frame.join(fallback, on="thread_id", how="left")
        .with_columns(
            pl.coalesce("_taskTitle", "_fallback", "thread_id").alias("thread_title"),
            markdown_html_expr(pl.col("text")).fill_null("").alias("html"),
        )
        .sort("_order")
        .select(MESSAGE_COLUMNS)
        .collect()
    )
    return row, messages


def thread_messages(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    session: str,
    *,
    discord_users: Mapping[str, str] | None = None,
    timezone: str = "UTC",
    search: str | None = None,
    regex: bool = False,
    threads: Iterable[str] | None = None,
    max_wait_ms: float = 300_000,
    titles: pl.DataFrame | None = None,
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
    discord_users
        Discord user id → name, to resolve ``<@id>`` mentions (:func:`mentions_expr`).
    timezone
        IANA time zone of the ``time`` column.
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
    titles
        :func:`task_titles` of ``enriched``, if already computed.

    Returns
    -------
    pl.DataFrame
        :data:`MESSAGE_COLUMNS`, threads in the dashboard's order, messages in time order:
        ``thread_id``, ``thread_title`` (the title of the first task its messages name, else
        ``from ↔ to``, else ``<type> events from <time>``), ``n`` (1-based message number in
        the thread), ``time`` (in ``timezone``), ``sender`` → ``receiver``, ``type``,
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
    >>> msgs = thread_messages(res, ev, "ws_1", discord_users={"42": "eden"})
    >>> for row in msgs.select("n", "sender", "receiver", "label", "text").iter_rows():
    ...     print(row)
    (1, 'ruda', 'eden', 'message', '@eden please **deploy**')
    (2, 'ruda', 'eden', 'no reply: waited more than 300 s', None)
    >>> msgs["html"][0]
    '@eden please <strong>deploy</strong>'
    """
    _, messages = _all_messages(
        result,
        enriched,
        session,
        discord_users=discord_users,
        timezone=timezone,
        threads=threads,
        max_wait_ms=max_wait_ms,
        titles=titles,
    )
    return _search_filter(messages, search, regex=regex)


# ---------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------
# Inline styles only: notebook front ends and GitHub drop <style> blocks from outputs.
_STATUS_COLORS = {"ACTIVE": "#2e7d32", "QUIET": "#546e7a", "ARCHIVED": "#9e9e9e"}
_KIND_COLORS = {
    "no_reply": "#c62828",
    "refused": "#e65100",
    "outcome": "#6a1b9a",
    "retry": "#f9a825",
    "complete": "#616161",
    "message": "#1565c0",
    "reply": "#2e7d32",
    "turn": "#2e7d32",
}
_DEFAULT_KIND_COLOR = "#757575"
_BADGE = "display:inline-block;padding:0 6px;border-radius:8px;color:#fff;font-size:0.85em;background:{}"
_ROOT = "font-family:system-ui,sans-serif;font-size:13px;line-height:1.45;max-width:980px"
_MUTED = "color:#666;font-size:0.9em"
_MESSAGE = "margin:4px 0 4px 0;padding:4px 8px;border-left:3px solid {};background:#fafafa"
_THREAD = "margin:10px 0;padding:6px 8px;border:1px solid #ddd;border-radius:6px"
# Outcome texts repeat what the label says (in Korean): shown small and grey.
_QUIET_BODY_KINDS = frozenset({"no_reply", "refused", "outcome"})
# The search box filters what is shown in the browser; inline handlers run where a
# notebook's outputs are trusted (and in exported HTML); elsewhere every message stays shown.
_SEARCH_BOX = (
    '<input type="search" placeholder="search messages (sender, label, text)…" '
    'style="width:60%;margin:4px 0;padding:2px 6px" '
    "oninput=\"var q=this.value.toLowerCase();"
    "this.closest('.a2a-view').querySelectorAll('.a2a-msg').forEach(function(m)"
    "{m.style.display=(!q||m.textContent.toLowerCase().indexOf(q)>=0)?'':'none';});\">"
)


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _badge(text: str, color: str) -> str:
    return f'<span style="{_BADGE.format(color)}">{_esc(text)}</span>'


def _duration_expr(duration_s: pl.Expr) -> pl.Expr:
    """``42 s``, ``5 min 03 s``, ``2 h 07 min``, ``3 d 4 h``."""
    seconds = duration_s.floor().cast(pl.Int64)

    def two(e: pl.Expr) -> pl.Expr:
        return e.cast(pl.String).str.zfill(2)

    return (
        pl.when(seconds < 60)
        .then(pl.format("{} s", seconds))
        .when(seconds < 3600)
        .then(pl.format("{} min {} s", seconds // 60, two(seconds % 60)))
        .when(seconds < 86_400)
        .then(pl.format("{} h {} min", seconds // 3600, two(seconds % 3600 // 60)))
        .otherwise(pl.format("{} d {} h", seconds // 86_400, seconds % 86_400 // 3600))
    )


def _local(time: pl.Expr, timezone: str, fmt: str) -> pl.Expr:
    return time.dt.convert_time_zone(timezone).dt.strftime(fmt)


#: Title of the session that ``unassigned=True`` builds.
_UNASSIGNED_TITLE = "events without a work session"
#: Characters of a session's first message shown where its task has no title.
_ABOUT_CHARS = 90


def _title_html(title: str | None, about: str | None) -> str:
    """A session's task title, else its first message in quotes, else a dash."""
    if title:
        return f"<strong>{_esc(title)}</strong>"
    if about:
        return f'<em style="{_MUTED}">“{_esc(about)}”</em>'
    return f'<span style="{_MUTED}">—</span>'


@dataclass(frozen=True, repr=False)
class ThreadView:
    """A work session's threads rendered as a conversation (shown by Jupyter as HTML).

    Attributes
    ----------
    session
        The session row (:attr:`WorkSessionsResult.sessions` columns) plus ``title`` (its
        task's, else the first task title its messages name), ``task_id`` and ``about`` (its
        first message, mentions resolved), as in :func:`session_titles`.
    messages
        The messages shown (:func:`thread_messages` columns), at most ``max_messages``.
    matched
        Messages that matched the search (all messages without one).
    total
        All messages of the selected threads.
    search
        The search applied in the kernel, if any.
    timezone
        The display time zone.
    search_box
        Whether the HTML has a search box.
    """

    session: dict[str, Any]
    messages: pl.DataFrame
    matched: int
    total: int
    search: str | None
    timezone: str
    search_box: bool = True

    def to_html(self) -> str:
        """The HTML of the view (deterministic: equal views give equal bytes)."""
        s = self.session
        status = s["status"]
        shown = self.messages
        header = (
            f'<div style="font-size:1.15em">{_title_html(s["title"], s["about"])} '
            f"{_badge(status, _STATUS_COLORS.get(status, _DEFAULT_KIND_COLOR))}</div>"
            f'<div style="{_MUTED}">{_esc(s["id"])} · {_esc(s["collab_category"])}'
            f"{' · ' + _esc(', '.join(s['collab_sub_tags'])) if s['collab_sub_tags'] else ''} · "
            f"{s['thread_count']} threads · {s['event_count']} events · times in {_esc(self.timezone)}</div>"
        )
        if self.search:
            header += (
                f'<div style="{_MUTED}">{self.matched} of {self.total} messages match '
                f"<code>{_esc(self.search)}</code></div>"
            )
        if shown.height < self.matched:
            header += f'<div style="{_MUTED}">showing the first {shown.height} of {self.matched} messages</div>'
        rows = shown.with_columns(
            pl.col("time").dt.strftime("%m-%d %H:%M:%S").alias("_clock"),
            pl.col("time").dt.strftime("%Y-%m-%dT%H:%M:%S%.3f%:z").alias("_iso"),
        )
        parts = [f'<div class="a2a-view" style="{_ROOT}">', header]
        if self.search_box:
            parts.append(_SEARCH_BOX)
        current: str | None = None
        for m in rows.iter_rows(named=True):
            if m["thread_id"] != current:
                if current is not None:
                    parts.append("</div>")
                current = m["thread_id"]
                parts.append(
                    f'<div class="a2a-thread" style="{_THREAD}">'
                    f"<div><strong>{_esc(m['thread_title'])}</strong> "
                    f'<span style="{_MUTED}">{_esc(m["thread_id"])}</span></div>'
                )
            color = _KIND_COLORS.get(m["kind"], _DEFAULT_KIND_COLOR)
            receiver = f" → <strong>{_esc(m['receiver'])}</strong>" if m["receiver"] else ""
            body_style = f' style="{_MUTED}"' if m["kind"] in _QUIET_BODY_KINDS else ""
            body = f"<div{body_style}>{m['html']}</div>" if m["html"] else ""
            parts.append(
                f'<div class="a2a-msg" style="{_MESSAGE.format(color)}">'
                f'<div><span style="{_MUTED}">#{m["n"]}</span> '
                f'<time datetime="{m["_iso"]}" style="{_MUTED}">{m["_clock"]}</time> '
                f"<strong>{_esc(m['sender'] or 'unknown')}</strong>{receiver} "
                f"{_badge(m['label'], color)}</div>{body}</div>"
            )
        if current is not None:
            parts.append("</div>")
        elif self.matched == 0:
            parts.append(f'<div style="{_MUTED}">no message matches</div>')
        parts.append("</div>")
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return (
            f"ThreadView({self.session['id']!r}: {self.messages.height} messages shown, "
            f"{self.matched} matched of {self.total})"
        )


def thread_view(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    session: str,
    *,
    discord_users: Mapping[str, str] | None = None,
    timezone: str = "UTC",
    search: str | None = None,
    regex: bool = False,
    threads: Iterable[str] | None = None,
    max_messages: int = 300,
    search_box: bool = True,
    max_wait_ms: float = 300_000,
    titles: pl.DataFrame | None = None,
) -> ThreadView:
    """A work session's threads as a readable conversation (HTML in a notebook).

    Each thread is a box titled by its task (:func:`thread_messages`); each message shows
    its number, time, sender → receiver, a coloured label and the rendered text.

    Parameters
    ----------
    result, enriched, session, discord_users, timezone, search, regex, threads, max_wait_ms, titles
        As for :func:`thread_messages`.
    max_messages
        Most messages rendered (the first ones, in thread order).
    search_box
        Add a search box that filters the shown messages in the browser.

    Returns
    -------
    ThreadView
        Rendered by Jupyter through ``_repr_html_``; ``to_html()`` gives the string.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.enrich(al.from_records([
    ...     {"type": "a2a.send", "ts": 1000, "data": {"workSessionId": "ws_1", "conversationId": "c",
    ...      "fromAgent": "ruda", "toAgent": "eden", "message": "hi <script>"}},
    ... ]))
    >>> view = thread_view(al.work_sessions(ev, now=0), ev, "ws:ws_1", search_box=False)
    >>> "hi &lt;script&gt;" in view.to_html(), view.matched, view.total
    (True, 1, 1)
    """
    if max_messages < 0:
        raise ValueError("max_messages must be >= 0")
    row, messages = _all_messages(
        result,
        enriched,
        session,
        discord_users=discord_users,
        timezone=timezone,
        threads=threads,
        max_wait_ms=max_wait_ms,
        titles=titles,
    )
    if row["work_session_id"] is None:
        title, task, about = _UNASSIGNED_TITLE, None, None
    else:
        own = enriched.lazy().filter(js_string_expr(_D.field("workSessionId")) == row["work_session_id"])
        titled = session_titles(own, titles)
        task, title, first = titled.row(0)[1:] if titled.height else (None, None, None)
        # a session whose own task has no title is named after the first task it talks about
        title = title or messages.sort("time", maintain_order=True)["title"].drop_nulls().first()
        about = None if first is None else pl.select(mentions_expr(pl.lit(first), discord_users)).item()
    matched = _search_filter(messages, search, regex=regex)
    return ThreadView(
        session={**row, "title": title, "taskId": task, "about": about},
        messages=matched.head(max_messages),
        matched=matched.height,
        total=messages.height,
        search=search or None,
        timezone=timezone,
        search_box=search_box,
    )


@dataclass(frozen=True, repr=False)
class SessionsTable:
    """The dashboard's session list with status badges and task titles (HTML in Jupyter).

    Attributes
    ----------
    frame
        The rows shown: ``id, work_session_id, status, title`` (the task's, see
        :func:`session_titles`), ``about`` (the session's first message, cut short),
        ``collab_category, collab_sub_tags, category_source, thread_count, event_count, start, last,
        duration``.
    total
        Sessions matched (before the limit).
    timezone
        The display time zone of ``start`` and ``last``.
    """

    frame: pl.DataFrame
    total: int
    timezone: str

    def to_html(self) -> str:
        """The HTML table (deterministic)."""
        head = ("status", "session", "category", "threads", "events", "start", "last activity", "duration")
        cell = 'style="padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top"'
        parts = [
            (
                f'<div style="{_ROOT}"><div style="{_MUTED}">{self.frame.height} of {self.total} sessions · '
                f'times in {_esc(self.timezone)}</div><table style="border-collapse:collapse"><thead><tr>'
            ),
            *(f"<th {cell}>{h}</th>" for h in head),
            "</tr></thead><tbody>",
        ]
        for r in self.frame.iter_rows(named=True):
            tags = f'<div style="{_MUTED}">{_esc(", ".join(r["collab_sub_tags"]))}</div>' if r["collab_sub_tags"] else ""
            manual = " ✎" if r["category_source"] == "manual_override" else ""
            parts.append(
                "<tr>"
                f"<td {cell}>{_badge(r['status'], _STATUS_COLORS.get(r['status'], _DEFAULT_KIND_COLOR))}</td>"
                f"<td {cell}>{_title_html(r['title'], r['about'])}"
                f'<div style="{_MUTED}">{_esc(r["id"])}</div></td>'
                f"<td {cell}>{_esc(r['collab_category'])}{manual}{tags}</td>"
                f"<td {cell}>{r['thread_count']}</td><td {cell}>{r['event_count']}</td>"
                f"<td {cell}>{_esc(r['start'])}</td><td {cell}>{_esc(r['last'])}</td>"
                f"<td {cell}>{_esc(r['duration'])}</td>"
                "</tr>"
            )
        parts.append("</tbody></table></div>")
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"SessionsTable({self.frame.height} of {self.total} sessions)"


def sessions_table(
    result: WorkSessionsResult,
    enriched: pl.DataFrame | pl.LazyFrame,
    *,
    timezone: str = "UTC",
    limit: int | None = None,
    discord_users: Mapping[str, str] | None = None,
    titles: pl.DataFrame | None = None,
) -> SessionsTable:
    """The matched sessions as the dashboard lists them, with status badges and titles.

    Parameters
    ----------
    result
        Work sessions (:func:`a2a_lab.work_sessions`).
    enriched
        The enriched events ``result`` was built from (for the task titles).
    timezone
        IANA time zone of the start and last-activity times.
    limit
        Most rows; default the result's own limit (the dashboard's page size).
    discord_users
        Discord user id → name, for the mentions in ``about`` (:func:`mentions_expr`).
    titles
        :func:`task_titles` of ``enriched``, if already computed.

    Returns
    -------
    SessionsTable
        Rendered by Jupyter as an HTML table; ``frame`` holds the rows.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.enrich(al.from_records([
    ...     {"type": "task.started", "ts": 1000, "data": {"workSessionId": "ws_1", "taskId": "t1"}},
    ...     {"type": "plan.submitted", "ts": 61000, "data": {"workSessionId": "ws_1", "taskId": "t1",
    ...      "title": "Rollback plan"}},
    ... ]))
    >>> table = sessions_table(al.work_sessions(ev, now=0), ev)
    >>> table.frame.select("status", "title", "duration").row(0)
    ('ACTIVE', 'Rollback plan', '1 min 00 s')
    """
    count = result.limit_count if limit is None else limit
    sessions = result.sessions if count is None else result.sessions.head(count)
    named = session_titles(enriched, titles)
    about = mentions_expr(pl.col("first_message"), discord_users)
    frame = sessions.join(named, on="work_session_id", how="left", maintain_order="left").select(
        "id",
        "work_session_id",
        "status",
        pl.when(pl.col("work_session_id").is_null())
        .then(pl.lit(_UNASSIGNED_TITLE))
        .otherwise(pl.col("title"))
        .alias("title"),
        pl.when(about.str.len_chars() > _ABOUT_CHARS)
        .then(about.str.slice(0, _ABOUT_CHARS) + pl.lit("…"))
        .otherwise(about)
        .alias("about"),
        "collab_category",
        "collab_sub_tags",
        "category_source",
        "thread_count",
        "event_count",
        _local(pl.col("start_time"), timezone, "%Y-%m-%d %H:%M").alias("start"),
        _local(pl.col("last_time"), timezone, "%Y-%m-%d %H:%M").alias("last"),
        _duration_expr(pl.col("duration_s")).alias("duration"),
    )
    return SessionsTable(frame=frame, total=result.total_matched, timezone=timezone)


# ---------------------------------------------------------------------------------------
# A search box without a kernel
# ---------------------------------------------------------------------------------------
def search_chart(messages: pl.DataFrame, *, text_chars: int = 110, title: str | None = None) -> alt.LayerChart:
    """A Vega-Lite index of messages with a search box (no kernel needed).

    One line per message (``#n``, time, sender → receiver, label, the text cut to
    ``text_chars`` characters; the tooltip has up to 1,000). Typing in the box keeps the
    lines whose sender, receiver, label or text contains the input, case-insensitively —
    the same rule as the ``search`` parameter of :func:`thread_messages`, evaluated by
    Vega in the browser. The spec is deterministic.

    Parameters
    ----------
    messages
        Rows of :func:`thread_messages` (at most :data:`a2a_lab.views.plots.MAX_ROWS`).
    text_chars
        Characters of text shown per line.
    title
        Chart title; default the first thread title.

    Returns
    -------
    alt.LayerChart
        The chart, with the bound parameter ``search``.

    Examples
    --------
    >>> msgs = pl.DataFrame({"thread_title": ["T"], "n": [1], "sender": ["ruda"], "receiver": ["eden"],
    ...     "label": ["message"], "text": ["hello"],
    ...     "time": pl.Series([0]).cast(pl.Datetime("ms", "UTC"))})
    >>> spec = search_chart(msgs).to_dict()
    >>> spec["params"][0]["name"], spec["params"][0]["bind"]["input"]
    ('search', 'search')
    """
    import altair as alt

    from a2a_lab.views.plots import MAX_ROWS

    if messages.height > MAX_ROWS:
        raise ValueError(f"search_chart: {messages.height} messages (at most {MAX_ROWS}); filter first")
    text = pl.col("text").fill_null("")
    data = messages.select(
        pl.int_range(pl.len()).alias("order"),
        pl.format("#{}", pl.col("n")).alias("num"),
        pl.col("time").dt.strftime("%m-%d %H:%M:%S").alias("clock"),
        pl.concat_str(pl.col("sender").fill_null("unknown"), pl.lit(" → ") + pl.col("receiver"), ignore_nulls=True)
        .alias("who"),
        pl.col("label"),
        pl.when(text.str.len_chars() > text_chars)
        .then(text.str.slice(0, text_chars) + pl.lit("…"))
        .otherwise(text)
        .str.replace_all(r"\s+", " ")
        .alias("line"),
        text.str.slice(0, 1000).alias("text"),
        pl.col("thread_title").alias("thread"),
        pl.concat_str(
            [pl.col(c).fill_null("") for c in ("sender", "receiver", "label", "text")], separator="\n"
        )
        .str.to_lowercase()
        .alias("haystack"),
    )
    search = alt.param(
        name="search",
        value="",
        bind=alt.binding(input="search", placeholder="search messages (sender, label, text)", name="search "),
    )
    base = (
        alt.Chart(data, title=title or (data["thread"][0] if data.height else "messages"))
        .transform_filter("indexof(datum.haystack, lower(search)) >= 0")
        .transform_window(row="row_number()", sort=[alt.SortField("order")])
        .encode(
            y=alt.Y("row:O", axis=None),
            tooltip=["thread:N", "num:N", "clock:N", "who:N", "label:N", "text:N"],
        )
        .properties(width=900, height=alt.Step(18))
    )
    # a coloured square per line says which thread it belongs to (legend below)
    thread_mark = base.mark_square(size=70).encode(
        x=alt.value(5),
        color=alt.Color("thread:N", title="thread", sort=None, legend=alt.Legend(orient="bottom", labelLimit=400)),
    )
    columns = (
        ("num", 16, "#666", 40),
        ("clock", 50, "#666", 100),
        ("who", 150, "#111", 150),
        ("label", 305, "#1565c0", 210),
        ("line", 520, "#111", 380),
    )
    layers = [
        base.mark_text(align="left", baseline="middle", color=color, limit=limit).encode(
            x=alt.value(x), text=f"{field}:N"
        )
        for field, x, color, limit in columns
    ]
    return alt.layer(thread_mark, *layers).add_params(search).configure_view(stroke=None)

