"""HTML widgets of work sessions: a thread view and the session list, with status badges.

Inline styles only: notebook front ends and GitHub drop ``<style>`` blocks from outputs.
Every untrusted text goes through :func:`~a2a_lab.views.safe_html.escape_html`; message
bodies are the sanitised markdown of :mod:`~a2a_lab.views.markdown`. The HTML is
deterministic: the same input gives the same bytes (no random ids, no clock).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Never, cast

import polars as pl

from a2a_lab._frames import text_format
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.sessions import WorkSessionsResult
from a2a_lab.time import check_tz, format_time, python_safe
from a2a_lab.views.mentions import mentions_expr
from a2a_lab.views.messages import (
    MessageOptions,
    message_options,
    search_filter,
    session_messages,
)
from a2a_lab.views.palette import MESSAGE_KIND_COLORS, SESSION_STATUS_COLORS, color_of
from a2a_lab.views.safe_html import escape_html
from a2a_lab.views.titles import session_titles

__all__ = ["SessionsTable", "ThreadView", "sessions_table", "thread_view"]

_D = pl.col("data").struct
_BADGE = (
    "display:inline-block;padding:0 6px;border-radius:8px;color:#fff;font-size:0.85em;background:{}"
)
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
    'oninput="var q=this.value.toLowerCase();'
    "this.closest('.a2a-view').querySelectorAll('.a2a-msg').forEach(function(m)"
    "{m.style.display=(!q||m.textContent.toLowerCase().indexOf(q)>=0)?'':'none';});\">"
)


def _esc(value: Any) -> str:
    return escape_html(value)


def _badge(text: str, color: str) -> str:
    return f'<span style="{_BADGE.format(color)}">{_esc(text)}</span>'


def _duration_expr(duration_s: pl.Expr) -> pl.Expr:
    """``42 s``, ``5 min 03 s``, ``2 h 07 min``, ``3 d 4 h``."""
    # beyond the 64-bit integers (a fuzzed time of 1e308 ms) there is no duration to show
    seconds = duration_s.floor().cast(pl.Int64, strict=False)

    def two(e: pl.Expr) -> pl.Expr:
        return e.cast(pl.String).str.zfill(2)

    return (
        pl.when(seconds < 60)
        .then(text_format("{} s", seconds))
        .when(seconds < 3600)
        .then(text_format("{} min {} s", seconds // 60, two(seconds % 60)))
        .when(seconds < 86_400)
        .then(text_format("{} h {} min", seconds // 3600, two(seconds % 3600 // 60)))
        .otherwise(text_format("{} d {} h", seconds // 86_400, seconds % 86_400 // 3600))
    )


def _local(time: pl.Expr, tz: str, fmt: str) -> pl.Expr:
    return format_time(time.dt.convert_time_zone(tz), fmt)


#: Title of the session that ``SessionQuery(unassigned=True)`` builds.
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
    tz
        The display time zone.
    search_box
        Whether the HTML has a search box.
    """

    session: dict[str, Any]
    messages: pl.DataFrame
    matched: int
    total: int
    search: str | None
    tz: str
    search_box: bool = True

    def to_html(self) -> str:
        """The HTML of the view (deterministic: equal views give equal bytes)."""
        s = self.session
        status = s["status"]
        shown = self.messages
        header = (
            f'<div style="font-size:1.15em">{_title_html(s["title"], s["about"])} '
            f"{_badge(status, color_of(SESSION_STATUS_COLORS, status))}</div>"
            f'<div style="{_MUTED}">{_esc(s["id"])} · {_esc(s["collab_category"])}'
            f"{' · ' + _esc(', '.join(s['collab_sub_tags'])) if s['collab_sub_tags'] else ''} · "
            f"{s['thread_count']} threads · {s['event_count']} events · times in {_esc(self.tz)}</div>"
        )
        if self.search:
            header += (
                f'<div style="{_MUTED}">{self.matched} of {self.total} messages match '
                f"<code>{_esc(self.search)}</code></div>"
            )
        if shown.height < self.matched:
            header += f'<div style="{_MUTED}">showing the first {shown.height} of {self.matched} messages</div>'
        rows = shown.with_columns(
            format_time(pl.col("time"), "%m-%d %H:%M:%S").alias("_clock"),
            format_time(pl.col("time"), "%Y-%m-%dT%H:%M:%S%.3f%:z").alias("_iso"),
        )
        parts = [f'<div class="a2a-view" style="{_ROOT}">', header]
        if self.search_box:
            parts.append(_SEARCH_BOX)
        current: str | None = None
        for m in python_safe(rows).iter_rows(named=True):
            if m["thread_id"] != current:
                if current is not None:
                    parts.append("</div>")
                current = m["thread_id"]
                parts.append(
                    f'<div class="a2a-thread" style="{_THREAD}">'
                    f"<div><strong>{_esc(m['thread_title'])}</strong> "
                    f'<span style="{_MUTED}">{_esc(m["thread_id"])}</span></div>'
                )
            color = color_of(MESSAGE_KIND_COLORS, m["kind"])
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
    options: MessageOptions | None = None,
    *,
    tz: str | None = None,
    titles: pl.DataFrame | None = None,
    max_messages: int = 300,
    search_box: bool = True,
    **removed: Never,
) -> ThreadView:
    """A work session's threads as a readable conversation (HTML in a notebook).

    Each thread is a box titled by its task (:func:`thread_messages`); each message shows
    its number, time, sender → receiver, a coloured label and the rendered text.

    Parameters
    ----------
    result, enriched, session, options, tz, titles
        As for :func:`thread_messages`: ``options`` is a :class:`MessageOptions`
        (``discord_users``, ``search``, ``regex``, ``threads``, ``max_wait_ms``).
    max_messages
        Most messages rendered (the first ones, in thread order).
    search_box
        Add a search box that filters the shown messages in the browser.
    **removed
        None accepted: a message option passed as a keyword (``search=…``, the form
        before :class:`MessageOptions`) raises a ``TypeError`` naming it.

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
    options = message_options(options, removed, where="thread_view")
    if max_messages < 0:
        raise ValueError("max_messages must be >= 0")
    tz = check_tz("UTC" if tz is None else tz)
    row, messages = session_messages(result, enriched, session, options, tz=tz, titles=titles)
    title: str | None
    task: str | None
    about: str | None
    if row["work_session_id"] is None:
        title, task, about = _UNASSIGNED_TITLE, None, None
    else:
        own = enriched.lazy().filter(
            js_string_expr(_D.field("workSessionId")) == row["work_session_id"]
        )
        titled = session_titles(own, titles)
        task, title, first = titled.row(0)[1:] if titled.height else (None, None, None)
        # a session whose own task has no title is named after the first task it talks about
        title = title or cast(
            str | None, messages.sort("time", maintain_order=True)["title"].drop_nulls().first()
        )
        about = (
            None
            if first is None
            else pl.select(mentions_expr(pl.lit(first), options.discord_users)).item()
        )
    matched = search_filter(messages, options.search, regex=options.regex)
    return ThreadView(
        session={**row, "title": title, "taskId": task, "about": about},
        messages=matched.head(max_messages),
        matched=matched.height,
        total=messages.height,
        search=options.search or None,
        tz=tz,
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
    tz
        The display time zone of ``start`` and ``last``.
    """

    frame: pl.DataFrame
    total: int
    tz: str

    def to_html(self) -> str:
        """The HTML table (deterministic)."""
        head = (
            "status",
            "session",
            "category",
            "threads",
            "events",
            "start",
            "last activity",
            "duration",
        )
        cell = 'style="padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top"'
        parts = [
            (
                f'<div style="{_ROOT}"><div style="{_MUTED}">{self.frame.height} of {self.total} sessions · '
                f'times in {_esc(self.tz)}</div><table style="border-collapse:collapse"><thead><tr>'
            ),
            *(f"<th {cell}>{h}</th>" for h in head),
            "</tr></thead><tbody>",
        ]
        for r in self.frame.iter_rows(named=True):
            tags = (
                f'<div style="{_MUTED}">{_esc(", ".join(r["collab_sub_tags"]))}</div>'
                if r["collab_sub_tags"]
                else ""
            )
            manual = " ✎" if r["category_source"] == "manual_override" else ""
            parts.append(
                "<tr>"
                f"<td {cell}>{_badge(r['status'], color_of(SESSION_STATUS_COLORS, r['status']))}</td>"
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
    tz: str | None = None,
    limit: int | None = None,
    discord_users: Mapping[str, str] | None = None,
    titles: pl.DataFrame | None = None,
    **removed: Never,
) -> SessionsTable:
    """The matched sessions as the dashboard lists them, with status badges and titles.

    Parameters
    ----------
    result
        Work sessions (:func:`a2a_lab.work_sessions`).
    enriched
        The enriched events ``result`` was built from (for the task titles).
    tz
        IANA time zone of the start and last-activity times (default UTC; the old name
        ``timezone=`` is a ``TypeError`` saying so).
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
    for name in removed:
        hint = ": use tz=" if name == "timezone" else ""
        raise TypeError(f"sessions_table() got an unexpected keyword argument {name!r}{hint}")
    tz = check_tz("UTC" if tz is None else tz)
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
        _local(pl.col("start_time"), tz, "%Y-%m-%d %H:%M").alias("start"),
        _local(pl.col("last_time"), tz, "%Y-%m-%d %H:%M").alias("last"),
        _duration_expr(pl.col("duration_s")).alias("duration"),
    )
    return SessionsTable(frame=frame, total=result.total_matched, tz=tz)
