"""Log health: injected anomalies are each found exactly once, with their lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.analysis.checks import RULES, CheckLimits, check, replay_guard
from a2a_lab.reference.runtime.loop_guard import LoopGuard, LoopGuardConfig

T0 = 1_771_500_000_000


def _e(t: float, type_: str, frm: str | None = None, to: str | None = None, **data) -> dict:
    d = dict(data)
    if frm:
        d["fromAgent"] = frm
    if to:
        d["toAgent"] = to
    return {"type": type_, "agentId": frm or "main", "ts": T0 + int(t * 1000), "data": d}


def _clean() -> list[dict]:
    out = []
    for k in range(5):  # five healthy exchanges, one every 10 minutes
        c, t = f"conv-{k}", k * 600
        out += [
            _e(
                t,
                "a2a.send",
                "main",
                "eden",
                conversationId=c,
                workSessionId="ws_1",
                message="배포 확인",
            ),
            _e(
                t + 5,
                "a2a.response",
                "eden",
                "main",
                conversationId=c,
                workSessionId="ws_1",
                replyPreview="ok",
            ),
            _e(
                t + 6,
                "a2a.response",
                "main",
                "eden",
                conversationId=c,
                workSessionId="ws_1",
                turn=1,
                maxTurns=2,
            ),
            _e(
                t + 7,
                "a2a.response",
                "eden",
                "main",
                conversationId=c,
                workSessionId="ws_1",
                turn=2,
                maxTurns=2,
            ),
            _e(
                t + 8,
                "a2a.complete",
                "main",
                "eden",
                conversationId=c,
                workSessionId="ws_1",
                announced=True,
            ),
        ]
    out += [
        _e(3000, "task.started", "main", taskId="task_1", workSessionId="ws_1"),
        _e(3001, "task.blocked", "main", taskId="task_1", workSessionId="ws_1"),
        _e(3002, "task.resumed", "main", taskId="task_1", workSessionId="ws_1"),
        _e(3003, "task.completed", "main", taskId="task_1", workSessionId="ws_1"),
    ]
    return out


ANOMALIES: dict[str, list[dict]] = {
    "a2a.orphan_response": [_e(4000, "a2a.response", "eden", "main", conversationId="orph")],
    "a2a.complete_without_send": [
        _e(4010, "a2a.complete", "ruda", "seum", conversationId="nosend")
    ],
    "a2a.missing_complete": [_e(4020, "a2a.send", "ruda", "bada", conversationId="open")],
    "a2a.turns_out_of_order": [
        _e(4030, "a2a.send", "seum", "bada", conversationId="turns"),
        _e(4031, "a2a.response", "bada", "seum", conversationId="turns"),
        _e(4032, "a2a.response", "seum", "bada", conversationId="turns", turn=2),
        _e(4033, "a2a.response", "bada", "seum", conversationId="turns", turn=1),
        _e(4034, "a2a.complete", "seum", "bada", conversationId="turns"),
    ],
    "a2a.event_after_complete": [
        _e(4040, "a2a.send", "haneul", "bada", conversationId="late"),
        _e(4041, "a2a.response", "bada", "haneul", conversationId="late"),
        _e(4042, "a2a.complete", "haneul", "bada", conversationId="late"),
        _e(4043, "a2a.response", "bada", "haneul", conversationId="late"),
    ],
    "task.after_terminal": [_e(4050, "task.updated", "main", taskId="task_1")],
    "task.invalid_transition": [
        _e(4060, "task.started", "main", taskId="task_2"),
        _e(4061, "task.resumed", "main", taskId="task_2"),
    ],
    "task.protocol_state": [
        _e(4070, "task.updated", "main", taskId="task_3", state="TASK_STATE_COMPLETED"),
        _e(4071, "task.updated", "main", taskId="task_3", state="working"),
    ],
    # 8 exchanges within 8 s between x and y, both directions: the loop guard (6/60 s) would
    # block the 7th and 8th send
    "guard.loop": [
        rec
        for i in range(8)
        for rec in (
            _e(
                5000 + i,
                "a2a.send",
                *(("x", "y") if i % 2 else ("y", "x")),
                conversationId=f"burst-{i}",
            ),
            _e(
                5000 + i + 0.5,
                "a2a.complete",
                *(("x", "y") if i % 2 else ("y", "x")),
                conversationId=f"burst-{i}",
            ),
        )
    ],
    "guard.relay_depth": [_e(6000, "a2a.spawn", "main", "w", depth=6)],
    "clock.zero_ts": [{"type": "milestone.sync_failed", "agentId": "main", "ts": 0, "data": {}}],
    "clock.future_ts": [_e(10**7, "milestone.sync_failed", "main")],
    "identity.duplicate_event": [_e(7000, "milestone.sync_failed", "main", reason="x")] * 2,
    "identity.conversation_reused": [
        _e(8000, "a2a.send", "ruda", "gaon", conversationId="conv-0"),
        _e(8001, "a2a.complete", "ruda", "gaon", conversationId="conv-0"),
    ],
}

# the injected events that must be named, by position in the anomaly's list
EXPECTED_LINES = {
    "a2a.orphan_response": [0],
    "a2a.complete_without_send": [0],
    "a2a.missing_complete": [0],
    "a2a.turns_out_of_order": [2, 3],
    "a2a.event_after_complete": [3],
    "task.after_terminal": [0],
    "task.invalid_transition": [1],
    "task.protocol_state": [1],
    "guard.loop": [12, 14],
    "guard.relay_depth": [0],
    "clock.zero_ts": [0],
    "clock.future_ts": [0],
    "identity.duplicate_event": [0, 1],
}


#: Injected anomalies after which some exchange's events could be another's: none of them
#: (each injected conversation id has one exchange, or exchanges one after another; a log
#: of one exchange is never ambiguous).
AMBIGUOUS_TOO: set[str] = set()


def _write(tmp_path: Path, records: list[dict]) -> Path:
    p = tmp_path / "coordination-events.ndjson"
    p.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return p


def test_clean_log_has_no_findings(tmp_path: Path) -> None:
    found = check(al.load(_write(tmp_path, _clean())).events, now=T0 + 10**7)
    assert found.height == 0, found


@pytest.mark.parametrize("rule", sorted(ANOMALIES))
def test_each_injected_anomaly_is_found_once_with_its_lines(tmp_path: Path, rule: str) -> None:
    base = _clean()
    injected = ANOMALIES[rule]
    path = _write(tmp_path, base + injected)
    found = check(al.load(path).events, now=T0 + 9000 * 1000)
    # these anomalies also leave exchanges the log cannot tell apart (info)
    also = {"a2a.ambiguous_exchanges"} if rule in AMBIGUOUS_TOO else set()
    assert set(found.filter(pl.col("rule") != rule)["rule"]) == also, found
    found = found.filter(pl.col("rule") == rule)
    mine = found.filter(pl.col("rule") == rule)
    assert mine.height == 1, mine
    first = len(base) + 1
    if rule in EXPECTED_LINES:
        assert mine["lines"][0].to_list() == [first + i for i in EXPECTED_LINES[rule]]
    else:  # conversation reuse names every line of that id
        assert set(mine["lines"][0].to_list()) >= {first, first + 1}
    assert mine["severity"][0] == RULES[rule].severity
    assert mine["file"][0] == str(path)


def test_guard_thresholds_are_parameters(tmp_path: Path) -> None:
    ev = al.load(_write(tmp_path, _clean() + ANOMALIES["guard.loop"])).events
    assert (
        check(ev, CheckLimits(loop_limit=10), now=T0 + 10**7)
        .filter(pl.col("rule") == "guard.loop")
        .height
        == 0
    )
    strict = check(ev, CheckLimits(loop_limit=3), now=T0 + 10**7).filter(
        pl.col("rule") == "guard.loop"
    )
    assert strict["lines"][0].len() == 5


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown rule"):
        check(al.load(al.samples.sample_dir()).events, select=["nope"])


def test_loop_guard_replay_equals_hand_computation() -> None:
    # pair a::b, limit 3 per 10 s; times in s. Blocked messages are not recorded, and an entry
    # exactly one window old still counts (pruned only when ts < now - window).
    times = [0, 1, 2, 3, 10, 11, 12, 12.5, 25]
    #        ok ok ok B  ok(0 still counts? 0 >= 10-10 -> counts: 0,1,2 -> blocked) ...
    records = [
        _e(t, "a2a.send", "a" if i % 2 else "b", "b" if i % 2 else "a", conversationId=f"c{i}")
        for i, t in enumerate(times)
    ]
    rep = replay_guard(al.from_records(records), limit=3, window_s=10)
    # by hand: t=0,1,2 kept; 3 blocked (3 in window); 10: window [0,10] holds 0,1,2 -> blocked;
    # 11: [1,11] holds 1,2 -> kept; 12: [2,12] holds 2,11 -> kept; 12.5: [2.5,12.5] holds 11,12 -> kept;
    # 25: kept
    assert rep["blocked"].to_list() == [False, False, False, True, True, False, False, False, False]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 120_000),
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["a", "b", "c"]),
        ),
        min_size=1,
        max_size=60,
    ),
    st.integers(1, 6),
    st.sampled_from([1.0, 5.0, 60.0]),
)
def test_replay_equals_the_reference_loop_guard(msgs, limit: int, window_s: float) -> None:
    msgs = [(t, f, to) for t, f, to in msgs if f != to]
    if not msgs:
        return
    records = [
        _e(t / 1000, "a2a.send", f, to, conversationId=f"c{i}") for i, (t, f, to) in enumerate(msgs)
    ]
    ev = al.from_records(records)
    rep = replay_guard(ev, limit=limit, window_s=window_s)
    guard = LoopGuard(LoopGuardConfig(max_messages_per_window=limit, window_ms=window_s * 1000))
    expected = {}
    for line, (t, f, to) in sorted(enumerate(msgs, start=1), key=lambda x: (x[1][0], x[0])):
        expected[line] = guard.check(f, to, T0 + t)  # True = blocked
    assert dict(zip(rep["line"].to_list(), rep["blocked"].to_list(), strict=True)) == expected


def test_sample_findings_are_few_and_explained() -> None:
    found = check(al.load(al.samples.sample_dir()).events)
    assert set(found["rule"]) <= set(RULES)
    assert found.filter(pl.col("severity") == "error").height == 0
    assert np.all(found["lines"].list.len().to_numpy() >= 1)


# ---- CLI ---------------------------------------------------------------------------------


def test_cli_check_json_and_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from a2a_lab.cli import main

    path = _write(
        tmp_path, _clean() + ANOMALIES["a2a.missing_complete"] + ANOMALIES["clock.zero_ts"]
    )
    now = str(T0 + 10**7)
    assert main(["check", str(path), "--json", "--now-ms", now]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in out["findings"]} == {"a2a.missing_complete", "clock.zero_ts"}
    for f in out["findings"]:
        assert {"rule", "severity", "lines", "message"} <= set(f)
    assert out["by_severity"] == {"info": 0, "warning": 1, "error": 1}
    assert main(["check", str(path), "--json", "--now-ms", now, "--fail-on", "error"]) == 1
    assert main(["check", str(path), "--now-ms", now, "--fail-on", "warning"]) == 1
    clean = _write(tmp_path, _clean())
    capsys.readouterr()
    assert main(["check", str(clean), "--now-ms", now, "--fail-on", "warning"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].endswith(
        " events, 0 rejects, 0 findings (0 error, 0 warning, 0 info)"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "/no/such"],
        ["check", "x", "--fail-on", "fatal"],
        ["check", "x", "--loop-limit", "0"],
    ],
)
def test_cli_check_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from a2a_lab.cli import main

    argv = [str(_write(tmp_path, _clean())) if a == "x" else a for a in argv]
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


# ---- ambiguous exchanges (issue 11) ------------------------------------------------------


def test_ambiguous_exchanges_are_reported_with_their_count() -> None:
    from a2a_lab import sim
    from a2a_lab.sim.experiments import capacity

    # tasks on at 3x the arrival rate: exchanges under one conversation id overlap
    ev = sim.simulate(capacity.scale_arrivals(sim.SimConfig(n_messages=900), 3.0), seed=777).events
    conv = al.conversations(al.enrich(ev))
    n_amb = int(conv["ambiguous"].sum())
    assert n_amb > 0
    found = check(ev, select=["a2a.ambiguous_exchanges"])
    assert found.height == 1
    row = found.row(0, named=True)
    assert row["severity"] == "info" == RULES["a2a.ambiguous_exchanges"].severity
    assert row["message"].startswith(f"{n_amb} of {conv.height} exchanges (")
    first = conv.filter("ambiguous").sort("start_time").row(0, named=True)
    assert row["conversation_id"] in set(conv.filter("ambiguous")["conversation_id"])
    assert f"#{first['exchange']}" in row["message"] or n_amb > 5
    assert len(row["lines"]) >= 2 and row["lines"] == sorted(row["lines"])
    # selectable like every rule
    assert check(ev, select=["a2a."]).filter(pl.col("rule") == "a2a.ambiguous_exchanges").height
    ignored = check(ev, ignore=["a2a.ambiguous_exchanges"])
    assert "a2a.ambiguous_exchanges" not in set(ignored["rule"])


def test_no_ambiguous_exchanges_no_finding() -> None:
    from a2a_lab import sim

    ev = sim.simulate(sim.SimConfig(n_messages=400, tasks=None), seed=5).events
    assert int(al.conversations(al.enrich(ev))["ambiguous"].sum()) == 0
    assert check(ev, select=["a2a.ambiguous_exchanges"]).height == 0


@pytest.mark.parametrize(
    ("rule", "cause_type", "cause_index"),
    [
        # the task.completed of the clean log (its last line) ended task_1
        ("task.after_terminal", "task.completed", None),
        ("task.invalid_transition", "task.started", 0),
        ("task.protocol_state", "task.updated", 0),
        # the a2a.* findings name theirs too: the event itself for an orphan, the send that
        # opened an exchange without a complete, the first turn out of order, the complete
        # that events came after
        ("a2a.orphan_response", "a2a.response", 0),
        ("a2a.complete_without_send", "a2a.complete", 0),
        ("a2a.missing_complete", "a2a.send", 0),
        ("a2a.turns_out_of_order", "a2a.response", 2),
        ("a2a.event_after_complete", "a2a.complete", 2),
    ],
)
def test_findings_name_the_event_that_caused_them(
    tmp_path: Path, rule: str, cause_type: str, cause_index: int | None
) -> None:
    """The finding names the causing event: its type, time and file:line (issue 23)."""
    base = _clean()
    path = _write(tmp_path, base + ANOMALIES[rule])
    events = al.load(path).events
    found = check(events, now=T0 + 9000 * 1000).filter(pl.col("rule") == rule)
    line = len(base) if cause_index is None else len(base) + 1 + cause_index
    cause = events.filter(pl.col("line") == line).row(0, named=True)
    assert cause["type"] == cause_type
    when = cause["event_time"].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert found["message"][0].endswith(f"{cause_type} at {when} ({path}:{line})"), found[
        "message"
    ][0]


def test_limits_are_one_check_limits(tmp_path: Path) -> None:
    """The old keyword form fails, naming the options object."""
    ev = al.load(_write(tmp_path, _clean())).events
    with pytest.raises(TypeError, match=r"limits=CheckLimits\(loop_limit=\.\.\.\)"):
        check(ev, now=T0, loop_limit=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limits must be a CheckLimits, not dict"):
        check(ev, {"loop_limit": 3}, now=T0)  # type: ignore[arg-type]
    assert check(ev, CheckLimits(), now=T0).equals(check(ev, now=T0))
    assert al.CheckLimits is CheckLimits
