"""The report's texts table (``report_texts``) equals the texts and title events of the
loaded log, after every ingest of a log appended to in pieces; a store without it (made
before it existed, or that lost a file) is built again by the next ``materialize``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.app.report import message_texts, setting
from a2a_lab.app.report_store import collect_store, in_order
from a2a_lab.io import open_store, update_store
from a2a_lab.materialize import (
    ENRICHED_TABLE,
    REPORT_TEXTS,
    TITLE_FIELDS,
    has_text,
    materialize,
    names_a_title,
)
from a2a_lab.samples import write_log
from tests.support.report_logs import write_hostile_log
from tests.support.store_logs import Pieces, ingest_in_pieces, pieces


def _expected(logdir: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The slow obvious texts and title events: of the whole loaded, enriched log."""
    enriched = al.enrich(al.load(logdir).events)
    texts = message_texts(enriched).collect()
    d = pl.col("data").struct
    titles = enriched.filter(names_a_title()).select(
        "event_ms", pl.struct([d.field(f) for f in TITLE_FIELDS]).alias("data")
    )
    return texts, titles


def _stored(store: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    snap = open_store(store)
    table = snap.scan_table(REPORT_TEXTS)
    assert table is not None
    assert snap.table(REPORT_TEXTS).meta == snap.table(ENRICHED_TABLE).meta
    rows = in_order(snap, table)
    texts = rows.filter(has_text()).drop("title")
    titles = rows.filter(pl.col("title").is_not_null()).select(
        "event_ms", pl.col("title").alias("data")
    )
    return texts, titles


def _assert_current(logdir: Path, store: Path) -> None:
    (texts, titles), (want_texts, want_titles) = _stored(store), _expected(logdir)
    assert_frame_equal(texts, want_texts)
    assert_frame_equal(titles, want_titles)


def test_the_texts_of_a_hostile_log_ingested_in_three_pieces(tmp_path: Path) -> None:
    lines = write_hostile_log(tmp_path / "h.ndjson").read_bytes().split(b"\n")
    stores = ingest_in_pieces(tmp_path, random.Random(5), [x for x in lines if x], 3)
    for store in stores:
        _assert_current(tmp_path / "logs", store)
    texts, titles = _stored(tmp_path / "store")
    # the hostile log has both, and events without either are not stored
    assert texts.height > 0 and titles.height > 0
    assert open_store(tmp_path / "store").table(REPORT_TEXTS).total_rows < len(lines)


@pytest.mark.slow
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(p=pieces(4))
def test_the_texts_of_peer_logs_appended_in_pieces(tmp_path_factory: Any, p: Pieces) -> None:
    root = tmp_path_factory.mktemp("tp")
    for store in p.ingest(root):
        _assert_current(root / "logs", store)


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
    _assert_current(tmp_path / "logs", store)
