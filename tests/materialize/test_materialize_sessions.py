"""The work-sessions table of a store: the same sessions and bodies as building them again."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.io import ingest
from a2a_lab.materialize import (
    materialize,
    scan_materialized,
    sessions_query_source,
    stored_work_sessions,
)
from a2a_lab.sessions import SessionQuery, load_overrides, work_sessions
from tests.support.store_logs import PEER_LINES

LINES = PEER_LINES
#: Clocks around the logs' times: every session ACTIVE/QUIET, some ARCHIVED, all ARCHIVED.
NOWS = (1_771_000_000_000, 1_771_400_000_000, 1_790_000_000_000)
QUERIES: tuple[dict[str, Any], ...] = (
    {},
    {"status": "ACTIVE,QUIET", "limit": "3"},
    {"status": "ARCHIVED", "limit": "-2"},
    {"view_category": "all", "limit": "abc"},
    {"view_category": "qa_validation"},
    {"sub_tag": "BUG", "limit": 1000},
)


def _ingest(root: Path, lines: list[bytes]) -> Path:
    logdir = root / "logs"
    logdir.mkdir(exist_ok=True)
    with (logdir / "coordination-events.ndjson").open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in lines))
    ingest(logdir, root / "store")
    materialize(root / "store", matched=False)
    return root / "store"


def _assert_same(store: Path, overrides: Any = None) -> None:
    source = sessions_query_source(store)
    assert source is not None
    snap, enriched = source
    events = scan_materialized(store)
    assert events is not None
    full = events.collect()
    for now in NOWS:
        for query in QUERIES:
            q = SessionQuery(**query)
            want = work_sessions(full, q, now=now, overrides=overrides)
            got = stored_work_sessions(snap, enriched, q, now=now, overrides=overrides)
            assert_frame_equal(got.sessions, want.sessions)
            assert got.category_counts == want.category_counts
            assert got.total_sessions == want.total_sessions
            assert got.to_api() == want.to_api()


def test_sessions_table_equals_building_again_incrementally(tmp_path: Path) -> None:
    store = _ingest(tmp_path, LINES[:200])
    _assert_same(store)
    store = _ingest(tmp_path, LINES[200:260])
    report = materialize(store, matched=False)
    assert report.sessions == (0, None)  # nothing new: nothing made again
    _assert_same(store)
    overrides = load_overrides({"ws_1": {"collabCategory": "qa_validation"}})
    _assert_same(store, overrides)


def test_a_store_behind_is_not_answered_from_the_table(tmp_path: Path) -> None:
    store = _ingest(tmp_path, LINES[:100])
    assert sessions_query_source(store) is not None
    logdir = tmp_path / "logs"
    with (logdir / "coordination-events.ndjson").open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in LINES[100:120]))
    ingest(logdir, store)
    assert sessions_query_source(store) is None  # events not in the table yet
    report = materialize(store, matched=False)
    assert report.sessions[1] is None and report.sessions[0] > 0
    assert sessions_query_source(store) is not None
    assert sessions_query_source(store, main_agents=["sora"]) is None
    # other main agents: another enrichment, so every session is made again, and said so
    other = materialize(store, main_agents=["sora"], matched=False)
    assert other.sessions[1] == "the enriched columns were rebuilt"
    assert "work sessions made again (the enriched columns were rebuilt)" in str(other)
    assert sessions_query_source(store, main_agents=["sora"]) is not None
    assert sessions_query_source(store) is None


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_lines=st.integers(1, 400), n_ingests=st.integers(1, 4))
def test_sessions_table_property(
    tmp_path_factory: Any, seed: int, n_lines: int, n_ingests: int
) -> None:
    rng = random.Random(seed)
    lines = rng.sample(LINES, n_lines)
    root = tmp_path_factory.mktemp("s")
    cuts = sorted(rng.sample(range(n_lines + 1), min(n_ingests, n_lines + 1)))
    written = 0
    for cut in [*cuts[1:], n_lines]:
        store = _ingest(root, lines[written:cut])
        written = cut
    _assert_same(store)


def test_a_rebuild_makes_the_sessions_a_hash_class_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 24: a store's sessions are made from bounded classes of session ids, not from
    # every event at once (10 M events in one month); the table is the same
    from a2a_lab.io import open_store
    from a2a_lab.materialize import _sessions

    def table(store: Path) -> pl.DataFrame:
        scan = open_store(store).scan_table(_sessions.SESSIONS_TABLE)
        assert scan is not None
        # the first event's file is named by its path: the two stores' differ by their folder
        name = pl.col("_first_file").str.split("/").list.last()
        return scan.collect().with_columns(name).sort("work_session_id")

    (tmp_path / "one").mkdir()
    whole = table(_ingest(tmp_path / "one", LINES[:260]))
    held: list[int] = []
    aggregates = _sessions.session_aggregates

    def recorded(events: pl.LazyFrame, *args: Any) -> pl.DataFrame:
        held.append(events.select(pl.len()).collect().item())
        return aggregates(events, *args)

    monkeypatch.setattr(_sessions, "CLASS_EVENTS", 40)
    monkeypatch.setattr(_sessions, "session_aggregates", recorded)
    (tmp_path / "many").mkdir()
    store = _ingest(tmp_path / "many", LINES[:260])
    events = scan_materialized(store)
    assert events is not None
    in_sessions = events.select(_sessions.session_id_expr().is_not_null().sum()).collect().item()
    n = open_store(store).events
    assert len(held) == -(-n // 40) and sum(held) == in_sessions
    assert max(held) < in_sessions / 2  # no batch holds most of the events
    assert_frame_equal(table(store), whole)
    _assert_same(store)
