"""No planted script runs in any HTML the package writes (issue 14 §8), counted.

Every hostile string below goes, as message text, agent id, task title and search text,
through every rendering point: the thread view, the sessions table, the report page (#13)
and a chart saved as HTML by ``save_chart`` (``search_chart`` of the messages). A browser-like
parser (``fuzz_hostile.live_scripts``) finds no planted ``<script>`` body, ``on*`` handler or
``javascript:`` link; the package's own renderers display no control or bidi-override
character. ``test_counts`` prints how many (string, rendering point) pairs were checked.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.views import threads
from a2a_lab.views.messages import thread_messages
from a2a_lab.views.plots import save_chart
from a2a_lab.views.report import ReportOptions, report
from a2a_lab.views.search import search_chart
from tests.support.fuzz_hostile import live_scripts

# the large hostile-HTML corpus: make test-all
pytestmark = pytest.mark.slow

HOSTILE = [
    "</script><script>alert(1)</script>",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '"><script>alert(1)</script>',
    "'><img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=javascript:alert(1)>",
    "</textarea><script>alert(1)</script>",
    "<!--<script>alert(1)</script>-->",
    "]]><script>alert(1)</script>",
    "<\u0000script>alert(1)</script>",
    "\u202e\u2066gnp.exe\u2069 alert(1)",
    "bell\u0007 esc\u001b[31m alert(1)",
    "`<script>alert(1)</script>`",
    "```\n</script><script>alert(1)</script>\n```",
    "<style>*{display:none}</style><script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "\ufeff<script>alert(1)</script>",
    "<details open ontoggle=alert(1)>",
    "<body onload=alert(1)>",
]
# Displayed text must not carry C0/C1 controls (but tab/newline) or bidi overrides/isolates
UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CHECKED = {"pairs": 0}


def _log(text: str) -> pl.DataFrame:
    agent = "a-" + text[:40]
    rows = [
        {
            "type": "task.started",
            "agentId": agent,
            "ts": 1_767_225_600_000,
            "data": {"workSessionId": "ws_1", "taskId": "t1"},
        },
        {
            "type": "plan.submitted",
            "agentId": agent,
            "ts": 1_767_225_601_000,
            "data": {"workSessionId": "ws_1", "taskId": "t1", "title": text},
        },
    ]
    for i, t in enumerate(["a2a.send", "a2a.response", "a2a.complete"]):
        rows.append(
            {
                "type": t,
                "agentId": "main",
                "ts": 1_767_225_602_000 + i * 1000,
                "data": {
                    "fromAgent": "main",
                    "toAgent": agent,
                    "conversationId": "c",
                    "workSessionId": "ws_1",
                    "taskId": "t1",
                    "message": text,
                    "turn": 1,
                },
            }
        )
    return al.from_records(rows)


@pytest.mark.parametrize("text", HOSTILE)
def test_no_planted_script_runs_anywhere(text: str, tmp_path: Path) -> None:
    events = _log(text)
    ev = al.enrich(events)
    ws = al.work_sessions(ev, now=datetime(2026, 6, 1, tzinfo=UTC))
    sid = ws.sessions["id"][0]
    pages = {
        "thread_view": threads.thread_view(ws, ev, sid).to_html(),
        "thread_view+search": threads.thread_view(
            ws, ev, sid, threads.MessageOptions(search=text[:20])
        ).to_html(),
        "sessions_table": threads.sessions_table(ws, ev).to_html(),
    }
    path = tmp_path / "c.html"
    save_chart(search_chart(thread_messages(ws, ev, sid)), path)
    pages["save_chart(search_chart).html"] = path.read_text(encoding="utf-8")
    src = tmp_path / "log" / "coordination-events.ndjson"
    src.parent.mkdir()
    al.write_events(events, src)
    pages["report"] = report(str(src), ReportOptions(embed_font=False)).html
    for where, html in pages.items():
        assert live_scripts(html) == [], (where, text)
        if where in ("thread_view", "thread_view+search", "sessions_table"):
            assert UNSAFE.search(html) is None, (where, text)
        CHECKED["pairs"] += 1


def test_counts() -> None:
    if CHECKED["pairs"] == 0:
        pytest.skip("run with the other tests of this module")
    print(
        f"HTML: {len(HOSTILE)} hostile strings x 5 rendering points = {CHECKED['pairs']} pages, 0 live scripts"
    )
    assert CHECKED["pairs"] == len(HOSTILE) * 5
