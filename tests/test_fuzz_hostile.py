"""Fuzz suite (issue 14): hostile lines load without loss and every analysis runs on them.

The invariants live in ``tests/fuzz_hostile.py`` (``check_source``): every physical line is an
event, a reject or a counted blank; no reject for a reason of a2a_lab's own; load never raises;
enrich, work sessions, ``to_api``, ``events_query``, conversations, pair stats, the graph,
``check``, the thread views and pm run without raising; ``write_events`` writes valid JSON; no
planted script is live in the rendered HTML.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from fuzz_hostile import check_source, write_batch
from hypothesis import given, settings
from hypothesis import strategies as st

CORPUS = Path(__file__).parent / "data" / "fuzz"
LINES = {"count": 0}


def test_seeded_corpus(tmp_path: Path) -> None:
    """The committed corpus: the issue's crash cases plus 500 generated hostile lines and a truncated .gz."""
    src = tmp_path / "log"
    shutil.copytree(CORPUS, src)
    assert check_source(src) == []
    LINES["count"] += sum(p.read_bytes().count(b"\n") for p in src.glob("*.ndjson"))


@settings(max_examples=4)
@given(seed=st.integers(0, 2**32 - 1), gz=st.booleans())
def test_generated_batches(tmp_path_factory, seed: int, gz: bool) -> None:
    """Generated hostile log directories (live file + maybe a truncated rotated .gz)."""
    src, n = write_batch(tmp_path_factory.mktemp("fz"), random.Random(seed), 150, gz=gz)
    assert check_source(src) == []
    LINES["count"] += n


def test_report_line_count() -> None:
    """Say how many fuzzed lines the run checked (the goal of issue 14 is 100,000; not met in one minute)."""
    print(f"fuzzed lines checked: {LINES['count']}")
    assert LINES["count"] > 0
