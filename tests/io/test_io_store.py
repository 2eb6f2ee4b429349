"""The history store: ingest incrementally, read back exactly what the log directory gives."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import io
import json
import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.cli import main
from a2a_lab.io import (
    StoreError,
    _store,
    export_store,
    ingest,
    is_store,
    load_store,
    scan_store,
    store_lines,
)
from tests.support.store_logs import LIVE, assert_same_load, generated_lines

ROTATED = [
    "coordination-events-2026-01-20T08-00-00-000Z.ndjson",
    "coordination-events-2026-01.ndjson",
    "coordination-events-2026-02-10T08-00-00-000Z.ndjson",
]


log_lines = generated_lines("log_lines", 4000, seed=7, bad_line_fraction=0.01)


def _write(path: Path, lines: list[bytes], gz: bool = False) -> None:
    data = b"".join(lines)
    if gz:
        with gzip.open(path.with_name(path.name + ".gz"), "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)


def _assert_same_as_directory(logdir: Path, store: Path) -> None:
    assert_same_load(al.load(logdir.absolute()), al.load(store))


def _rotated_dir(tmp_path: Path, lines: list[bytes], gz_second: bool = True) -> Path:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    q = len(lines) // 4
    for i, name in enumerate(ROTATED):
        _write(logdir / name, lines[i * q : (i + 1) * q], gz=gz_second and i == 1)
    _write(logdir / LIVE, lines[3 * q :])
    return logdir


def test_store_reads_back_what_the_directory_gives(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = _rotated_dir(tmp_path, log_lines)
    store = tmp_path / "store"
    report = ingest(logdir, store)
    assert is_store(store)
    assert report.lines == len(log_lines)
    assert report.events + report.rejects + report.blank == report.lines
    assert report.rejects == 40  # 1 % of 4000 lines are malformed by construction
    _assert_same_as_directory(logdir, store)
    again = ingest(logdir, store)
    assert (again.lines, again.events, again.parts_written) == (0, 0, 0)
    _assert_same_as_directory(logdir, store)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "command",
    [
        ["work-sessions", "--now-ms", "1771000000000", "--limit", "100000"],
        ["conversations"],
        ["events", "--limit", "100000"],
        ["load", "--json"],
        ["check", "--json"],
    ],
)
def test_every_command_gives_the_same_output_for_store_and_directory(
    tmp_path: Path, log_lines: list[bytes], capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    logdir = _rotated_dir(tmp_path, log_lines)
    store = tmp_path / "store"
    assert _cli(["ingest", str(logdir), str(store)], capsys)[0] == 0
    code_d, out_d, _ = _cli([command[0], str(logdir.absolute()), *command[1:]], capsys)
    code_s, out_s, _ = _cli([command[0], str(store), *command[1:]], capsys)
    assert code_d == code_s == 0
    assert out_d == out_s
    assert len(out_d) > 100


def test_incremental_ingest_with_appends_partial_lines_rotation_and_gzip(
    tmp_path: Path, log_lines: list[bytes]
) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    store = tmp_path / "store"
    live = logdir / LIVE
    live.write_bytes(b"".join(log_lines[:500]) + log_lines[500][:20])  # a partial last line waits
    first = ingest(logdir, store)
    assert first.lines == 500
    with live.open("ab") as fh:
        fh.write(log_lines[500][20:] + b"".join(log_lines[501:900]))
    assert ingest(logdir, store).lines == 400
    _assert_same_as_directory(logdir, store)
    # two rotations between ingests, the older rotated file then compressed
    with live.open("ab") as fh:
        fh.write(b"".join(log_lines[900:1000]))
    os.rename(live, logdir / ROTATED[0])
    _write(live, log_lines[1000:1500])
    os.rename(live, logdir / ROTATED[1])
    _write(live, log_lines[1500:1600])
    with gzip.open(logdir / (ROTATED[0] + ".gz"), "wb") as fh:
        fh.write((logdir / ROTATED[0]).read_bytes())
    (logdir / ROTATED[0]).unlink()
    third = ingest(logdir, store)
    assert third.lines == 700
    _assert_same_as_directory(logdir, store)
    assert store_lines(store).height == 1600
    assert store_lines(store)["bytes"].to_list() == [
        line.rstrip(b"\n") for line in log_lines[:1600]
    ]


def test_export_writes_every_line_back_byte_for_byte(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    rotated = (
        b'{"type":"a2a.send","ts":1,"data":{"message":"caf\xc3\xa9"}}\r\n'
        b"  \t \n"
        b'   {"type":"a2a.send","ts":2}  \n'
        b'{"type":"a2a.send","ts":3,"data":{"message":"bad \xff byte"}}\n'
        b"not json at all\n"
        b"\n"
        b'{"type":"a2a.send","ts":4}'  # a rotated file's last line without newline
    )
    live = b'\xef\xbb\xbf{"type":"a2a.response","ts":5}\n[1,2]\n{"type":"x","ts":6,"data":{"turn":1e400}}\n'
    (logdir / ROTATED[1]).write_bytes(rotated)
    (logdir / LIVE).write_bytes(live)
    store = tmp_path / "store"
    ingest(logdir, store)
    _assert_same_as_directory(logdir, store)
    out = export_store(store, tmp_path / "out")
    assert [p.name for p in out] == [ROTATED[1], LIVE]
    assert out[0].read_bytes() == rotated
    assert out[1].read_bytes() == live
    kinds = store_lines(store)["kind"].to_list()
    assert kinds == [
        "event",
        "blank",
        "event",
        "event",
        "reject",
        "blank",
        "event",
        "event",
        "reject",
        "event",
    ]


def test_interrupted_ingest_leaves_the_store_as_it_was(
    tmp_path: Path, log_lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    store = tmp_path / "store"
    _write(logdir / LIVE, log_lines[:1000])
    ingest(logdir, store)
    before = load_store(store).events
    state_before = (store / _store.STATE_NAME).read_bytes()
    with (logdir / LIVE).open("ab") as fh:
        fh.write(b"".join(log_lines[1000:2000]))

    def crash(store: Path, state: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_store, "write_state", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(logdir, store)
    monkeypatch.undo()
    assert (store / _store.STATE_NAME).read_bytes() == state_before
    assert_frame_equal(load_store(store).events, before)
    # the next ingest removes the leftovers and adds the lines exactly once
    assert ingest(logdir, store).lines == 1000
    _assert_same_as_directory(logdir, store)
    listed = {f["path"] for f in json.loads((store / _store.STATE_NAME).read_text())["files"]}
    on_disk = {p.relative_to(store).as_posix() for p in store.rglob("*.parquet")}
    assert on_disk == listed


def test_compaction_bounds_the_files_of_a_partition(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    store = tmp_path / "store"
    live = logdir / LIVE
    live.write_bytes(b"")
    for i in range(0, 600, 20):  # 30 small ingests
        with live.open("ab") as fh:
            fh.write(b"".join(log_lines[i : i + 20]))
        ingest(logdir, store)
        parts = [f["path"] for f in json.loads((store / _store.STATE_NAME).read_text())["files"]]
        per_partition: dict[str, int] = {}
        for rel in parts:
            per_partition[rel.rsplit("/", 1)[0]] = per_partition.get(rel.rsplit("/", 1)[0], 0) + 1
        assert max(per_partition.values()) <= _store.MAX_SMALL
    _assert_same_as_directory(logdir, store)
    assert len(list(store.rglob("*.parquet"))) == len(parts)


def test_compaction_merges_bounded_groups_whatever_the_density(
    tmp_path: Path, log_lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a dense month: every ingest lands in one partition; no merge may hold the month
    from a2a_lab.io import _store_write

    monkeypatch.setattr(_store_write, "SEAL_ROWS", 50)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    store = tmp_path / "store"
    live = logdir / LIVE
    live.write_bytes(b"")
    for i in range(0, 600, 20):  # 30 ingests of 20 lines
        with live.open("ab") as fh:
            fh.write(b"".join(log_lines[i : i + 20]))
        ingest(logdir, store)
        files = json.loads((store / _store.STATE_NAME).read_text())["files"]
        events = [f for f in files if f["kind"] == "events"]
        by_partition: dict[str, list[int]] = {}
        for f in events:
            by_partition.setdefault(f["path"].rsplit("/", 1)[0], []).append(f["rows"])
        for rows in by_partition.values():
            assert sum(r < 50 for r in rows) <= _store.MAX_SMALL
            assert max(rows) < 2 * 50  # a merge holds fewer than twice SEAL_ROWS rows
    assert len(events) > 1  # the month is split, not one part
    _assert_same_as_directory(logdir, store)


@pytest.mark.parametrize(
    ("rows", "groups"),
    [
        ([], []),
        ([10] * 3, [[0, 1, 2]]),
        ([30, 30, 10, 49, 49, 1], [[0, 1], [2, 3], [4, 5]]),
        ([49, 1, 49], [[0, 1], [2]]),
    ],
)
def test_compaction_groups_seal_all_but_the_last(
    monkeypatch: pytest.MonkeyPatch, rows: list[int], groups: list[list[int]]
) -> None:
    from a2a_lab.io import _store_write

    monkeypatch.setattr(_store_write, "SEAL_ROWS", 50)
    got = _store_write.compaction_groups([(str(i), n) for i, n in enumerate(rows)])
    assert got == [[str(i) for i in g] for g in groups if len(g) > 1]
    for g in got[:-1]:
        assert 50 <= sum(rows[int(p)] for p in g) < 100


def test_a_busy_store_is_refused(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    _write(logdir / LIVE, log_lines[:10])
    store = tmp_path / "store"
    ingest(logdir, store)
    with (store / ".lock").open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        with pytest.raises(StoreError, match="busy"):
            ingest(logdir, store)


def test_invalid_use_fails_at_once_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    (logdir / LIVE).write_text('{"type":"a","ts":1}\n')
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("mine")
    with pytest.raises(StoreError, match="^store:"):
        ingest(logdir, other)
    with pytest.raises(StoreError, match="^logdir:"):
        ingest(tmp_path / "missing", tmp_path / "s")
    ingest(logdir, tmp_path / "s")
    with pytest.raises(StoreError, match="^timezone:"):
        ingest(logdir, tmp_path / "s", tz="Asia/Seoul")
    with pytest.raises(StoreError, match="^logdir:"):
        ingest(other, tmp_path / "s")
    for argv in (
        ["ingest", str(logdir), str(other)],
        ["ingest", str(logdir), str(logdir)],
        ["ingest", str(logdir), str(tmp_path / "t"), "--tz", "Mars/Olympus"],
    ):
        code, out, err = _cli(argv, capsys)
        assert code == 2 and out == ""
        assert err.startswith("a2a-lab: error: ") and err.count("\n") == 1


def test_timezone_of_the_store_and_on_load(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    (logdir / LIVE).write_text(
        '{"type":"a","timestamp":"2026-02-01T09:00:00"}\n{"type":"b","ts":5}\n'
    )
    store = tmp_path / "store"
    ingest(logdir, store, tz="Asia/Seoul")
    seoul = al.load(logdir.absolute(), tz="Asia/Seoul").events
    assert_frame_equal(load_store(store).events, seoul)  # the store's own zone
    assert_frame_equal(al.load(store, tz="Asia/Seoul").events, seoul)
    utc = al.load(logdir.absolute()).events
    assert_frame_equal(al.load(store).events, utc)  # al.load's zone, as for the directory
    assert utc["event_ms"].to_list() != seoul["event_ms"].to_list()


def test_scan_store_is_lazy_and_projects(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = _rotated_dir(tmp_path, log_lines, gz_second=False)
    store = tmp_path / "store"
    ingest(logdir, store)
    lazy = scan_store(store)
    assert isinstance(lazy, pl.LazyFrame)
    plan = lazy.select("type").explain()
    assert "raw" not in plan.split("PROJECT")[-1] or "project" in plan.lower()
    assert_frame_equal(
        lazy.select("file", "line", "type").collect(),
        al.load(logdir.absolute(), sort=False).events.select("file", "line", "type"),
    )


def test_follower_feeds_a_store(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = tmp_path / "later" / "logs"
    store = tmp_path / "store"
    fol = al.LogFollower(logdir, store=store)
    assert fol.refresh().events.height == 0  # the directory does not exist yet
    logdir.mkdir(parents=True)
    _write(logdir / LIVE, log_lines[:100])
    got = fol.refresh()
    assert got.report.total_lines == 100
    with (logdir / LIVE).open("ab") as fh:
        fh.write(b"".join(log_lines[100:150]))
    assert fol.refresh().report.total_lines == 50
    assert ingest(logdir, store).lines == 0  # a cron ingest shares the follower's record
    _assert_same_as_directory(logdir, store)


def test_a_damaged_gzip_yields_its_readable_lines(tmp_path: Path, log_lines: list[bytes]) -> None:
    logdir = tmp_path / "logs"
    logdir.mkdir()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as fh:
        fh.write(b"".join(log_lines[:1000]))
    (logdir / (ROTATED[0] + ".gz")).write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    _write(logdir / LIVE, log_lines[1000:1010])
    store = tmp_path / "store"
    with contextlib.suppress(Exception):
        pass
    report = ingest(logdir, store)
    assert report.damaged == [str((logdir / (ROTATED[0] + ".gz")).absolute())]
    got = store_lines(store)["bytes"].to_list()
    assert 0 < len(got) - 10 < 1000
    assert got == [line.rstrip(b"\n") for line in log_lines[: len(got) - 10]] + [
        line.rstrip(b"\n") for line in log_lines[1000:1010]
    ]
    # the whole file arrives (a gzip that was still writing): the rest is read, once
    (logdir / (ROTATED[0] + ".gz")).write_bytes(buf.getvalue())
    assert ingest(logdir, store).damaged == []
    assert store_lines(store)["bytes"].to_list() == [
        line.rstrip(b"\n") for line in log_lines[:1010]
    ]
