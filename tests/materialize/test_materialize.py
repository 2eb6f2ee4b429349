"""Materialised enriched columns in a store: the same frame and sessions as enriching again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.analysis.conversations import conversations
from a2a_lab.cli import main
from a2a_lab.enrich import enrich
from a2a_lab.io import ingest, scan_store, update_store
from a2a_lab.materialize import (
    MATERIALIZED_DATA_FIELDS,
    materialize,
    scan_conversations,
    scan_materialized,
)
from a2a_lab.reference.rules import TASK_MONITOR_V1
from a2a_lab.sessions import SessionQuery, work_sessions
from tests.support.store_logs import PEER_LINES, Pieces, pieces

LINES = PEER_LINES


def _recomputed(store: Path, main_agents: Any = None) -> pl.DataFrame:
    """The slow, obvious path: every stored event enriched again, ``data`` narrowed."""
    data = pl.col("data")
    narrow = pl.struct([data.struct.field(f) for f in MATERIALIZED_DATA_FIELDS])
    return (
        enrich(scan_store(store), main_agents=main_agents)
        .with_columns(pl.when(data.is_not_null()).then(narrow).alias("data"))
        .collect()
    )


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(case=pieces(4), agents=st.sampled_from([None, ["main", "ruda"], ["sora"]]))
def test_materialised_path_equals_recomputed_path(
    tmp_path_factory: Any, case: Pieces, agents: list[str] | None
) -> None:
    root = tmp_path_factory.mktemp("m")
    for _ in case.ingest(root, main_agents=agents):
        pass  # incremental after the first
    got = scan_materialized(root / "store", main_agents=agents)
    assert got is not None
    frame = got.collect()
    want = _recomputed(root / "store", agents)
    assert_frame_equal(frame, want)
    now = 1_771_400_000_000
    for query in ({}, {"status": "ACTIVE,QUIET", "limit": "3"}, {"roles": "conversation.main"}):
        a = work_sessions(got, SessionQuery(**query), now=now).to_api()
        b = work_sessions(want, SessionQuery(**query), now=now).to_api()
        assert a == b


def _store(tmp_path: Path, lines: list[bytes]) -> tuple[Path, Path]:
    logdir = tmp_path / "logs"
    logdir.mkdir(exist_ok=True)
    with (logdir / "coordination-events.ndjson").open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in lines))
    ingest(logdir, tmp_path / "store")
    return logdir, tmp_path / "store"


def test_only_new_events_are_enriched_and_a_new_rule_set_rebuilds(tmp_path: Path) -> None:
    _, store = _store(tmp_path, LINES[:500])
    first = materialize(store)
    assert (first.new_rows, first.rebuilt) == (first.rows, None) and first.rows > 400
    _store(tmp_path, LINES[500:520])
    # the new lines are stored but not materialised: the frame is not offered
    assert scan_materialized(store) is None
    second = materialize(store)
    assert second.new_rows == 20 and second.rows == first.rows + 20 and second.rebuilt is None
    assert materialize(store).new_rows == 0
    other = materialize(store, main_agents=["sora"])
    assert other.rebuilt is not None and "main agents" in other.rebuilt
    assert other.new_rows == other.rows == second.rows
    # columns made for other main agents are not given for the default ones
    assert scan_materialized(store) is None
    assert scan_materialized(store, main_agents=["sora"]) is not None
    strict = materialize(store, rules=TASK_MONITOR_V1.replace(confidence_cap=0.5))
    assert strict.rebuilt is not None and strict.rebuilt.startswith("rule set v1")


def test_cli_ingest_materialises_and_work_sessions_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir, store = _store(tmp_path, LINES[:300])
    args = ["work-sessions", str(store), "--now", "1771400000000", "--limit", "1000"]
    assert main(args) == 0
    recomputed = capsys.readouterr().out
    assert main(["ingest", str(logdir), str(store)]) == 0
    assert "materialised" in capsys.readouterr().err
    assert scan_materialized(store) is not None
    assert main(args) == 0
    assert capsys.readouterr().out == recomputed


def _enriched_files(store: Path) -> list[dict[str, Any]]:
    state = json.loads((store / "a2a-store.json").read_text())
    return [f for f in state["files"] if f["path"].startswith("materialized/enriched/")]


def test_materialised_files_are_in_the_state_and_checked_verified_and_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir, store = _store(tmp_path, LINES[:300])
    materialize(store)
    files = _enriched_files(store)
    assert files and sum(f["rows"] for f in files) == 300 - _rejected(store)
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in files)
    assert all(f["path"].startswith("materialized/enriched/part-") for f in files)
    want = _recomputed(store)
    # an ingest keeps them listed
    _store(tmp_path, LINES[300:310])
    assert {f["path"] for f in _enriched_files(store)} >= {f["path"] for f in files}
    materialize(store)
    # one byte changed, size and time kept: only a full check (--verify) sees it
    path = store / files[0]["path"]
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert main(["ingest", "--verify", str(logdir), str(store)]) == 2
    err = capsys.readouterr().err
    assert "store damaged" in err and files[0]["path"] in err and "Traceback" not in err
    # repair sets it aside; the table is incomplete, so it is never read partly
    assert main(["ingest", "--repair", str(logdir), str(store)]) == 0
    out = capsys.readouterr()
    assert "derived table enriched is incomplete" in out.out
    assert "rebuilt" in out.err  # the ingest that repaired built the table again
    assert (store / "damaged" / files[0]["path"]).exists()
    got = scan_materialized(store)
    assert got is not None
    assert_frame_equal(got.collect(), _recomputed(store))
    assert _recomputed(store).height == want.height + 10


def test_a_materialised_file_deleted_is_a_clear_error_on_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, store = _store(tmp_path, LINES[:100])
    materialize(store)
    (store / _enriched_files(store)[0]["path"]).unlink()
    assert scan_materialized(store) is None  # never a partial or stale table
    assert main(["work-sessions", str(store), "--now", "1771400000000"]) == 2
    err = capsys.readouterr().err
    assert "store damaged" in err and "materialized/enriched" in err and "--repair" in err


def test_an_interrupted_materialise_leaves_files_the_next_run_removes(tmp_path: Path) -> None:
    _, store = _store(tmp_path, LINES[:100])
    with pytest.raises(RuntimeError), update_store(store) as update:
        update.write("enriched", pl.DataFrame({"x": [1]}))
        raise RuntimeError("killed")
    assert scan_materialized(store) is None
    leftover = list((store / "materialized" / "enriched").glob("part-*"))
    assert len(leftover) == 1
    report = materialize(store)
    assert report.rows == report.new_rows > 0
    # deleted (its name may be used again by the run that deleted it)
    assert not leftover[0].exists() or "x" not in pl.read_parquet_schema(leftover[0])
    got = scan_materialized(store)
    assert got is not None
    assert_frame_equal(got.collect(), _recomputed(store))


def _rejected(store: Path) -> int:
    return 300 - int(scan_store(store).select(pl.len()).collect().item())


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(case=pieces(5))
def test_materialised_conversations_equal_recomputed(tmp_path_factory: Any, case: Pieces) -> None:
    root = tmp_path_factory.mktemp("c")
    # only the touched conversation ids are matched again after the first piece
    for _ in case.ingest(root):
        got = scan_conversations(root / "store")
        assert got is not None
        assert_frame_equal(got, _conv(root / "store"))


def test_conversations_cli_reads_the_table_and_only_touched_ids_are_matched_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, store = _store(tmp_path, LINES[:600])
    args = ["conversations", str(store), "--json"]
    assert main(args) == 0
    recomputed = capsys.readouterr().out
    first = materialize(store).conversations
    assert first is not None and first.rebuilt == "no table yet" and first.rows > 50
    assert main(args) == 0
    assert capsys.readouterr().out == recomputed
    _store(tmp_path, LINES[600:610])
    assert scan_conversations(store) is None  # new events not materialised: not current
    second = materialize(store).conversations
    assert second is not None and second.rebuilt is None
    assert 0 < second.touched <= 10
    got = scan_conversations(store)
    assert got is not None
    assert_frame_equal(got, _conv(store))
    # a window is matched from the events: the table holds the whole log's exchanges
    assert main([*args, "--since", "2026-01-01"]) == 0


def _conv(store: Path) -> pl.DataFrame:
    """The slow, obvious path: every stored event matched again."""
    out = conversations(scan_store(store))
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def test_a_conversations_table_left_behind_is_not_read_and_is_rebuilt(tmp_path: Path) -> None:
    _, store = _store(tmp_path, LINES[:200])
    materialize(store)
    _store(tmp_path, LINES[200:260])
    assert materialize(store, matched=False).conversations is None  # serve's refreshes
    assert scan_materialized(store) is not None
    assert scan_conversations(store) is None  # behind the events: never read stale
    report = materialize(store).conversations
    assert report is not None and report.rebuilt is not None
    got = scan_conversations(store)
    assert got is not None
    assert_frame_equal(got, _conv(store))


def test_a_rebuild_writes_the_exchange_tables_a_class_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 24: every class's tables used to be held until the end (growing with the
    # events); each is now written as matched, and the reader orders the conversations
    from a2a_lab.io import open_store
    from a2a_lab.materialize import _exchanges

    monkeypatch.setattr(_exchanges, "PART_EVENTS", 60)
    written: list[int] = []
    write_classes = _exchanges._write_classes

    def recorded(update: Any, spill: Any) -> tuple[int, int]:
        # the conversations of each class (matched again by the real writer below)
        for tables in spill.batches():
            written.append(tables[0].height)
        return write_classes(update, spill)

    monkeypatch.setattr(_exchanges, "_write_classes", recorded)
    logdir, store = _store(tmp_path, LINES[:600])
    report = materialize(store).conversations
    assert report is not None and report.rebuilt == "no table yet"
    files = open_store(store).table("conversations").files
    assert len(files) == len(written) > 3 and max(written) < report.rows / 2
    assert report.rows == sum(written)
    got = scan_conversations(store)
    assert got is not None
    assert_frame_equal(got, _conv(store))
    # check's tables of many files give the log's findings (the log named as the store
    # names it: by its absolute path)
    args = ["--json", "--now", "2030-01-01"]
    assert main(["check", str(logdir.absolute()), *args]) in (0, 1)
    from_log = capsys.readouterr().out
    assert main(["check", str(store), *args]) in (0, 1)
    assert capsys.readouterr().out == from_log
