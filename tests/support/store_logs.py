"""Peer-case lines and a log ingested in pieces, for the store's materialisation tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from a2a_lab.io import ingest
from a2a_lab.materialize import materialize
from tests.support.paths import DATA

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
