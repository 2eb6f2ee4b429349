"""The report in a real browser: headless Chromium, offline, from file://.

Skipped with a reason when Chromium is not installed (Debian: ``apt-get install chromium``);
``A2A_LAB_REQUIRE_BROWSER=1`` (set by ``.ci/run``) turns the skip into a failure, so CI
always runs these tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_lab.views.report import ReportOptions, report
from tests.support.browser import Browser, find_chromium
from tests.support.report_logs import write_hostile_log

# browser tests (headless Chromium): make test-all
pytestmark = pytest.mark.slow

CHROMIUM = find_chromium()
if CHROMIUM is None:
    if os.environ.get("A2A_LAB_REQUIRE_BROWSER") == "1":
        pytest.fail(
            "A2A_LAB_REQUIRE_BROWSER=1 but no Chromium found (apt-get install chromium)",
            pytrace=False,
        )
    pytest.skip(
        "browser tests skipped: no Chromium found (apt-get install chromium, or set A2A_LAB_CHROMIUM)",
        allow_module_level=True,
    )

PAGE_HEIGHT = 900
VISIBLE_SESSIONS = "[...document.querySelectorAll('#s-list > .s-item')].filter(s => !s.hidden)"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, Path]]:
    folder = tmp_path_factory.mktemp("browser")
    log = write_hostile_log(folder / "coordination-events.ndjson")
    out = report(log, ReportOptions(max_sessions=12), tz="Asia/Seoul", progress=False).write(
        folder / "report.html"
    )
    assert CHROMIUM is not None
    with Browser(CHROMIUM, height=PAGE_HEIGHT) as browser:
        browser.open(out.as_uri())
        browser.wait_for(
            "document.querySelectorAll('figure.a2a-chart').length === "
            "document.querySelectorAll('figure.a2a-chart[data-drawn], figure.a2a-chart[data-error]').length"
        )
        yield browser, folder


def _set(browser: Browser, selector: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const el = document.querySelector({selector!r}); el.value = {value!r};"
        " el.dispatchEvent(new Event('input')); el.dispatchEvent(new Event('change')); })()"
    )


def _search(browser: Browser, phrase: str) -> int:
    browser.evaluate("document.querySelector('#q-count').removeAttribute('data-hits')")
    _set(browser, "#q", phrase)
    browser.wait_for("document.querySelector('#q-count').hasAttribute('data-hits')", timeout=60)
    return int(browser.evaluate("document.querySelector('#q-count').getAttribute('data-hits')"))


def test_every_chart_drew_marks(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    charts = browser.evaluate(
        "[...document.querySelectorAll('figure.a2a-chart')].map(f => ({drawn: f.getAttribute('data-drawn'),"
        " error: f.getAttribute('data-error'), marks: f.querySelectorAll('.a2a-vis svg .role-mark > *').length}))"
    )
    assert len(charts) >= 6
    assert all(c["drawn"] == "true" and c["error"] is None and c["marks"] > 0 for c in charts), (
        charts
    )


def test_no_console_error_no_dialog_and_nothing_fetched(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    assert browser.errors() == []
    assert browser.dialogs() == []
    assert all(url.startswith(("file:", "data:")) for url in browser.requests()), browser.requests()


def test_planted_script_never_ran(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('script:not([type])').length") == 3
    assert (
        browser.evaluate(
            "document.querySelectorAll('iframe, img:not([src^=\"data:image/png\"]), svg[onload]').length"
        )
        == 0
    )
    hostile = browser.evaluate(
        "[...document.querySelectorAll('#sessions .a2a-msg')].map(m => m.textContent)"
        ".filter(t => t.includes('__pwned')).length"
    )  # the rendered (collapsed) threads of the most recent session
    assert hostile >= 6, "the hostile messages are shown as text"
    links = browser.evaluate(
        "[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"
    )
    assert not [h for h in links if h.lower().lstrip().startswith("javascript")]


def test_everything_collapsed_the_page_is_short_and_sessions_expand(
    page: tuple[Browser, Path],
) -> None:
    browser, _ = page
    assert browser.evaluate("document.querySelectorAll('#sessions details[open]').length") == 0
    total = browser.evaluate("document.querySelectorAll('#s-list > .s-item').length")
    assert total > 15
    assert browser.evaluate(f"{VISIBLE_SESSIONS}.length") == 15
    height = browser.evaluate("document.documentElement.scrollHeight")
    assert height <= 8 * PAGE_HEIGHT, height
    # the table of contents reaches every section from the top
    for sid in ("conversations", "graph", "health", "search"):
        assert browser.evaluate(f"!!document.querySelector('nav.toc a[href=\"#{sid}\"]')")
    # open the first session: its threads show, each still one line
    browser.evaluate("document.querySelector('#s-list > .s-item > summary').click()")
    assert browser.evaluate("document.querySelector('#s-list > .s-item').open")
    threads = browser.evaluate(
        "[...document.querySelector('#s-list > .s-item').querySelectorAll('.a2a-thread')]"
        ".filter(t => t.getClientRects().length).length"
    )
    assert threads > 0
    assert browser.evaluate("document.documentElement.scrollHeight") > height
    browser.evaluate("document.querySelector('#s-collapse').click()")
    assert browser.evaluate("document.querySelectorAll('#sessions details[open]').length") == 0
    assert browser.evaluate("document.documentElement.scrollHeight") == height


def test_paging_walks_every_session(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    total = browser.evaluate("document.querySelectorAll('#s-list > .s-item').length")
    seen: list[str] = []
    for _ in range(10):
        seen += browser.evaluate(f"{VISIBLE_SESSIONS}.map(s => s.id)")
        if browser.evaluate("document.querySelector('#s-list + .pager .pg-next').disabled"):
            break
        browser.evaluate("document.querySelector('#s-list + .pager .pg-next').click()")
    assert sorted(seen) == sorted(set(seen)) and len(seen) == total
    assert "of " + str(total) in browser.evaluate(
        "document.querySelector('#s-list + .pager .pg-info').textContent"
    )
    browser.evaluate("document.querySelector('#s-list').setAttribute('data-page', '0')")


def test_a_session_beyond_the_rendered_ones_opens_from_the_index(
    page: tuple[Browser, Path],
) -> None:
    browser, _ = page
    # the 14th session: its messages are not rendered in the page (max_sessions=12)
    sid = browser.evaluate("document.querySelectorAll('#s-list > .s-item')[13].id")
    assert browser.evaluate(f"!document.getElementById('{sid}').hasAttribute('data-embedded')")
    browser.evaluate(f"document.getElementById('{sid}').open = true")
    browser.wait_for(f"document.getElementById('{sid}').querySelectorAll('.a2a-thread').length > 0")
    shown = browser.evaluate(f"document.getElementById('{sid}').querySelectorAll('.hit').length")
    assert shown > 0
    browser.evaluate("document.querySelector('#s-collapse').click()")


def test_search_counts_every_message_of_the_log(page: tuple[Browser, Path]) -> None:
    browser, folder = page
    lines = (folder / "coordination-events.ndjson").read_text("utf-8").splitlines()
    for phrase in ("billing", "Roadmap", "배포", "regression test"):
        grep = sum(phrase.lower() in line.lower() for line in lines)
        assert grep > 0
        assert _search(browser, phrase) == grep, phrase
    assert _search(browser, "no such phrase anywhere") == 0
    # a hit links to its session, which opens on the page that holds it
    _search(browser, "billing")
    hits = browser.evaluate("document.querySelectorAll('#q-hits .hit').length")
    assert 0 < hits <= 100
    target = browser.evaluate(
        "document.querySelector('#q-hits a.hit-session[data-s]').getAttribute('data-s')"
    )
    browser.evaluate("document.querySelector('#q-hits a.hit-session[data-s]').click()")
    assert browser.evaluate(f"document.getElementById('s-{target}').open")
    assert not browser.evaluate(f"document.getElementById('s-{target}').hidden")
    _set(browser, "#q", "")
    browser.evaluate("document.querySelector('#s-collapse').click()")


def _column(browser: Browser, table: str, col: int) -> list[float | None]:
    values = browser.evaluate(
        f"[...document.querySelector({table!r}).tBodies[0].rows].map(r => r.cells[{col}].getAttribute('data-v'))"
    )
    return [None if v in ("", None) else float(v) for v in values]


def test_tables_sort_by_the_number_shown(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    table = "table.pairs"
    # default order: worst first by the no-reply rate shown
    rates = [v for v in _column(browser, table, 7) if v is not None]
    assert rates == sorted(rates, reverse=True)
    header = f"document.querySelector('{table}').tHead.rows[0].cells[2]"
    browser.evaluate(f"{header}.click()")
    assert browser.evaluate(f"{header}.getAttribute('aria-sort')") == "descending"
    n = _column(browser, table, 2)
    assert n == sorted(n, key=lambda v: -(v or 0)) and len(set(n)) > 1
    browser.evaluate(f"{header}.click()")
    n = _column(browser, table, 2)
    assert n == sorted(n, key=lambda v: v or 0)
    # a percentile column: numbers sort numerically, empty cells last both ways
    p50 = f"document.querySelector('{table}').tHead.rows[0].cells[4]"
    browser.evaluate(f"{p50}.click()")
    values = _column(browser, table, 4)
    known = [v for v in values if v is not None]
    assert known == sorted(known, reverse=True) and values[: len(known)] == known
    # the table is paged: 15 rows visible
    visible = browser.evaluate(
        f"[...document.querySelector('{table}').tBodies[0].rows].filter(r => !r.hidden).length"
    )
    assert visible == min(15, len(values))


def test_filters_keep_the_matching_sessions(page: tuple[Browser, Path]) -> None:
    browser, _ = page
    agent = browser.evaluate("document.querySelector('#f-agent').options[1].value")
    _set(browser, "#f-agent", agent)
    kept = browser.evaluate(
        "[...document.querySelectorAll('#s-list > .s-item:not(.filtered)')]"
        ".map(s => JSON.parse(s.getAttribute('data-agents')))"
    )
    total = browser.evaluate("document.querySelectorAll('#s-list > .s-item').length")
    assert 0 < len(kept) < total and all(agent in a for a in kept)
    _set(browser, "#f-agent", "")
    status = browser.evaluate("document.querySelector('#f-status').options[1].value")
    _set(browser, "#f-status", status)
    kept = browser.evaluate(
        "[...document.querySelectorAll('#s-list > .s-item:not(.filtered)')]"
        ".map(s => s.getAttribute('data-status'))"
    )
    assert kept and set(kept) == {status}
    _set(browser, "#f-status", "")
    assert browser.evaluate(f"{VISIBLE_SESSIONS}.length") == 15


def test_korean_renders_with_the_embedded_font(page: tuple[Browser, Path]) -> None:
    browser, folder = page
    browser.evaluate("document.fonts.ready.then(() => 0)")
    assert browser.evaluate("document.fonts.check('14px \"A2A Noto Sans KR\"', '배포')")
    browser.evaluate("window.scrollTo(0, 0)")
    browser.screenshot(folder / "report.png")
    assert browser.errors() == []
