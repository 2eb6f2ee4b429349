"""The report's sections as HTML: every untrusted text through ``escape_html``.

Each function takes :class:`~a2a_lab.app.report.ReportData` and returns the HTML of one
``<section>``; it computes nothing the application layer (:mod:`a2a_lab.app.report`) has
not. Numbers the tests compare with the library carry ``data-figure``; every sortable cell
carries its number as ``data-v``, so a table sorts by the number it shows.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from a2a_lab.analysis.checks import RULES, SEVERITIES
from a2a_lab.app.report import MIN_FINISHED, ReportData, min_replies
from a2a_lab.views import plots
from a2a_lab.views.embed import chart_figure
from a2a_lab.views.palette import SEVERITY_COLORS, color_of
from a2a_lab.views.report._sessions import badge
from a2a_lab.views.safe_html import escape_html as esc

__all__ = ["SECTIONS", "conversations", "graph", "health", "overview", "sections", "twin"]

#: Section ids and headings, in page order.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("overview", "Overview"),
    ("search", "Search"),
    ("sessions", "Work sessions"),
    ("conversations", "Conversations"),
    ("graph", "Interaction graph"),
    ("health", "Log health"),
    ("twin", "Twin comparison"),
)
#: Rows per page of a long table.
TABLE_PAGE = 15


def sections(data: ReportData) -> list[tuple[str, str]]:
    """The sections this report has (the twin comparison only with a simulator run)."""
    return [(sid, label) for sid, label in SECTIONS if sid != "twin" or data.twin is not None]


def _heading(section: str) -> str:
    return dict(SECTIONS)[section]


def _open(section: str, intro: str = "") -> str:
    return f'<section id="{section}"><h2>{_heading(section)}</h2>' + (
        f'<p class="muted">{intro}</p>' if intro else ""
    )


def _num(value: Any, fmt: str = "{:,}") -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return fmt.format(value)


def _pct(x: float | None) -> str:
    return _num(None if x is None else 100 * x, "{:.1f} %")


def _sec(seconds: float | None) -> str:
    return _num(seconds, "{:,.1f}")


def _cell(text: str, value: float | None) -> str:
    """A numeric cell: shown ``text`` (HTML), sort key ``value`` (empty: sorts last)."""
    key = "" if value is None or value != value else repr(float(value))
    return f'<td data-v="{key}">{text}</td>'


def _table(head: list[str], rows: list[list[str]], cls: str = "", page: bool = False) -> str:
    """A sortable table; ``rows`` hold HTML cells (already escaped), either whole ``<td>``
    elements (from :func:`_cell`) or their content. Longer than a page: paged."""
    thead = "".join(f'<th scope="col">{esc(h)}</th>' for h in head)
    body = "".join(
        "<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in r) + "</tr>"
        for r in rows
    )
    pager = f' data-pager="{TABLE_PAGE}"' if page and len(rows) > TABLE_PAGE else ""
    return (
        f'<table class="sortable {cls}"{pager}><thead><tr>{thead}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


# ---------------------------------------------------------------------------------------
def _card(key: str, value: str, label: str, href: str, note: str = "") -> str:
    return (
        f'<a class="card" href="#{href}"><span class="value" data-figure="{key}">{value}</span>'
        f'<span class="label">{esc(label)}</span>'
        + (f'<span class="note muted">{note}</span>' if note else "")
        + "</a>"
    )


def _kpi_cards(data: ReportData) -> str:
    f, k = data.figures, data.figures["kpis"]
    ci = k["no_reply_ci"]
    rate_note = f"{k['no_reply']:,} of {k['finished']:,} finished" + (
        f" · 95 % CI {_pct(ci[0])}–{_pct(ci[1])}" if ci else ""
    )

    def latency(q: str) -> str:
        kq = k[q]
        note = f"n = {kq['n']:,} replies"
        if kq["value"] is None:
            note += f" (shown from {min_replies(0.5 if q == 'p50' else 0.95):,})"
        elif kq["ci"]:
            note += f" · 95 % CI {_sec(kq['ci'][0])}–{_sec(kq['ci'][1])} s"
        return _card(q, _num(kq["value"], "{:,.1f} s"), f"first reply {q}", "conversations", note)

    sev = " ".join(
        badge(f"{f[f'findings_{s}']:,} {s}", color_of(SEVERITY_COLORS, s))
        for s in reversed(SEVERITIES)
    )
    return (
        '<div class="cards">'
        + _card(
            "exchanges",
            _num(f["exchanges"]),
            "exchanges",
            "conversations",
            f"{f['ambiguous_exchanges']:,} ambiguous",
        )
        + _card(
            "no_reply_rate", _pct(k["no_reply_rate"]), "no-reply rate", "conversations", rate_note
        )
        + latency("p50")
        + latency("p95")
        + _card("findings", _num(f["findings"]), "health findings", "health", sev)
        + _card(
            "rejects",
            _num(f["rejects"]),
            "rejected lines",
            "health",
            f'<span data-figure="warnings">{f["warnings"]:,}</span> load warnings',
        )
        + _card(
            "events",
            _num(f["events"]),
            "events",
            "overview",
            f"{f['agents']:,} agents · {f['sessions']:,} work sessions",
        )
        + "</div>"
    )


def _kpi_lists(data: ReportData) -> str:
    k = data.figures["kpis"]
    worst = (
        "".join(
            f"<li>{esc(p['from_agent'])} → {esc(p['to_agent'])}: <strong>{_pct(p['no_reply_rate'])}</strong> "
            f'<span class="muted">({p["no_reply"]:,} of n = {p["finished"]:,})</span></li>'
            for p in k["worst_pairs"]
        )
        or "<li>no pair with a no-reply</li>"
    )
    busiest = (
        "".join(
            f"<li>{esc(a['agent'])}: <strong>{a['total']:,}</strong> "
            f'<span class="muted">({a["requests"]:,} asked, {a["received"]:,} answered)</span></li>'
            for a in k["busiest"]
        )
        or "<li>no exchange</li>"
    )
    rules = (
        "".join(
            f"<li>{badge(r['severity'], color_of(SEVERITY_COLORS, r['severity']))} "
            f"<code>{esc(r['rule'])}</code>: <strong>{r['findings']:,}</strong></li>"
            for r in k["top_rules"]
        )
        or "<li>no finding</li>"
    )
    return (
        '<div class="kpi-lists">'
        f'<div><h3><a href="#conversations">Worst pairs</a></h3><p class="muted">no-reply rate, pairs '
        f'with at least {MIN_FINISHED} finished exchanges</p><ol id="worst-pairs">{worst}</ol></div>'
        f'<div><h3><a href="#graph">Busiest agents</a></h3><p class="muted">exchanges asked + '
        f'answered</p><ol id="busiest">{busiest}</ol></div>'
        '<div><h3><a href="#health">Log health</a></h3><p class="muted">the rules with the most '
        f'findings, most severe first</p><ol id="top-rules">{rules}</ol></div></div>'
    )


def overview(data: ReportData) -> str:
    """The answers first: source and span, the KPI cards, worst pairs, busiest agents."""
    f, t = data.figures, data.times  # the times as shown in the zone (the app's)
    window = ""
    if data.since_ms is not None or data.until_ms is not None:
        window = f" · window from {esc(t['since'])} until {esc(t['until'])}"
    span = ""
    if f["first_ms"] is not None:
        days = (f["last_ms"] - f["first_ms"]) / 86_400_000
        span = (
            f"<strong>{esc(t['first'])}</strong> to "
            f"<strong>{esc(t['last'])}</strong> ({esc(data.tz)}, "
            f'<span data-figure="span_days">{days:,.1f}</span> days)'
        )
    untimed = f" · {f['untimed']:,} events without a usable time" if f["untimed"] else ""
    parts = [
        _open("overview"),
        f'<p class="source">Source <code data-figure="source">{esc(data.source)}</code> · {span or "no timed event"}'
        f"{window}{untimed} · {_num(data.load.report.total_lines)} lines read, {_num(f['blank'])} blank.</p>",
        _kpi_cards(data),
        _kpi_lists(data),
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
_PAIR_HEAD = [
    "requester",
    "target",
    "exchanges",
    "replies (n)",
    "p50 s",
    "p95 s",
    "p99 s",
    "no reply",
    "blocked",
    "retries",
    "mean turns",
]


def _pair_rows(pairs: pl.DataFrame) -> list[list[str]]:
    return [
        [
            esc(r["from_agent"]),
            esc(r["to_agent"]),
            _cell(_num(r["exchanges"]), r["exchanges"]),
            _cell(_num(r["replies"]), r["replies"]),
            _cell(_sec(r["p50_first_reply_s"]), r["p50_first_reply_s"]),
            _cell(_sec(r["p95_first_reply_s"]), r["p95_first_reply_s"]),
            _cell(_sec(r["p99_first_reply_s"]), r["p99_first_reply_s"]),
            # the sort key is the rate shown (rounded as shown): no hidden measure reorders it
            _cell(
                _pct(r["no_reply_rate"]),
                None if r["no_reply_rate"] is None else round(100 * r["no_reply_rate"], 1),
            ),
            _cell(
                _pct(r["blocked_rate"]),
                None if r["blocked_rate"] is None else round(100 * r["blocked_rate"], 1),
            ),
            _cell(_num(r["retries"]), r["retries"]),
            _cell(_num(r["mean_turns"], "{:.2f}"), r["mean_turns"]),
        ]
        for r in pairs.iter_rows(named=True)
    ]


def conversations(data: ReportData, *, max_rows: int) -> str:
    """Per pair: latency, no-reply and blocked rates, retries, turns (worst first, sortable,
    paged); why exchanges got no reply; the chart of the table's first page."""
    conv, pairs = data.conversations, data.pairs
    shown = pairs.head(max_rows)
    reasons = (
        conv.filter(pl.col("outcome").is_in(["no_reply", "concurrency_blocked"]))
        .group_by("outcome", pl.col("outcome_reason").fill_null("(not given)"))
        .len("exchanges")
        .sort("exchanges", "outcome", "outcome_reason", descending=[True, False, False])
    )
    reason_rows = [[esc(o), esc(r), _cell(_num(n), n)] for o, r, n in reasons.iter_rows()]
    rule = ", ".join(f"p{round(q * 100)} from {min_replies(q):,}" for q in (0.5, 0.95, 0.99))
    parts = [
        _open(
            "conversations",
            f"{conv.height:,} exchanges between {pairs.height:,} requester → target pairs, worst first: "
            "the highest no-reply rate (among exchanges that finished with or without a reply), then "
            "blocked rate, then p95. Click a heading to sort. A percentile is shown only where at least "
            f"5 replies lie beyond it ({rule} replies); below that the cell is empty.",
        ),
        f'<p class="muted">the first {shown.height:,} of {pairs.height:,} pairs</p>'
        if pairs.height > shown.height
        else "",
        _table(_PAIR_HEAD, _pair_rows(shown), "pairs", page=True),
    ]
    # the chart draws rows of the table: its first rows (worst first) that show a median
    charted = shown.filter(pl.col("p50_first_reply_s").is_not_null()).head(TABLE_PAGE)
    if charted.height:
        chart_conv = conv.join(
            charted.select("from_agent", "to_agent"), on=["from_agent", "to_agent"], how="semi"
        )
        parts.append(
            f'<p class="muted" data-charted="{charted.height}">The chart draws the table\'s first '
            f"{charted.height} rows (worst first) that show a median; the 5-95 % whisker only "
            f"from {min_replies(0.95):,} replies.</p>"
            + chart_figure(
                plots.latency_by_pair(
                    chart_conv,
                    top=TABLE_PAGE,
                    min_exchanges=min_replies(0.5),
                    min_whisker_replies=min_replies(0.95),
                )
            )
        )
    parts.append("<h3>Why exchanges got no reply</h3>")
    parts.append(
        _table(["outcome", "reason", "exchanges"], reason_rows)
        if reason_rows
        else "<p>Every exchange got its reply.</p>"
    )
    if conv.height:
        targets = data.traffic.sort("received", "agent", descending=[True, False]).head(30)
        parts.append(
            chart_figure(
                plots.outcome_bars(
                    conv.join(
                        targets.select(pl.col("agent").alias("to_agent")), on="to_agent", how="semi"
                    )
                )
            )
        )
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
def graph(data: ReportData) -> str:
    """Who asks whom: a requester × target matrix (direction = row → column, colour = traffic)."""
    conv = data.conversations
    rows = [
        [esc(a), _cell(_num(s), s), _cell(_num(r), r), _cell(_num(t), t)]
        for a, s, r, t in data.traffic.iter_rows()
    ]
    parts = [
        _open(
            "graph",
            "Each cell is a directed pair: the row agent asks, the column agent answers; the colour is "
            "the number of exchanges (a matrix stays readable where a node-link drawing of 30 agents does not).",
        ),
    ]
    if conv.height:
        parts.append('<div class="charts">')
        parts.append(chart_figure(plots.pair_heatmap(conv, value="exchanges")))
        parts.append(chart_figure(plots.pair_heatmap(conv, value="no_reply_rate")))
        parts.append("</div>")
    parts.append(_table(["agent", "requests sent", "requests received", "total"], rows, page=True))
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
def health(data: ReportData, *, max_per_rule: int) -> str:
    """Load rejects and warnings, findings grouped by rule, and the safety-limit replays."""
    rep = data.load.report
    summary = rep.summary()
    parts = [_open("health")]
    reasons = [
        [esc(r), _cell(_num(n), n)]
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
                    [esc(f), _cell(_num(n), n), esc(r), f"<code>{esc(raw)}</code>"]
                    for f, n, r, raw in rejects.iter_rows()
                ],
            )
        )
    issues = [[esc(k), _cell(_num(n), n)] for k, n in sorted(summary["issues_by_kind"].items())]
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
            f'<details class="rule" data-rule="{esc(rule)}"><summary>{badge(severity, color_of(SEVERITY_COLORS, severity))} '
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
                [
                    esc(n),
                    f"{lim} per {w:g} s",
                    _cell(_num(c), c),
                    _cell(_num(b), b),
                    _cell(_num(p), p),
                ]
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
    if t is None:  # no section and no link without a simulator run
        return ""
    wide = t.quantiles.pivot(on="source", index=["measure", "quantile"], values="value")
    rows = [
        [esc(m), _cell(f"{q:g}", q), _cell(_num(o, "{:,.3g}"), o), _cell(_num(s, "{:,.3g}"), s)]
        for m, q, o, s in wide.select("measure", "quantile", "observed", "simulated").iter_rows()
    ]
    rates = [
        [esc(m), _cell(_num(o, "{:,.4g}"), o), _cell(_num(s, "{:,.4g}"), s)]
        for m, o, s in t.rates.iter_rows()
    ]
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
