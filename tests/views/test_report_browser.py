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

from a2a_lab.views.report import report
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

VISIBLE_MESSAGES = (
    "[...document.querySelectorAll('#sessions .a2a-msg')].filter(m => !m.closest('[hidden]'))"
)
VISIBLE_THREADS = (
    "[...document.querySelectorAll('#sessions .a2a-thread')].filter(t => !t.closest('[hidden]'))"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, Path]]:
    folder = tmp_path_factory.mktemp("browser")
    log = write_hostile_log(folder / "coordination-events.ndjson")
    out = report(log, tz="Asia/Seoul", max_sessions=12).write(folder / "report.html")
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as browser:
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
    )
    assert hostile >= 6, "the hostile messages are shown as text"
    links = browser.evaluate(
        "[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"
    )
    assert not [h for h in links if h.lower().lstrip().startswith("javascript")]


def test_search_and_filters_change_what_is_visible(page: tuple[Browser, Path]) -> None:
    browser, folder = page
    total = browser.evaluate(f"{VISIBLE_MESSAGES}.length")
    threads = browser.evaluate(f"{VISIBLE_THREADS}.length")
    assert total > 20 and threads > 3

    _set(browser, "#f-search", "__PWNED")  # case-insensitive
    found = browser.evaluate(
        f"{VISIBLE_MESSAGES}.map(m => m.textContent.toLowerCase().includes('__pwned'))"
    )
    assert 6 <= len(found) < total and all(found)
    assert "messages shown" in browser.evaluate("document.querySelector('#f-count').textContent")
    _set(browser, "#f-search", "")
    assert browser.evaluate(f"{VISIBLE_MESSAGES}.length") == total

    agent = browser.evaluate("document.querySelector('#f-agent').options[1].value")
    _set(browser, "#f-agent", agent)
    kept = browser.evaluate(
        f"{VISIBLE_THREADS}.map(t => JSON.parse(t.getAttribute('data-agents')))"
    )
    assert 0 < len(kept) < threads and all(agent in a for a in kept)
    _set(browser, "#f-agent", "")

    statuses = browser.evaluate(
        f"[...new Set({VISIBLE_THREADS}.map(t => t.getAttribute('data-status')))]"
    )
    assert len(statuses) >= 2, statuses
    _set(browser, "#f-status", statuses[0])
    kept = browser.evaluate(f"{VISIBLE_THREADS}.map(t => t.getAttribute('data-status'))")
    assert 0 < len(kept) < threads and set(kept) == {statuses[0]}
    _set(browser, "#f-status", "")

    _set(browser, "#f-time", "3600000")
    last = browser.evaluate(
        "Number(document.querySelector('#sessions .filters').getAttribute('data-end'))"
    )
    kept = browser.evaluate(f"{VISIBLE_THREADS}.map(t => Number(t.getAttribute('data-last')))")
    assert 0 < len(kept) < threads and all(t >= last - 3_600_000 for t in kept)
    _set(browser, "#f-time", "")

    category = browser.evaluate("document.querySelector('#f-category').options[1].value")
    _set(browser, "#f-category", category)
    kept = browser.evaluate(
        "[...document.querySelectorAll('#sessions .a2a-session')].filter(s => !s.hidden)"
        ".map(s => s.getAttribute('data-category'))"
    )
    assert kept and set(kept) == {category}
    _set(browser, "#f-category", "")
    assert browser.evaluate(f"{VISIBLE_MESSAGES}.length") == total
    browser.screenshot(folder / "report.png")
    assert browser.errors() == []
