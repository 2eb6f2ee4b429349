"""Writing a history store's parts (:mod:`a2a_lab.io._store`): decoded pieces to Parquet
parts with their notes, footers and state entries, and compaction of small parts."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from a2a_lab.io._paths import polars_path
from a2a_lab.io._result import LoadResult, decode_piece
from a2a_lab.io._store_state import (
    LINE_NOTES,
    FileEntry,
    StoreError,
    _State,
    crash_point,
    file_problem,
    repair_hint,
    sha256_of,
)
from a2a_lab.io._tracking import Piece
from a2a_lab.time import format_time

if TYPE_CHECKING:
    import numpy as np

    from a2a_lab.io._decode import DecodedText

#: The Parquet footer key listing the ``data`` fields a part holds values of.
DATA_FIELDS_KEY = "a2a_lab.data_fields"
#: The Parquet footer key with the store and sources a part's rows come from (for a repair).
SOURCES_KEY = "a2a_lab.sources"

#: A part with at least this many rows is never rewritten by compaction. Compaction merges
#: smaller parts into outputs of fewer than twice this many rows, so what it holds is bounded
#: by this, not by how many events share a month (issue 24: one merged part per dense month
#: held 3.4 GB at 3.43 M events; sinking n rows of the dense benchmark takes about
#: 130 MB + 2 kB per row with Polars' two scan threads).
SEAL_ROWS = 150_000
#: At most this many smaller parts per partition: more are merged (:func:`compaction_groups`).
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
    crash: str = "part",
) -> FileEntry:
    """Write a part under a temporary name, flush it to disk, give it its name; its entry.
    (``crash``: the name of its crash points, ``{crash}-tmp`` and ``{crash}``.)

    The checksum is of the bytes read back (from the page cache: the part was just
    written), so the state records what is on disk.
    """
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # bounded row groups: a reader decodes a column a row group at a time, so a compacted
    # part of a million rows must not be one group (its texts would be decoded at once)
    if isinstance(frame, pl.LazyFrame):
        frame.sink_parquet(polars_path(tmp), metadata=metadata, row_group_size=ROW_GROUP_ROWS)
    else:
        frame.write_parquet(polars_path(tmp), metadata=metadata, row_group_size=ROW_GROUP_ROWS)
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    crash_point(f"{crash}-tmp")
    os.replace(tmp, path)
    crash_point(crash)
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
    note = pl.read_parquet_metadata(polars_path(path)).get(DATA_FIELDS_KEY)
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
    import numpy as np  # only an ingest needs it: the store's queries do not import it

    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(data))
    starts = np.concatenate(([0], nl + 1))[: len(ends)]
    return starts, ends


def _originals(
    data: bytes,
    first_line: int,
    events: pl.DataFrame,
    exact_text: bool,
    bounds: tuple[np.ndarray, np.ndarray],
) -> pl.Series:
    """``orig`` of each event: its line's exact bytes where ``raw`` does not reproduce them.

    With no CR and valid UTF-8 (``exact_text``), ``raw`` is the line itself or the line
    trimmed, so equal byte lengths mean equal lines and only the others are compared.
    ``bounds`` is :func:`_line_bounds` of ``data``.
    """
    import numpy as np

    starts, ends = bounds
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
    piece: Piece,
    dec: DecodedText,
    extra: pl.DataFrame,
    events_lines: np.ndarray,
    nseq: int,
    bounds: tuple[np.ndarray, np.ndarray],
) -> pl.DataFrame:
    """Rejected and blank lines with their exact bytes, and the issue rows of kept events
    (``bounds``: :func:`_line_bounds` of the piece's data)."""
    import numpy as np

    data = piece.data
    starts, ends = bounds
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


def _by_month(stored: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """The rows of ``stored`` by partition (month), in order of first appearance."""
    months = stored.select(_month_expr()).to_series()
    if months.n_unique() <= 1:
        # a piece within one month (the usual case): the rows as they are, not copied
        return [(months[0], stored)] if stored.height else []
    parts = stored.with_columns(months).partition_by("_month", as_dict=True, maintain_order=True)
    return [(month, part.drop("_month")) for (month,), part in parts.items()]


def compaction_groups(small: list[tuple[str, int]]) -> list[list[str]]:
    """The merges of a partition's small parts ``(path, rows)``, in generation order.

    Consecutive parts are taken while the group holds fewer than :data:`SEAL_ROWS` rows, so
    every group but the last is sealed once merged, each holds fewer than twice
    :data:`SEAL_ROWS` rows (the bound of what a merge holds), and at most one small part is
    left. A group of one part is no merge and is left out.
    """
    groups: list[list[str]] = [[]]
    rows = 0
    for path, n in small:
        if rows >= SEAL_ROWS:
            groups.append([])
            rows = 0
        groups[-1].append(path)
        rows += n
    return [g for g in groups if len(g) > 1]


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
        for group in compaction_groups([(p, self.files[p].rows) for p in small]):
            self._merge(partition, group)

    def _merge(self, partition: str, small: list[str]) -> None:
        """Write the parts ``small`` (checked, in generation order) as one part."""
        prefix = partition + "/"
        rel = self._name(partition)
        paths = [self.store / p for p in small]
        footers = [pl.read_parquet_metadata(polars_path(p)) for p in paths]
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
            pl.scan_parquet([polars_path(p) for p in paths]),
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
    bounds = _line_bounds(piece.data)  # one scan of the bytes for both uses below
    stored = events.drop("file").with_columns(
        pl.lit(piece.cursor.id, pl.Int32).alias("source"),
        _originals(piece.data, piece.first_line, events, exact_text, bounds),
    )
    stored = stored.select("source", *[c for c in stored.columns if c != "source"])
    exact = dec.exact_lines  # noted once per piece, in its first part
    for month, part in _by_month(stored):
        writer.add(f"events/month={month}", part, sources_note(state, piece, exact))
        exact = 0
    notes = _notes(piece, dec, extra, events["line"].to_numpy(), state.next_nseq, bounds)
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
