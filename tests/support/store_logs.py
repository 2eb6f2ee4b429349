"""Logs for the store's tests: a generated log's lines, peer-case lines, and a log ingested
in pieces (the materialisation tests)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.io import LoadResult, ingest
from a2a_lab.materialize import materialize
from a2a_lab.samples import write_log
from tests.support.paths import DATA

#: The live file of a log directory.
LIVE = "coordination-events.ndjson"
PEER = DATA / "peer"
#: Every non-empty line of two peer-api logs (hostile and generated).
PEER_LINES = [
    line
    for log in ("tricky.ndjson", "gen300_s11_bad5.ndjson")
    for line in (PEER / log).read_bytes().split(b"\n")
    if line
]


def ingest_in_pieces(
    root: Path, rng: random.Random, lines: list[bytes], pieces: int, **materialize_kw: Any
) -> Iterator[Path]:
    """Append ``lines`` to a live log in up to ``pieces`` random cuts, ingesting and
    materialising the store after each (incrementally after the first) and yielding its path."""
    logdir = root / "logs"
    logdir.mkdir()
    live = logdir / "coordination-events.ndjson"
    cuts = sorted(rng.sample(range(len(lines) + 1), min(pieces, len(lines) + 1)))
    written = 0
    for cut in [*cuts[1:], len(lines)]:
        with live.open("ab") as fh:
            fh.write(b"".join(line + b"\n" for line in lines[written:cut]))
        written = cut
        ingest(logdir, root / "store")
        materialize(root / "store", **materialize_kw)
        yield root / "store"


def generated_lines(name: str, n: int, seed: int, bad_line_fraction: float) -> Any:
    """A module-scoped fixture ``name``: a generated log of ``n`` events with malformed lines
    (``write_log`` with ``seed`` and ``bad_line_fraction``), as its physical lines (newline
    kept)."""

    def lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
        path = tmp_path_factory.mktemp("gen") / "log.ndjson"
        write_log(path, n, seed=seed, bad_line_fraction=bad_line_fraction)
        return path.read_bytes().splitlines(keepends=True)

    return pytest.fixture(lines, scope="module", name=name)


@dataclass(frozen=True)
class Pieces:
    """``n_lines`` of :data:`PEER_LINES` drawn with ``seed``, to be ingested in up to
    ``n_ingests`` pieces (:func:`ingest_in_pieces`, with the same random generator)."""

    seed: int
    n_lines: int
    n_ingests: int

    def ingest(self, root: Path, **materialize_kw: Any) -> Iterator[Path]:
        """:func:`ingest_in_pieces` of the drawn lines under ``root``."""
        rng = random.Random(self.seed)
        lines = rng.sample(PEER_LINES, self.n_lines)
        return ingest_in_pieces(root, rng, lines, self.n_ingests, **materialize_kw)


def pieces(max_ingests: int) -> st.SearchStrategy[Pieces]:
    """Any sample of 1 to 400 peer lines, ingested in 1 to ``max_ingests`` pieces."""
    return st.builds(
        Pieces,
        seed=st.integers(0, 2**32 - 1),
        n_lines=st.integers(1, 400),
        n_ingests=st.integers(1, max_ingests),
    )


def assert_same_load(a: LoadResult, b: LoadResult) -> None:
    """Two loads agree: the events, and the load report's summary, line and blank counts,
    rejects and issues."""
    assert_frame_equal(a.events, b.events)
    assert a.report.summary() == b.report.summary()
    assert a.report.lines == b.report.lines
    assert a.report.blank == b.report.blank
    assert_frame_equal(a.report.rejects, b.report.rejects)
    assert_frame_equal(a.report.issues, b.report.issues)
