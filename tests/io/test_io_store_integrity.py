"""A store that proves its integrity (issue 27 item 2): damage is a clear error naming the
file, ``ingest --repair`` gets back to what a clean ingest gives, an ingest killed at any
point is recovered by the next one, the lock says busy and is taken over from the dead,
and no ingest deletes a file it did not write.

The crash campaign kills real ingest processes with SIGKILL at deterministic points: the
ingest code passes named points (``crash_point`` in ``a2a_lab.io._store_state``) and the
environment variable ``A2A_LAB_STORE_CRASH=point:n`` makes the n-th pass kill the process
(as ``kill -9`` would). Deterministic points reach the narrow windows (between a part's
temporary file and its rename, between the state's commit and the deletion of the parts
compaction replaced) that random delays rarely hit; a few kills at random delays are added
on top.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from a2a_lab.cli import main
from a2a_lab.io import StoreError, ingest, load_store, store_lines
from a2a_lab.io._store_state import CRASH_ENV, JOURNAL_NAME, LOCK_NAME, STATE_NAME, sealed
from tests.support.paths import ROOT
from tests.support.store_logs import LIVE, assert_same_load, generated_lines

#: Files no ingest writes, planted in the store: they must survive everything.
FOREIGN = [
    "events/README.txt",
    "notes/keep.me",
    "events/month=2026-01/part-x.parquet",
    "materialized/keep.me",
]


lines = generated_lines("lines", 700, seed=5, bad_line_fraction=0.02)


def _rotated_name(day: int) -> str:
    return f"coordination-events-2026-01-{day:02d}T08-00-00-000Z.ndjson"


def _logdir(root: Path, lines: list[bytes], n_rotated: int = 10) -> Path:
    """The first half of ``lines`` as rotated files (one gzipped) and a live file: many
    pieces, so that an ingest writes many parts and compaction runs."""
    logdir = root / "logs"
    logdir.mkdir(parents=True)
    first = lines[: len(lines) // 2]
    per = len(first) // (n_rotated + 1)
    for i in range(n_rotated):
        data = b"".join(first[i * per : (i + 1) * per])
        if i == 1:
            (logdir / (_rotated_name(i + 1) + ".gz")).write_bytes(gzip.compress(data))
        else:
            (logdir / _rotated_name(i + 1)).write_bytes(data)
    (logdir / LIVE).write_bytes(b"".join(first[n_rotated * per :]))
    return logdir


def _logdir_and_store(root: Path, lines: list[bytes], n_rotated: int = 10) -> tuple[Path, Path]:
    """:func:`_logdir` under ``root``, and the path of a store beside it (not created)."""
    return _logdir(root, lines, n_rotated), root / "store"


def _grow(logdir: Path, lines: list[bytes], n_rotations: int = 8) -> None:
    """What happens between two ingests, with the second half of ``lines``: appends to the
    live file and rotations."""
    second = lines[len(lines) // 2 :]
    per = len(second) // (n_rotations + 1)
    for i in range(n_rotations):
        with (logdir / LIVE).open("ab") as fh:
            fh.write(b"".join(second[i * per : (i + 1) * per]))
        os.rename(logdir / LIVE, logdir / _rotated_name(20 + i))
        (logdir / LIVE).write_bytes(b"")
    with (logdir / LIVE).open("ab") as fh:
        fh.write(b"".join(second[n_rotations * per :]))


def _assert_same_store(expected: Path, store: Path) -> None:
    assert_same_load(load_store(expected), load_store(store))
    assert_frame_equal(store_lines(expected), store_lines(store))


def _plant(store: Path) -> dict[str, bytes]:
    planted = {}
    for rel in FOREIGN:
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        data = f"not written by an ingest: {rel}".encode()
        (store / rel).write_bytes(data)
        planted[rel] = data
    return planted


def _assert_planted(store: Path, planted: dict[str, bytes]) -> None:
    for rel, data in planted.items():
        assert (store / rel).read_bytes() == data, f"{rel} was deleted or changed"


def _snapshot(store: Path) -> dict[str, bytes]:
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in store.rglob("*")
        if p.is_file() and p.name != LOCK_NAME
    }


def _assert_nothing_lost(
    before: dict[str, bytes], store: Path, written: dict[str, bytes] | None = None
) -> None:
    """Every file present before is still there, or was moved whole to damaged/, or is a
    part exactly as an ingest wrote it (``written``), which compaction may replace.

    The state file is the ingest's own and is rewritten; it is not compared.
    """
    for rel, data in before.items():
        if rel == STATE_NAME:
            continue
        here = store / rel
        aside = store / "damaged" / rel
        kept = (here.is_file() and here.read_bytes() == data) or (
            aside.is_file() and aside.read_bytes() == data
        )
        assert kept or (written or {}).get(rel) == data, f"{rel} was deleted"


# ---------------------------------------------------------------------------------------
# damage: parts, state, lock
# ---------------------------------------------------------------------------------------


def _state(store: Path) -> dict[str, object]:
    return json.loads((store / STATE_NAME).read_text())  # type: ignore[no-any-return]


def _put_state(store: Path, obj: object) -> None:
    (store / STATE_NAME).write_text(json.dumps(obj))


def _paths(store: Path, kind: str) -> list[str]:
    return [f["path"] for f in _state(store)["files"] if f["kind"] == kind]  # type: ignore[attr-defined]


def _first_part(store: Path, kind: str = "events") -> Path:
    return store / _paths(store, kind)[0]


def _fewer_rows(store: Path) -> None:
    p = _first_part(store)
    frame = pl.read_parquet(p)
    frame.head(frame.height - 7).write_parquet(p)


def _same_rows_other_values(store: Path) -> None:
    p = _first_part(store)
    frame = pl.read_parquet(p)
    frame.with_columns(pl.lit("tampered").alias("type")).write_parquet(p)


def _flip_middle(store: Path) -> None:
    p = _first_part(store)
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


def _flip_keeping_time(store: Path) -> None:
    """Bit rot: a byte changes, size and modification time do not."""
    p = _first_part(store)
    st = p.stat()
    data = bytearray(p.read_bytes())
    data[len(data) // 3] ^= 0x01
    p.write_bytes(bytes(data))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def _flip_footer(store: Path) -> None:
    p = _first_part(store)
    data = bytearray(p.read_bytes())
    data[-20] ^= 0xFF
    p.write_bytes(bytes(data))


def _truncate(fraction: float, kind: str = "events") -> Callable[[Path], None]:
    def damage(store: Path) -> None:
        p = _first_part(store, kind)
        data = p.read_bytes()
        p.write_bytes(data[: int(len(data) * fraction)])

    return damage


def _delete(kind: str) -> Callable[[Path], None]:
    def damage(store: Path) -> None:
        _first_part(store, kind).unlink()

    return damage


def _swap(store: Path) -> None:
    a, b = (store / p for p in _paths(store, "events")[:2])
    tmp = a.with_name("swap")
    os.rename(a, tmp)
    os.rename(b, a)
    os.rename(tmp, b)


def _copy_unlisted(store: Path) -> None:
    p = _first_part(store)
    shutil.copy2(p, p.with_name("part-00000001-09999.parquet"))


def _drop_entry(store: Path) -> None:
    st = _state(store)
    st["files"] = st["files"][1:]  # type: ignore[index]
    _put_state(store, st)


def _edit_state(edit: Callable[[dict], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def damage(store: Path) -> None:
        st = _state(store)
        edit(st)
        _put_state(store, st)

    return damage


def _edit_resealed(edit: Callable[[dict], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    """An edit that also recomputes the state's seal: the deeper checks must catch it."""

    def damage(store: Path) -> None:
        st = _state(store)
        edit(st)
        _put_state(store, sealed(st))

    return damage


def _drop_first_file(st: dict) -> None:  # type: ignore[type-arg]
    st["files"] = st["files"][1:]


def _write_state_text(text: str) -> Callable[[Path], None]:
    def damage(store: Path) -> None:
        (store / STATE_NAME).write_text(text)

    return damage


def _truncate_state(store: Path) -> None:
    data = (store / STATE_NAME).read_bytes()
    (store / STATE_NAME).write_bytes(data[: len(data) // 2])


def _no_state(store: Path) -> None:
    (store / STATE_NAME).unlink()


def _no_state_and_a_part(store: Path) -> None:
    _first_part(store).unlink()
    (store / STATE_NAME).unlink()


def _cursor_lines_plus(store: Path) -> None:
    st = _state(store)
    st["cursors"][0]["lines"] += 5  # type: ignore[index]
    _put_state(store, st)


def _set(key: str, value: object) -> Callable[[dict], None]:  # type: ignore[type-arg]
    def edit(st: dict) -> None:  # type: ignore[type-arg]
        st[key] = value

    return edit


def _drop_cursor(st: dict) -> None:  # type: ignore[type-arg]
    st["cursors"] = st["cursors"][1:]


def _bad_cursor_type(st: dict) -> None:  # type: ignore[type-arg]
    st["cursors"][0]["offset"] = "abc"


def _bad_sha(st: dict) -> None:  # type: ignore[type-arg]
    st["files"][0]["sha256"] = "0" * 64


def _escape_path(st: dict) -> None:  # type: ignore[type-arg]
    st["files"][0]["path"] = "../../etc/passwd"


#: name -> damage; every one must make reads fail naming a file, and --repair restore it
DAMAGE: dict[str, Callable[[Path], None]] = {
    "part deleted": _delete("events"),
    "notes part deleted": _delete("notes"),
    "part truncated to half": _truncate(0.5),
    "part truncated to 0 bytes": _truncate(0.0),
    "notes part truncated": _truncate(0.7, "notes"),
    "byte flipped in a part": _flip_middle,
    "byte flipped in a footer": _flip_footer,
    "part replaced by fewer rows": _fewer_rows,
    "part replaced by other values": _same_rows_other_values,
    "two parts swapped": _swap,
    "unlisted copy of a part": _copy_unlisted,
    "part dropped from the state": _drop_entry,
    "state deleted": _no_state,
    "state deleted and a part deleted": _no_state_and_a_part,
    "state truncated": _truncate_state,
    "state empty": _write_state_text(""),
    "state not an object": _write_state_text("[1, 2]"),
    "state files key removed": _edit_state(lambda st: st.pop("files")),
    "state files not a list": _edit_state(_set("files", "x")),
    "state cursor removed": _edit_state(_drop_cursor),
    "state cursor of the wrong type": _edit_state(_bad_cursor_type),
    "state cursor lines changed": _cursor_lines_plus,
    "state checksum changed": _edit_state(_bad_sha),
    "state path outside the store": _edit_state(_escape_path),
    "state format changed": _edit_state(_set("format", "other")),
    "part dropped from a resealed state": _edit_resealed(_drop_first_file),
    "checksum changed in a resealed state": _edit_resealed(_bad_sha),
    "byte flipped keeping size and time": _flip_keeping_time,
}
#: Damage a read cannot see (it hashes only files whose size or time changed): found by
#: ``ingest --verify``, which hashes every part
FULL_CHECK_ONLY = {"checksum changed in a resealed state", "byte flipped keeping size and time"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> tuple[Path, Path]:
    """A log directory and its clean store, after a first and an incremental ingest."""
    root = tmp_path_factory.mktemp("built")
    logdir = _logdir(root, lines)
    clean = root / "clean"
    ingest(logdir, clean)
    _grow(logdir, lines)
    ingest(logdir, clean)
    return logdir, clean


def test_damage_cases_are_at_least_twenty_and_the_lock_cases_below_add_more() -> None:
    assert len(DAMAGE) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damage_is_a_clear_error_and_repair_restores_a_clean_ingest(
    tmp_path: Path,
    built: tuple[Path, Path],
    case: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    logdir, clean = built
    store = tmp_path / "store"
    shutil.copytree(clean, store, copy_function=shutil.copy2)
    planted = _plant(store)
    DAMAGE[case](store)
    before = _snapshot(store)
    full = case in FULL_CHECK_ONLY
    if not full:
        with pytest.raises(StoreError, match=r"store damaged: .*repair: a2a-lab ingest --repair"):
            load_store(store)
    # an ingest refuses, deletes nothing and writes no state
    with pytest.raises(StoreError, match="store damaged: .*repair: a2a-lab ingest --repair"):
        ingest(logdir, store, verify=full)
    assert _snapshot(store) == before
    # the CLI says it in one line, and --repair (the documented repair) gets back
    code = main(["ingest", str(logdir), str(store), "--verify"] if full else ["load", str(store)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("a2a-lab: error: store damaged") and err.count("\n") == 1
    code = main(["ingest", str(logdir), str(store), "--repair", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    _assert_same_store(clean, store)
    _assert_nothing_lost(before, store, _snapshot(clean))
    _assert_planted(store, planted)
    ingest(logdir, store, verify=True)  # whole again: every checksum agrees
    _assert_same_store(clean, store)


def test_lines_no_file_holds_any_more_are_a_clear_repair_error(
    tmp_path: Path, lines: list[bytes]
) -> None:
    logdir, store = _logdir_and_store(tmp_path, lines, n_rotated=2)
    ingest(logdir, store)
    _delete("events")(store)
    for p in logdir.iterdir():  # the log's files rotated away and deleted
        p.unlink()
    with pytest.raises(StoreError, match=r"repair: lines \d+-\d+ of .* restore that file"):
        ingest(logdir, store, repair=True)


def test_repair_of_a_whole_store_changes_nothing(tmp_path: Path, built: tuple[Path, Path]) -> None:
    logdir, clean = built
    store = tmp_path / "store"
    shutil.copytree(clean, store, copy_function=shutil.copy2)
    report = ingest(logdir, store, repair=True)
    assert "repair: the store was whole" in report.recovered
    _assert_same_store(clean, store)


def test_a_copied_store_is_checked_by_content(tmp_path: Path, built: tuple[Path, Path]) -> None:
    """Times change on a copy: the checksums decide, and the copy loads."""
    _, clean = built
    store = tmp_path / "store"
    shutil.copytree(clean, store)  # new modification times
    _assert_same_store(clean, store)


def test_a_version_1_state_is_read_and_upgraded(tmp_path: Path, built: tuple[Path, Path]) -> None:
    logdir, clean = built
    store = tmp_path / "store"
    shutil.copytree(clean, store, copy_function=shutil.copy2)
    st = _state(store)
    files = st.pop("files")
    st.pop("retired")
    st["version"] = 1
    st["parts"] = {f["path"]: f["rows"] for f in files}  # type: ignore[attr-defined]
    st.pop("seal")
    _put_state(store, st)
    _assert_same_store(clean, store)
    ingest(logdir, store)
    assert _state(store)["version"] == 2
    assert all(f["sha256"] for f in _state(store)["files"])  # type: ignore[attr-defined]
    _assert_same_store(clean, store)


# --- the lock -------------------------------------------------------------------------


def test_a_busy_store_says_busy_even_before_its_first_state(
    tmp_path: Path, lines: list[bytes]
) -> None:
    logdir, store = _logdir_and_store(tmp_path, lines, n_rotated=1)
    store.mkdir()
    with (store / LOCK_NAME).open("a") as fh:  # a first ingest holding its lock
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        fh.write(json.dumps({"pid": 4242, "host": "h", "started": 1.0}))
        fh.flush()
        with pytest.raises(StoreError, match=r"^store is busy: ingest pid 4242"):
            ingest(logdir, store)
    ingest(logdir, store)


@pytest.mark.parametrize(
    "content",
    [b'{"pid": 999999999, "host": "gone", "started": 1}', b"\x00garbage\xff", b""],
    ids=["dead pid", "garbage", "empty"],
)
def test_a_lock_left_by_a_dead_holder_is_taken_over(
    tmp_path: Path, lines: list[bytes], content: bytes
) -> None:
    logdir, store = _logdir_and_store(tmp_path, lines, n_rotated=1)
    store.mkdir()
    (store / LOCK_NAME).write_bytes(content)
    report = ingest(logdir, store)
    assert report.events > 0
    assert any("took over the lock" in n for n in report.recovered) == bool(content)
    assert (store / LOCK_NAME).read_bytes() == b""  # a clean exit leaves it empty


def test_a_lock_that_is_a_directory_is_a_clear_error(tmp_path: Path, lines: list[bytes]) -> None:
    logdir, store = _logdir_and_store(tmp_path, lines, n_rotated=1)
    (store / LOCK_NAME).mkdir(parents=True)
    with pytest.raises(StoreError, match=r"^lock: cannot open .*\.lock"):
        ingest(logdir, store)
    (store / LOCK_NAME).rmdir()  # the documented repair: remove it
    ingest(logdir, store)


def test_a_damaged_journal_deletes_nothing(tmp_path: Path, built: tuple[Path, Path]) -> None:
    logdir, clean = built
    store = tmp_path / "store"
    shutil.copytree(clean, store, copy_function=shutil.copy2)
    gen = _state(store)["generation"]
    leftover = store / "notes" / f"part-{gen + 1:08d}-00001.parquet"  # type: ignore[operator]
    leftover.write_bytes(b"of an ingest whose journal is lost")
    (store / JOURNAL_NAME).write_text("{not json")
    ingest(logdir, store)
    assert leftover.read_bytes() == b"of an ingest whose journal is lost"
    _assert_same_store(clean, store)


def _cli_ingest(logdir: Path, store: Path, crash: str | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(CRASH_ENV, None)
    if crash:
        env[CRASH_ENV] = crash
    return subprocess.Popen(
        [sys.executable, "-m", "a2a_lab", "ingest", str(logdir), str(store), "--no-progress"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_two_concurrent_first_ingests_one_wins_the_other_says_busy(
    tmp_path: Path, lines: list[bytes]
) -> None:
    logdir = _logdir(tmp_path, lines * 4)
    clean = tmp_path / "clean"
    ingest(logdir, clean)
    outcomes = []
    for i in range(3):
        store = tmp_path / f"store{i}"
        procs = [_cli_ingest(logdir, store) for _ in range(2)]
        results = [(p.wait(), p.communicate()[1].decode()) for p in procs]
        for code, err in results:
            assert "not an a2a-lab store" not in err
            assert code == 0 or (code == 2 and "store is busy" in err), err
        outcomes.append(sorted(code for code, _ in results))
        _assert_same_store(clean, store)
    assert [0, 2] in outcomes  # they did overlap at least once


# ---------------------------------------------------------------------------------------
# the crash campaign: kill -9 at every point of first and incremental ingests
# ---------------------------------------------------------------------------------------

#: (point, n): the n-th pass at a point of the ingest code path (see _store_state.crash_point)
POINTS = [
    ("locked", 1),
    ("state-tmp", 1),  # a first ingest: the empty state it writes at once
    ("committed", 1),
    ("journal", 1),
    ("part-tmp", 1),
    ("part-tmp", 4),
    ("part-tmp", 8),
    ("part-tmp", 11),
    ("part", 1),
    ("part", 3),
    ("part", 6),
    ("part", 9),
    ("part", 12),
    ("part", 17),
    ("part", 2),
    ("part", 14),
    ("compact", 1),
    ("state-tmp", 2),
    ("committed", 2),
    ("retire", 1),
    ("retire", 2),
    ("retire", 5),
    ("retire", 9),
    ("done", 1),
    # the CLI's ingest then materialises (a2a_lab.materialize): its table files, and its
    # commit of them (state-tmp and committed again)
    ("table-part", 1),
    ("table-part", 3),
]


def _crash_run(logdir: Path, store: Path, crash: str) -> int:
    proc = _cli_ingest(logdir, store, crash)
    proc.communicate()
    return proc.returncode


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["first", "incremental"])
def test_crash_campaign_every_killed_ingest_is_recovered(
    tmp_path: Path, lines: list[bytes], phase: str
) -> None:
    """Each point: kill the ingest there, then a plain ingest must give what a clean one
    gives (0 lost, 0 duplicated), deleting no file an ingest did not write."""
    logdir = _logdir(tmp_path, lines)
    base = tmp_path / "base"
    if phase == "incremental":
        ingest(logdir, base)
        _grow(logdir, lines)
    clean = tmp_path / "clean"
    if phase == "incremental":
        shutil.copytree(base, clean, copy_function=shutil.copy2)
    ingest(logdir, clean)
    killed = 0
    unreached: list[str] = []
    for i, (point, n) in enumerate(POINTS):
        store = tmp_path / f"s{i}"
        if phase == "incremental":
            shutil.copytree(base, store, copy_function=shutil.copy2)
        else:
            store.mkdir()
        planted = _plant(store)
        code = _crash_run(logdir, store, f"{point}:{n}")
        killed += code == -signal.SIGKILL
        if code != -signal.SIGKILL:
            unreached.append(f"{point}:{n}")
        report = ingest(logdir, store)  # the next cron run
        _assert_same_store(clean, store)
        _assert_planted(store, planted)
        assert ingest(logdir, store).lines == 0, f"{point}:{n}: lines read twice"
        if code == -signal.SIGKILL:
            assert not report.recovered or any(
                "took over the lock" in r or "uncommitted part" in r for r in report.recovered
            )
    print(
        f"crash campaign, {phase} ingests: {killed} of {len(POINTS)} killed; not reached {unreached}"
    )
    # an incremental ingest writes no empty state first, but the materialisation after it
    # commits too: every point is reached in both phases
    assert unreached == []


@pytest.mark.slow
def test_crash_campaign_kills_at_random_times_and_twice_in_a_row(
    tmp_path: Path, lines: list[bytes]
) -> None:
    """Kills at random delays (seeded), and a killed first ingest followed by a killed
    incremental one: the run after still gives a clean ingest's store."""
    rng = random.Random(27)
    logdir = _logdir(tmp_path, lines * 3)
    clean = tmp_path / "clean"
    started = time.perf_counter()
    assert _cli_ingest(logdir, clean).wait() == 0
    whole = time.perf_counter() - started  # a kill at a uniform time of a whole run
    kills = 0
    for i in range(10):
        store = tmp_path / f"r{i}"
        store.mkdir()
        planted = _plant(store)
        proc = _cli_ingest(logdir, store)
        time.sleep(rng.uniform(0.2, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        kills += proc.wait() == -signal.SIGKILL
        ingest(logdir, store)
        _assert_same_store(clean, store)
        _assert_planted(store, planted)
    print(f"crash campaign, random times: {kills} of 10 runs killed")
    assert kills >= 6
    # twice in a row: first killed at a part, the incremental one killed in compaction
    logdir2 = _logdir(tmp_path / "two", lines)
    base = tmp_path / "two" / "store"
    base.mkdir()
    assert _crash_run(logdir2, base, "part:5") == -signal.SIGKILL
    _grow(logdir2, lines)
    assert _crash_run(logdir2, base, "compact:1") == -signal.SIGKILL
    ingest(logdir2, base)
    clean2 = tmp_path / "two" / "clean"
    ingest(logdir2, clean2)
    # not equal byte for byte (the clean store read the grown directory at once), but the
    # same events from the same files
    assert_frame_equal(
        load_store(base).events.sort("file", "line"), load_store(clean2).events.sort("file", "line")
    )


def test_a_read_racing_a_commit_is_not_called_damage(
    tmp_path: Path, lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that read the state just before an ingest committed finds the parts that
    compaction replaced deleted: it checks again on the newer state instead of crying damage."""
    from a2a_lab.io import _store_state

    logdir, store = _logdir_and_store(tmp_path, lines)
    ingest(logdir, store)
    old_state = _store_state.read_state(store)
    _grow(logdir, lines)
    assert ingest(logdir, store).parts_removed > 0  # compaction deleted committed parts
    assert _store_state.state_problems(store, old_state)  # the old state no longer holds
    real = _store_state.read_state
    calls = iter([old_state])
    monkeypatch.setattr(_store_state, "read_state", lambda s: next(calls, None) or real(s))
    assert _store_state.verified_state(store).generation > old_state.generation
