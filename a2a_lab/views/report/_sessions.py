"""The report's search over every message and its list of every work session.

Every session is one collapsed line (``<details>``), paged by the page script. The most
recent ``max_sessions`` carry their threads and messages rendered here (markdown, mentions,
thread status); any other session is filled from the search index when it is opened. The
index holds every event with a text (:func:`a2a_lab.app.report.message_index`) as gzipped
JSON, so the search counts every message of the log, not only the sessions shown.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab._frames import number
from a2a_lab.app.report import ReportData
from a2a_lab.time import MAX_TIME_MS, format_time, python_safe
from a2a_lab.views.palette import (
    MESSAGE_KIND_COLORS,
    SESSION_STATUS_COLORS,
    THREAD_STATUS_COLORS,
    color_of,
)
from a2a_lab.views.safe_html import escape_html as esc
from a2a_lab.views.threads import MessageOptions, task_titles, thread_messages

__all__ = ["PAGE_SIZE", "TIME_WINDOWS", "search", "search_index", "sessions", "thread_status"]

#: Sessions per page of the list.
PAGE_SIZE = 15
#: Time windows of the sessions filter (label, ms before the log's last event).
TIME_WINDOWS: tuple[tuple[str, int], ...] = (
    ("last hour", 3_600_000),
    ("last 24 h", 86_400_000),
    ("last 7 days", 604_800_000),
)
_EXCHANGE_KINDS = ("message", "reply", "turn", "complete", "no_reply", "refused", "outcome")


def badge(text: str, color: str, cls: str = "badge") -> str:
    return f'<span class="{cls}" style="background:{color}">{esc(text)}</span>'


def search_index(data: ReportData) -> str:
    """The message index as base64 of gzipped JSON: distinct texts ``texts``, per message
    ``x`` (text), ``s`` (session row, -1: none), ``th`` (thread, -1: none), ``from`` /
    ``to`` (agent, -1: none) and ``t`` (ms after ``t0``), in time order."""
    m = data.messages
    # a time beyond Date's ±8.64e15 ms is no instant (ts 1e308): shown as "—", not cast
    instant = m["event_ms"].filter(m["event_ms"].abs() <= MAX_TIME_MS)
    t0 = number(instant.min()) if instant.len() else 0.0
    offsets = m.select(
        pl.when(pl.col("event_ms").abs() <= MAX_TIME_MS)
        .then((pl.col("event_ms") - t0).round(0))
        .cast(pl.Int64)
    ).to_series()

    def codes(column: str) -> tuple[list[str], pl.Series]:
        values = m[column]
        names = values.drop_nulls().unique(maintain_order=True)
        lookup = pl.DataFrame({column: names, "_code": pl.int_range(names.len(), eager=True)})
        code = m.select(column).join(lookup, on=column, how="left", maintain_order="left")
        return names.to_list(), code["_code"].fill_null(-1)

    texts, x = codes("text")
    threads, th = codes("thread")
    agents = pl.concat([m["sender"], m["receiver"]]).drop_nulls().unique(maintain_order=True)
    agent_code = pl.DataFrame({"_a": agents, "_code": pl.int_range(agents.len(), eager=True)})

    def coded(column: str) -> pl.Series:
        frame = m.select(pl.col(column).alias("_a"))
        return frame.join(agent_code, on="_a", how="left", maintain_order="left")["_code"]

    # the integer arrays are written by Polars (as json.dumps writes integers): a Python
    # list of 675,000 ints per array took 150 MB more at the benchmark log's peak
    parts = {
        "t0": json.dumps(t0),
        "t": _ints(offsets, "null"),
        "texts": _strings(texts),
        "x": _ints(x),
        "threads": _strings(threads),
        "th": _ints(th),
        "s": _ints(m["session"].cast(pl.Int64)),
        "sessions": _strings(data.sessions.sessions["id"].to_list()),
        "agents": _strings(agents.to_list()),
        "from": _ints(coded("sender")),
        "to": _ints(coded("receiver")),
    }
    raw = ("{" + ",".join(f'"{k}":{v}' for k, v in parts.items()) + "}").encode("utf-8")
    # level 4: at the benchmark log 0.30 CPU s and 6.53 MB, level 6 1.17 s and 6.24 MB
    return base64.b64encode(gzip.compress(raw, compresslevel=4, mtime=0)).decode("ascii")


def _ints(values: pl.Series, null: str = "-1") -> str:
    """A JSON array of integers, a null as ``null`` (default -1: the index's "none")."""
    text = values.cast(pl.Int64).cast(pl.String).fill_null(null).str.join(",").item()
    return f"[{text}]"


def _strings(values: list[str]) -> str:
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def search(data: ReportData) -> str:
    """The search box over every message of the log."""
    n = data.messages.height
    return (
        '<section id="search"><h2>Search every message</h2>'
        f'<p class="muted">{n:,} messages with a text (every event whose message, reply, summary, '
        "reason, description, label, error or task title is not empty), in every session: a phrase "
        "matches where it occurs in those texts, case-insensitively, as a text search of the log "
        "finds it there.</p>"
        '<input id="q" type="search" placeholder="a phrase, e.g. no reply" aria-label="search every message">'
        ' <span id="q-count" class="muted"></span><div id="q-hits"></div>'
        f'<script type="application/gzip" id="a2a-index">{search_index(data)}</script></section>'
    )


def thread_status(messages: pl.DataFrame, session_status: str) -> pl.DataFrame:
    """Per thread of ``messages`` (:func:`thread_messages` rows) its status badge.

    From the thread's last exchange message: a concurrency refusal → ``blocked``, a
    no-reply → ``no reply``, a reply, ping-pong turn or completion → ``replied``, any other
    runtime outcome → ``incomplete``; a message still waiting → ``active`` in an ACTIVE
    session, else ``incomplete``. A thread without exchange messages is ``active`` in an
    ACTIVE session, else ``incomplete``.
    """
    waiting = "active" if session_status == "ACTIVE" else "incomplete"
    last = (
        messages.filter(pl.col("kind").is_in(_EXCHANGE_KINDS))
        .group_by("thread_id", maintain_order=True)
        .agg(pl.col("kind").last())
    )
    status = pl.col("kind").replace_strict(
        {
            "refused": "blocked",
            "no_reply": "no reply",
            "reply": "replied",
            "turn": "replied",
            "complete": "replied",
            "outcome": "incomplete",
            "message": waiting,
        },
        default=waiting,
    )
    return (
        messages.select("thread_id")
        .unique(maintain_order=True)
        .join(last, on="thread_id", how="left", maintain_order="left")
        .select("thread_id", status.alias("status"))
    )


def _member_events(data: ReportData, ws_ids: list[str | None]) -> pl.DataFrame:
    """The enriched events of the embedded sessions' threads only (thread_messages joins on them)."""
    members = data.sessions.thread_events.filter(
        pl.col("work_session_id").is_in(ws_ids, nulls_equal=True)
    )
    return data.enriched.join(
        members.select("file", "line").unique(), on=["file", "line"], how="semi"
    )


def _formatted(msgs: pl.DataFrame) -> pl.DataFrame:
    """The messages with their times formatted (``_clock``, ``_iso``), Python-safe: one
    expression for the messages of every embedded session (its plan is costly to build)."""
    return python_safe(
        msgs.with_columns(
            format_time(pl.col("time"), "%m-%d %H:%M:%S").alias("_clock"),
            format_time(pl.col("time"), "%Y-%m-%dT%H:%M:%S%.3f%:z").alias("_iso"),
        )
    )


def _threads_html(rows: pl.DataFrame, statuses: dict[str, str]) -> str:
    """The threads of one embedded session (its :func:`_formatted` messages), each a
    collapsed line with its messages."""
    out = []
    for (thread_id,), part in rows.group_by("thread_id", maintain_order=True):
        status = statuses.get(str(thread_id), "incomplete")
        first = part.row(0, named=True)
        out.append(
            f'<details class="a2a-thread" data-status="{esc(status)}"><summary>'
            f"{badge(status, color_of(THREAD_STATUS_COLORS, status), 'badge status')} "
            f"<strong>{esc(first['thread_title'])}</strong> "
            f'<span class="muted">{esc(thread_id)} · {part.height} messages</span></summary>'
        )
        for m in part.iter_rows(named=True):
            receiver = f" → <strong>{esc(m['receiver'])}</strong>" if m["receiver"] else ""
            body = f'<div class="body kind-{esc(m["kind"])}">{m["html"]}</div>' if m["html"] else ""
            out.append(
                f'<div class="a2a-msg"><div class="meta"><span class="muted">#{m["n"]}</span> '
                f'<time datetime="{m["_iso"]}">{m["_clock"]}</time> '
                f"<strong>{esc(m['sender'] or 'unknown')}</strong>{receiver} "
                f"{badge(m['label'], color_of(MESSAGE_KIND_COLORS, m['kind']))}</div>{body}</div>"
            )
        out.append("</details>")
    return "".join(out)


def _embedded(
    data: ReportData, rows: pl.DataFrame, max_messages: int, users: Mapping[str, str] | None
) -> dict[int, str]:
    """The rendered threads of the sessions in ``rows``, by session row."""
    events = _member_events(data, rows["work_session_id"].to_list())
    titles = task_titles(data.enriched if data.title_events is None else data.title_events)
    shown, notes, statuses = [], {}, {}
    for row in rows.iter_rows(named=True):
        msgs = thread_messages(
            data.sessions,
            events,
            row["id"],
            MessageOptions(discord_users=users),
            tz=data.tz,
            titles=titles,
        )
        total = msgs.height
        msgs = msgs.head(max_messages)
        notes[row["row"]] = (
            f'<p class="muted">showing the first {msgs.height:,} of {total:,} messages '
            "(all are in the search)</p>"
            if total > msgs.height
            else ""
        )
        statuses[row["row"]] = dict(thread_status(msgs, row["status"]).iter_rows())
        shown.append(msgs.with_columns(pl.lit(row["row"], pl.UInt32).alias("_session")))
    if not shown:
        return {}
    parts = _formatted(pl.concat(shown, how="vertical_relaxed")).partition_by(
        "_session", as_dict=True
    )
    return {
        r: notes[r] + (_threads_html(parts[(r,)], statuses[r]) if (r,) in parts else "")
        for r in notes
    }


def _session_line(row: dict[str, Any], body: str | None) -> str:
    status = row["status"]
    embedded = ' data-embedded=""' if body is not None else ""
    return (
        f'<details class="s-item pg-item" id="s-{row["row"]}" data-s="{row["row"]}"{embedded} '
        f'data-id="{esc(row["id"])}" '
        f'data-status="{esc(status)}" data-category="{esc(row["collab_category"] or "")}" '
        f'data-agents="{esc(json.dumps(row["agents"]))}" data-last="{int(row["last_ms"] or 0)}">'
        f"<summary>{badge(status, color_of(SESSION_STATUS_COLORS, status))} "
        f"<strong>{esc(row['id'])}</strong> · {esc(row['collab_category'] or '(none)')} · "
        f"{row['thread_count']:,} threads · {row['event_count']:,} events · "
        f'<span class="muted">last {esc(row["last"] or "—")}</span></summary>'
        f'<div class="s-body">{body or ""}</div></details>'
    )


def _options(values: list[str], any_label: str, ident: str) -> str:
    opts = "".join(f'<option value="{esc(v)}">{esc(v or "(none)")}</option>' for v in values)
    return f'<select id="{ident}" aria-label="{ident[2:]}"><option value="">{esc(any_label)}</option>{opts}</select>'


def sessions(
    data: ReportData,
    *,
    max_sessions: int,
    max_messages: int,
    discord_users: Mapping[str, str] | None,
) -> str:
    """Every work session as one collapsed line, paged and filterable; the most recent
    ``max_sessions`` with their threads rendered, the others filled from the search index."""
    assert data.session_list is not None, "ReportData made by a2a_lab.app.report.finish"
    rows = data.session_list  # with ``last`` as shown in the zone (the app's)
    bodies = _embedded(data, rows.head(max_sessions), max_messages, discord_users)
    lines = [
        _session_line(r, bodies.get(r["row"])) for r in python_safe(rows).iter_rows(named=True)
    ]
    agents = sorted({a for group in rows["agents"].to_list() for a in group})
    statuses = [s for s in SESSION_STATUS_COLORS if s in set(rows["status"].to_list())]
    categories = sorted({c or "" for c in rows["collab_category"].to_list()})
    time_opts = "".join(f'<option value="{ms}">{esc(label)}</option>' for label, ms in TIME_WINDOWS)
    legend = " ".join(badge(s, color_of(SESSION_STATUS_COLORS, s)) for s in statuses)
    end = data.figures["last_ms"] or 0
    return (
        '<section id="sessions"><h2>Work sessions</h2>'
        f'<p class="muted">All {data.figures["sessions"]:,} work sessions (the dashboard\'s order: most '
        "recent activity first; events without a session last), one line each: open one to see its "
        f"threads. Status at {esc(data.times['clock'])} ({esc(data.tz)}), the clock of "
        f"<code>a2a-lab work-sessions</code>: {legend}</p>"
        f'<div class="filters" data-end="{int(end)}">'
        f"{_options(agents, 'any agent', 'f-agent')}{_options(statuses, 'any status', 'f-status')}"
        f"{_options(categories, 'any category', 'f-category')}"
        f'<select id="f-time" aria-label="time"><option value="">any time</option>{time_opts}</select>'
        '<button type="button" id="s-collapse">collapse all</button>'
        '<span id="f-count" class="muted"></span></div>'
        f'<div id="s-list" data-pager="{PAGE_SIZE}">{"".join(lines)}</div></section>'
    )
