"""The tables a store keeps of its matched exchanges: conversations and ``check``'s A2A rules.

Both read :func:`a2a_lab.exchange_events` of whole conversations; one matching of a batch
of conversation ids makes the rows of both (:func:`update_exchanges`). Exchanges never span
conversation ids, so new lines re-match only the ids they touch, and a rebuild matches the
store a hash class of ids at a time (bounded memory, whatever the density in time).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.analysis.conversations import EXCHANGE_TYPES, exchanges_and_conversations
from a2a_lab.io import TableUpdate
from a2a_lab.materialize._check import exchange_tables
from a2a_lab.materialize._names import (
    CHECK_AMBIGUOUS,
    CHECK_COUNTS,
    CHECK_EXCHANGES,
    CONV_ORDER,
    CONVERSATIONS_TABLE,
)
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.schema import polars_schema

#: Conversation ids matched again per batch of an incremental update (bounded memory).
TOUCHED_BATCH = 50_000
#: Exchange events per hash class of conversation ids when everything is matched again.
#: The matching of a class is the ingest's peak on a log dense in time (issue 24: 250,000
#: gave 1,241 MiB on 860,000 events in one day, above the 1.25 GB goal with the tables the
#: earlier steps leave resident).
PART_EVENTS = 125_000
#: Stored rows read at a time when the store's exchange events are split by class.
SLICE_ROWS = 250_000
#: The tables of one batch, in the order :func:`_batch` gives them.
TABLES = (CONVERSATIONS_TABLE, CHECK_EXCHANGES, CHECK_AMBIGUOUS, CHECK_COUNTS)


@dataclass(frozen=True)
class ConversationsReport:
    """What :func:`a2a_lab.materialize.materialize` did to the conversations table.

    Attributes
    ----------
    touched
        Conversation ids whose exchanges were matched again (all, on a rebuild).
    rows
        Exchanges (rows of :func:`a2a_lab.analysis.conversations.conversations`) in all.
    rebuilt
        Why the table was built again from every event, or None.
    """

    touched: int
    rows: int
    rebuilt: str | None

    def __str__(self) -> str:
        text = f"{self.rows} exchanges ({self.touched} conversation ids matched again)"
        return text if self.rebuilt is None else f"{text}; rebuilt: {self.rebuilt}"


def conv_id() -> pl.Expr:
    """The matcher's key (``a2a_lab._frames.data_text``): the JS-trimmed id, null if blank."""
    return js_string_expr(pl.col("data").struct.field("conversationId"))


def _exchange_events(events: pl.LazyFrame) -> pl.LazyFrame:
    """The exchange events of stored ``events`` (with a conversation id), the columns the
    matching reads and the file's reading ``_rank``."""
    return events.filter(pl.col("type").is_in(EXCHANGE_TYPES) & conv_id().is_not_null()).select(
        *polars_schema(raw=False), "_rank"
    )


def _batch(frame: pl.DataFrame | pl.LazyFrame) -> list[pl.DataFrame]:
    """The rows of :data:`TABLES` for the exchange events ``frame`` (whole conversations,
    from :func:`_exchange_events`), matched once, in the load's order."""
    frame = (
        frame.lazy()
        .collect(engine="streaming")
        .sort("_rank", "line")
        .sort("event_ms", maintain_order=True)
    )
    ex, conv = exchanges_and_conversations(frame.drop("_rank"))
    return [conv, *exchange_tables(ex, frame)]


class ExchangeSpill:
    """Stored events' exchange events, split by hash class of conversation id into files
    under ``tmp`` as they are read; each class is then matched whole (:meth:`batches`).

    ``events`` (the store's count) sets the classes: about :data:`PART_EVENTS` stored
    events each, so a class never holds more exchange events than that, whatever the
    density in time (the peak is one class's events, issue 12).
    """

    def __init__(self, tmp: Path, events: int) -> None:
        self.tmp = tmp
        self.k = max(1, -(-events // PART_EVENTS))
        self.files: list[list[Path]] = [[] for _ in range(self.k)]

    def add(self, events: pl.LazyFrame) -> None:
        """Spill the exchange events of stored ``events`` (with ``_rank``)."""
        chunk = (
            _exchange_events(events)
            .with_columns((conv_id().hash(seed=0) % self.k).alias("_class"))
            .collect(engine="streaming")
        )
        # in any order: a batch sorts its events (2.5 × faster than keeping the order)
        for (i,), part in chunk.partition_by("_class", as_dict=True, maintain_order=False).items():
            files = self.files[int(i)]
            files.append(self.tmp / f"{i}-{len(files):06d}.arrow")
            # read back once, at once: Arrow IPC (lz4) reads twice as fast as Parquet
            part.drop("_class").write_ipc(files[-1], compression="lz4")

    def batches(self) -> Iterator[list[pl.DataFrame]]:
        """:func:`_batch` of every class spilled, one class at a time (its tables sorted)."""
        for paths in self.files:
            if paths:
                yield _sorted(_batch(pl.scan_ipc(paths)))


def _by_class(update: TableUpdate, tmp: Path) -> ExchangeSpill:
    """Every stored event's exchange events spilled by hash class of conversation id, the
    store read once, :data:`SLICE_ROWS` stored rows at a time (reading the store once per
    class would decode every ``data`` struct as many times)."""
    snap = update.snapshot
    spill = ExchangeSpill(tmp, snap.events)
    for rel, rows in zip(snap.event_parts, snap.event_rows, strict=True):
        for offset in range(0, rows, SLICE_ROWS):
            spill.add(snap.scan_events([rel]).slice(offset, SLICE_ROWS))
    return spill


def _write_classes(update: TableUpdate, spill: ExchangeSpill) -> tuple[int, int]:
    """Write the tables of every class of ``spill`` as each is matched (issue 24: all the
    classes' rows held until the end grew with the events); (conversation ids, exchanges).
    A table is then one file per class, its conversations sorted within the file: its
    reader (:func:`a2a_lab.materialize.scan_conversations`) sorts them across files."""
    ids = rows = 0
    for tables in spill.batches():
        for name, part in zip(TABLES, tables, strict=True):
            update.write(name, part)
        ids += tables[0].get_column("conversation_id").n_unique()
        rows += tables[0].height
    return ids, rows


def _sorted(tables: list[pl.DataFrame]) -> list[pl.DataFrame]:
    conv, *rest = tables
    return [conv.sort(CONV_ORDER, nulls_last=True, maintain_order=True), *rest]


def _concat(parts: list[list[pl.DataFrame]]) -> list[pl.DataFrame]:
    return [pl.concat(list(column), how="vertical_relaxed") for column in zip(*parts, strict=True)]


#: Beyond this many files holding touched ids, their events are found without line spans.
_MAX_SPANS = 64


def _spans(enriched: pl.LazyFrame, keys: pl.Series) -> pl.Expr:
    """The stored lines that can hold exchange events of conversation ids ``keys``: per
    file, from the first to the last line where one appears (the narrow ``enriched``
    table, read to know). Parts are written in line order, so the Parquet reader skips
    the row groups outside these spans: an append's ids, mostly recent, read the tail."""
    spans = (
        enriched.filter(pl.col("type").is_in(EXCHANGE_TYPES) & conv_id().is_in(keys.implode()))
        .group_by("source")
        .agg(pl.col("line").min().alias("lo"), pl.col("line").max().alias("hi"))
        .collect()
    )
    if spans.height > _MAX_SPANS:
        return pl.lit(True)
    line = pl.col("line")
    return pl.any_horizontal(
        pl.lit(False),
        *[(pl.col("source") == s) & line.is_between(lo, hi) for s, lo, hi in spans.iter_rows()],
    )


def update_exchanges(
    update: TableUpdate,
    touched: pl.Series | None,
    meta: dict[str, Any],
    before: int,
    enriched: pl.LazyFrame,
    spill: ExchangeSpill | None = None,
) -> ConversationsReport:
    """Bring :data:`TABLES` to ``meta`` (what current tables record), matching again the
    conversation ids ``touched`` by the events materialised after the first ``before``
    (None: every id); ``enriched`` is the store's enriched table as this update leaves it,
    ``spill`` every stored event's exchange events when they were spilled while enriched.
    Tables that did not cover those ``before`` events (or were made otherwise) are built
    again."""
    snap = update.snapshot
    old = {name: snap.table(name) for name in TABLES}
    covered = {**meta, "events": before}
    rebuilt = None
    if not any(t.files for t in old.values()):
        rebuilt = "no table yet"
    elif touched is None or any(t.meta != covered or not t.files for t in old.values()):
        rebuilt = "another matcher, zone, limits or file names, or events it had not matched"
    elif touched.len() > TOUCHED_BATCH and touched.len() * 2 > old[CONVERSATIONS_TABLE].total_rows:
        rebuilt = f"{touched.len()} conversation ids touched"
    if rebuilt is not None:
        for name in TABLES:
            update.drop(name)
        # a class of conversation ids at a time, written as matched: the peak is one
        # class's events and tables (issue 12, issue 24)
        with tempfile.TemporaryDirectory(prefix="a2a_lab_exchanges_") as tmp:
            # every stored event was spilled as it was enriched: no second read of the store
            classes = spill if spill is not None else _by_class(update, Path(tmp))
            ids, n_rows = _write_classes(update, classes)
        if not update.table_files(CONVERSATIONS_TABLE):
            # no exchange event: empty tables (no files would be no table to read)
            for name, rows in zip(
                TABLES, _batch(_exchange_events(snap.scan_events())), strict=True
            ):
                update.write(name, rows)
        for name in TABLES:
            update.set_meta(name, meta)
        return ConversationsReport(ids, n_rows, rebuilt)
    assert touched is not None
    if touched.len() == 0:
        for name in TABLES:
            update.set_meta(name, meta)
        return ConversationsReport(0, old[CONVERSATIONS_TABLE].total_rows, None)
    keys = touched.sort()
    events = _exchange_events(snap.scan_events().filter(_spans(enriched, keys)))
    fresh = [
        _batch(events.filter(conv_id().is_in(keys.slice(i, TOUCHED_BATCH).implode())))
        for i in range(0, keys.len(), TOUCHED_BATCH)
    ]
    kept = []
    for name in TABLES:
        scan = snap.scan_table(name)
        assert scan is not None
        kept.append(scan.filter(~pl.col("conversation_id").is_in(keys.implode())).collect())
    tables = _sorted(_concat([kept, *fresh]))
    ids = keys.len()
    for name, rows in zip(TABLES, tables, strict=True):
        update.drop(name)
        update.write(name, rows)
        update.set_meta(name, meta)
    return ConversationsReport(ids, tables[0].height, rebuilt)
