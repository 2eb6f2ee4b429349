"""An append recomputes only what it touches, and gives what a full rebuild gives (issue 24).

The store's fast paths: a part already materialised is skipped by its keys; the conversation
ids new lines touch are read from their files' line spans only; a first ingest spills the
exchange events by hash class while it enriches them (no second read of the store). Each is
checked against the slow, obvious path (every stored event matched and checked again) on a
log rotated between ingests, so a conversation's events span files, with slices and hash
classes made small so that every store part is cut and several classes are matched.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import a2a_lab.materialize as mat
import a2a_lab.materialize._exchanges as mat_ex
from a2a_lab.analysis.checks import CheckOptions, run_checks
from a2a_lab.analysis.conversations import conversations
from a2a_lab.io import ingest, load, scan_store
from a2a_lab.materialize import materialize, scan_conversations, stored_check
from tests.support.store_logs import LIVE, generated_lines

#: Rotated names, oldest first (the loader reads them in this order, then the live file).
ROTATED = [f"coordination-events-2026-0{m}.ndjson" for m in range(1, 6)]

lines_1k = generated_lines("lines_1k", 1_000, seed=24, bad_line_fraction=0.01)


def _conv(store: Path) -> pl.DataFrame:
    """The slow, obvious path: every stored event matched again."""
    out = conversations(scan_store(store))
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _canonical(found: pl.DataFrame) -> pl.DataFrame:
    return found.sort(pl.all(), nulls_last=True, maintain_order=True)


def _ingest_rotated(root: Path, lines: list[bytes], cuts: list[int], rotate: list[bool]) -> Any:
    """Append ``lines`` in pieces ending at ``cuts``, the live file rotated before a piece
    where ``rotate`` says so; ingest and materialise after each piece; yield the store."""
    logdir = root / "logs"
    logdir.mkdir()
    live = logdir / LIVE
    start, n_rotated = 0, 0
    for cut, turn in zip(cuts, rotate, strict=True):
        if turn and live.exists() and n_rotated < len(ROTATED):
            os.rename(live, logdir / ROTATED[n_rotated])
            n_rotated += 1
        with live.open("ab") as fh:
            fh.write(b"".join(lines[start:cut]))
        start = cut
        ingest(logdir, root / "store")
        materialize(root / "store")
        yield logdir, root / "store"


def _assert_as_rebuilt(logdir: Path, store: Path) -> None:
    got = scan_conversations(store)
    assert got is not None, "the conversations table should be current"
    assert_frame_equal(got, _conv(store))
    opts = CheckOptions(now="2026-12-01T00:00Z")
    stored = stored_check(store, opts)
    assert stored is not None, "the check tables should be current"
    res = load(logdir.absolute())
    assert_frame_equal(_canonical(stored[0]), _canonical(run_checks(res.events, opts, res.report)))


def _run(root: Path, lines: list[bytes], cuts: list[int], rotate: list[bool]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        # slices of 97 stored rows and a hash class per 150 events: every part is cut, and
        # a first ingest spills several classes
        mp.setattr(mat, "ENRICH_ROWS", 97)
        mp.setattr(mat_ex, "PART_EVENTS", 150)
        mp.setattr(mat_ex, "SLICE_ROWS", 97)
        for logdir, store in _ingest_rotated(root, lines, cuts, rotate):
            _assert_as_rebuilt(logdir, store)


@pytest.mark.slow
def test_an_append_across_rotated_files_equals_a_rebuild(
    tmp_path: Path, lines_1k: list[bytes]
) -> None:
    lines = lines_1k[:600]
    _run(tmp_path, lines, [300, 420, 430, 600], [False, True, False, True])


@pytest.mark.slow
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pieces=st.integers(1, 5))
def test_appends_in_random_pieces_and_rotations_equal_a_rebuild(
    tmp_path_factory: Any, lines_1k: list[bytes], seed: int, pieces: int
) -> None:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(lines_1k)), pieces - 1)) + [len(lines_1k)]
    rotate = [rng.random() < 0.5 for _ in cuts]
    _run(tmp_path_factory.mktemp("a"), lines_1k, cuts, rotate)


def test_a_matcher_change_rebuilds_from_the_store_as_the_spill_does(
    tmp_path: Path, lines_1k: list[bytes]
) -> None:
    """Tables built again with the enriched columns kept read the store (no spill): the
    same tables as the first ingest's spill made."""
    (_, store), *_ = _ingest_rotated(tmp_path, lines_1k[:200], [200], [False])
    spilled = scan_conversations(store)
    assert spilled is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mat, "matcher_signature", lambda: {"code": "another"})
        report = materialize(store).conversations
        assert report is not None and report.rebuilt is not None
        again = scan_conversations(store)
    assert again is not None
    assert_frame_equal(again, spilled)
