"""The report's texts table (``report_texts``) against the slow obvious texts of a log."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.app.report import message_texts
from a2a_lab.app.report_store import in_order
from a2a_lab.io import open_store
from a2a_lab.materialize import (
    ENRICHED_TABLE,
    REPORT_TEXTS,
    TITLE_FIELDS,
    has_text,
    names_a_title,
)


def expected_texts(logdir: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The slow obvious texts and title events: of the whole loaded, enriched log."""
    enriched = al.enrich(al.load(logdir).events)
    texts = message_texts(enriched).collect()
    d = pl.col("data").struct
    titles = enriched.filter(names_a_title()).select(
        "event_ms", pl.struct([d.field(f) for f in TITLE_FIELDS]).alias("data")
    )
    return texts, titles


def stored_texts(store: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The texts and the title events of the store's texts table, in the load's order."""
    snap = open_store(store)
    table = snap.scan_table(REPORT_TEXTS)
    assert table is not None
    assert snap.table(REPORT_TEXTS).meta == snap.table(ENRICHED_TABLE).meta
    rows = in_order(snap, table)
    texts = rows.filter(has_text()).select("file", "line", "event_ms", "sender", "receiver", "text")
    titles = rows.filter(pl.col("title").is_not_null()).select(
        "event_ms", pl.col("title").alias("data")
    )
    return texts, titles


def assert_texts_current(logdir: Path, store: Path) -> None:
    """The store's texts table holds the texts and title events of the loaded log."""
    (texts, titles), (want_texts, want_titles) = stored_texts(store), expected_texts(logdir)
    assert_frame_equal(texts, want_texts)
    assert_frame_equal(titles, want_titles)
