"""An incremental Parquet history store of a log directory.

Layout of a store directory::

    a2a-store.json                       the state: marker, cursors, every file with its checksum
    events/month=YYYY-MM/part-*.parquet  events, hive-partitioned by UTC month of event time
    notes/part-*.parquet                 rejected, blank and repeated lines, problems in kept events
    .lock                                held (flock) by a running ingest, which writes its pid in it
    .ingest-journal.json                 the generation a running ingest writes its parts under
    damaged/                             files a repair set aside (never deleted)

``a2a-store.json`` is the single source of truth. It lists every file of the store with its
kind, row count, size and SHA-256, and, per source (ingested file content), how many of the
source's physical lines each part holds: every line is exactly one row of an events part or
a line note (reject, blank, repeat), so the lines listed add up to each cursor's line count.
Every read checks the files against the state (size and modification time; a file whose time
changed is hashed), and the state against itself; a mismatch is a :class:`StoreError` naming
the file and the repair (``a2a-lab ingest --repair LOGDIR STORE``, see :func:`ingest`).

An ingest takes the lock, notes its generation ``g`` in the journal, writes new parts named
``part-{g:08d}-*`` (to a temporary name, then renamed), replaces the state file atomically as
its very last step, and only then deletes the parts that compaction replaced (which the state
lists as ``retired``). Killed at any moment, it leaves the committed store as it was; the next
ingest deletes the files the journal proves the killed one wrote and reads its lines again.
No ingest deletes a file it cannot prove an ingest wrote: a part file the state does not list
is reported, not deleted.

Every event keeps its original line: ``raw`` (the trimmed text the loader keeps) and,
only where the file's bytes differ from it (surrounding whitespace, CR, invalid UTF-8),
``orig`` with the exact bytes. Rejected, blank and repeated lines keep theirs in ``notes``. So
the ingested files can be written back byte for byte (:func:`export_store`), and a repair can
rebuild the state from the parts alone.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from a2a_lab.io._decode import DecodedText
from a2a_lab.io._result import LoadResult, _finish, decode_piece, join_decoded
from a2a_lab.io._sources import split_target
from a2a_lab.io._store_state import (
    DAMAGED_DIR,
    JOURNAL_NAME,
    LINE_KINDS,
    LINE_NOTES,
    LOCK_NAME,
    STATE_NAME,
    STORE_ENTRIES,
    FileEntry,
    StoreError,
    _State,
    check,
    crash_point,
    file_problem,
    ignore_unproven,
    is_store,
    locked,
    next_generation,
    part_files,
    part_rows,
    read_state,
    remove_retired,
    remove_uncommitted,
    repair_hint,
    sha256_of,
    write_journal,
    write_state,
)
from a2a_lab.io._tracking import (
    Cursor,
    Piece,
    line_fingerprints,
    new_pieces,
)
from a2a_lab.timeparse import resolve_tz

#: The Parquet footer key listing the ``data`` fields a part holds values of.
DATA_FIELDS_KEY = "a2a_lab.data_fields"
#: The Parquet footer key with the store and sources a part's rows come from (for a repair).
SOURCES_KEY = "a2a_lab.sources"
__all__ = [
    "DAMAGED_DIR",
    "LOCK_NAME",
    "STATE_NAME",
    "IngestReport",
    "StoreError",
    "ingest",
    "is_store",
]
#: A part with at least this many rows is never rewritten by compaction.
SEAL_ROWS = 1_000_000
#: At most this many smaller parts per partition: more are merged into one.
MAX_SMALL = 8
#: Rows per Parquet row group of a part (what a reader decodes at once).
ROW_GROUP_ROWS = 65_536

_NOTES_SCHEMA = pl.Schema(
    {
        "source": pl.Int32(),
        "line": pl.Int64(),
        "nseq": pl.Int64(),
        "kind": pl.String(),
        "detail": pl.String(),
        "raw": pl.String(),
        "orig": pl.Binary(),
    }
)


@dataclass(repr=False)
class IngestReport:
    """What one :func:`ingest` added to a store.

    Attributes
    ----------
    store
        The store directory.
    files
        Files that had new lines, in reading order.
    bytes_read, lines, events, rejects, blank
        What was read: content bytes (decompressed), physical lines and their fate.
    parts_written, parts_removed
        Parquet parts added (new data and compaction output) and removed by compaction.
    seconds
        Wall time of the ingest.
    damaged
        Compressed files whose data ended early or is corrupt (only their readable complete
        lines were taken; the rest is read once the file is whole).
    repeated
        Lines of rewritten files that repeat lines the store already holds (noted, not
        stored as events again).
    recovered
        What this ingest found and put right: a dead holder's lock taken over, the files of
        an interrupted ingest deleted, what a repair did.
    new
        The new events and their load report, when asked for (``keep_events=True``).
    """

    store: Path
    files: list[str] = field(default_factory=list)
    bytes_read: int = 0
    lines: int = 0
    events: int = 0
    rejects: int = 0
    blank: int = 0
    parts_written: int = 0
    parts_removed: int = 0
    seconds: float = 0.0
    damaged: list[str] = field(default_factory=list)
    repeated: int = 0
    recovered: list[str] = field(default_factory=list)
    new: LoadResult | None = None

    def summary(self) -> dict[str, Any]:
        """The report as JSON-able values (``a2a-lab ingest --json``)."""
        return {
            "store": str(self.store),
            "files": list(self.files),
            "bytes_read": self.bytes_read,
            "lines": self.lines,
            "events": self.events,
            "rejects": self.rejects,
            "blank": self.blank,
            "parts_written": self.parts_written,
            "parts_removed": self.parts_removed,
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(self.bytes_read / 1e6 / self.seconds, 1)
            if self.seconds > 0
            else None,
            "damaged": list(self.damaged),
            "repeated": self.repeated,
            "recovered": list(self.recovered),
        }

    def __str__(self) -> str:
        return (
            f"{len(self.files)} file(s), {self.bytes_read} bytes, {self.lines} lines: "
            f"{self.events} events, {self.rejects} rejected, {self.blank} blank "
            f"({self.parts_written} parts written, {self.parts_removed} removed)"
        )

    def __repr__(self) -> str:
        return f"IngestReport({self})"


# ---------------------------------------------------------------------------------------
# writing parts
# ---------------------------------------------------------------------------------------


def _write_part(
    store: Path,
    rel: str,
    frame: pl.DataFrame | pl.LazyFrame,
    metadata: dict[str, str] | None,
    *,
    rows: int,
    lines: dict[int, int],
) -> FileEntry:
    """Write a part under a temporary name, flush it to disk, give it its name; its entry.

    The checksum is of the bytes read back (from the page cache: the part was just
    written), so the state records what is on disk.
    """
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # bounded row groups: a reader decodes a column a row group at a time, so a compacted
    # part of a million rows must not be one group (its texts would be decoded at once)
    if isinstance(frame, pl.LazyFrame):
        frame.sink_parquet(tmp, metadata=metadata, row_group_size=ROW_GROUP_ROWS)
    else:
        frame.write_parquet(tmp, metadata=metadata, row_group_size=ROW_GROUP_ROWS)
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    crash_point("part-tmp")
    os.replace(tmp, path)
    crash_point("part")
    st = path.stat()
    return FileEntry(
        path=rel,
        kind=rel.split("/", 1)[0],
        rows=rows,
        bytes=st.st_size,
        sha256=sha256_of(path),
        mtime_ns=st.st_mtime_ns,
        lines=lines,
    )


def lines_held(frame: pl.DataFrame, kind: str) -> dict[int, int]:
    """Physical lines per source a part's rows stand for (events, and line notes)."""
    if kind == "notes":
        frame = frame.filter(pl.col("kind").is_in(LINE_NOTES))
    counts = frame.group_by("source").len()
    return dict(zip(counts["source"].to_list(), counts["len"].to_list(), strict=True))


def _data_fields_metadata(frame: pl.DataFrame) -> dict[str, str] | None:
    """The part's footer note of the ``data`` fields holding a value in some row.

    Readers then decode only these fields (:func:`_scan_events`): most of the event
    struct's fields are null in every row of a real log.
    """
    if "data" not in frame.columns:
        return None
    present = frame.get_column("data").struct.unnest().select(pl.all().is_not_null().any())
    names = [name for name, any_value in present.row(0, named=True).items() if any_value]
    return {DATA_FIELDS_KEY: json.dumps(names)}


def _part_data_fields(path: Path) -> set[str] | None:
    """The ``data`` fields a part notes as used; None for a part written without the note."""
    note = pl.read_parquet_metadata(path).get(DATA_FIELDS_KEY)
    return None if note is None else set(json.loads(note))


def sources_note(state: _State, piece: Piece, exact: int) -> str:
    """The footer note of the store and the source a piece's parts come from (for a repair):
    the source's name, the piece's exact-path lines and whether its last line is open."""
    return json.dumps(
        {
            "logdir": state.logdir,
            "timezone": state.timezone,
            "sources": {
                str(piece.cursor.id): {
                    "name": piece.path.name,
                    "exact": exact,
                    "open_end": not piece.data.endswith(b"\n"),
                }
            },
        }
    )


def merge_notes(notes: list[str | None]) -> str | None:
    """One footer note for parts merged into one (in generation order): counts add up."""
    out: dict[str, Any] = {}
    sources: dict[str, dict[str, Any]] = {}
    for note in notes:
        if note is None:
            continue
        obj = json.loads(note)
        out.update({k: v for k, v in obj.items() if k != "sources"})
        for sid, info in obj.get("sources", {}).items():
            prev = sources.get(sid)
            sources[sid] = {
                "name": info["name"],
                "exact": info["exact"] + (prev["exact"] if prev else 0),
                "open_end": info["open_end"] or bool(prev and prev["open_end"]),
            }
    if not out:
        return None
    return json.dumps({**out, "sources": sources})


def _line_bounds(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (newline excluded) byte of every physical line of ``data``."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(data))
    starts = np.concatenate(([0], nl + 1))[: len(ends)]
    return starts, ends


def _originals(data: bytes, first_line: int, events: pl.DataFrame, exact_text: bool) -> pl.Series:
    """``orig`` of each event: its line's exact bytes where ``raw`` does not reproduce them.

    With no CR and valid UTF-8 (``exact_text``), ``raw`` is the line itself or the line
    trimmed, so equal byte lengths mean equal lines and only the others are compared.
    """
    starts, ends = _line_bounds(data)
    idx = events["line"].to_numpy() - 1 - first_line
    if exact_text:
        differ = np.flatnonzero(
            (ends[idx] - starts[idx]) != events["raw"].str.len_bytes().to_numpy()
        )
    else:
        differ = np.arange(len(idx))
    out: list[bytes | None] = [None] * len(idx)
    raws = events["raw"]
    for i in differ:
        line = data[starts[idx[i]] : ends[idx[i]]]
        if line != raws[int(i)].encode("utf-8", "surrogatepass"):
            out[i] = line
    return pl.Series("orig", out, dtype=pl.Binary)


def _notes(
    piece: Piece, dec: DecodedText, extra: pl.DataFrame, events_lines: np.ndarray, nseq: int
) -> pl.DataFrame:
    """Rejected and blank lines with their exact bytes, and the issue rows of kept events."""
    data = piece.data
    starts, ends = _line_bounds(data)
    n = len(ends)
    reject_lines = dec.rejects["line"].to_numpy() - 1 - piece.first_line
    taken = np.zeros(n, dtype=bool)
    taken[events_lines - 1 - piece.first_line] = True
    taken[reject_lines] = True
    blank_lines = np.flatnonzero(~taken)
    rows = [
        dec.rejects.select(
            pl.col("line"),
            pl.lit("reject").alias("kind"),
            pl.col("reason").alias("detail"),
            pl.col("raw"),
            pl.Series("orig", [data[starts[i] : ends[i]] for i in reject_lines], dtype=pl.Binary),
        ),
        pl.DataFrame(
            {
                "line": blank_lines + 1 + piece.first_line,
                "kind": ["blank"] * len(blank_lines),
                "detail": pl.Series([None] * len(blank_lines), dtype=pl.String),
                "raw": pl.Series([None] * len(blank_lines), dtype=pl.String),
                "orig": pl.Series(
                    [data[starts[i] : ends[i]] for i in blank_lines], dtype=pl.Binary
                ),
            },
            schema_overrides={"line": pl.Int64},
        ),
        *(
            issues.select(
                pl.col("line"),
                pl.col("kind"),
                pl.col("field").alias("detail"),
                pl.lit(None, pl.String).alias("raw"),
                pl.lit(None, pl.Binary).alias("orig"),
            )
            for issues in (dec.issues, extra)
        ),
    ]
    notes = pl.concat(rows, how="vertical")
    return notes.with_columns(
        pl.lit(piece.cursor.id, pl.Int32).alias("source"),
        pl.int_range(nseq, nseq + notes.height, dtype=pl.Int64).alias("nseq"),
    ).select(list(_NOTES_SCHEMA))


def _month_expr() -> pl.Expr:
    # event_time can be null (out of range): such events get their own partition
    return pl.col("event_time").dt.strftime("%Y-%m").fill_null("none").alias("_month")


class _Writer:
    """New parts of one ingest, and compaction of the partitions they land in."""

    def __init__(self, store: Path, state: _State) -> None:
        self.store = store
        self.state = state
        self.files = {e.path: e for e in state.files}
        self.retired: list[FileEntry] = []
        self.fresh: set[str] = set()  # written by this ingest
        self.written = 0
        self.counter = 0

    def _name(self, partition: str) -> str:
        self.counter += 1
        return f"{partition}/part-{self.state.generation:08d}-{self.counter:05d}.parquet"

    def add(self, partition: str, frame: pl.DataFrame, note: str) -> None:
        rel = self._name(partition)
        kind = partition.split("/", 1)[0]
        metadata = {SOURCES_KEY: note, **(_data_fields_metadata(frame) or {})}
        entry = _write_part(
            self.store, rel, frame, metadata, rows=frame.height, lines=lines_held(frame, kind)
        )
        self.files[rel] = entry
        self.fresh.add(rel)
        self.written += 1
        self._compact(partition)

    def _compact(self, partition: str) -> None:
        prefix = partition + "/"
        small = sorted(
            p for p, e in self.files.items() if p.startswith(prefix) and e.rows < SEAL_ROWS
        )
        if len(small) <= MAX_SMALL:
            return
        # the inputs must be the files the store wrote: merged, a damaged part would get a
        # fresh, valid checksum
        for p in small:
            problem = file_problem(self.store, self.files[p], full=p not in self.fresh)
            if problem is not None:
                raise StoreError(
                    f"store damaged: {self.store}: {problem}; "
                    f"{repair_hint(self.state.logdir, self.store)}"
                )
        rel = self._name(partition)
        paths = [self.store / p for p in small]
        footers = [pl.read_parquet_metadata(p) for p in paths]
        metadata: dict[str, str] = {}
        note = merge_notes([f.get(SOURCES_KEY) for f in footers])
        if note is not None:
            metadata[SOURCES_KEY] = note
        fields = [f.get(DATA_FIELDS_KEY) for f in footers]
        if prefix.startswith("events/") and all(f is not None for f in fields):
            used = set().union(*(json.loads(f) for f in fields if f is not None))
            metadata[DATA_FIELDS_KEY] = json.dumps(sorted(used))
        lines: dict[int, int] = {}
        for p in small:
            for src, n in self.files[p].lines.items():
                lines[src] = lines.get(src, 0) + n
        entry = _write_part(
            self.store,
            rel,
            pl.scan_parquet(paths),
            metadata or None,
            rows=sum(self.files[p].rows for p in small),
            lines=lines,
        )
        crash_point("compact")
        self.retired += [self.files.pop(p) for p in small]
        self.files[rel] = entry
        self.fresh.add(rel)
        self.written += 1


# ---------------------------------------------------------------------------------------
# ingest
# ---------------------------------------------------------------------------------------


def _progress(enabled: bool | None) -> Any:
    """A byte progress bar; by default only on a terminal and never in CI."""
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty() and not os.environ.get("CI")
    return tqdm(total=None, unit="B", unit_scale=True, desc="ingest", disable=not enabled)


def _prepare(store: Path) -> None:
    """Create the store directory, or check that an existing one is (or was becoming) a store."""
    if store.exists() and not store.is_dir():
        raise StoreError(f"store: {store} exists and is not a directory")
    store.mkdir(parents=True, exist_ok=True)
    if not (store / STATE_NAME).exists() and set(os.listdir(store)) - STORE_ENTRIES:
        raise StoreError(f"store: {store} exists and is not an a2a-lab store (no {STATE_NAME})")


def _open_state(
    store: Path, logdir: Path, timezone: str | None, report: IngestReport, *, full: bool
) -> _State:
    """The committed state, the leftovers of an interrupted ingest removed, checked whole.

    A store without state gets an empty one at once (still under the lock): a first ingest
    killed later leaves a store the next one recovers like any other.
    """
    if not (store / STATE_NAME).exists():
        if part_files(store):
            raise StoreError(
                f"store damaged: {store} holds parts but no {STATE_NAME}; "
                f"{repair_hint(str(logdir), store)}"
            )
        state = _State(logdir=str(logdir), timezone=timezone or "UTC", cursors=[])
        write_state(store, state)
    state = read_state(store)
    if state.logdir != str(logdir):
        raise StoreError(f"logdir: the store {store} holds {state.logdir}, not {logdir}")
    if timezone is not None and timezone != state.timezone:
        raise StoreError(
            f"timezone: the store {store} was ingested with {state.timezone!r}, not {timezone!r}"
        )
    n = remove_uncommitted(store, state.generation)
    if n:
        report.recovered.append(f"deleted {n} uncommitted part file(s) of an interrupted ingest")
    for rel in ignore_unproven(store, state):
        report.recovered.append(f"left {rel} in place: no journal proves an ingest wrote it")
    remove_retired(store, state)
    _upgrade(store, state)
    check(store, state, full=full)
    return state


def _upgrade(store: Path, state: _State) -> None:
    """Give the entries of a version 1 state their size, checksum and line counts."""
    for e in state.files:
        path = store / e.path
        if e.sha256 or e.kind not in LINE_KINDS or not path.is_file():
            continue
        if part_rows(path) != e.rows:
            continue  # the check reports it
        cols = ["source", "kind"] if e.kind == "notes" else ["source"]
        e.lines = lines_held(pl.read_parquet(path, columns=cols), e.kind)
        st = path.stat()
        e.bytes, e.mtime_ns, e.sha256 = st.st_size, st.st_mtime_ns, sha256_of(path)


def ingest(
    logdir: str | os.PathLike[str],
    store: str | os.PathLike[str],
    *,
    tz: str | None = None,
    keep_events: bool = False,
    progress: bool | None = None,
    timezone: str | None = None,
    repair: bool = False,
    verify: bool = False,
) -> IngestReport:
    """Add the new complete lines of a log directory to a history store.

    Reads the live ``coordination-events.ndjson`` and its rotated siblings (``.gz`` too)
    from where the previous ingest stopped, following rotation, gzip, truncation and
    in-place rewrites without loss or duplicates (see :class:`~a2a_lab.io.LogFollower`); a
    partial last line of the live file waits for its newline. Safe to run from cron at any
    moment: one ingest at a time (a second one fails with :class:`StoreError` saying the
    store is busy), and an interrupted one (killed at any point) leaves the store as it
    was; the next ingest removes what it wrote and reads its lines again.

    The store is checked before anything is added: a part missing, of another size or
    checksum, a part the state does not list, or a damaged state is a :class:`StoreError`
    naming the file; nothing is written then.

    Parameters
    ----------
    logdir
        The log directory (or its live file).
    store
        The store directory; created on the first ingest.
    tz
        Zone for ISO timestamps without an offset, fixed by the first ingest (default UTC);
        another value later is an error. An unknown zone raises ``ValueError`` naming ``tz``.
    keep_events
        Also return the new events and their load report (``report.new``).
    progress
        Show a progress bar (default: only when interactive and not in CI).
    timezone
        Deprecated name of ``tz`` (warns).
    repair
        First rebuild the state from the parts and their kept lines (``a2a-lab ingest
        --repair``): damaged parts are moved to ``damaged/`` and their lines read again from
        the log directory; see ``docs/api.md``. What was done is in ``report.recovered``.
    verify
        Check every part's checksum, not only those whose size or time changed.

    Returns
    -------
    IngestReport

    Raises
    ------
    StoreError
        If ``logdir`` is not a directory, ``store`` is another directory or holds another
        log directory, the store is busy or damaged, or the timezone differs from the store's.

    Examples
    --------
    >>> import tempfile, pathlib, a2a_lab as al
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "coordination-events.ndjson").write_text('{"type":"a2a.send","ts":1}\\n')
    >>> al.ingest(d, d / "store").events, al.ingest(d, d / "store").events
    (1, 0)
    >>> al.load(d / "store").events["type"].to_list()
    ['a2a.send']
    """
    if timezone is not None or tz is not None:
        timezone = resolve_tz(tz, timezone, where="ingest")
    started = time.perf_counter()
    logdir_path, single = split_target(logdir)
    if single is not None:
        raise StoreError(f"logdir: a log directory or its live file is needed, not {logdir}")
    logdir_path = logdir_path.absolute()
    if not logdir_path.is_dir():
        raise StoreError(f"logdir: no such directory: {logdir_path}")
    store_path = Path(store).expanduser().absolute()
    if store_path == logdir_path:
        raise StoreError("store: the store cannot be the log directory itself")
    _prepare(store_path)
    report = IngestReport(store=store_path)
    with locked(store_path) as stale:
        if stale is not None:
            report.recovered.append(stale)
        crash_point("locked")
        if repair:
            from a2a_lab.io._store_repair import repair_store

            repair_store(store_path, logdir_path, timezone, report)
        state = _open_state(store_path, logdir_path, timezone, report, full=verify)
        committed = list(state.files)
        state.generation = next_generation(store_path, state)
        write_journal(store_path, state.generation)
        crash_point("journal")
        writer = _Writer(store_path, state)
        kept: list[tuple[str, DecodedText, pl.DataFrame]] = []
        bar = _progress(progress)
        try:
            for piece in new_pieces(
                logdir_path,
                state.cursors,
                _next_id(state.cursors),
                single=None,
                seen=lambda c: seen_lines(store_path, committed, c.id),
            ):
                if piece.repeat:
                    _repeat_piece(piece, state, writer, report)
                else:
                    dec, extra = _ingest_piece(piece, state, writer, report)
                    if keep_events:
                        kept.append((str(piece.path), dec, extra))
                    del dec, extra
                bar.update(len(piece.data))
        finally:
            bar.close()
        report.damaged = _damaged(logdir_path, state.cursors)
        state.files = list(writer.files.values())
        state.retired = state.retired + writer.retired
        write_state(store_path, state)
        remove_retired(store_path, state)
        crash_point("done")
        (store_path / JOURNAL_NAME).unlink(missing_ok=True)
    report.parts_written, report.parts_removed = writer.written, len(writer.retired)
    if keep_events:
        report.new = _finish(join_decoded(kept), state.timezone, True)
    report.seconds = time.perf_counter() - started
    return report


def seen_lines(store: Path, files: list[FileEntry], source: int) -> pl.Series:
    """Fingerprints of the lines the store holds of one source (for a rewrite of it)."""
    events = [store / e.path for e in files if e.kind == "events" and e.lines.get(source)]
    notes = [store / e.path for e in files if e.kind == "notes" and e.lines.get(source)]
    frames = []
    if events:
        frames.append(
            pl.scan_parquet(events)
            .filter(pl.col("source") == source)
            .select(pl.coalesce("orig", pl.col("raw").cast(pl.Binary)).alias("b"))
        )
    if notes:
        frames.append(
            pl.scan_parquet(notes)
            .filter((pl.col("source") == source) & pl.col("kind").is_in(LINE_NOTES))
            .select(pl.col("orig").alias("b"))
        )
    if not frames:
        return line_fingerprints(b"")
    return pl.concat(frames).collect().to_series().hash(seed=0)


def _next_id(cursors: list[Cursor]) -> int:
    return max((c.id for c in cursors), default=-1) + 1


def _damaged(logdir: Path, cursors: list[Cursor]) -> list[str]:
    """Compressed files not read to a clean end (``complete`` is false for them)."""
    return [
        str(logdir / c.name)
        for c in cursors
        if c.name.endswith(".gz") and not c.complete and (logdir / c.name).exists()
    ]


def _ingest_piece(
    piece: Piece, state: _State, writer: _Writer, report: IngestReport, *, count: bool = True
) -> tuple[DecodedText, pl.DataFrame]:
    """Decode a piece and write its events and notes; returns what ``decode_piece`` gave.

    ``count=False`` (a repair reading lost lines again) leaves the report and cursor alone.
    """
    dec, extra = decode_piece(piece, state.timezone)
    events = dec.events
    if count:
        name = str(piece.path)
        if not report.files or report.files[-1] != name:
            report.files.append(name)
        report.bytes_read += len(piece.data)
        report.lines += dec.lines
        report.events += events.height
        report.rejects += dec.rejects.height
        report.blank += dec.blank
        piece.cursor.blank += dec.blank
        piece.cursor.exact += dec.exact_lines
    exact_text = extra.height == 0 and b"\r" not in piece.data
    stored = events.drop("file").with_columns(
        pl.lit(piece.cursor.id, pl.Int32).alias("source"),
        _originals(piece.data, piece.first_line, events, exact_text),
    )
    stored = stored.select("source", *[c for c in stored.columns if c != "source"])
    exact = dec.exact_lines  # noted once per piece, in its first part
    for (month,), part in (
        stored.with_columns(_month_expr())
        .partition_by("_month", as_dict=True, maintain_order=True)
        .items()
    ):
        writer.add(f"events/month={month}", part.drop("_month"), sources_note(state, piece, exact))
        exact = 0
    notes = _notes(piece, dec, extra, events["line"].to_numpy(), state.next_nseq)
    state.next_nseq += notes.height
    if notes.height:
        writer.add("notes", notes, sources_note(state, piece, exact))
    return dec, extra


def _repeat_piece(piece: Piece, state: _State, writer: _Writer, report: IngestReport) -> None:
    """Note the lines of a rewritten file that repeat lines the store holds (not events again)."""
    starts, ends = _line_bounds(piece.data)
    n = len(ends)
    notes = pl.DataFrame(
        {
            "source": pl.Series([piece.cursor.id] * n, dtype=pl.Int32),
            "line": pl.Series(
                range(piece.first_line + 1, piece.first_line + n + 1), dtype=pl.Int64
            ),
            "nseq": pl.Series(range(state.next_nseq, state.next_nseq + n), dtype=pl.Int64),
            "kind": ["repeat"] * n,
            "detail": pl.Series([None] * n, dtype=pl.String),
            "raw": pl.Series([None] * n, dtype=pl.String),
            "orig": pl.Series(
                [piece.data[a:b] for a, b in zip(starts, ends, strict=True)], dtype=pl.Binary
            ),
        },
        schema=_NOTES_SCHEMA,
    )
    state.next_nseq += n
    report.repeated += n
    report.bytes_read += len(piece.data)
    writer.add("notes", notes, sources_note(state, piece, 0))
