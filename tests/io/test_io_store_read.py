"""Reading a history store lean (issue 12): noted data fields, lazy scans, CLI on a STORE."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.cli import main
from a2a_lab.io import _store, ingest, scan_store
from a2a_lab.io._store_state import read_state, sealed, sha256_of
from a2a_lab.schema import polars_schema
from tests.support.store_logs import LIVE, generated_lines

OLDER = "coordination-events-2026-01-20T08-00-00-000Z.ndjson"


lines = generated_lines("lines", 3000, seed=11, bad_line_fraction=0.01)


def _store_of(tmp_path: Path, lines: list[bytes]) -> tuple[Path, Path]:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    half = len(lines) // 2
    (logdir / OLDER).write_bytes(b"".join(lines[:half]))
    (logdir / LIVE).write_bytes(b"".join(lines[half:]))
    store = tmp_path / "store"
    ingest(logdir, store)
    return logdir, store


def _event_parts(store: Path) -> list[Path]:
    state = json.loads((store / _store.STATE_NAME).read_text())
    return [
        store / f["path"]
        for f in sorted(state["files"], key=lambda f: f["path"])
        if f["kind"] == "events"
    ]


def test_every_part_notes_exactly_the_data_fields_it_holds(
    tmp_path: Path, lines: list[bytes]
) -> None:
    _, store = _store_of(tmp_path, lines)
    parts = _event_parts(store)
    assert parts
    for part in parts:
        data = pl.read_parquet(part, columns=["data"]).get_column("data").struct.unnest()
        held = {c for c in data.columns if data.get_column(c).is_not_null().any()}
        noted = json.loads(pl.read_parquet_metadata(part)[_store.DATA_FIELDS_KEY])
        assert set(noted) == held
        assert 0 < len(held) < len(data.columns)  # most of the 63 fields are unused


def _reseal(store: Path) -> None:
    """Record rewritten parts in the state (as if the store had written them so): a part
    changed behind the state's back is damage (tests/io/test_io_store_integrity.py)."""
    path = store / _store.STATE_NAME
    state = json.loads(path.read_text())
    for f in state["files"]:
        st = (store / f["path"]).stat()
        f.update(bytes=st.st_size, mtime_ns=st.st_mtime_ns, sha256=sha256_of(store / f["path"]))
    path.write_text(json.dumps(sealed(state)))


def test_the_scan_decodes_only_the_noted_fields(tmp_path: Path, lines: list[bytes]) -> None:
    """A part whose note leaves a field out reads it as null: the note decides what is read."""
    logdir, store = _store_of(tmp_path, lines)
    full = al.load(logdir.absolute(), sort=False).events
    assert full.get_column("data").struct.field("message").is_not_null().any()
    for part in _event_parts(store):
        frame = pl.read_parquet(part)
        noted = json.loads(pl.read_parquet_metadata(part)[_store.DATA_FIELDS_KEY])
        frame.write_parquet(
            part,
            metadata={_store.DATA_FIELDS_KEY: json.dumps([f for f in noted if f != "message"])},
        )
    _reseal(store)
    scanned = scan_store(store).collect()
    # the frame keeps the full dtype, every other value is read
    assert scanned.schema == polars_schema(raw=False)
    assert scanned.get_column("data").struct.field("message").is_null().all()
    drop_message = pl.col("data").struct.with_fields(pl.lit(None, pl.String).alias("message"))
    assert_frame_equal(scanned, full.with_columns(drop_message))


def test_parts_written_without_the_note_are_read_whole(tmp_path: Path, lines: list[bytes]) -> None:
    logdir, store = _store_of(tmp_path, lines)
    for part in _event_parts(store):
        pl.read_parquet(part).write_parquet(part)  # as an ingest before the note wrote it
        assert _store.DATA_FIELDS_KEY not in pl.read_parquet_metadata(part)
    _reseal(store)
    assert_frame_equal(al.load(store).events, al.load(logdir.absolute()).events)


def test_al_scan_of_a_store_is_a_parquet_scan_without_raw(
    tmp_path: Path, lines: list[bytes]
) -> None:
    logdir, store = _store_of(tmp_path, lines)
    lazy = al.scan(store)
    assert isinstance(lazy, pl.LazyFrame)
    assert "raw" not in lazy.collect_schema()
    assert "PARQUET SCAN" in lazy.select("type").explain().upper()
    loaded = al.load(logdir.absolute(), sort=False)
    assert_frame_equal(lazy.collect(), loaded.events)
    with_raw = al.scan(store, raw=True).select("file", "line", "raw").collect()
    assert_frame_equal(
        with_raw,
        al.load(logdir.absolute(), sort=False, raw=True).events.select("file", "line", "raw"),
    )
    # a filter reaches the reader and gives what filtering the loaded frame gives
    sends = lazy.filter(pl.col("type") == "a2a.send").select("file", "line").collect()
    assert_frame_equal(
        sends, loaded.events.filter(pl.col("type") == "a2a.send").select("file", "line")
    )


def test_parts_out_of_reading_order_are_sorted(tmp_path: Path, lines: list[bytes]) -> None:
    """An older rotated file ingested after the live one: its parts come later on disk."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    half = len(lines) // 2
    (logdir / LIVE).write_bytes(b"".join(lines[half:]))
    store = tmp_path / "store"
    ingest(logdir, store)
    (logdir / OLDER).write_bytes(b"".join(lines[:half]))
    ingest(logdir, store)
    assert not _in_order(store)
    expected = al.load(logdir.absolute(), sort=False).events
    assert_frame_equal(scan_store(store).collect(), expected)
    assert_frame_equal(al.load(store).events, al.load(logdir.absolute()).events)


def _in_order(store: Path) -> bool:
    from a2a_lab.io._store_read import _in_reading_order

    return _in_reading_order(store, read_state(store))


def test_graph_of_a_store_is_the_directory_graph(
    tmp_path: Path, lines: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    logdir, store = _store_of(tmp_path, lines)
    out_d, out_s = tmp_path / "d.json", tmp_path / "s.json"
    assert main(["graph", str(logdir.absolute()), "-o", str(out_d)]) == 0
    assert main(["graph", str(store), "-o", str(out_s)]) == 0
    capsys.readouterr()
    assert out_d.read_text() == out_s.read_text()
    assert len(json.loads(out_d.read_text())["nodes"]) > 1
