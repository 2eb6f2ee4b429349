"""The report's texts table (``report_texts``) equals the texts and title events of the
loaded log, after every ingest of a log appended to in pieces (here the hostile log; the
hypothesis peer logs in ``tests/views/test_report_store.py``); a store without it (made
before it existed, or that lost a file) is built again by the next ``materialize``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from a2a_lab.app.report import setting
from a2a_lab.app.report_store import collect_store
from a2a_lab.io import open_store, update_store
from a2a_lab.materialize import REPORT_TEXTS, materialize
from a2a_lab.samples import write_log
from tests.support.report_logs import write_hostile_log
from tests.support.store_logs import ingest_in_pieces
from tests.support.texts_table import assert_texts_current, stored_texts


@pytest.mark.slow
def test_the_texts_of_a_hostile_log_ingested_in_three_pieces(tmp_path: Path) -> None:
    lines = write_hostile_log(tmp_path / "h.ndjson").read_bytes().split(b"\n")
    stores = ingest_in_pieces(tmp_path, random.Random(5), [x for x in lines if x], 3)
    for store in stores:
        assert_texts_current(tmp_path / "logs", store)
    texts, titles = stored_texts(tmp_path / "store")
    # the hostile log has both, and events without either are not stored
    assert texts.height > 0 and titles.height > 0
    assert open_store(tmp_path / "store").table(REPORT_TEXTS).total_rows < len(lines)


def _drop_texts(store: Path, *, meta_only: bool) -> None:
    """The store as one made before the texts table (or that lost its meta) leaves it."""
    with update_store(store) as update:
        if meta_only:
            update.set_meta(REPORT_TEXTS, {})
        else:
            update.drop(REPORT_TEXTS)


@pytest.mark.parametrize("meta_only", [False, True])
def test_a_store_without_the_texts_table_is_built_again(tmp_path: Path, meta_only: bool) -> None:
    write_log(tmp_path / "log.ndjson", 300, seed=3)
    lines = [x for x in (tmp_path / "log.ndjson").read_bytes().split(b"\n") if x]
    (store,) = ingest_in_pieces(tmp_path, random.Random(2), lines, 1)
    s = setting("s", (None, None), "UTC", "2026-12-01T00:00:00Z")
    assert collect_store(store, s, shown=3, progress=False) is not None
    _drop_texts(store, meta_only=meta_only)
    # the report cannot read it: it answers from the events instead
    assert collect_store(store, s, shown=3, progress=False) is None
    done = materialize(store)
    assert done.rebuilt is not None and "texts" in done.rebuilt
    assert collect_store(store, s, shown=3, progress=False) is not None
    assert_texts_current(tmp_path / "logs", store)
