"""Derived tables kept in a history store: the public API other layers extend the store with.

A layer above io (``a2a_lab.materialize``) keeps tables it derives from the stored events
(enriched columns, aggregates) in the store, so that queries read them instead of
recomputing. Their files are recorded in the store's state like the event parts: a
:class:`~a2a_lab.io._store_state.FileEntry` of kind ``materialized`` with rows, size and
SHA-256, under ``materialized/<table>/part-{generation}-{n}.parquet``. Every read of the
store checks them (``a2a-lab ingest --verify`` hashes them all), an ingest keeps them, and a
repair keeps those that check out and moves the others to ``damaged/``; each table's
writer finds what is missing through :attr:`StoreTable.rows` and :attr:`StoreTable.meta`.

:func:`open_store` gives a verified, read-only :class:`StoreSnapshot`;
:func:`update_store` holds the store's lock and gives a :class:`TableUpdate` that writes
files, drops them and records the table's metadata, committed in one atomic state write.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io._paths import polars_path
from a2a_lab.io._store_read import _events, _file_names, _named
from a2a_lab.io._store_state import JOURNAL_NAME as _JOURNAL
from a2a_lab.io._store_state import (
    TABLES_KIND,
    FileEntry,
    StoreError,
    _State,
    check,
    locked,
    next_generation,
    read_state,
    recover,
    remove_retired,
    verified_state,
    write_journal,
    write_state,
)
from a2a_lab.io._store_write import _write_part

__all__ = ["StoreSnapshot", "StoreTable", "TableUpdate", "open_store", "update_store"]

_TABLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class StoreTable:
    """One derived table of a store as its state records it.

    Attributes
    ----------
    name
        The table's name (its directory under ``materialized/``).
    files
        Relative paths of its files (sorted: the order they were written in).
    rows
        Rows of each file, as recorded (and checked against the file).
    meta
        What the table's writer recorded with it (JSON); empty for a table never written.
    """

    name: str
    files: tuple[str, ...] = ()
    rows: tuple[int, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def total_rows(self) -> int:
        """Rows of all its files."""
        return sum(self.rows)


@dataclass(frozen=True)
class StoreSnapshot:
    """A store's committed state, verified, for reading its events and derived tables.

    Attributes
    ----------
    path, timezone
        The store directory and its zone (fixed by the first ingest).
    generation
        The state's generation (changes with every commit).
    event_parts, event_rows
        Relative paths of the event parts, and their row counts.
    """

    path: Path
    generation: int
    event_parts: tuple[str, ...]
    event_rows: tuple[int, ...]
    _state: _State = field(repr=False, compare=False)

    @property
    def timezone(self) -> str:
        """The store's zone (fixed by its first ingest), as its state records it."""
        return self._state.timezone

    @property
    def logdir(self) -> Path:
        """The log directory the store was ingested from."""
        return Path(self._state.logdir)

    @property
    def events(self) -> int:
        """Events the store holds."""
        return sum(self.event_rows)

    def files(self) -> pl.DataFrame:
        """``source`` id → ``file`` path as the loader names it, and its reading ``_rank``."""
        return _file_names(self._state)

    def named(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """``frame`` (with a ``source`` column) with each row's ``file`` and ``_rank``."""
        return _named(frame, self._state)

    def scan_events(self, parts: list[str] | None = None) -> pl.LazyFrame:
        """Stored events (of ``parts``, default all): the event frame's columns, ``source``
        (the file's id in the store), ``orig`` and ``_rank`` (the file's reading rank);
        rows unordered."""
        state = self._state
        if parts is not None:
            unknown = set(parts) - set(self.event_parts)
            if unknown:
                raise StoreError(f"not event parts of {self.path}: {sorted(unknown)}")
            keep = set(parts)
            state = _State(
                logdir=state.logdir,
                settings=state.settings,
                cursors=state.cursors,
                files=[f for f in state.files if f.path in keep],
                generation=state.generation,
            )
        return _events(self.path, state, None)

    def table(self, name: str) -> StoreTable:
        """The derived table ``name`` (no files and empty meta if it was never written)."""
        entries = sorted(
            (f for f in self._state.files if f.kind == TABLES_KIND and _table_of(f) == name),
            key=lambda f: f.path,
        )
        return StoreTable(
            name,
            tuple(f.path for f in entries),
            tuple(f.rows for f in entries),
            dict(self._state.tables.get(name, {})),
        )

    def scan_table(self, name: str) -> pl.LazyFrame | None:
        """The table's files as one LazyFrame (in the order written); None if it has none."""
        table = self.table(name)
        if not table.files:
            return None
        return pl.scan_parquet([polars_path(self.path / rel) for rel in table.files])


def _table_of(entry: FileEntry) -> str:
    return entry.path.split("/")[1] if entry.path.count("/") >= 2 else ""


def _snapshot(store: Path, state: _State) -> StoreSnapshot:
    events = sorted((f for f in state.files if f.kind == "events"), key=lambda f: f.path)
    return StoreSnapshot(
        store,
        state.generation,
        tuple(f.path for f in events),
        tuple(f.rows for f in events),
        state,
    )


def open_store(store: str | os.PathLike[str], *, verify: bool = False) -> StoreSnapshot:
    """The store's verified state, for reading (no lock: a later commit does not disturb it
    until files it lists are replaced, which a read then reports as a changed store).

    Parameters
    ----------
    store
        A history store.
    verify
        Hash every file, not only those whose size or time changed.

    Raises
    ------
    StoreError
        Not a store, or damaged (the message names the file and the repair).
    """
    root = Path(store).expanduser()
    return _snapshot(root, verified_state(root, full=verify))


class TableUpdate:
    """Changes to a store's derived tables, made under its lock (:func:`update_store`)."""

    def __init__(self, store: Path, state: _State) -> None:
        self.snapshot = _snapshot(store, state)
        self._store = store
        self._state = state
        self._files = {f.path: f for f in state.files}
        self._retired: list[FileEntry] = []
        self._counter = 0
        self._generation = next_generation(store, state)
        self._started = False

    def _start(self) -> None:
        if not self._started:
            # before the first file: an interrupted update's files are then known as its own
            write_journal(self._store, self._generation)
            self._started = True

    def write(self, name: str, frame: pl.DataFrame) -> str:
        """Add ``frame`` as a new file of table ``name``; returns its relative path."""
        if not _TABLE_RE.match(name):
            raise ValueError(f"table name {name!r}: lower case letters, digits and _ only")
        self._start()
        self._counter += 1
        rel = f"{TABLES_KIND}/{name}/part-{self._generation:08d}-{self._counter:05d}.parquet"
        self._files[rel] = _write_part(
            self._store, rel, frame, None, rows=frame.height, lines={}, crash="table-part"
        )
        return rel

    def table_files(self, name: str) -> list[str]:
        """Relative paths of table ``name``'s files as this update leaves them, in order."""
        return sorted(
            rel
            for rel, entry in self._files.items()
            if entry.kind == TABLES_KIND and _table_of(entry) == name
        )

    def drop(self, name: str) -> None:
        """Remove every file of table ``name`` and its meta (deleted once committed)."""
        for rel, entry in list(self._files.items()):
            if entry.kind == TABLES_KIND and _table_of(entry) == name:
                self._retired.append(self._files.pop(rel))
        self._state.tables.pop(name, None)

    def set_meta(self, name: str, meta: dict[str, Any]) -> None:
        """Record ``meta`` (JSON) with table ``name``."""
        self._state.tables[name] = dict(meta)

    def _commit(self) -> None:
        state = self._state
        state.files = list(self._files.values())
        state.retired = state.retired + self._retired
        state.generation = self._generation
        write_state(self._store, state)
        remove_retired(self._store, state)
        (self._store / _JOURNAL).unlink(missing_ok=True)


@contextlib.contextmanager
def update_store(store: str | os.PathLike[str]) -> Iterator[TableUpdate]:
    """Hold the store's lock and change its derived tables; committed when the block ends
    without an exception (one atomic state write), left as they were otherwise.

    The leftovers of an interrupted ingest or update are removed first, as an ingest does,
    and the store is checked whole: a damaged store is a :class:`StoreError`.

    Raises
    ------
    StoreError
        Not a store, busy (an ingest holds it), or damaged.
    """
    root = Path(store).expanduser()
    with locked(root):
        state = _recovered(root)
        update = TableUpdate(root, state)
        yield update
        update._commit()


def _recovered(store: Path) -> _State:
    state = read_state(store)
    recover(store, state)
    check(store, state)
    return state
