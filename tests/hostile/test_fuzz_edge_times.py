"""Times at JavaScript's Date edge (issue 14 §3): 8.2e15–8.64e15 ms and beyond.

``Date`` holds ±8.64e15 ms (+275760-09-13); Polars' strftime panics beyond the years ±262142
(≈ 8.21e15 ms) and Python's ``datetime`` ends at the year 9999 (≈ 2.5e14 ms). Check's finding
texts, the thread views, the sessions table, the work-sessions API body and the graph must
work on every instant of ``Date``'s range, and the formatted text must be the true date.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.analysis import checks
from a2a_lab.analysis.graph import interaction_graph
from a2a_lab.time._format import STRFTIME_MAX_MS, _manual, format_time, python_safe
from a2a_lab.views import threads
from tests.support.fuzz_hostile import check_source, live_scripts, write_scale_dir

# fuzzed edge times over large files: make test-all
pytestmark = pytest.mark.slow

MAX_MS = 8_640_000_000_000_000
EDGES = [2.6e14, 8.2e15, 8.3e15, 8.5e15, 8.639999999999999e15, 8.64e15, -8.3e15, -8.64e15]


def _exchange(base: float, **data: object) -> pl.DataFrame:
    rows = [
        {
            "type": t,
            "agentId": "main",
            "ts": base + i * 1000,
            "data": {
                "fromAgent": "main",
                "toAgent": "ruda",
                "conversationId": "c1",
                "workSessionId": "ws_1",
                "taskId": "t1",
                "message": "hi",
                "turn": 1,
                **data,
            },
        }
        for i, t in enumerate(["a2a.send", "a2a.response", "a2a.complete"] * 2)
    ]
    rows.append(
        {
            "type": "task.started",
            "agentId": "ruda",
            "ts": base,
            "data": {"taskId": "t1", "workSessionId": "ws_1"},
        }
    )
    return al.enrich(al.from_records(rows))


def _js_iso(ms: int) -> str:
    """``new Date(ms).toISOString()`` without the milliseconds, in chrono's year style."""
    days, rem = divmod(ms, 86_400_000)
    # proleptic Gregorian via Python's ordinal where it reaches, else the 400-year cycle
    cycles, days_in = divmod(days + 719_162, 146_097)
    d = datetime.fromordinal(days_in + 1)
    year = d.year + 400 * cycles
    y = f"+{year}" if year > 9999 else (f"-{-year:04d}" if year < 0 else f"{year:04d}")
    return f"{y}-{d.month:02d}-{d.day:02d}T{rem // 3_600_000:02d}:{rem // 60_000 % 60:02d}:{rem // 1000 % 60:02d}Z"


@pytest.mark.parametrize("base", EDGES)
def test_every_view_and_finding_works_at_the_edge(base: float) -> None:
    ev = _exchange(base)
    ws = al.work_sessions(ev, now=datetime(2026, 6, 1, tzinfo=UTC))
    body = ws.to_api()
    assert body["count"] == 1 and body["sessions"][0]["startTime"] == base
    assert "<table" in threads.sessions_table(ws, ev).to_html()
    html = threads.thread_view(ws, ev, ws.sessions["id"][0], search_box=False).to_html()
    assert html.count('class="a2a-msg"') == 7 and live_scripts(html) == []
    g = interaction_graph(ev)
    assert g.has_edge("main", "ruda")
    found = checks.check(ev, now=0 if base > 0 else None)
    assert found["message"].null_count() == 0
    if base > 0:  # every event lies in the future of now=0: the text names its true date
        future = found.filter(pl.col("rule") == "clock.future_ts")["message"].to_list()
        assert f"a2a.send at {_js_iso(int(base))} is in the future" in future


def test_the_largest_instant_reads_as_javascript_writes_it() -> None:
    frame = pl.DataFrame({"t": [MAX_MS, -MAX_MS, 8_500_000_000_000_000]}).cast(
        pl.Datetime("ms", "UTC")
    )
    assert frame.select(format_time(pl.col("t"), "%Y-%m-%dT%H:%M:%S%.3fZ"))["t"].to_list() == [
        "+275760-09-13T00:00:00.000Z",  # new Date(8.64e15).toISOString() (6-digit year in JS)
        "-271821-04-20T00:00:00.000Z",
        "+271324-04-11T15:06:40.000Z",
    ]


@settings(max_examples=30, deadline=None)
@given(ms=st.lists(st.integers(-STRFTIME_MAX_MS, STRFTIME_MAX_MS), min_size=1, max_size=50))
def test_manual_formatting_equals_strftime_wherever_strftime_works(ms: list[int]) -> None:
    frame = pl.DataFrame({"ms": ms}).with_columns(t=pl.col("ms").cast(pl.Datetime("ms", "UTC")))
    for fmt in ("%Y-%m-%dT%H:%M:%S%.3fZ", "%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"):
        out = frame.select(a=pl.col("t").dt.strftime(fmt), b=_manual(pl.col("ms"), fmt))
        assert out["a"].to_list() == out["b"].to_list()


def test_python_safe_nulls_only_what_python_cannot_hold() -> None:
    f = pl.DataFrame({"t": [0, 253_402_214_400_000 - 1, 3 * 10**14, -8 * 10**15, None]}).cast(
        pl.Datetime("ms", "UTC")
    )
    got = python_safe(f)["t"]
    assert got.is_null().to_list() == [False, False, True, True, True]


def test_numbers_beyond_the_integers_in_turn_depth_and_duration() -> None:
    """turn / depth 1e19 and 1e308 (fuzzed) are shown as numbers, never a failed cast."""
    ev = _exchange(1.7e12, turn=1e19, depth=1.8446744073709552e19)
    found = checks.check(ev, now=0)
    texts = " ".join(found["message"].to_list())
    assert "1e+19" in texts and "relay depth 1.8446744073709552e+19 > 5" in texts
    ws = al.work_sessions(ev, now=datetime(2026, 6, 1, tzinfo=UTC))
    html = threads.thread_view(ws, ev, ws.sessions["id"][0], search_box=False).to_html()
    assert html.count('class="a2a-msg"') == 7
    far = al.enrich(
        al.from_records(
            [
                {
                    "type": "task.started",
                    "ts": 1000,
                    "data": {"workSessionId": "ws_1", "taskId": "t"},
                },
                {
                    "type": "task.updated",
                    "ts": 1.7976931348623157e308,
                    "data": {"workSessionId": "ws_1", "taskId": "t"},
                },
            ]
        )
    )
    table = threads.sessions_table(al.work_sessions(far, now=0), far)
    assert table.frame.height == 1 and "<table" in table.to_html()


def test_a_scale_file_at_the_edge_passes_every_invariant(tmp_path: Path) -> None:
    """Two bounded files (one at 8.2e15-8.64e15 ms) of event-shaped lines with edge times."""
    src, n = write_scale_dir(
        tmp_path / "log", random.Random(5), files=5, lines_per_file=400, hostile=0.02
    )
    stats: dict[str, int] = {}
    assert check_source(src, stats=stats) == []
    assert n == 2000 and stats["events"] > 1500


def test_a_guard_finding_beyond_the_integers_names_the_ms() -> None:
    """Campaign find (seed 14): a loop-guard finding whose first message is at ts 1e19."""
    ev = al.enrich(
        al.from_records(
            [
                {
                    "type": "a2a.send",
                    "agentId": "main",
                    "ts": 1e19 + i,
                    "data": {"fromAgent": "main", "toAgent": "ruda", "conversationId": f"c{i}"},
                }
                for i in range(12)
            ]
        )
    )
    found = checks.check(ev)
    assert found["message"].null_count() == 0
    assert any("first at 1e+19 ms" in m for m in found["message"].to_list())
