"""Incremental follow: appended bytes only, partial lines held back, rotation and truncation."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from a2a_lab.io import LogFollower


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def _ev(i: int) -> str:
    return f'{{"type":"a2a.send","ts":{1000 + i},"data":{{"message":"m{i}"}}}}\n'


def test_reads_only_appended_lines_and_holds_back_partial(tmp_path: Path) -> None:
    live = tmp_path / "coordination-events.ndjson"
    live.write_text(_ev(1) + _ev(2)[:10], encoding="utf-8")
    fol = LogFollower(tmp_path)
    first = fol.refresh()
    assert first.events["line"].to_list() == [1]
    assert fol.refresh().events.height == 0  # partial line still held back
    _append(live, _ev(2)[10:] + _ev(3))
    second = fol.refresh()
    assert second.events["line"].to_list() == [2, 3]
    assert second.events["data"].struct.field("message").to_list() == ["m2", "m3"]


def test_partial_multibyte_character_is_not_split(tmp_path: Path) -> None:
    live = tmp_path / "coordination-events.ndjson"
    line = '{"type":"a","data":{"message":"배포"}}\n'.encode()
    live.write_bytes(line[:33])
    fol = LogFollower(live)
    assert fol.refresh().events.height == 0
    with live.open("ab") as fh:
        fh.write(line[33:])
    res = fol.refresh()
    assert res.events["data"].struct.field("message").to_list() == ["배포"]
    assert res.report.issues.filter(pl.col("kind") == "invalid_utf8").height == 0


def test_rotation_by_rename_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    live = tmp_path / "coordination-events.ndjson"
    live.write_text(_ev(1), encoding="utf-8")
    fol = LogFollower(tmp_path)
    seen = fol.refresh().events["data"].struct.field("message").to_list()
    _append(live, _ev(2) + _ev(3)[:7])  # written before the rotation, last line unfinished
    os.rename(live, tmp_path / "coordination-events-2026-01.ndjson")
    live.write_text(_ev(4), encoding="utf-8")
    res = fol.refresh()
    seen += res.events["data"].struct.field("message").to_list()
    # the unfinished line of the old file is read as it stands (a reject), nothing else lost
    assert seen == ["m1", "m2", "m4"]
    assert res.report.rejects.height == 1
    _append(live, _ev(5))
    assert fol.refresh().events["data"].struct.field("message").to_list() == ["m5"]


def test_truncation_restarts_from_the_beginning(tmp_path: Path) -> None:
    live = tmp_path / "coordination-events.ndjson"
    live.write_text(_ev(1) + _ev(2), encoding="utf-8")
    fol = LogFollower(live)
    assert fol.refresh().events.height == 2
    live.write_text(_ev(9), encoding="utf-8")  # same inode, smaller
    res = fol.refresh()
    assert res.events["data"].struct.field("message").to_list() == ["m9"]
    assert res.events["line"].to_list() == [1]


def test_missing_live_file_yields_nothing_until_it_appears(tmp_path: Path) -> None:
    fol = LogFollower(tmp_path)
    assert fol.refresh().events.height == 0
    (tmp_path / "coordination-events.ndjson").write_text(_ev(1), encoding="utf-8")
    assert fol.refresh().events.height == 1
    fol.close()
