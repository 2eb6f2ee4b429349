"""The offline HTML report, without a browser: structure, figures, escaping, CLI.

The browser half (charts drawn, filters, no script executed) is tests/views/test_report_browser.py.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import subprocess
import sys
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.analysis.checks import SEVERITIES
from a2a_lab.views.embed import vega_bundle
from a2a_lab.views.report import ReportOptions, report
from a2a_lab.views.report._sections import SECTIONS
from a2a_lab.views.report._sessions import thread_status
from a2a_lab.views.safe_html import NEUTRALIZED, escape_html, script_json
from tests.support.report_logs import (
    BIDI_AND_CONTROLS,
    EVIL_AGENT,
    EVIL_MESSAGES,
    MENTION,
    hostile_records,
    write_hostile_log,
)


class _Page(HTMLParser):
    """Every element with its attributes, and the text of every <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


def parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    p.close()
    return p


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile_log(tmp_path_factory.mktemp("report") / "coordination-events.ndjson")


@pytest.fixture(scope="module")
def built(log: Path) -> al.views.report.Report:
    return report(log, ReportOptions(title="Test <report> 보고서"), tz="Asia/Seoul")


def _message_link(tag: str, attrs: dict[str, str | None]) -> bool:
    """A link a message holds: shown as a link, opened in a new tab on click, never fetched."""
    return (
        tag == "a"
        and attrs.get("target") == "_blank"
        and attrs.get("rel") == "noopener noreferrer"
        and (attrs.get("href") or "").startswith(("https://", "http://", "mailto:"))
    )


@pytest.mark.slow
def test_no_external_url_in_any_src_or_href(built: al.views.report.Report) -> None:
    page = parse(built.html)
    refs = [
        (tag, attrs, name, value)
        for tag, attrs in page.elements
        for name, value in attrs.items()
        if name in ("src", "href", "srcset", "action", "data", "poster", "xlink:href")
        and value is not None
    ]
    assert refs, "the report links its sections"
    own = [(tag, name, value) for tag, attrs, name, value in refs if not _message_link(tag, attrs)]
    for tag, name, value in own:
        assert value.startswith(("#", "data:image/png;base64,")), (tag, name, value[:80])
    assert len(own) < len(refs), "the generated log's messages hold links (shown, not fetched)"
    # CSS fetches nothing either: the only url() is the embedded font
    for url in re.findall(r"url\(([^)]*)\)", built.html.replace(vega_bundle(), "")):
        assert url.startswith("data:"), url[:60]
    csp = next(
        a["content"]
        for t, a in page.elements
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert (
        csp is not None
        and "default-src 'none'" in csp
        and "'unsafe-inline'" not in csp.split("script-src")[1]
    )


def test_every_section_and_nav_link_is_present(built: al.views.report.Report) -> None:
    page = parse(built.html)
    ids = [a.get("id") for t, a in page.elements if t == "section"]
    # no simulator run: no twin section and no link to one
    assert ids == [sid for sid, _ in SECTIONS if sid != "twin"]
    toc = re.search(r'<nav class="toc"[^>]*>(.*?)</nav>', built.html)
    assert toc is not None
    assert re.findall(r'href="#([a-z]+)"', toc.group(1)) == ids
    assert "Twin comparison" not in built.html and 'href="#twin"' not in built.html


def test_one_inlined_vega_runtime_and_every_chart_has_a_spec_and_a_fallback(
    built: al.views.report.Report,
) -> None:
    page = parse(built.html)
    assert built.html.count(vega_bundle()) == 1
    runnable = [text for attrs, text in page.scripts if attrs.get("type") is None]
    assert len(runnable) == 3  # the runtime, the chart embedder, the page script
    specs = [
        json.loads(text) for attrs, text in page.scripts if attrs.get("type") == "application/json"
    ]
    figures = [a for t, a in page.elements if t == "figure" and a.get("class") == "a2a-chart"]
    fallbacks = [
        a
        for t, a in page.elements
        if t == "img" and (a.get("src") or "").startswith("data:image/png")
    ]
    assert len(specs) == len(figures) == len(fallbacks) >= 6
    assert all("$schema" in s for s in specs)


def _figures(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-figure="([a-z_0-9]+)">([^<]*)<', html))


def test_overview_figures_equal_the_library(log: Path, built: al.views.report.Report) -> None:
    loaded = al.load(log)
    events = loaded.events
    enriched = al.enrich(events)
    last = events["event_ms"].max()
    findings = al.checks.check(events, now=last)
    expected = {
        "events": events.height,
        "exchanges": al.conversations(enriched).height,
        "rejects": loaded.report.rejects.height,
        "findings": findings.height,
    }
    shown = _figures(built.html)
    assert {k: int(shown[k].replace(",", "")) for k in expected} == expected
    assert expected["rejects"] == 1 and expected["events"] == 3000 + len(hostile_records(0))
    f = built.figures
    assert f["sessions"] == al.work_sessions(enriched, now=last).total_sessions
    assert f["ambiguous_exchanges"] == int(al.conversations(enriched)["ambiguous"].sum())
    for s in SEVERITIES:
        assert f[f"findings_{s}"] == findings.filter(pl.col("severity") == s).height
        assert f"{f[f'findings_{s}']:,} {s}</span>" in built.html
    by_rule = dict(findings.group_by("rule").len().iter_rows())
    counts = {
        r: int(n.replace(",", ""))
        for r, n in re.findall(r'data-rule-count="([^"]+)">([^<]+)<', built.html)
    }
    assert counts == by_rule
    # the real source, not "(loaded events)"; its span in days
    assert shown["source"] == str(log)
    span = (events["event_ms"].max() - events["event_ms"].min()) / 86_400_000
    assert shown["span_days"] == f"{span:,.1f}"


def test_first_screen_answers_the_kpis(log: Path, built: al.views.report.Report) -> None:
    """No-reply rate (with its interval), p50 / p95 first reply, worst pairs and busiest
    agents, each equal to the library's figures."""
    conv = al.conversations(al.enrich(al.load(log).events))
    outcome = conv["outcome"]
    no_reply, replied = int((outcome == "no_reply").sum()), int((outcome == "replied").sum())
    rate = no_reply / (no_reply + replied)
    shown = _figures(built.html)
    assert shown["no_reply_rate"] == f"{100 * rate:.1f} %"
    k = built.figures["kpis"]
    low, high = k["no_reply_ci"]
    assert low < rate < high and low >= 0 and high <= 1
    latency = conv["first_reply_s"].drop_nulls()
    assert latency.len() >= 100, "the test log is big enough for p95"
    for q, name in ((0.5, "p50"), (0.95, "p95")):
        value = latency.quantile(q, "linear")
        assert shown[name] == f"{value:,.1f} s"
        lo, hi = k[name]["ci"]
        assert lo <= value <= hi
    pairs = al.pair_stats(conv).filter(pl.col("replied") + pl.col("no_reply") >= 10)
    worst = pairs.sort("no_reply_rate", descending=True)["no_reply_rate"].head(5).to_list()
    assert [p["no_reply_rate"] for p in k["worst_pairs"]] == worst
    first_worst = k["worst_pairs"][0]
    assert (
        f"{escape_html(first_worst['from_agent'])} → {escape_html(first_worst['to_agent'])}"
        in built.html
    )
    sent = conv.group_by("from_agent").len()
    top = sent.join(
        conv.group_by("to_agent").len().rename({"to_agent": "from_agent"}),
        on="from_agent",
        how="full",
        coalesce=True,
    ).fill_null(0)
    busiest = top.select((pl.col("len") + pl.col("len_right")).max()).item()
    assert k["busiest"][0]["total"] == busiest
    findings = al.checks.check(al.load(log).events)
    counts = dict(findings.group_by("rule").len().iter_rows())
    assert k["top_rules"] and all(counts[r["rule"]] == r["findings"] for r in k["top_rules"])
    assert 'id="top-rules"' in built.html
    # the headline is the answers, not a count of ambiguous exchanges
    assert "ambiguous exchanges</span>" not in built.html.split('id="search"')[0]


def _pair_cells(html: str) -> list[list[str]]:
    table = re.search(r'<table class="sortable pairs".*?<tbody>(.*?)</tbody>', html)
    assert table is not None
    return [
        re.findall(r"<td[^>]*>(.*?)</td>", row)
        for row in re.findall(r"<tr>(.*?)</tr>", table.group(1))
    ]


def test_pairs_table_gates_percentiles_by_n_and_sorts_by_the_shown_rate(
    log: Path, built: al.views.report.Report
) -> None:
    from a2a_lab.app.report import min_replies

    conv = al.conversations(al.enrich(al.load(log).events))
    stats = al.pair_stats(conv)
    replies = conv.group_by("from_agent", "to_agent").agg(
        pl.col("first_reply_s").count().alias("n")
    )
    lib = {
        (escape_html(r["from_agent"]), escape_html(r["to_agent"])): r
        for r in stats.join(replies, on=["from_agent", "to_agent"]).iter_rows(named=True)
    }
    rows = _pair_cells(built.html)
    assert len(rows) == stats.height
    shown_p50 = 0
    for cells in rows:
        r = lib[(cells[0], cells[1])]
        assert cells[3] == f"{r['n']:,}"
        for q, col, cell in (
            (0.5, "p50_first_reply_s", 4),
            (0.95, "p95_first_reply_s", 5),
            (0.99, "p99_first_reply_s", 6),
        ):
            expected = f"{r[col]:,.1f}" if r["n"] >= min_replies(q) else "—"
            assert cells[cell] == expected, (cells, q)
        shown_p50 += cells[4] != "—"
    assert shown_p50 > 0
    # worst first by the rate the table shows: the sort keys never rise down the table
    keys = [
        float(v) if v else -1.0
        for v in re.findall(
            r'<td data-v="([^"]*)">[^<]*</td><td data-v="[^"]*">[^<]*</td><td data-v="[^"]*">[^<]*</td><td data-v="[^"]*">[^<]*</td></tr>',
            built.html,
        )
    ]
    assert keys and keys == sorted(keys, reverse=True)


def _index(html: str) -> dict:
    blob = re.search(r'<script type="application/gzip" id="a2a-index">([^<]*)</script>', html)
    assert blob is not None
    return json.loads(gzip.decompress(base64.b64decode(blob.group(1))))


def search_count(index: dict, phrase: str) -> int:
    """What the page's search counts: messages whose text contains the phrase, any case."""
    hit = [phrase.lower() in t.lower() for t in index["texts"]]
    return sum(hit[x] for x in index["x"])


@pytest.mark.parametrize("phrase", ["billing", "roadmap", "KPI", "배포", "regression test"])
def test_search_index_finds_every_message_a_text_search_of_the_log_finds(
    log: Path, built: al.views.report.Report, phrase: str
) -> None:
    index = _index(built.html)
    # grep -ci: the log's lines that hold the phrase
    grep = sum(phrase.lower() in line.lower() for line in log.read_text("utf-8").splitlines())
    assert grep > 0
    assert search_count(index, phrase) == grep
    # every session is indexed, not only the ones whose messages are rendered
    assert len(index["sessions"]) == built.data.sessions.sessions.height > 30


def test_search_fields_are_the_shown_text_fields_and_the_title() -> None:
    from a2a_lab.app.report import SEARCH_FIELDS
    from a2a_lab.views.labels import TEXT_FIELDS

    assert (*TEXT_FIELDS, "title") == SEARCH_FIELDS


def test_progress_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2a_lab.app.report import _stages

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("A2A_LAB_PROGRESS", "0")
    with _stages(3, None) as bar:
        assert bar.disable
    with _stages(3, True) as bar:
        assert not bar.disable
    monkeypatch.setenv("A2A_LAB_PROGRESS", "1")
    with _stages(3, False) as bar:
        assert bar.disable


def test_worst_first_sorts_by_the_number_not_by_a_hidden_share() -> None:
    """Issue 23: 28.6 % was ranked above 33.3 % (the order used another measure)."""
    from a2a_lab.app.report import worst_first

    pairs = pl.DataFrame(
        {
            "from_agent": ["a", "b"],
            "to_agent": ["x", "y"],
            "exchanges": [21, 3],
            # a: 2 of 7 finished had no reply, 14 blocked; b: 1 of 3
            "no_reply_rate": [2 / 7, 1 / 3],
            "blocked_rate": [14 / 21, 0.0],
            "p95_first_reply_s": [None, None],
        },
        schema_overrides={"p95_first_reply_s": pl.Float64},
    )
    assert worst_first(pairs)["from_agent"].to_list() == ["b", "a"]


def test_latency_chart_draws_the_tables_rows(built: al.views.report.Report) -> None:
    charted = int(re.search(r'data-charted="(\d+)"', built.html).group(1))  # type: ignore[union-attr]
    rows = [c for c in _pair_cells(built.html) if c[4] != "—"][:charted]
    spec = next(
        json.loads(text)
        for attrs, text in parse(built.html).scripts
        if attrs.get("type") == "application/json" and "First-reply latency" in text
    )
    datasets = spec["datasets"]
    pairs = {d["pair"] for values in datasets.values() for d in values if "pair" in d}
    assert pairs == {f"{html_unescape(a)} → {html_unescape(b)}" for a, b, *_ in rows}


def test_hostile_text_is_escaped_everywhere(built: al.views.report.Report) -> None:
    html = built.html
    page = parse(html)
    for tag, attrs in page.elements:
        assert tag not in ("iframe", "img") or (attrs.get("src") or "").startswith(
            "data:image/png"
        ), tag
        assert tag != "svg", "no markup of the log becomes an element"
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not (attrs.get("href") or "").lower().startswith("javascript"), attrs
    assert "window.__pwned" not in " ".join(
        text for attrs, text in page.scripts if attrs.get("type") is None
    )
    # the texts are shown, as text
    assert "&lt;script&gt;window.__pwned=&#x27;script&#x27;&lt;/script&gt;" in html
    assert escape_html(EVIL_AGENT) in html
    # inside the embedded specs too: no "</" survives, yet JSON gives the text back
    for attrs, text in page.scripts:
        if attrs.get("type") == "application/json":
            assert "</" not in text and "<!--" not in text
    quoted = json.dumps(EVIL_AGENT, ensure_ascii=False)[1:-1]
    specs = [
        json.dumps(json.loads(t), ensure_ascii=False)
        for a, t in page.scripts
        if a.get("type") == "application/json"
    ]
    assert any(quoted in spec for spec in specs), "the hostile agent id is charted, as data"
    assert (
        "[click me](javascript:window.__pwned=&#x27;link&#x27;)" in html
    )  # not a link: shown as written
    assert escape_html(EVIL_MESSAGES[6]) in html


def test_bidi_and_control_characters_are_shown_not_obeyed(built: al.views.report.Report) -> None:
    outside_runtime = built.html.replace(vega_bundle(), "")
    for ch in BIDI_AND_CONTROLS:
        assert ch not in outside_runtime, hex(ord(ch))
    assert "⟨U+202E⟩exe.txt⟨U+202C⟩" in outside_runtime


def test_the_embedded_font_covers_the_korean_of_the_page(built: al.views.report.Report) -> None:
    from fontTools.ttLib import TTFont

    data = re.search(r"url\(data:font/otf;base64,([A-Za-z0-9+/=]+)\)", built.html)
    assert data is not None
    cmap = TTFont(io.BytesIO(base64.b64decode(data.group(1)))).getBestCmap()
    text = built.html.replace(vega_bundle(), "")
    hangul = {c for c in text if "\uac00" <= c <= "\ud7af"}
    assert {"안", "녕", "보", "고", "서"} <= hangul
    assert all(ord(c) in cmap for c in hangul)


@pytest.mark.slow
def test_time_window_keeps_the_library_events(log: Path) -> None:
    events = al.load(log).events
    timed = events.filter(pl.col("event_ms") > 0)["event_ms"]
    since, until = int(timed.quantile(0.25)), int(timed.quantile(0.75))
    r = report(log, ReportOptions(since=since, until=until, max_sessions=3, embed_font=False))
    kept = events.filter((pl.col("event_ms") >= since) & (pl.col("event_ms") < until))
    assert r.figures["events"] == kept.height < events.height
    assert int(_figures(r.html)["events"].replace(",", "")) == kept.height
    iso = pl.select(pl.lit(since).cast(pl.Datetime("ms"))).item().isoformat()
    assert (
        report(
            log, ReportOptions(since=iso, until=until, max_sessions=0, embed_font=False)
        ).figures["events"]
        == kept.height
    )


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"tz": "Mars/Base"}, "tz"),
        ({"since": "2026-02-30"}, "since"),
        ({"until": float("nan")}, "until"),
        ({"since": 2, "until": 1}, "until"),
        ({"max_sessions": -1}, "max_sessions"),
    ],
)
def test_invalid_options_fail_at_once_naming_the_field(log: Path, kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=f"^{named}"):
        tz = kwargs.pop("tz", "UTC")
        report(log, ReportOptions(**kwargs), tz=tz)


def test_twin_section_compares_quantiles_with_a_simulator_run(log: Path, tmp_path: Path) -> None:
    from a2a_lab.sim.workload.presets import mm1

    config = tmp_path / "mm1.json"
    config.write_text(mm1(0.5, 1.0, n_messages=300).model_dump_json(), encoding="utf-8")
    r = report(log, ReportOptions(sim=config, max_sessions=1, embed_font=False))
    twin = r.data.twin
    assert twin is not None
    observed = al.conversations(al.enrich(al.load(log).events))
    p50 = observed["first_reply_s"].drop_nulls().quantile(0.5, "linear")
    q = twin.quantiles.filter(
        (pl.col("source") == "observed")
        & (pl.col("quantile") == 0.5)
        & (pl.col("measure") == "first reply (s)")
    )
    assert q["value"].item() == pytest.approx(p50)
    sim_q = twin.quantiles.filter(pl.col("source") == "simulated")["value"].drop_nulls()
    assert sim_q.len() > 0
    assert 'id="twin"' in r.html and "mm1.json" in r.html and 'href="#twin"' in r.html


def test_thread_status_follows_the_last_exchange() -> None:
    msgs = pl.DataFrame(
        {
            "thread_id": ["a", "a", "b", "b", "c", "d", "e"],
            "kind": ["message", "reply", "message", "refused", "no_reply", "message", "task"],
        }
    )
    active = dict(thread_status(msgs, "ACTIVE").iter_rows())
    quiet = dict(thread_status(msgs, "QUIET").iter_rows())
    assert active == {"a": "replied", "b": "blocked", "c": "no reply", "d": "active", "e": "active"}
    assert quiet["d"] == "incomplete" and quiet["e"] == "incomplete"


@given(
    st.recursive(
        st.text() | st.integers() | st.booleans() | st.none(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_script_json_round_trips_and_never_closes_a_script(obj: object) -> None:
    text = script_json(obj)
    assert json.loads(text) == obj
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text


@given(st.text())
def test_escape_html_leaves_no_markup_and_no_invisible_controls(text: str) -> None:
    out = escape_html(text)
    assert "<" not in out and ">" not in out and '"' not in out
    assert not set(out) & set(NEUTRALIZED)


def test_save_chart_html_is_offline_and_escapes_the_spec(tmp_path: Path) -> None:
    conv = pl.DataFrame(
        {
            "from_agent": ["a"],
            "to_agent": ["</script><script>alert(1)</script>"],
            "outcome": ["replied"],
        }
    )
    out = al.plots.save_chart(al.plots.outcome_bars(conv, by="to_agent"), tmp_path / "c.html")
    page = parse(out.read_text(encoding="utf-8"))
    runnable = [t for a, t in page.scripts if a.get("type") is None]
    assert len(runnable) == 2 and not any("alert(1)" in t for t in runnable)
    spec = next(json.loads(t) for a, t in page.scripts if a.get("type") == "application/json")
    assert (
        spec["datasets"][next(iter(spec["datasets"]))][0]["to_agent"]
        == "</script><script>alert(1)</script>"
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "a2a_lab", "report", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_cli_writes_the_report(log: Path, tmp_path: Path) -> None:
    out, users = tmp_path / "r.html", tmp_path / "users.json"
    users.write_text(json.dumps({MENTION[0]: "main"}), encoding="utf-8")
    done = _cli(
        str(log),
        "-o",
        str(out),
        "--tz",
        "Asia/Seoul",
        "--title",
        "CLI <t>",
        "--max-sessions",
        "2",
        "--discord-users",
        str(users),
    )
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert (
        "<title>CLI &lt;t&gt;</title>" in html
        and f"{3000 + len(hostile_records(0)):,} events" in done.stderr
    )
    assert "@main 배포 확인 부탁해요" in html and f"&lt;@{MENTION[0]}&gt;" not in html


@pytest.mark.slow
def test_cli_report_and_work_sessions_share_one_clock(log: Path, tmp_path: Path) -> None:
    """Issue 23: sessions were ACTIVE/QUIET in the report and ARCHIVED in work-sessions."""
    now = "2026-03-02T20:00:00Z"
    out = tmp_path / "r.html"
    assert _cli(str(log), "-o", str(out), "--now", now, "--max-sessions", "0").returncode == 0
    html = out.read_text(encoding="utf-8")
    shown = {
        html_unescape(i): s for i, s in re.findall(r'data-id="([^"]*)" data-status="([^"]*)"', html)
    }
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "a2a_lab",
            "work-sessions",
            str(log),
            "--now",
            now,
            "--limit",
            "100000",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    statuses = {s["id"]: s["status"] for s in json.loads(listed.stdout)["sessions"]}
    assert {k: shown[k] for k in statuses} == statuses
    assert {"ARCHIVED", "QUIET"} <= set(statuses.values()), "the clock decides something"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.ndjson", "-o", "r.html"], "no such file"),
        (["LOG", "-o", "/nonexistent/r.html"], "--output"),
        (["LOG", "-o", "r.html", "--tz", "Nowhere/X"], "tz"),
        (["LOG", "-o", "r.html", "--since", "yesterday"], "--since"),
        (["LOG", "-o", "r.html", "--sim", "missing.json"], "--sim"),
        (["LOG"], "-o/--output"),
        (["LOG", "-o", "r.html", "--discord-users", "LOG"], "--discord-users"),
        (["LOG", "-o", "r.pdf"], "the report is HTML"),
        (["LOG", "-o", "r.PNG"], "the report is HTML"),
    ],
)
def test_cli_errors_are_one_line_with_status_2(
    log: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    done = _cli(
        *[str(log) if a == "LOG" else str(tmp_path / a) if a.startswith("r.") else a for a in args]
    )
    assert done.returncode == 2
    assert not list(tmp_path.iterdir()), "nothing written"
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr
