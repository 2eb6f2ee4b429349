"""Process-mining bridge: DFG and variants by hand; OCEL 2.0 read back by PM4Py."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis.pm import END, START, directly_follows, to_ocel2, variants, write_ocel2
from a2a_lab.io import from_records


def _log() -> pl.DataFrame:
    seq = {
        "w1": ["task.started", "a2a.send", "a2a.response", "task.completed"],
        "w2": ["task.started", "a2a.send", "a2a.response", "task.completed"],
        "w3": ["task.started", "task.cancelled"],
    }
    recs, t = [], 0
    for ws, acts in seq.items():
        for a in acts:
            t += 1000
            recs.append(
                {
                    "type": a,
                    "agentId": "main",
                    "ts": t,
                    "data": {
                        "workSessionId": ws,
                        "taskId": "t-" + ws,
                        "conversationId": "c-" + ws,
                        "fromAgent": "main",
                        "toAgent": "eden",
                    },
                }
            )
    recs.append({"type": "milestone.sync_failed", "ts": t + 1, "data": {}})  # in no case
    return from_records(recs)


def test_directly_follows_by_hand() -> None:
    dfg = {(r["source"], r["target"]): r for r in directly_follows(_log()).iter_rows(named=True)}
    assert dfg[(START, "task.started")]["count"] == 3
    assert dfg[("task.started", "a2a.send")]["count"] == 2
    assert dfg[("a2a.send", "a2a.response")]["median_s"] == 1.0
    assert dfg[("task.started", "task.cancelled")]["count"] == 1
    assert dfg[("task.completed", END)]["cases"] == 2
    assert sum(r["count"] for (s, _), r in dfg.items() if s == START) == 3


def test_variants_by_hand() -> None:
    v = variants(_log())
    assert v["cases"].to_list() == [2, 1]
    assert v["variant"][0] == "task.started → a2a.send → a2a.response → task.completed"
    assert v["share"].sum() == pytest.approx(1.0)


def test_unknown_case_notion() -> None:
    with pytest.raises(ValueError, match="case must be"):
        directly_follows(_log(), case="nope")  # type: ignore[arg-type]


def test_every_event_has_an_object_and_counts() -> None:
    doc = to_ocel2(_log())
    assert len(doc["events"]) == 11
    assert all(e["relationships"] for e in doc["events"])
    types = {o["type"] for o in doc["objects"]}
    assert types == {"work_session", "conversation", "task", "agent", "log_file"}
    quals = {r["qualifier"] for e in doc["events"] for r in e["relationships"]}
    assert quals == {"work session", "conversation", "task", "sender", "receiver", "source"}


@pytest.mark.slow
def test_pm4py_reads_the_same_counts(tmp_path: Path) -> None:
    pm4py = pytest.importorskip("pm4py")
    events = al.load(al.samples.sample_dir()).events
    doc = to_ocel2(events)
    path = write_ocel2(events, tmp_path / "log.jsonocel")
    ocel = pm4py.read_ocel2_json(str(path))
    assert len(ocel.events) == len(doc["events"]) == events.height
    assert len(ocel.objects) == len(doc["objects"])
    assert len(ocel.relations) == sum(len(e["relationships"]) for e in doc["events"])
    assert len(ocel.o2o) == sum(len(o["relationships"]) for o in doc["objects"])
    assert json.loads(path.read_text(encoding="utf-8"))["objectTypes"]
