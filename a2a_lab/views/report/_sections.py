"""The report's sections as HTML: every untrusted text through ``escape_html``.

Each function takes :class:`~a2a_lab.views.report._data.ReportData` and returns the HTML of
one ``<section>``. Numbers the tests compare with the library carry ``data-figure``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from a2a_lab._frames import number
from a2a_lab.analysis.checks import RULES, SEVERITIES
from a2a_lab.time import format_time, python_safe
from a2a_lab.views import plots
from a2a_lab.views.embed import chart_figure
from a2a_lab.views.palette import (
    MESSAGE_KIND_COLORS,
    SESSION_STATUS_COLORS,
    SEVERITY_COLORS,
    THREAD_STATUS_COLORS,
    color_of,
)
from a2a_lab.views.report._data import ReportData
from a2a_lab.views.safe_html import escape_html as esc
from a2a_lab.views.threads import MessageOptions, task_titles, thread_messages

__all__ = [
    "SECTIONS",
    "conversations",
    "graph",
    "health",
    "overview",
    "sessions",
    "thread_status",
    "twin",
]

#: Section ids and headings, in page order.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("overview", "Overview"),
    ("sessions", "Work sessions"),
    ("conversations", "Conversations"),
    ("graph", "Interaction graph"),
    ("health", "Log health"),
    ("twin", "Twin comparison"),
)
#: Time windows of the sessions filter (label, ms before the log's last event).
TIME_WINDOWS: tuple[tuple[str, int], ...] = (
    ("last hour", 3_600_000),
    ("last 24 h", 86_400_000),
    ("last 7 days", 604_800_000),
)
_EXCHANGE_KINDS = ("message", "reply", "turn", "complete", "no_reply", "refused", "outcome")


def _heading(section: str) -> str:
    return dict(SECTIONS)[section]


def _open(section: str, intro: str = "") -> str:
    return f'<section id="{section}"><h2>{_heading(section)}</h2>' + (
        f'<p class="muted">{intro}</p>' if intro else ""
    )


def _time(ms: float | None, tz: str, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    if ms is None:
        return "—"
    # format_time: strftime panics beyond the years ±262142, which Date's range reaches
    out: str | None = pl.select(
        format_time(pl.lit(int(ms)).cast(pl.Datetime("ms", "UTC")).dt.convert_time_zone(tz), fmt)
    ).item()
    return "—" if out is None else out


def _num(value: Any, fmt: str = "{:,}") -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return fmt.format(value)


def _badge(text: str, color: str, cls: str = "badge") -> str:
    return f'<span class="{cls}" style="background:{color}">{esc(text)}</span>'


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    """A table; ``rows`` hold HTML cells (already escaped)."""
    thead = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{thead}</tr></thead><tbody>{body}</tbody></table>'


# ---------------------------------------------------------------------------------------
def overview(data: ReportData) -> str:
    """Time range and the headline numbers, each linking to its section."""
    f = data.figures

    def card(key: str, label: str, href: str) -> str:
        return (
            f'<a class="card" href="#{href}"><span class="value" data-figure="{key}">{_num(f[key])}</span>'
            f'<span class="label">{esc(label)}</span></a>'
        )

    cards = [
        card("events", "events", "overview"),
        card("agents", "agents", "graph"),
        card("sessions", "work sessions", "sessions"),
        card("exchanges", "exchanges", "conversations"),
        card("ambiguous_exchanges", "ambiguous exchanges", "conversations"),
        card("rejects", "rejected lines", "health"),
        card("warnings", "load warnings", "health"),
        *(card(f"findings_{s}", f"{s} findings", "health") for s in reversed(SEVERITIES)),
    ]
    window = ""
    if data.since_ms is not None or data.until_ms is not None:
        window = (
            f"<p>Window: from {esc(_time(data.since_ms, data.tz))} until "
            f"{esc(_time(data.until_ms, data.tz))} ({esc(data.tz)}).</p>"
        )
    untimed = f" · {f['untimed']:,} events without a usable time" if f["untimed"] else ""
    parts = [
        _open("overview"),
        f"<p>Source <code>{esc(data.source)}</code> · events from <strong>{esc(_time(f['first_ms'], data.tz))}</strong> "
        f"to <strong>{esc(_time(f['last_ms'], data.tz))}</strong> ({esc(data.tz)}){untimed} · "
        f"{_num(data.load.report.total_lines)} lines read, {_num(f['blank'])} blank.</p>",
        window,
        f'<div class="cards">{"".join(cards)}</div>',
    ]
    if data.events.height:
        parts.append(
            chart_figure(plots.family_timeline(data.events, every=_bucket(data), tz=data.tz))
        )
    parts.append("</section>")
    return "".join(parts)


def _bucket(data: ReportData) -> str:
    """A time bucket that keeps the timeline under ~200 bars."""
    f = data.figures
    span_h = 0.0 if f["first_ms"] is None else (f["last_ms"] - f["first_ms"]) / 3_600_000
    for every, hours in (
        ("5m", 1 / 12),
        ("15m", 0.25),
        ("1h", 1),
        ("6h", 6),
        ("1d", 24),
        ("1w", 168),
    ):
        if span_h / hours <= 200:
            return every
    return "1mo"


# ---------------------------------------------------------------------------------------
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
    """The enriched events of the shown sessions' threads only (thread_messages joins on them)."""
    members = data.sessions.thread_events.filter(
        pl.col("work_session_id").is_in(ws_ids, nulls_equal=True)
    )
    return data.enriched.join(
        members.select("file", "line").unique(), on=["file", "line"], how="semi"
    )


def sessions(
    data: ReportData,
    *,
    max_sessions: int,
    max_messages: int,
    discord_users: Mapping[str, str] | None,
) -> str:
    """The dashboard's sessions with their threads, searchable and filterable in the browser."""
    result = data.sessions
    # the events without a work session come last: they are not one piece of work
    shown = result.sessions.sort(pl.col("work_session_id").is_null(), maintain_order=True).head(
        max_sessions
    )
    ws_ids = shown["work_session_id"].to_list()
    events = _member_events(data, ws_ids)
    titles = task_titles(data.enriched)
    blocks: list[str] = []
    agents: set[str] = set()
    categories: set[str] = set()
    counts = {"threads": 0, "messages": 0}
    # a time beyond Python's datetime (Date reaches the year 275760) is absent in the row
    for row in python_safe(shown).iter_rows(named=True):
        msgs = thread_messages(
            result,
            events,
            row["id"],
            MessageOptions(discord_users=discord_users),
            tz=data.tz,
            titles=titles,
        )
        total = msgs.height
        msgs = msgs.head(max_messages)
        statuses = dict(thread_status(msgs, row["status"]).iter_rows())
        categories.add(row["collab_category"] or "")
        blocks.append(_session_html(row, msgs, statuses, total, data.tz, agents, counts))
    status_opts = "".join(
        f'<option value="{esc(s)}">{esc(s)}</option>' for s in THREAD_STATUS_COLORS
    )
    agent_opts = "".join(f'<option value="{esc(a)}">{esc(a)}</option>' for a in sorted(agents))
    cat_opts = "".join(
        f'<option value="{esc(c)}">{esc(c or "(none)")}</option>' for c in sorted(categories)
    )
    time_opts = "".join(f'<option value="{ms}">{esc(label)}</option>' for label, ms in TIME_WINDOWS)
    legend = " ".join(_badge(s, c) for s, c in THREAD_STATUS_COLORS.items())
    end = data.figures["last_ms"] or 0
    return (
        _open(
            "sessions",
            f"The {shown.height} most recently active of {data.figures['sessions']:,} work sessions "
            f"(the dashboard's order; events without a session last), {counts['threads']:,} threads, "
            f"{counts['messages']:,} messages; "
            f"times in {esc(data.tz)}. Thread status: {legend}",
        )
        + f'<div class="filters" data-end="{int(end)}">'
        '<input id="f-search" type="search" placeholder="search sender, label, text…" aria-label="search">'
        f'<select id="f-agent" aria-label="agent"><option value="">any agent</option>{agent_opts}</select>'
        f'<select id="f-status" aria-label="status"><option value="">any status</option>{status_opts}</select>'
        f'<select id="f-category" aria-label="category"><option value="">any category</option>{cat_opts}</select>'
        f'<select id="f-time" aria-label="time"><option value="">any time</option>{time_opts}</select>'
        '<span id="f-count" class="muted"></span></div>' + "".join(blocks) + "</section>"
    )


def _session_html(
    row: dict[str, Any],
    msgs: pl.DataFrame,
    statuses: dict[str, str],
    total: int,
    tz: str,
    agents: set[str],
    counts: dict[str, int],
) -> str:
    rows = msgs.with_columns(
        format_time(pl.col("time"), "%m-%d %H:%M:%S").alias("_clock"),
        format_time(pl.col("time"), "%Y-%m-%dT%H:%M:%S%.3f%:z").alias("_iso"),
        pl.col("time").dt.epoch("ms").alias("_ms"),
    )
    # rows go to Python: a time beyond its datetime (Date reaches ±275760) is shown by _iso
    rows = python_safe(rows)
    tags = ", ".join(row["collab_sub_tags"] or [])
    head = (
        f'<div class="session-head">{_badge(row["status"], color_of(SESSION_STATUS_COLORS, row["status"]))} '
        f"<strong>{esc(row['id'])}</strong> · {esc(row['collab_category'])}"
        + (f" · {esc(tags)}" if tags else "")
        + f" · {row['thread_count']} threads · {row['event_count']} events"
        + (
            f' · <span class="muted">showing the first {msgs.height} of {total} messages</span>'
            if total > msgs.height
            else ""
        )
        + "</div>"
    )
    out = [f'<div class="a2a-session" data-category="{esc(row["collab_category"] or "")}">{head}']
    for (thread_id,), part in rows.group_by("thread_id", maintain_order=True):
        status = statuses.get(str(thread_id), "incomplete")
        who = sorted({a for a in (*part["sender"].to_list(), *part["receiver"].to_list()) if a})
        agents.update(who)
        counts["threads"] += 1
        counts["messages"] += part.height
        first = part.row(0, named=True)
        out.append(
            f'<div class="a2a-thread" data-status="{esc(status)}" data-agents="{esc(json.dumps(who))}" '
            f'data-last="{int(number(part["_ms"].max() or 0))}">'
            f'<div class="thread-head">{_badge(status, color_of(THREAD_STATUS_COLORS, status), "badge status")} '
            f"<strong>{esc(first['thread_title'])}</strong> "
            f'<span class="muted">{esc(thread_id)}</span></div>'
        )
        for m in part.iter_rows(named=True):
            receiver = f" → <strong>{esc(m['receiver'])}</strong>" if m["receiver"] else ""
            body = f'<div class="body kind-{esc(m["kind"])}">{m["html"]}</div>' if m["html"] else ""
            out.append(
                f'<div class="a2a-msg"><div class="meta"><span class="muted">#{m["n"]}</span> '
                f'<time datetime="{m["_iso"]}">{m["_clock"]}</time> '
                f"<strong>{esc(m['sender'] or 'unknown')}</strong>{receiver} "
                f"{_badge(m['label'], color_of(MESSAGE_KIND_COLORS, m['kind']))}</div>{body}</div>"
            )
        out.append("</div>")
    out.append("</div>")
    return "".join(out)


# ---------------------------------------------------------------------------------------
def _worst_first(pairs: pl.DataFrame) -> pl.DataFrame:
    """Pairs ordered worst first: no-reply + blocked share, then p95 latency, then volume."""
    bad = (pl.col("no_reply") + pl.col("concurrency_blocked")) / pl.col("exchanges")
    return pairs.with_columns(bad.alias("_bad")).sort(
        "_bad", "p95_first_reply_s", "exchanges", descending=True, nulls_last=True
    )


def conversations(data: ReportData, *, max_rows: int) -> str:
    """Latency per pair, no-reply / blocked rates and reasons, retries, turns."""
    conv, pairs = data.conversations, _worst_first(data.pairs)

    def s(seconds: float | None) -> str:
        return _num(seconds, "{:,.1f}")

    def pct(x: float | None) -> str:
        return _num(None if x is None else 100 * x, "{:.1f} %")

    rows = [
        [
            esc(r["from_agent"]),
            esc(r["to_agent"]),
            _num(r["exchanges"]),
            s(r["p50_first_reply_s"]),
            s(r["p95_first_reply_s"]),
            s(r["p99_first_reply_s"]),
            pct(r["no_reply_rate"]),
            pct(r["blocked_rate"]),
            _num(r["retries"]),
            _num(r["mean_turns"], "{:.2f}"),
        ]
        for r in pairs.head(max_rows).iter_rows(named=True)
    ]
    reasons = (
        conv.filter(pl.col("outcome").is_in(["no_reply", "concurrency_blocked"]))
        .group_by("outcome", pl.col("outcome_reason").fill_null("(not given)"))
        .len("exchanges")
        .sort("exchanges", "outcome", "outcome_reason", descending=[True, False, False])
    )
    reason_rows = [[esc(o), esc(r), _num(n)] for o, r, n in reasons.iter_rows()]
    parts = [
        _open(
            "conversations",
            f"{conv.height:,} exchanges between {pairs.height:,} requester → target pairs; "
            "pairs with the largest share of exchanges without a reply or refused first. "
            "No-reply rate: among exchanges that finished with or without a reply.",
        ),
        f'<p class="muted">showing {min(max_rows, pairs.height)} of {pairs.height} pairs</p>'
        if pairs.height > max_rows
        else "",
        _table(
            [
                "requester",
                "target",
                "exchanges",
                "p50 s",
                "p95 s",
                "p99 s",
                "no reply",
                "blocked",
                "retries",
                "mean turns",
            ],
            rows,
            "pairs",
        ),
        "<h3>Why exchanges got no reply</h3>",
        _table(["outcome", "reason", "exchanges"], reason_rows)
        if reason_rows
        else "<p>Every exchange got its reply.</p>",
    ]
    if conv.height:
        parts.append('<div class="charts">')
        if conv["first_reply_s"].drop_nulls().len():
            parts.append(chart_figure(plots.latency_by_pair(conv, top=15, min_exchanges=1)))
        top_targets = (
            conv.group_by("to_agent")
            .len()
            .sort("len", "to_agent", descending=[True, False])
            .head(30)
        )
        parts.append(
            chart_figure(
                plots.outcome_bars(
                    conv.join(top_targets.select("to_agent"), on="to_agent", how="semi")
                )
            )
        )
        parts.append("</div>")
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
def graph(data: ReportData) -> str:
    """Who asks whom: a requester × target matrix (direction = row → column, colour = traffic)."""
    conv = data.conversations
    sent = conv.group_by(pl.col("from_agent").alias("agent")).len("requests")
    received = conv.group_by(pl.col("to_agent").alias("agent")).len("received")
    traffic = (
        sent.join(received, on="agent", how="full", coalesce=True)
        .fill_null(0)
        .drop_nulls("agent")
        .with_columns((pl.col("requests") + pl.col("received")).alias("total"))
        .sort("total", "agent", descending=[True, False])
    )
    rows = [[esc(a), _num(s), _num(r)] for a, s, r, _ in traffic.head(30).iter_rows()]
    parts = [
        _open(
            "graph",
            "Each cell is a directed pair: the row agent asks, the column agent answers; the colour is "
            "the number of exchanges (a matrix stays readable where a node-link drawing of 30 agents does not).",
        ),
    ]
    if conv.height:
        parts.append(chart_figure(plots.pair_heatmap(conv, value="exchanges")))
        parts.append(chart_figure(plots.pair_heatmap(conv, value="no_reply_rate")))
    parts.append(_table(["agent", "requests sent", "requests received"], rows))
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
def health(data: ReportData, *, max_per_rule: int) -> str:
    """Load rejects and warnings, findings grouped by rule, and the safety-limit replays."""
    rep = data.load.report
    summary = rep.summary()
    parts = [_open("health")]
    reasons = [
        [esc(r), _num(n)]
        for r, n in sorted(summary["rejects_by_reason"].items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    parts.append(f"<h3>Load: {rep.rejects.height:,} rejected lines, {rep.warnings:,} warnings</h3>")
    if reasons:
        parts.append(_table(["reject reason", "lines"], reasons))
        rejects = rep.rejects.head(max_per_rule)
        parts.append(
            _table(
                ["file", "line", "reason", "line text"],
                [
                    [esc(f), _num(n), esc(r), f"<code>{esc(raw)}</code>"]
                    for f, n, r, raw in rejects.iter_rows()
                ],
            )
        )
    issues = [[esc(k), _num(n)] for k, n in sorted(summary["issues_by_kind"].items())]
    if issues:
        parts.append(_table(["warning", "events"], issues))
    found = data.findings
    parts.append(f"<h3>Findings: {found.height:,}</h3>")
    if found.height:
        parts.append(chart_figure(plots.findings_chart(found)))
    for (rule,), group in found.group_by("rule", maintain_order=True):
        severity = group["severity"][0]
        described = RULES[str(rule)].description if str(rule) in RULES else ""
        rows = [
            [
                esc(r["file"]),
                esc(", ".join(map(str, r["lines"][:20])) + (" …" if len(r["lines"]) > 20 else "")),
                esc(r["message"]),
            ]
            for r in group.head(max_per_rule).iter_rows(named=True)
        ]
        more = (
            f' <span class="muted">(first {max_per_rule} shown)</span>'
            if group.height > max_per_rule
            else ""
        )
        parts.append(
            f'<details class="rule" data-rule="{esc(rule)}"><summary>{_badge(severity, color_of(SEVERITY_COLORS, severity))} '
            f'<code>{esc(rule)}</code> · <span data-rule-count="{esc(rule)}">{group.height:,}</span> findings{more}'
            f' <span class="muted">{esc(described)}</span></summary>'
            + _table(["file", "lines", "finding"], rows)
            + "</details>"
        )
    parts.append(
        '<h3>Safety-limit replays</h3><p class="muted">What the runtime\'s sliding-window guards would '
        "have blocked on this log (runtime §5), replayed message by message.</p>"
    )
    parts.append(
        _table(
            ["guard", "limit", "counted messages", "would be blocked", "pairs affected"],
            [
                [esc(n), f"{lim} per {w:g} s", _num(c), _num(b), _num(p)]
                for n, lim, w, c, b, p in data.guards.iter_rows()
            ],
        )
    )
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
def twin(data: ReportData) -> str:
    """Simulated vs observed quantiles and rates (only with a simulator configuration)."""
    t = data.twin
    if t is None:
        return (
            _open("twin") + "<p>No simulator configuration was given (<code>--sim CONFIG</code>, "
            "a SimConfig JSON file), so there is nothing to compare.</p></section>"
        )
    wide = t.quantiles.pivot(on="source", index=["measure", "quantile"], values="value")
    rows = [
        [esc(m), f"{q:g}", _num(o, "{:,.3g}"), _num(s, "{:,.3g}")]
        for m, q, o, s in wide.select("measure", "quantile", "observed", "simulated").iter_rows()
    ]
    rates = [[esc(m), _num(o, "{:,.4g}"), _num(s, "{:,.4g}")] for m, o, s in t.rates.iter_rows()]
    return (
        _open(
            "twin",
            f"The simulator run of <code>{esc(t.config_name)}</code> (seed {t.seed}) beside the observed log.",
        )
        + chart_figure(plots.quantile_comparison(t.quantiles.drop_nulls("value")))
        + _table(["measure", "observed", "simulated"], rates)
        + _table(["measure", "quantile", "observed", "simulated"], rows)
        + "</section>"
    )
