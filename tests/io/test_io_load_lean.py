"""The lean loader (issue 12 item 1): chunking, column-wise sort and concat, the quick key check."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import a2a_lab.io._load as load_module
from a2a_lab.io import load
from a2a_lab.io._decode import decode_chunk, decode_text
from a2a_lab.samples import write_log


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lean") / "log.ndjson"
    write_log(path, 3_000, seed=5, bad_line_fraction=0.01)
    return path


def _shuffled(src: Path, dst: Path, seed: int) -> Path:
    """The same lines in another order (so the load must sort), with a line without data."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    lines.insert(len(lines) // 2, '{"type":"task.started","ts":1}\n')
    dst.write_text("".join(lines), encoding="utf-8")
    return dst


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [4096, 65_536])
def test_small_chunks_give_the_one_chunk_frame(
    generated: Path, tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _shuffled(generated, tmp_path / "shuffled.ndjson", seed=chunk)
    whole = load(path)
    assert whole.report.rejects.height > 0  # the exact path had lines to decide
    monkeypatch.setattr(load_module, "CHUNK_BYTES", chunk)
    chunked = load(path)
    assert_frame_equal(chunked.events, whole.events)
    assert chunked.report.summary() == whole.report.summary()
    assert_frame_equal(chunked.report.issues, whole.report.issues)
    # the column-wise sort is the stable sort of the unsorted frame
    unsorted = load(path, sort=False).events
    assert not unsorted["event_ms"].is_sorted()
    assert_frame_equal(chunked.events, unsorted.sort("event_ms", maintain_order=True))
    # the line without data keeps a null struct; fields no line carries are null
    no_data = chunked.events.filter(pl.col("data").is_null())
    assert no_data["type"].to_list() == ["task.started"]
    assert chunked.events["data"].struct.field("label").null_count() == chunked.events.height


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        # whitespace before the colon: the literal `":` count misses the key
        ('{"type":"a","data":{"turn" :"x","fromAgent":"r"}}', {"turn": None, "fromAgent": "r"}),
        ('{"type":"a","data":{"turn"\t:"x"}}', {"turn": None}),
        # an escaped key Polars decodes as a declared one, written twice: the last wins
        ('{"type":"a","data":{"fromAgent":"a","from\\u0041gent":"b"}}', {"fromAgent": "b"}),
        # duplicate with an extra `":` inside a string value
        ('{"type":"a","data":{"message":"k\\":v","message":"z"}}', {"message": "z"}),
        # a declared key outside the lean schema, once
        ('{"type":"a","data":{"label":"L"}}', {"label": "L"}),
    ],
)
def test_quick_key_check_never_clears_a_line_the_exact_path_decides_otherwise(
    line: str, fields: dict[str, object]
) -> None:
    text = line + "\n"
    fast, exact = decode_text(text), decode_text(text, exact=True)
    assert_frame_equal(fast.events, exact.events)
    assert_frame_equal(fast.issues, exact.issues)
    got = fast.events["data"].struct.unnest().row(0, named=True)
    assert {k: got[k] for k in fields} == fields
    assert json.loads(line)["type"] == fast.events["type"][0]


@pytest.mark.parametrize(
    "content",
    [
        b"\x1f\x8b\x00\x00",
        gzip.compress(b'{"type":"a"}\n', mtime=0),
        b'\x28\xb5\x2f\xfd\n{"type":"a"}\n',
    ],
)
def test_bytes_that_start_like_compressed_data_are_lines(content: bytes) -> None:
    """Polars' line reader decompresses gzip/zstd-looking bytes (or fails on a bad header);
    a chunk is text, so such bytes are lines like any others."""
    dec = decode_chunk(content)
    assert dec.lines == content.count(b"\n") + (not content.endswith(b"\n"))
    assert dec.events.height + dec.rejects.height + dec.blank == dec.lines
    assert dec.rejects["line"].to_list()[:1] == [1]
