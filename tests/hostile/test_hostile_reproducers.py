"""The hostile reproducers of issues 24 and 27 (../shared/conformance/hostile) as tests.

Each case ends without an exception (a panic inside Polars included), the odd values
reported as load warnings and left out of spans and bins:

- ``js-date-max-ts.ndjson``: a duplicate ``ts`` of 8.64e15 (Date's last instant, past
  Polars' calendar) made ``a2a-lab conversations`` panic when printing;
- ``js-date-max-depth.ndjson``: ``depth`` 8.64e15 and duplicate keys made ``check`` panic
  (``pl.format`` on an enriched frame whose columns are split at different rows);
- ``far-future-report.ndjson``: a send at ``ts`` 1e308 made ``a2a-lab report`` refuse the
  log ("now: 1e+308 is outside the representable range") without any ``--now``;
- ``fuzzed-views-panic.ndjson.gz``: ``conversation_tree``, ``family_timeline`` and
  ``thread_messages`` panicked.

Plus the smaller items of issue 27 item 5: integers of any length, non-UTF-8 paths, bidi
characters in chart specs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab._deep import NESTING_LIMIT, deep_call, nested_json
from a2a_lab._frames import ms_to_time
from a2a_lab.analysis.graph import conversation_tree
from a2a_lab.cli import main
from a2a_lab.time import format_time
from a2a_lab.views import plots, threads
from a2a_lab.views.embed import chart_figure
from a2a_lab.views.search import search_chart
from tests.support.node_js import needs_node, node_json
from tests.support.paths import ROOT, SHARED

HOSTILE = SHARED / "conformance" / "hostile"
if not HOSTILE.is_dir():  # a worktree: /work/wt/<branch>/tests
    HOSTILE = Path("/work/shared/conformance/hostile")

pytestmark = pytest.mark.skipif(not HOSTILE.is_dir(), reason="hostile reproducers not here")


def _cli(*args: str | bytes, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """``a2a-lab ARGS`` as a real process (argv bytes as given)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUST_BACKTRACE": "0"}
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"a2a_lab", *(os.fsencode(a) for a in args)],
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


def test_js_date_max_ts_conversations_prints_json_and_writes(tmp_path: Path) -> None:
    src = str(HOSTILE / "js-date-max-ts.ndjson")
    for args in ([], ["--json"], ["-o", str(tmp_path / "c.csv")], ["-o", str(tmp_path / "c.json")]):
        assert main(["conversations", src, *args]) == 0
    rows = json.loads((tmp_path / "c.json").read_text())
    # the last of the duplicate keys wins (JSON.parse): Date's last instant, shown as JS does
    assert rows[0]["start_time"].startswith("+275760-09-13T00:00:00.000")
    assert "+275760-09-13" in (tmp_path / "c.csv").read_text()


def test_js_date_max_ts_prints_in_a_process() -> None:
    done = _cli("conversations", str(HOSTILE / "js-date-max-ts.ndjson"))
    assert done.returncode == 0, done.stderr[-400:]
    # the readable table (issue 23) on stdout, its one-line count on stderr, no traceback
    assert b"+275760-09-13 00:00:00.000" in done.stdout
    assert done.stderr.decode().count("\n") <= 1 and b"Traceback" not in done.stderr


def test_js_date_max_depth_check_names_the_depths() -> None:
    res = al.load(HOSTILE / "js-date-max-depth.ndjson")
    found = al.check(al.enrich(res.events))
    depth = found.filter(pl.col("rule") == "guard.relay_depth")
    assert depth.height == 3
    assert set(depth["message"]) == {"relay depth 8640000000000000 > 5"}
    # and on the loaded frame too, and with a depth that is not extreme (the cause was the
    # frame's chunk layout, not the value)
    assert al.check(res.events).filter(pl.col("rule") == "guard.relay_depth").height == 3


@pytest.mark.slow
def test_far_future_report_is_written_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(HOSTILE / "far-future-report.ndjson"), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "outside the representable range" not in html
    assert 'data-figure="warnings">1<' in html
    res = al.load(HOSTILE / "far-future-report.ndjson")
    far = res.report.issues.filter(pl.col("kind") == "out_of_range")
    assert far["field"].to_list() == ["ts"]


def test_far_future_report_span_and_now_leave_the_far_time_out() -> None:
    from a2a_lab.app.report import collect

    res = al.load(HOSTILE / "far-future-report.ndjson")
    data = collect(res, source="x", tz="UTC", progress=False)
    in_range = res.events.filter(pl.col("event_ms") < 1e15)["event_ms"]
    # the default clock is the wall clock (one clock, issue 23), never the far-future line
    assert 1e12 < data.now_ms < 1e15
    assert data.figures["last_ms"] == in_range.max()
    assert data.figures["untimed"] == 1


@pytest.fixture(scope="module")
def fuzzed() -> tuple[pl.DataFrame, al.WorkSessionsResult]:
    ev = al.enrich(al.load(HOSTILE / "fuzzed-views-panic.ndjson.gz").events)
    return ev, al.work_sessions(ev, now=datetime(2026, 6, 1, tzinfo=UTC))


@pytest.mark.slow
def test_fuzzed_views_run(fuzzed: tuple[pl.DataFrame, al.WorkSessionsResult]) -> None:
    ev, ws = fuzzed
    tree = conversation_tree(ev)
    assert tree.number_of_nodes() > 0
    for tz in ("UTC", "Asia/Seoul"):
        for every in ("1h", "1d", "1mo"):
            spec = plots.family_timeline(ev, every=every, tz=tz).to_dict()
            json.dumps(spec, allow_nan=False)
            json.dumps(plots.swimlane(ev, every=every, tz=tz).to_dict(), allow_nan=False)
    ids = ws.sessions["id"].to_list()
    assert ids
    for s in ids:
        msgs = threads.thread_messages(ws, ev, s, tz="Asia/Seoul")
        if msgs.height:
            search_chart(msgs.head(200)).to_dict()
    assert "<table" in threads.sessions_table(ws, ev).to_html()


@pytest.mark.slow
def test_fuzzed_to_api_is_json(fuzzed: tuple[pl.DataFrame, al.WorkSessionsResult]) -> None:
    """The body is exact (parity): its event objects nest as deep as the log's lines (about
    1,000 levels here), and plain ``json.dumps`` writes it (no RecursionError)."""
    _, ws = fuzzed
    json.dumps(ws.to_api(thread_events="summary"), allow_nan=False)
    text = json.dumps(ws.to_api(), allow_nan=False)
    assert text.startswith('{"sessions": [{')


def _deep_log(tmp_path: Path, extra: str) -> Path:
    src = tmp_path / "deep.ndjson"
    src.write_text(
        '{"type":"a2a.send","agentId":"a","ts":1770000000000,"data":{"fromAgent":"a",'
        '"toAgent":"b","conversationId":"c","workSessionId":"ws_1","extra":' + extra + "}}\n"
    )
    return src


@needs_node
@pytest.mark.parametrize("depth", [1500, 3000, 3999])
def test_deep_values_dump_with_plain_json_as_the_reference_writes_them(
    tmp_path: Path, depth: int
) -> None:
    """A value nested as deep as JSON.stringify writes (Node: about 4,165 levels) is in the
    event object as it is, byte for byte as the reference writes it, and the whole body
    dumps with plain ``json.dumps`` in a fresh interpreter (no retry on RecursionError)."""
    extra = '{"k":[' * (depth // 2) + '"x"' + "]}" * (depth // 2)
    src = _deep_log(tmp_path, extra)
    script = (
        "import json, sys, a2a_lab as al\n"
        "ws = al.work_sessions(al.enrich(al.load(sys.argv[1]).events), now=0)\n"
        "body = ws.to_api()\n"
        "sys.stdout.write(json.dumps(body['sessions'][0]['threads'][0]['events'][0]['data']"
        "['extra'], separators=(',', ':')))\n"
        "json.dumps(body); json.dumps(al.events_query(al.enrich(al.load(sys.argv[1]).events)).to_api())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(src)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-600:]
    reference = node_json(
        "process.stdout.write(JSON.stringify(JSON.stringify(JSON.parse(input).data.extra)))",
        src.read_text().strip(),
    )
    assert done.stdout.decode() == reference


def test_the_raised_limit_stays_after_a_deep_retry() -> None:
    """A value made deep keeps its recursion limit: the loader's retry of a deeper parse
    (deep_call, which raises the limit for its thread and restores it) never lowers it."""
    value = nested_json('{"a":' + "[" * 3000 + "]" * 3000 + "}")
    floor = sys.getrecursionlimit()
    assert floor >= 2 * 3001
    text = "[" * (floor + 500) + "]" * (floor + 500)
    assert len(deep_call(json.dumps, deep_call(json.loads, text, depth=len(text)))) == len(text)
    assert sys.getrecursionlimit() >= floor
    json.dumps(value)


def test_a_value_deeper_than_the_reference_writes_is_kept_as_its_text(tmp_path: Path) -> None:
    """Beyond 4,000 levels (JSON.stringify throws RangeError there) the value is kept whole
    as its JSON text, and the body still dumps with plain ``json.dumps``."""
    extra = "[" * 20_000 + "1" + "]" * 20_000
    src = _deep_log(tmp_path, extra)
    ws = al.work_sessions(al.enrich(al.load(src).events), now=0)
    body = ws.to_api()
    value = body["sessions"][0]["threads"][0]["events"][0]["data"]["extra"]
    levels = 2  # the event object and its data hold extra
    while isinstance(value, list):
        levels, value = levels + 1, value[0]
    assert levels == NESTING_LIMIT and isinstance(value, str)
    # nothing lost: the text kept and the levels above it make the original value again
    assert value == "[" * (20_000 - (NESTING_LIMIT - 2)) + "1" + "]" * (
        20_000 - (NESTING_LIMIT - 2)
    )
    assert len(json.dumps(body)) > 20_000


# ---------------------------------------------------------------------------------------
# issue 27 item 5
# ---------------------------------------------------------------------------------------


def test_integers_of_any_length_read_as_json_parse_does(tmp_path: Path) -> None:
    big = "9" * 4400
    src = tmp_path / "big.ndjson"
    src.write_text(
        '{"type":"a2a.send","ts":1770000000000,"data":{"turn":' + big + ',"fromAgent":"a",'
        '"toAgent":"b","conversationId":"c"}}\n{"type":"a2a.send","ts":' + big + "}\n"
        '{"type":"a2a.send","ts":-' + big + "}\n"
    )
    res = al.load(src, raw=True)
    # JSON.parse reads Infinity: a number of the wrong range, as 1e400 is; never a reject
    assert res.report.rejects.height == 0
    assert res.events.height == 3
    kinds = res.report.issues.select("line", "kind", "field").rows()
    assert (1, "wrong_type", "data.turn") in kinds and (2, "wrong_type", "ts") in kinds
    ev = al.enrich(res.events)
    json.dumps(al.work_sessions(ev, now=0).to_api())
    al.check(ev)


@pytest.mark.slow
def test_non_utf8_paths_in_every_command(tmp_path: Path) -> None:
    log = os.fsdecode(b"log\xff.ndjson")
    shutil.copy(HOSTILE / "far-future-fit.ndjson", tmp_path / log)
    logs = tmp_path / os.fsdecode(b"dir\xfe")
    logs.mkdir()
    shutil.copy(HOSTILE / "far-future-fit.ndjson", logs / "coordination-events.ndjson")
    store = os.fsdecode(b"store\xfd")  # Polars gets a UTF-8 alias of the directory
    twin = os.fsdecode(b"twin\xff.json")
    cases = [
        ["load", log],
        ["enrich", log, "-o", os.fsdecode(b"o\xff.csv")],
        ["work-sessions", log, "--now-ms", "1771400000000", "--format", "json"],
        ["events", log, "-o", os.fsdecode(b"e\xff.ndjson")],
        ["conversations", log, "-o", os.fsdecode(b"c\xff.json")],
        ["graph", log, "-o", os.fsdecode(b"g\xff.json")],
        ["check", log],
        ["report", log, "-o", os.fsdecode(b"r\xff.html"), "--title", os.fsdecode(b"t\xff")],
        ["ingest", logs.name, store],
        ["ingest", logs.name, store],
        ["ingest", "--verify", logs.name, store],
        ["ingest", "--repair", logs.name, store],
        ["work-sessions", store, "--now-ms", "1771400000000", "--format", "json"],
        ["events", store],
        ["conversations", store, "-o", os.fsdecode(b"c2\xff.csv")],
        ["graph", store, "-o", os.fsdecode(b"g2\xff.json")],
        ["check", store],
        ["load", store],
        ["load", logs.name],
        ["calibrate", log, "-o", twin],
        ["simulate", twin, "--seed", "1", "-o", os.fsdecode(b"sim\xff.ndjson")],
        ["simulate", twin, "--seed", "1", "-o", os.fsdecode(b"simdir\xfe")],
        [
            "sweep",
            twin,
            "--grid",
            '{"rate_scale": [1]}',
            "--replications",
            "2",
            "-o",
            os.fsdecode(b"sw\xff.csv"),
        ],
        ["export-otlp", log, "-o", os.fsdecode(b"t\xff.otlp.json"), "--no-progress"],
        ["report", store, "-o", os.fsdecode(b"r2\xff.html"), "--sim", twin],
    ]
    for args in cases:
        done = _cli(*args, cwd=tmp_path)
        assert b"UnicodeEncodeError" not in done.stderr, (args, done.stderr[-300:])
        assert done.returncode in ((0, 1) if args[0] == "check" else (0,)), (
            args,
            done.stderr[-300:],
        )
        assert b"Traceback" not in done.stderr, (args, done.stderr[-300:])
    # the store is whole and its parts sit in the directory of the odd name
    assert list((tmp_path / store / "events").rglob("*.parquet"))
    assert al.load(tmp_path / store).events.height == al.load(tmp_path / log).events.height
    # the frame's file column names the file readably; the lines are found again from it
    res = al.load(tmp_path / log)
    assert res.events["file"][0].endswith("log\\xff.ndjson")
    ws = al.work_sessions(al.enrich(al.load(tmp_path / log).events), now=0)
    assert ws.to_api()["count"] > 0


def test_a_non_utf8_path_loads_and_checks_in_process(tmp_path: Path) -> None:
    """The fast variant of the process test: the file column labels the byte, the lines
    are found again from it (the work-sessions body re-reads them)."""
    log = tmp_path / os.fsdecode(b"log\xff.ndjson")
    shutil.copy(HOSTILE / "js-date-max-depth.ndjson", log)
    for command in (["load"], ["check"], ["work-sessions", "--now-ms", "1771400000000", "--json"]):
        assert main([command[0], str(log), *command[1:]]) in (0, 1)
    res = al.load(log, raw=False)
    assert res.events["file"][0].endswith("log\\xff.ndjson")
    body = al.work_sessions(al.enrich(res.events), now=0).to_api()
    assert body["count"] > 0 and body["sessions"][0]["threads"][0]["events"][0]["type"]


def _sends(from_agent: str, to_agent: str, n: int) -> pl.DataFrame:
    """``n`` enriched ``a2a.send`` events of ``from_agent`` to ``to_agent``, 1 ms apart."""
    return al.enrich(
        al.from_records(
            [
                {
                    "type": "a2a.send",
                    "agentId": from_agent,
                    "ts": 1_770_000_000_000 + i,
                    "data": {"fromAgent": from_agent, "toAgent": to_agent, "message": "x"},
                }
                for i in range(n)
            ]
        )
    )


def test_chart_specs_show_bidi_and_control_characters(tmp_path: Path) -> None:
    ev = _sends("\u202eevil", "a\u0007b", 3)
    for chart in (plots.swimlane(ev), plots.family_timeline(ev)):
        text = json.dumps(chart.to_dict(), ensure_ascii=False)
        assert "\u202e" not in text and "\\u0007" not in text
    text = json.dumps(plots.swimlane(ev).to_dict(), ensure_ascii=False)
    assert "⟨U+202E⟩evil" in text
    fig = chart_figure(plots.swimlane(ev))
    assert "\u202e" not in fig and "⟨U+202E⟩" in fig


def test_times_at_the_int64_edge_format_and_convert() -> None:
    t = pl.DataFrame({"t": [-(2**63), 2**63 - 1, 0]}).cast(pl.Datetime("ms", "UTC"))
    out = t.select(format_time(pl.col("t"), "%Y-%m-%d"))["t"].to_list()
    assert out[2] == "1970-01-01" and all(isinstance(x, str) for x in out)
    ms = pl.DataFrame({"m": [-(2.0**63), 8.64e15, 8.64e15 + 1, float("inf")]})
    assert ms.select(ms_to_time(pl.col("m")).is_null())["m"].to_list() == [True, False, True, True]


def test_turns_beyond_the_integers_are_left_out_of_the_fit() -> None:
    """Found by the 104,000-line fuzz corpus with every analysis: a reply's ``turn`` of
    -1e308 or 2**64 failed fit_log's cast to Int64; such a reply is left out of the fit."""
    rows = [
        {
            "type": "a2a.send",
            "agentId": "a",
            "ts": 1_770_000_000_000 + 60_000 * i,
            "data": {"fromAgent": "a", "toAgent": "b", "conversationId": f"c{i}", "runId": f"r{i}"},
        }
        for i in range(12)
    ]
    for i, turn in enumerate([1, 1e308, -1e308, 2.0**64, 1.5, 2]):
        rows.append(
            {
                "type": "a2a.response",
                "agentId": "b",
                "ts": 1_770_000_000_000 + 60_000 * i + 5_000,
                "data": {"fromAgent": "a", "toAgent": "b", "conversationId": f"c{i}", "turn": turn},
            }
        )
    events = al.from_records(rows)
    cal = al.fit_log(events)
    assert cal.exchanges.height == 12


def test_graphml_shows_control_characters_of_agent_ids(tmp_path: Path) -> None:
    """Found by the fuzz corpus: an agent id with a control character made write_graph
    raise (XML cannot hold it); GraphML shows it as ⟨U+XXXX⟩, the JSON keeps it."""
    ev = _sends("a\u0007b", "c\u0000", 2)
    g = al.interaction_graph(ev)
    text = al.write_graph(g, tmp_path / "g.graphml").read_text(encoding="utf-8")
    assert "a⟨U+0007⟩b" in text and "c⟨U+0000⟩" in text
    nodes = json.loads(al.write_graph(g, tmp_path / "g.json").read_text(encoding="utf-8"))
    assert {n["id"] for n in nodes["nodes"]} >= {"a\u0007b", "c\u0000"}
    assert "a\u0007b" in g  # the graph itself is unchanged


def test_retry_counts_beyond_the_model_are_capped_or_left_out() -> None:
    """Found by the fuzz corpus with every analysis: a retry's ``maxAttempts`` of 8.64e15
    failed fit_log's SimConfig validation. Counts are capped at the simulator's 10; what is
    no whole count (Infinity, -1, 2.5) is left out."""
    from a2a_lab.analysis.calibrate._settings import fit_retry

    assert fit_retry(pl.Series([8_640_000_000_000_001, 3, None])).max_retries == 10
    assert fit_retry(pl.Series([float("inf"), -1.0, 2.5, 4.0])).max_retries == 4
    assert fit_retry(pl.Series([1e308, 4.0])).max_retries == 10
    assert fit_retry(pl.Series([2])).max_retries == 2


def test_max_turns_beyond_the_gateway_limits_are_left_out_of_the_fit() -> None:
    """Found by the fuzz corpus with every analysis: a complete's ``configuredMaxTurns`` of
    8.64e15 made fit_log's SimConfig invalid (``ping_pong.max_turns``); only 0-30 whole
    turns are read."""
    hostile = [8.64e15, 8.64e15, -1, 2.5, 1e308, 3]  # the mode is the hostile 8.64e15
    rows = [
        {
            "type": kind,
            "agentId": "a",
            "ts": 1_770_000_000_000 + 60_000 * i + 5_000 * k,
            "data": {
                "fromAgent": "a",
                "toAgent": "b",
                "conversationId": f"c{i}",
                "turn": 1,
                "configuredMaxTurns": hostile[i % len(hostile)],
            },
        }
        for i in range(12)
        for k, kind in enumerate(("a2a.send", "a2a.response", "a2a.complete"))
    ]
    cal = al.fit_log(al.from_records(rows))
    assert cal.config.ping_pong.max_turns == 3
