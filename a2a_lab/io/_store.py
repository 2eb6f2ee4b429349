"""An incremental Parquet history store of a log directory.

Layout of a store directory::

    a2a-store.json                       the state: marker, cursors, the list of parts
    events/month=YYYY-MM/part-*.parquet  events, hive-partitioned by UTC month of event time
    notes/part-*.parquet                 rejected and blank lines, problems in kept events
    .lock                                held by a running ingest

``a2a-store.json`` is the single source of truth: a part not listed there is not part of
the store (it is the leftover of an interrupted ingest and is deleted by the next one).
An ingest writes new parts under new names (to a temporary name, then renamed), replaces
the state file atomically as its very last step, and only then deletes the parts that
compaction replaced. Interrupted at any moment, it leaves the store as it was.

Every event keeps its original line: ``raw`` (the trimmed text the loader keeps) and,
only where the file's bytes differ from it (surrounding whitespace, CR, invalid UTF-8),
``orig`` with the exact bytes. Rejected and blank lines keep theirs in ``notes``. So the
ingested files can be written back byte for byte (:func:`export_store`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from a2a_lab._timefmt import format_time
from a2a_lab.io._decode import DecodedText
from a2a_lab.io._result import LoadResult, _finish, decode_piece, join_decoded
from a2a_lab.io._sources import split_target
from a2a_lab.io._tracking import Cursor, Piece, new_pieces
from a2a_lab.timeparse import resolve_tz

#: The state file; its presence makes a directory a store.
STATE_NAME = "a2a-store.json"
_FORMAT = "a2a-lab-store"
_VERSION = 1
#: The Parquet footer key listing the ``data`` fields a part holds values of.
DATA_FIELDS_KEY = "a2a_lab.data_fields"
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


class StoreError(ValueError):
    """A store that cannot be used as asked (not a store, busy, another log directory)."""


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a history store (a directory holding ``a2a-store.json``)."""
    return (Path(path).expanduser() / STATE_NAME).is_file()


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
# state
# ---------------------------------------------------------------------------------------


@dataclass
class _State:
    logdir: str
    timezone: str
    cursors: list[Cursor]
    parts: dict[str, int]  # relative path -> rows, events and notes alike
    next_nseq: int = 0
    generation: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "logdir": self.logdir,
            "timezone": self.timezone,
            "next_nseq": self.next_nseq,
            "generation": self.generation,
            "cursors": [c.to_json() for c in self.cursors],
            "parts": self.parts,
        }


def _read_state(store: Path) -> _State:
    try:
        obj = json.loads((store / STATE_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"not a history store (no {STATE_NAME}): {store}") from None
    except (OSError, ValueError) as exc:
        raise StoreError(f"unreadable store state {store / STATE_NAME}: {exc}") from None
    if not isinstance(obj, dict) or obj.get("format") != _FORMAT or obj.get("version") != _VERSION:
        raise StoreError(f"{store / STATE_NAME}: not a version {_VERSION} a2a-lab store")
    return _State(
        logdir=obj["logdir"],
        timezone=obj["timezone"],
        cursors=[Cursor.from_json(c) for c in obj["cursors"]],
        parts={str(k): int(v) for k, v in obj["parts"].items()},
        next_nseq=int(obj["next_nseq"]),
        generation=int(obj["generation"]),
    )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


@contextlib.contextmanager
def _locked(store: Path) -> Iterator[None]:
    with (store / ".lock").open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"store is busy: another ingest is running in {store}") from None
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------
# writing parts
# ---------------------------------------------------------------------------------------


def _write_part(
    store: Path,
    rel: str,
    frame: pl.DataFrame | pl.LazyFrame,
    metadata: dict[str, str] | None = None,
) -> None:
    """Write a part under a temporary name, flush it to disk, then give it its name."""
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
    os.replace(tmp, path)


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
    # format_time: strftime panics past the year 262142 (ts 8.64e15, far-future-fit)
    return format_time(pl.col("event_time"), "%Y-%m").fill_null("none").alias("_month")


class _Writer:
    """New parts of one ingest, and compaction of the partitions they land in."""

    def __init__(self, store: Path, state: _State) -> None:
        self.store = store
        self.state = state
        self.parts = dict(state.parts)
        self.removed: list[str] = []
        self.written = 0
        self.counter = 0

    def _name(self, partition: str) -> str:
        self.counter += 1
        return f"{partition}/part-{self.state.generation:08d}-{self.counter:05d}.parquet"

    def add(self, partition: str, frame: pl.DataFrame) -> None:
        rel = self._name(partition)
        _write_part(self.store, rel, frame, _data_fields_metadata(frame))
        self.parts[rel] = frame.height
        self.written += 1
        self._compact(partition)

    def _compact(self, partition: str) -> None:
        prefix = partition + "/"
        small = sorted(
            p for p, rows in self.parts.items() if p.startswith(prefix) and rows < SEAL_ROWS
        )
        if len(small) <= MAX_SMALL:
            return
        rel = self._name(partition)
        paths = [self.store / p for p in small]
        fields = [_part_data_fields(p) for p in paths] if prefix.startswith("events/") else []
        metadata = (
            {DATA_FIELDS_KEY: json.dumps(sorted(set().union(*fields)))}  # type: ignore[arg-type]
            if fields and all(f is not None for f in fields)
            else None
        )
        _write_part(self.store, rel, pl.scan_parquet(paths), metadata)
        self.parts[rel] = sum(self.parts.pop(p) for p in small)
        self.removed.extend(small)
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


def _open_store(store: Path, logdir: Path, timezone: str | None) -> _State:
    if is_store(store):
        state = _read_state(store)
        if state.logdir != str(logdir):
            raise StoreError(f"logdir: the store {store} holds {state.logdir}, not {logdir}")
        if timezone is not None and timezone != state.timezone:
            raise StoreError(
                f"timezone: the store {store} was ingested with {state.timezone!r}, not {timezone!r}"
            )
        return state
    if store.exists() and (not store.is_dir() or any(store.iterdir())):
        raise StoreError(f"store: {store} exists and is not an a2a-lab store (no {STATE_NAME})")
    return _State(logdir=str(logdir), timezone=timezone or "UTC", cursors=[], parts={})


def _remove_leftovers(store: Path, parts: dict[str, int]) -> None:
    """Delete parts of interrupted ingests (not in the state) and temporary files."""
    for sub in ("events", "notes"):
        root = store / sub
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            if path.is_file() and path.relative_to(store).as_posix() not in parts:
                path.unlink()


def ingest(
    logdir: str | os.PathLike[str],
    store: str | os.PathLike[str],
    *,
    tz: str | None = None,
    keep_events: bool = False,
    progress: bool | None = None,
    timezone: str | None = None,
) -> IngestReport:
    """Add the new complete lines of a log directory to a history store.

    Reads the live ``coordination-events.ndjson`` and its rotated siblings (``.gz`` too)
    from where the previous ingest stopped, following rotation, gzip and truncation
    without loss or duplicates (see :class:`~a2a_lab.io.LogFollower`); a partial last line
    of the live file waits for its newline. Safe to run from cron at any moment: one ingest
    at a time (a second one fails with :class:`StoreError`), and an interrupted one leaves
    the store as it was.

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

    Returns
    -------
    IngestReport

    Raises
    ------
    StoreError
        If ``logdir`` is not a directory, ``store`` is another directory or holds another
        log directory, the store is busy, or the timezone differs from the store's.

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
    state = _open_store(store_path, logdir_path, timezone)
    store_path.mkdir(parents=True, exist_ok=True)
    report = IngestReport(store=store_path)
    with _locked(store_path):
        if is_store(store_path):
            state = _read_state(store_path)  # another ingest may have committed meanwhile
        _remove_leftovers(store_path, state.parts)
        state.generation += 1
        writer = _Writer(store_path, state)
        kept: list[tuple[str, DecodedText, pl.DataFrame]] = []
        bar = _progress(progress)
        try:
            for piece in new_pieces(
                logdir_path, state.cursors, _next_id(state.cursors), single=None
            ):
                dec, extra = _ingest_piece(piece, state, writer, report)
                bar.update(len(piece.data))
                if keep_events:
                    kept.append((str(piece.path), dec, extra))
                del dec, extra
        finally:
            bar.close()
        report.damaged = _damaged(logdir_path, state.cursors)
        state.parts = writer.parts
        _write_atomic(
            store_path / STATE_NAME, json.dumps(state.to_json(), indent=1).encode("utf-8")
        )
        for rel in writer.removed:
            (store_path / rel).unlink(missing_ok=True)
    report.parts_written, report.parts_removed = writer.written, len(writer.removed)
    if keep_events:
        report.new = _finish(join_decoded(kept), state.timezone, True)
    report.seconds = time.perf_counter() - started
    return report


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
    piece: Piece, state: _State, writer: _Writer, report: IngestReport
) -> tuple[DecodedText, pl.DataFrame]:
    """Decode a piece and write its events and notes; returns what ``decode_piece`` gave."""
    dec, extra = decode_piece(piece, state.timezone)
    events = dec.events
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
    for (month,), part in (
        stored.with_columns(_month_expr())
        .partition_by("_month", as_dict=True, maintain_order=True)
        .items()
    ):
        writer.add(f"events/month={month}", part.drop("_month"))
    notes = _notes(piece, dec, extra, events["line"].to_numpy(), state.next_nseq)
    state.next_nseq += notes.height
    if notes.height:
        writer.add("notes", notes)
    return dec, extra
