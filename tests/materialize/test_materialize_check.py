"""``check`` of a store from its tables made at ingest: the findings ``check`` of the log gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.analysis.checks import CheckLimits, CheckOptions, run_checks
from a2a_lab.cli import main
from a2a_lab.io import load
from a2a_lab.materialize import materialize, stored_check
from tests.support.store_logs import PEER_LINES, ingest_in_pieces

#: Clocks of the queries: before, inside and after the peer logs' times (``clock.future_ts``).
CLOCKS = ("2026-02-19T12:00:00Z", "2026-02-22T00:00:00Z", "2030-01-01T00:00:00Z")


def _canonical(found: pl.DataFrame) -> pl.DataFrame:
    """Findings in one order: ``check`` sorts by severity, rule, file and first line and
    leaves ties (two findings of one rule on one line) in no particular order."""
    return found.sort(pl.all(), nulls_last=True, maintain_order=True)


def _from_log(logdir: Path, opts: CheckOptions) -> pl.DataFrame:
    """The slow, obvious path: the log loaded whole and every rule run on it."""
    res = load(logdir)
    return run_checks(res.events, opts, res.report)


def _stored(store: Path, opts: CheckOptions) -> pl.DataFrame:
    got = stored_check(store, opts)
    assert got is not None, "the tables should be current after materialize"
    return got[0]


#: A log: a seed, how many peer lines, in how many ingests, and the query's clock.
LOGS = st.tuples(
    st.integers(0, 2**32 - 1), st.integers(1, 400), st.integers(1, 5), st.sampled_from(CLOCKS)
)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(log=LOGS)
def test_stored_check_equals_check_of_the_log(
    tmp_path_factory: Any, log: tuple[int, int, int, str]
) -> None:
    seed, n_lines, n_ingests, now = log
    rng = random.Random(seed)
    # duplicated lines make identity.duplicate_event findings across pieces
    lines = rng.sample(PEER_LINES, n_lines)
    lines += rng.sample(lines, min(len(lines), rng.randint(0, 5)))
    root = tmp_path_factory.mktemp("k")
    opts = CheckOptions(now=now)
    # after every piece (incremental after the first): only touched ids matched again
    for store in ingest_in_pieces(root, rng, lines, n_ingests):
        want = _canonical(_from_log(root / "logs", opts))
        assert_frame_equal(_canonical(_stored(store, opts)), want)


def test_check_cli_reads_the_tables_with_the_same_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(7)
    lines = rng.sample(PEER_LINES, 300)
    *_, store = ingest_in_pieces(tmp_path, rng, lines, 3)
    logdir = str((tmp_path / "logs").absolute())
    for extra in ([], ["--select", "a2a.,guard.loop"], ["--ignore", "clock."]):
        args = ["--now", CLOCKS[1], "--json", *extra]
        assert main(["check", logdir, *args]) in (0, 1)
        from_log = capsys.readouterr().out
        assert main(["check", str(store), *args]) in (0, 1)
        assert capsys.readouterr().out == from_log


def test_other_limits_are_not_answered_and_rebuild_the_tables(tmp_path: Path) -> None:
    rng = random.Random(3)
    *_, store = ingest_in_pieces(tmp_path, rng, PEER_LINES[:300], 2)
    tight = CheckLimits(loop_limit=2, max_depth=1)
    # tables of the default limits do not answer other limits (the caller loads instead)
    assert stored_check(store, CheckOptions(limits=tight)) is None
    assert stored_check(store, CheckOptions(since="2026-01-01")) is None
    report = materialize(store, limits=tight)
    assert report.conversations is not None and report.conversations.rebuilt is not None
    assert "limits" in report.conversations.rebuilt
    opts = CheckOptions(limits=tight, now=CLOCKS[2])
    assert_frame_equal(
        _canonical(_stored(store, opts)), _canonical(_from_log(tmp_path / "logs", opts))
    )
    assert stored_check(store, CheckOptions()) is None


def test_event_findings_are_made_a_bounded_class_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 24: the event rules' table is made from classes of their keys (pair,
    # conversation id, task), not from every lean row at once; the findings are the log's
    from a2a_lab.materialize import _check

    held: list[int] = []
    in_order = _check.lean_in_load_order

    def recorded(snap: Any, lean: pl.LazyFrame) -> pl.DataFrame:
        rows = in_order(snap, lean)
        held.append(rows.height)
        return rows

    monkeypatch.setattr(_check, "CLASS_ROWS", 40)
    monkeypatch.setattr(_check, "lean_in_load_order", recorded)
    rng = random.Random(5)
    lines = rng.sample(PEER_LINES, 300)
    lines += rng.sample(lines, 5)  # copies: identity.duplicate_event
    tight = CheckLimits(loop_limit=2, max_depth=1)
    *_, store = ingest_in_pieces(tmp_path, rng, lines, 1, limits=tight)
    opts = CheckOptions(limits=tight, now=CLOCKS[2])
    want = _canonical(_from_log(tmp_path / "logs", opts))
    assert {"guard.loop", "identity.duplicate_event"} <= set(want["rule"])
    assert_frame_equal(_canonical(_stored(store, opts)), want)
    # the query's own read (clock.future_ts) is the last: the ingest's classes before it
    classes = held[:-1]
    assert len(classes) > 3 * (-(-len(lines) // 40)) and max(classes) < len(lines) / 3
