"""The history store's state file, its integrity checks, its lock and its journal.

The state (``a2a-store.json``, format version 2) lists every file of the store as a
:class:`FileEntry` (path, kind, rows, bytes, SHA-256, modification time and, for parts that
hold lines, how many physical lines of each source they hold). Other tables can be recorded
the same way under another ``kind``. See :mod:`a2a_lab.io._store` for the layout.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io._paths import polars_path
from a2a_lab.io._tracking import Cursor

STATE_NAME = "a2a-store.json"
LOCK_NAME = ".lock"
JOURNAL_NAME = ".ingest-journal.json"
#: Where a repair moves the files it cannot use (a repair never deletes them).
DAMAGED_DIR = "damaged"
FORMAT = "a2a-lab-store"
VERSION = 2
#: Kinds of note rows that stand for a physical line (the others describe an event's line).
LINE_NOTES = ("reject", "blank", "repeat")
#: Kinds of files whose rows are physical lines of the sources.
LINE_KINDS = ("events", "notes")
#: Kind (and directory) of the tables other layers derive from the events and keep in the
#: store (:mod:`a2a_lab.io._store_tables`): ``materialized/<table>/part-*.parquet``.
TABLES_KIND = "materialized"
#: Names a part file gets: generation, counter, and ``.tmp`` while it is written.
PART_RE = re.compile(r"^part-(\d{8})-(\d{5})\.parquet(\.tmp)?$")
#: What a store directory may hold before its first state is written.
STORE_ENTRIES = frozenset(
    {
        STATE_NAME,
        STATE_NAME + ".tmp",
        LOCK_NAME,
        JOURNAL_NAME,
        JOURNAL_NAME + ".tmp",
        *LINE_KINDS,
        TABLES_KIND,
        DAMAGED_DIR,
    }
)
#: Test hook: ``name:n`` kills the process (SIGKILL) the n-th time it passes point ``name``.
CRASH_ENV = "A2A_LAB_STORE_CRASH"
_crash_hits: dict[str, int] = {}


class StoreError(ValueError):
    """A store that cannot be used as asked (not a store, busy, another log directory, damaged)."""


def crash_point(name: str) -> None:
    """Die here (SIGKILL, as ``kill -9``) when :data:`CRASH_ENV` names this point and hit.

    The crash campaign of the tests kills ingests at every such point deterministically;
    outside it the environment variable is unset and this is one dictionary lookup.
    """
    spec = os.environ.get(CRASH_ENV)
    if not spec:
        return
    point, _, nth = spec.partition(":")
    if point != name:
        return
    _crash_hits[name] = _crash_hits.get(name, 0) + 1
    if _crash_hits[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a history store (a directory holding ``a2a-store.json``).

    A directory holding a store's lock and parts but no state (a damaged store, or one
    whose first ingest was interrupted) counts too, so that reading it fails loudly.
    """
    p = Path(path).expanduser()
    if (p / STATE_NAME).is_file():
        return True
    return (p / LOCK_NAME).is_file() and any((p / kind).is_dir() for kind in LINE_KINDS)


def sha256_of(path: Path) -> str:
    """The file's SHA-256, hex."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def repair_hint(logdir: str, store: Path) -> str:
    """The one command that repairs a store."""
    return f"repair: a2a-lab ingest --repair {logdir or 'LOGDIR'} {store}"


# ---------------------------------------------------------------------------------------
# the state
# ---------------------------------------------------------------------------------------


@dataclass
class FileEntry:
    """One file of the store as the state records it.

    ``lines`` maps a source id to the number of its physical lines the file holds (events
    and line notes); ``extra`` keeps keys another writer recorded (kept as they are).
    An entry read from a version 1 state has no checksum yet (``sha256`` empty).
    """

    path: str
    kind: str
    rows: int
    bytes: int = -1
    sha256: str = ""
    mtime_ns: int = -1
    lines: dict[int, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object."""
        return {
            **self.extra,
            "path": self.path,
            "kind": self.kind,
            "rows": self.rows,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "mtime_ns": self.mtime_ns,
            "lines": {str(k): v for k, v in sorted(self.lines.items())},
        }

    @classmethod
    def from_json(cls, obj: Any) -> FileEntry:
        """Inverse of :meth:`to_json`; ``ValueError`` on anything malformed."""
        if not isinstance(obj, dict):
            raise ValueError("a file entry is not an object")
        known = {"path", "kind", "rows", "bytes", "sha256", "mtime_ns", "lines"}
        lines = obj.get("lines", {})
        if not isinstance(lines, dict):
            raise ValueError("lines is not an object")
        entry = cls(
            path=_typed(obj, "path", str),
            kind=_typed(obj, "kind", str),
            rows=_typed(obj, "rows", int),
            bytes=_typed(obj, "bytes", int),
            sha256=_typed(obj, "sha256", str),
            mtime_ns=_typed(obj, "mtime_ns", int),
            lines={int(k): _typed(lines, k, int) for k in lines},
            extra={k: v for k, v in obj.items() if k not in known},
        )
        rel = Path(entry.path)
        if rel.is_absolute() or ".." in rel.parts or not entry.path:
            raise ValueError(f"path {entry.path!r} is not inside the store")
        return entry


def _typed(obj: dict[str, Any], key: str, kind: type) -> Any:
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{key} is not a {kind.__name__}: {value!r}")
    return value


@dataclass
class _State:
    logdir: str
    #: what the first ingest fixed for the store's life, as recorded: ``{"timezone": name}``
    #: (plain data, shared by a copy; :attr:`timezone` reads it)
    settings: dict[str, str]
    cursors: list[Cursor]
    files: list[FileEntry] = field(default_factory=list)
    retired: list[FileEntry] = field(default_factory=list)
    next_nseq: int = 0
    generation: int = 0
    #: part-named files no journal proves an ingest wrote: left in place, not of the store
    ignored: list[str] = field(default_factory=list)
    #: per derived table (:data:`TABLES_KIND`), what its writer recorded about it
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def timezone(self) -> str:
        """The store's zone (of ISO timestamps without an offset), fixed by its first ingest."""
        return self.settings["timezone"]

    @property
    def parts(self) -> dict[str, int]:
        """Relative path → rows of the events and notes parts (the readers' view)."""
        return {f.path: f.rows for f in self.files if f.kind in LINE_KINDS}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "logdir": self.logdir,
            "timezone": self.timezone,
            "next_nseq": self.next_nseq,
            "generation": self.generation,
            "cursors": [c.to_json() for c in self.cursors],
            "files": [f.to_json() for f in self.files],
            "retired": [f.to_json() for f in self.retired],
            "ignored": list(self.ignored),
            "tables": self.tables,
        }


def _seal_of(obj: dict[str, Any]) -> str:
    body = {k: v for k, v in obj.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def sealed(obj: dict[str, Any]) -> dict[str, Any]:
    """The state object with its ``seal``: the SHA-256 of the rest, so that a state edited
    by anything but the store (a part dropped, a count changed) is known as damaged."""
    return {**obj, "seal": _seal_of(obj)}


def _cursor(obj: Any) -> Cursor:
    if not isinstance(obj, dict):
        raise ValueError("a cursor is not an object")
    fields = {f.name: f for f in dataclasses.fields(Cursor)}
    unknown = set(obj) - set(fields)
    if unknown:
        raise ValueError(f"a cursor has unknown keys {sorted(unknown)}")
    for name, f in fields.items():
        if name in obj:
            kind = {"int": int, "str": str, "bool": bool}[str(f.type)]
            _typed(obj, name, kind)
    return Cursor(**obj)


def read_state(store: Path) -> _State:
    """The store's state; :class:`StoreError` naming the file if it is missing or damaged."""
    path = store / STATE_NAME
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if is_store(store):
            raise StoreError(
                f"store damaged: {store} holds parts but no {STATE_NAME} (an interrupted first "
                f"ingest leaves none: run the ingest again); {repair_hint('', store)}"
            ) from None
        raise StoreError(f"not a history store (no {STATE_NAME}): {store}") from None
    except (OSError, ValueError) as exc:
        raise StoreError(
            f"store damaged: unreadable state {path}: {exc}; {repair_hint('', store)}"
        ) from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise StoreError(
            f"store damaged: {path} is not an a2a-lab store state; {repair_hint('', store)}"
        )
    if obj.get("version") not in (1, VERSION):
        raise StoreError(f"{path}: store version {obj.get('version')!r}, this a2a-lab reads 1-2")
    if obj.get("version") == VERSION and obj.get("seal") != _seal_of(obj):
        raise StoreError(
            f"store damaged: {path} does not match its seal (changed by something other than "
            f"an ingest); {repair_hint(str(obj.get('logdir', '')), store)}"
        )
    try:
        return _state_from_json(obj)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise StoreError(
            f"store damaged: {path}: {what}; {repair_hint(str(obj.get('logdir', '')), store)}"
        ) from None


def _state_from_json(obj: dict[str, Any]) -> _State:
    if obj["version"] == 1:  # rows only: the next ingest adds checksums and line counts
        parts = obj["parts"]
        if not isinstance(parts, dict):
            raise ValueError("parts is not an object")
        files = [
            FileEntry(path=str(k), kind=str(k).split("/", 1)[0], rows=int(v))
            for k, v in parts.items()
        ]
        retired: list[FileEntry] = []
    else:
        if not isinstance(obj["files"], list) or not isinstance(obj.get("retired", []), list):
            raise ValueError("files is not a list")
        files = [FileEntry.from_json(f) for f in obj["files"]]
        retired = [FileEntry.from_json(f) for f in obj.get("retired", [])]
    if not isinstance(obj["cursors"], list):
        raise ValueError("cursors is not a list")
    cursors = [_cursor(c) for c in obj["cursors"]]
    if len({c.id for c in cursors}) != len(cursors):
        raise ValueError("two cursors share an id")
    if len({f.path for f in files}) != len(files):
        raise ValueError("a file is listed twice")
    ignored = obj.get("ignored", [])
    if not isinstance(ignored, list) or not all(isinstance(x, str) for x in ignored):
        raise ValueError("ignored is not a list of paths")
    tables = obj.get("tables", {})
    if not isinstance(tables, dict) or not all(isinstance(v, dict) for v in tables.values()):
        raise ValueError("tables is not an object of objects")
    return _State(
        tables=tables,
        logdir=_typed(obj, "logdir", str),
        settings={"timezone": _typed(obj, "timezone", str)},
        cursors=cursors,
        files=files,
        retired=retired,
        next_nseq=_typed(obj, "next_nseq", int),
        generation=_typed(obj, "generation", int),
        ignored=ignored,
    )


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, point: str = "") -> None:
    """Write a file whole or not at all: a temporary file, flushed, then renamed."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    if point:
        crash_point(point)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_state(store: Path, state: _State) -> None:
    """Commit ``state``: the one atomic step that makes an ingest's parts part of the store."""
    write_atomic(
        store / STATE_NAME,
        json.dumps(sealed(state.to_json()), indent=1).encode("utf-8"),
        "state-tmp",
    )
    crash_point("committed")


# ---------------------------------------------------------------------------------------
# integrity
# ---------------------------------------------------------------------------------------


def part_rows(path: Path) -> int | None:
    """Rows a Parquet file's footer records; None when it cannot be read."""
    try:
        return int(pl.scan_parquet(polars_path(path)).select(pl.len()).collect().item())
    except Exception:
        return None


def file_problem(store: Path, entry: FileEntry, *, full: bool) -> str | None:
    """What is wrong with one listed file (None: it is the file the state records).

    Size and modification time are compared always; the checksum when the time changed
    (a copied store, or a file written over) or ``full``.
    """
    path = store / entry.path
    try:
        st = path.stat()
    except FileNotFoundError:
        return f"{entry.path}: missing (the state lists {entry.rows} rows)"
    except OSError as exc:
        return f"{entry.path}: {exc.strerror or exc}"
    if not path.is_file():
        return f"{entry.path}: not a file"
    if entry.bytes >= 0 and st.st_size != entry.bytes:
        rows = part_rows(path)
        held = "unreadable" if rows is None else f"{rows} rows"
        return (
            f"{entry.path}: {st.st_size} bytes, {held}; the state records {entry.bytes} bytes, "
            f"{entry.rows} rows"
        )
    changed = full or st.st_mtime_ns != entry.mtime_ns
    if entry.sha256 and changed and sha256_of(path) != entry.sha256:
        rows = part_rows(path)
        held = "unreadable" if rows is None else f"{rows} rows"
        return f"{entry.path}: checksum differs from the state's ({held}; {entry.rows} recorded)"
    if not entry.sha256 and entry.kind in LINE_KINDS and part_rows(path) != entry.rows:
        return f"{entry.path}: not the {entry.rows} rows the state records"
    return None


def part_files(store: Path, *, tables: bool = False) -> list[str]:
    """Relative paths of every file named as a part under the line kinds' directories
    (and, with ``tables``, under :data:`TABLES_KIND`)."""
    out = []
    for kind in (*LINE_KINDS, TABLES_KIND) if tables else LINE_KINDS:
        root = store / kind
        if root.is_dir():
            out += [
                p.relative_to(store).as_posix()
                for p in root.rglob("part-*")
                if PART_RE.match(p.name) and not p.name.endswith(".tmp")
            ]
    return sorted(out)


def generation_of(rel: str) -> int:
    m = PART_RE.match(rel.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else -1


def state_problems(store: Path, state: _State, *, full: bool = False) -> list[str]:
    """Every disagreement between the state and the files, and within the state."""
    problems = [p for e in state.files if (p := file_problem(store, e, full=full)) is not None]
    if all(e.sha256 for e in state.files if e.kind in LINE_KINDS):
        held: dict[int, int] = {}
        for e in state.files:
            if e.kind in LINE_KINDS:
                for src, n in e.lines.items():
                    held[src] = held.get(src, 0) + n
        for c in state.cursors:
            if held.get(c.id, 0) != c.lines:
                problems.append(
                    f"source {c.id} ({c.name}): the parts listed hold {held.get(c.id, 0)} of "
                    f"its {c.lines} lines"
                )
        unknown = set(held) - {c.id for c in state.cursors}
        if unknown:
            problems.append(f"parts hold lines of unknown sources {sorted(unknown)}")
    known = {e.path for e in state.files} | {e.path for e in state.retired} | set(state.ignored)
    for rel in part_files(store, tables=True):
        # a part of a generation the state committed that it does not list: the state
        # lost track of it (an uncommitted ingest's parts have a later generation)
        if rel not in known and generation_of(rel) <= state.generation:
            problems.append(f"{rel}: a part the state does not list")
    return problems


def verified_state(store: Path, *, full: bool = False) -> _State:
    """The state, checked against the files: :class:`StoreError` on any mismatch.

    An ingest committing meanwhile deletes the parts its compaction replaced: a check that
    fails is made again on the newer state before it counts as damage.
    """
    for _ in range(3):
        state = read_state(store)
        problems = state_problems(store, state, full=full)
        if not problems:
            return state
        try:
            newer = read_state(store).generation != state.generation
        except StoreError:
            newer = False
        if not newer:
            break
    check(store, state, full=full)
    return state


def check(store: Path, state: _State, *, full: bool = False) -> None:
    """Raise :class:`StoreError` naming the first problem (and how many more) and the repair."""
    problems = state_problems(store, state, full=full)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StoreError(
            f"store damaged: {store}: {problems[0]}{more}; {repair_hint(state.logdir, store)}"
        )


# ---------------------------------------------------------------------------------------
# lock and journal
# ---------------------------------------------------------------------------------------


def _holder(fd: int) -> dict[str, Any] | None:
    try:
        obj = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def _describe_holder(h: dict[str, Any] | None) -> str:
    if not h:
        return "another ingest"
    return f"ingest pid {h.get('pid')} on {h.get('host')} (since {h.get('started')})"


@contextlib.contextmanager
def locked(store: Path) -> Iterator[str | None]:
    """Hold the store's lock; yields a note when a dead holder's lock was taken over.

    The lock is an ``flock`` on ``.lock`` (released by the kernel when its holder dies);
    the holder writes its pid, host and start time into the file and empties it on a
    clean exit, so a non-empty lock that can be taken is the stale lock of a holder that
    died, which is said. A lock file replaced while waiting is locked again.
    """
    path = store / LOCK_NAME
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise StoreError(f"lock: cannot open {path}: {exc.strerror or exc}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreError(
                    f"store is busy: {_describe_holder(_holder(fd))} holds {path}"
                ) from None
            try:
                same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue
            stale = _holder(fd)
            note = None
            if stale is not None or os.fstat(fd).st_size:
                note = f"took over the lock of {_describe_holder(stale)}, no longer running"
            me = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(me).encode(), 0)
            try:
                yield note
            finally:
                os.ftruncate(fd, 0)
            return
        finally:
            os.close(fd)
    raise StoreError(f"lock: {path} keeps being replaced")


def write_journal(store: Path, generation: int) -> None:
    """Note, before writing any part, the generation the parts of this ingest are named by."""
    data = {"generation": generation, "pid": os.getpid(), "started": time.time()}
    write_atomic(store / JOURNAL_NAME, json.dumps(data).encode("utf-8"))


def read_journal(store: Path) -> int | None:
    """The generation of the last ingest that started (None: none, or unreadable)."""
    try:
        obj = json.loads((store / JOURNAL_NAME).read_text(encoding="utf-8"))
        gen = obj["generation"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return gen if isinstance(gen, int) and not isinstance(gen, bool) else None


def remove_uncommitted(store: Path, committed: int) -> int:
    """Delete the files of an interrupted ingest: those named by the generation its journal
    notes, when the state never committed it. Returns how many were deleted.

    Only files an ingest wrote are deleted: the journal names their generation before the
    first of them exists, and a committed state's generation is never below it again.
    """
    gen = read_journal(store)
    n = 0
    if gen is not None and gen > committed:
        own = re.compile(rf"^part-{gen:08d}-\d{{5}}\.parquet(\.tmp)?$")
        for kind in (*LINE_KINDS, TABLES_KIND):
            root = store / kind
            if root.is_dir():
                for p in root.rglob(f"part-{gen:08d}-*"):
                    if own.match(p.name) and p.is_file() and not p.is_symlink():
                        p.unlink()
                        n += 1
    (store / JOURNAL_NAME).unlink(missing_ok=True)
    return n


def ignore_unproven(store: Path, state: _State) -> list[str]:
    """Note part files of uncommitted generations no journal accounts for (after
    :func:`remove_uncommitted`): they stay where they are, and are not part of the store."""
    new = [
        rel
        for rel in part_files(store, tables=True)
        if generation_of(rel) > state.generation and rel not in state.ignored
    ]
    state.ignored += new
    return new


def next_generation(store: Path, state: _State) -> int:
    """A generation above the state's and above any part file's: no name is ever reused."""
    return max([state.generation, *(generation_of(r) for r in part_files(store, tables=True))]) + 1


def remove_retired(store: Path, state: _State) -> None:
    """Delete the parts compaction replaced, if they are still the files the store wrote."""
    for e in state.retired:
        path = store / e.path
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            if st.st_size == e.bytes and (
                st.st_mtime_ns == e.mtime_ns or sha256_of(path) == e.sha256
            ):
                path.unlink()
                crash_point("retire")
    state.retired = [e for e in state.retired if (store / e.path).exists()]


def recover(store: Path, state: _State) -> list[str]:
    """Remove what an interrupted ingest or table update left (its uncommitted parts, the
    parts its commit retired); returns what was done, for the report. The caller checks
    the store next."""
    notes = []
    n = remove_uncommitted(store, state.generation)
    if n:
        notes.append(f"deleted {n} uncommitted part file(s) of an interrupted ingest")
    for rel in ignore_unproven(store, state):
        notes.append(f"left {rel} in place: no journal proves an ingest wrote it")
    remove_retired(store, state)
    return notes
