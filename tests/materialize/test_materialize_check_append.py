"""``check``'s lean findings kept up to date by groups: an append equals a rebuild.

An append re-makes only the findings of the tasks, agent pairs, event copies and
conversation ids its lines touch (``a2a_lab.materialize._check.update_event_findings``).
The logs drawn here are dense in exactly what those groups are: few agents (busy pairs the
guard replays block), few task and conversation ids (transitions, reuse), copied lines,
blank or zero times, deep relays, and pieces whose times fall before the earlier ones'.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.analysis.checks import CheckOptions, run_checks
from a2a_lab.io import ingest, load, open_store
from a2a_lab.materialize import materialize
from a2a_lab.materialize._check import EVENT_RULES, FAMILIES
from a2a_lab.materialize._names import CHECK_EVENTS

AGENTS = ("main", "ruda", "eden", "sora")
TYPES = (
    "a2a.send",
    "a2a.response",
    "a2a.complete",
    "task.started",
    "task.blocked",
    "task.resumed",
    "task.completed",
    "task.failed",
)
T0 = 1_771_286_400_000


@st.composite
def _event(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(TYPES))
    a, b = draw(st.sampled_from(AGENTS)), draw(st.sampled_from(AGENTS))
    # bursts within the guards' windows (6 / 60 s, 10 / 300 s), sometimes no usable time
    ts = draw(st.one_of(st.integers(0, 400_000).map(lambda ms: T0 + ms), st.just(0)))
    data: dict[str, Any] = {
        "fromAgent": a,
        "toAgent": b,
        "conversationId": f"c{draw(st.integers(0, 5))}",
    }
    if kind == "a2a.response" and draw(st.booleans()):
        data["turn"] = draw(st.integers(1, 4))
    if kind.startswith("task."):
        data = {"taskId": f"t{draw(st.integers(0, 4))}", "workSessionId": "ws1"}
        if draw(st.booleans()):
            data["state"] = draw(st.sampled_from(["working", "completed", "submitted"]))
    if draw(st.integers(0, 9)) == 0:
        data["depth"] = draw(st.integers(0, 9))
    return json.dumps({"type": kind, "agentId": a, "ts": ts, "data": data}).encode()


#: A log (some lines copied) cut into pieces at random.
LOGS = st.tuples(
    st.lists(_event(), min_size=1, max_size=120), st.integers(0, 2**32 - 1), st.integers(1, 6)
)


def _table(store: Path) -> pl.DataFrame:
    frame = open_store(store).scan_table(CHECK_EVENTS)
    assert frame is not None
    return frame.collect().sort(pl.all(), nulls_last=True, maintain_order=True)


def _lean_check(logdir: Path) -> pl.DataFrame:
    """The slow obvious path: the lean rules of ``check`` on the whole log, loaded."""
    found = run_checks(load(logdir).events, CheckOptions(select=list(EVENT_RULES)))
    return found.sort(pl.all(), nulls_last=True, maintain_order=True)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(log=LOGS)
def test_findings_kept_by_groups_equal_a_rebuild(
    tmp_path_factory: Any, log: tuple[list[bytes], int, int]
) -> None:
    events, seed, pieces = log
    rng = random.Random(seed)
    lines = events + rng.sample(events, rng.randint(0, min(8, len(events))))
    rng.shuffle(lines)
    root = tmp_path_factory.mktemp("g")
    (root / "logs").mkdir()
    live = root / "logs" / "coordination-events.ndjson"
    cuts = sorted(rng.sample(range(1, len(lines) + 1), min(pieces, len(lines))))
    written = 0
    for n, cut in enumerate(cuts):
        with live.open("ab") as fh:
            fh.write(b"".join(line + b"\n" for line in lines[written:cut]))
        written = cut
        ingest(root / "logs", root / "store")
        # a refresh of ``serve`` leaves the check tables behind now and then: the next
        # update adds every lean row they miss
        last = n == len(cuts) - 1
        if not (last or rng.random() < 0.7):
            materialize(root / "store", matched=False)
            continue
        materialize(root / "store")
        ingest(root / "logs", root / f"whole{n}")
        materialize(root / f"whole{n}")
        assert_frame_equal(_table(root / "store"), _table(root / f"whole{n}"))
    found = _table(root / "store").select(pl.exclude("_family", "_key"))
    assert_frame_equal(found, _lean_check(root / "logs"))


def test_every_lean_rule_has_a_family() -> None:
    from a2a_lab.analysis.checks import select_rules

    assert select_rules(list(EVENT_RULES)) - {"clock.future_ts"} == set(FAMILIES)


def test_an_append_touching_one_pair_keeps_the_other_findings(tmp_path: Path) -> None:
    """A burst of one pair blocked, then a burst of another pair appended: the first
    pair's findings stay as they were, the second's are added under its key."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    live = logdir / "coordination-events.ndjson"

    def burst(a: str, b: str, t: int) -> bytes:
        rows = [
            {"type": "a2a.send", "agentId": a, "ts": t + i, "data": {"fromAgent": a, "toAgent": b}}
            for i in range(9)
        ]
        return b"".join(json.dumps(r).encode() + b"\n" for r in rows)

    live.write_bytes(burst("main", "ruda", T0))
    ingest(logdir, tmp_path / "store")
    materialize(tmp_path / "store")
    before = _table(tmp_path / "store")
    assert before.filter(pl.col("rule") == "guard.loop")["_key"].to_list() == ["main::ruda"]
    with live.open("ab") as fh:
        fh.write(burst("eden", "sora", T0 + 10))
    ingest(logdir, tmp_path / "store")
    materialize(tmp_path / "store")
    after = _table(tmp_path / "store").filter(pl.col("rule") == "guard.loop")
    assert sorted(after["_key"].to_list()) == ["eden::sora", "main::ruda"]
    assert_frame_equal(
        after.filter(pl.col("_key") == "main::ruda"), before.filter(pl.col("rule") == "guard.loop")
    )
