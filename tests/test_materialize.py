"""Materialised enriched columns in a store: the same frame and sessions as enriching again."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.cli import main
from a2a_lab.enrich import enrich
from a2a_lab.io import ingest, scan_store
from a2a_lab.materialize import (
    MATERIALIZED_DATA_FIELDS,
    materialize,
    scan_materialized,
)
from a2a_lab.reference.rules import TASK_MONITOR_V1
from a2a_lab.sessions import work_sessions

PEER = Path(__file__).parent / "data" / "peer"
LINES = [
    line
    for log in ("tricky.ndjson", "gen300_s11_bad5.ndjson")
    for line in (PEER / log).read_bytes().split(b"\n")
    if line
]


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
@given(
    seed=st.integers(0, 2**32 - 1),
    n_lines=st.integers(1, 400),
    n_ingests=st.integers(1, 4),
    agents=st.sampled_from([None, ["main", "ruda"], ["sora"]]),
)
def test_materialised_path_equals_recomputed_path(
    tmp_path_factory: Any, seed: int, n_lines: int, n_ingests: int, agents: list[str] | None
) -> None:
    rng = random.Random(seed)
    lines = rng.sample(LINES, n_lines)
    root = tmp_path_factory.mktemp("m")
    logdir = root / "logs"
    logdir.mkdir()
    live = logdir / "coordination-events.ndjson"
    cuts = sorted(rng.sample(range(n_lines + 1), min(n_ingests, n_lines + 1)))
    written = 0
    for cut in [*cuts[1:], n_lines]:
        with live.open("ab") as fh:
            fh.write(b"".join(line + b"\n" for line in lines[written:cut]))
        written = cut
        ingest(logdir, root / "store")
        materialize(root / "store", main_agents=agents)  # incremental after the first
    got = scan_materialized(root / "store", main_agents=agents)
    assert got is not None
    frame = got.collect()
    want = _recomputed(root / "store", agents)
    assert_frame_equal(frame, want)
    now = 1_771_400_000_000
    for query in ({}, {"status": "ACTIVE,QUIET", "limit": "3"}, {"roles": "conversation.main"}):
        a = work_sessions(got, now=now, **query).to_api()  # type: ignore[arg-type]
        b = work_sessions(want, now=now, **query).to_api()  # type: ignore[arg-type]
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
