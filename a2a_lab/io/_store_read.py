"""Reading a history store (:mod:`a2a_lab.io._store`): lazy scans, loads, write-back.

Everything here reads the state file once and then Parquet parts through
``pl.scan_parquet``, so projections and filters reach the reader; only :func:`load_store`
(the eager load of :func:`a2a_lab.load`), :func:`store_lines` and :func:`export_store`
collect.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from a2a_lab.io._paths import file_label, polars_path
from a2a_lab.io._result import LoadReport, LoadResult, _counts, no_timestamp_issues
from a2a_lab.io._sources import rotation_key
from a2a_lab.io._store_state import LINE_NOTES, _State, verified_state
from a2a_lab.io._store_write import _NOTES_SCHEMA, _part_data_fields
from a2a_lab.io._tracking import Cursor
from a2a_lab.schema import polars_schema
from a2a_lab.time import check_tz


def _parts(store: Path, state: _State, kind: str) -> list[Path]:
    return [store / rel for rel in sorted(state.parts) if rel.startswith(kind + "/")]


def _ordered_cursors(state: _State) -> list[Cursor]:
    """The sources in the loader's reading order of a directory (oldest file first)."""
    return sorted(state.cursors, key=lambda c: (rotation_key(Path(c.name)), c.id))


def _file_names(state: _State) -> pl.DataFrame:
    """source id → file path as the loader names it, and the source's reading rank."""
    cursors = _ordered_cursors(state)
    return pl.DataFrame(
        {
            "source": [c.id for c in cursors],
            # labelled as the loader labels it (a name with bytes that are not UTF-8)
            "file": [file_label(Path(state.logdir) / c.name) for c in cursors],
            "_rank": list(range(len(cursors))),
        },
        schema={"source": pl.Int32, "file": pl.String, "_rank": pl.Int64},
    )


def _scan_events(store: Path, state: _State) -> pl.LazyFrame:
    """The event parts as stored (``source``, the frame's columns but ``file``, ``orig``).

    The ``data`` struct is decoded only for the fields some part notes as used (the
    others are null in every row, and are put back as null columns after the read, so
    the frame's dtype is the full one): the Parquet reader then skips most of the
    struct's 63 fields. Parts written before the note existed are read whole.
    """
    cols = {k: v for k, v in polars_schema().items() if k != "file"}
    schema = pl.Schema({"source": pl.Int32(), **cols, "orig": pl.Binary()})
    parts = _parts(store, state, "events")
    if not parts:
        return pl.LazyFrame(schema=schema)
    noted = [_part_data_fields(p) for p in parts]
    if any(fields is None for fields in noted):
        return pl.scan_parquet([polars_path(p) for p in parts])
    used: set[str] = set().union(*noted)  # type: ignore[arg-type]
    if not used:  # a struct without fields cannot be read: nothing to skip anyway
        return pl.scan_parquet([polars_path(p) for p in parts])
    full = schema["data"]
    assert isinstance(full, pl.Struct)
    read = dict(schema)
    read["data"] = pl.Struct([f for f in full.fields if f.name in used])
    data = pl.col("data").struct
    return pl.scan_parquet(
        [polars_path(p) for p in parts],
        schema=read,
        cast_options=pl.ScanCastOptions(extra_struct_fields="ignore"),
    ).with_columns(
        pl.when(pl.col("data").is_not_null())
        .then(
            pl.struct(
                data.field(f.name) if f.name in used else pl.lit(None, f.dtype).alias(f.name)
                for f in full.fields
            )
        )
        .alias("data")
    )


def _named(frame: pl.LazyFrame, state: _State) -> pl.LazyFrame:
    """``frame`` (with a ``source`` column) with each row's ``file`` and reading ``_rank``."""
    names = _file_names(state)
    return frame.with_columns(
        pl.col("source")
        .replace_strict(names["source"], names["file"], return_dtype=pl.String)
        .alias("file"),
        pl.col("source")
        .replace_strict(names["source"], names["_rank"], return_dtype=pl.Int64)
        .alias("_rank"),
    )


def _events(store: Path, state: _State, timezone: str | None) -> pl.LazyFrame:
    """The stored events with ``file`` and the file's reading rank ``_rank``, unordered."""
    frame = _named(_scan_events(store, state), state)
    if timezone is not None and timezone != state.timezone:
        from a2a_lab.time import event_ms_expr

        # only ISO timestamps without an offset depend on the zone; the loader's rule again
        frame = frame.with_columns(event_ms_expr(timezone)).with_columns(
            pl.col("event_ms")
            .cast(pl.Int64, strict=False)
            .cast(pl.Datetime("ms"))
            .dt.replace_time_zone("UTC")
            .alias("event_time")
        )
    return frame


def _store_tz(tz: str | None) -> str | None:
    """``tz`` checked; None means the store's own zone."""
    return None if tz is None else check_tz(tz)


def scan_store(
    store: str | os.PathLike[str],
    *,
    tz: str | None = None,
    raw: bool = False,
) -> pl.LazyFrame:
    """The store's events as a LazyFrame of the event frame's columns, in reading order.

    Projections and filters reach the Parquet reader: ``scan_store(s).select("type")`` reads
    one column, and the original lines (``raw``, the largest column) are read only when
    ``raw=True`` and selected. Rows come file by file (oldest file first, as the loader reads
    a directory) in line order, not in time order; :func:`load_store` sorts by time as
    :func:`a2a_lab.load` does. The call reads the ``source`` and ``line`` columns once to
    know whether the parts are already in that order (they are unless ingests interleaved
    files); only when they are not does the plan hold a sort, which collects every column
    selected.
    A ``tz`` other than the store's recomputes the event time of ISO timestamps.
    """
    tz = _store_tz(tz)
    store_path = Path(store).expanduser()
    state = verified_state(store_path)
    frame = _events(store_path, state, tz)
    if not _in_reading_order(store_path, state):
        frame = frame.sort("_rank", "line")
    return frame.select(list(polars_schema(raw=raw)))


def _in_reading_order(store: Path, state: _State) -> bool:
    """Whether the parts, read in order, give the lines in reading order (rank, line)."""
    names = _file_names(state)
    key = (
        _scan_events(store, state)
        .select(
            pl.col("source").replace_strict(names["source"], names["_rank"], return_dtype=pl.Int64)
            * (1 << 40)
            + pl.col("line")
        )
        .collect()
        .to_series()
    )
    return key.is_sorted()


def load_store(
    store: str | os.PathLike[str],
    *,
    tz: str | None = None,
    sort: bool = True,
    raw: bool = False,
) -> LoadResult:
    """Load a history store as :func:`a2a_lab.load` loads a log directory.

    The events, their order and the load report are those of loading the directory the
    store was ingested from, when that directory still holds what was ingested: same
    ``file`` paths and ``line`` numbers, same rejects and issues. (The store also keeps
    lines of files since deleted or truncated away; a live file's partial last line is
    not in the store until its newline is.)
    """
    tz = _store_tz(tz)
    store_path = Path(store).expanduser()
    state = verified_state(store_path)
    tz = state.timezone if tz is None else tz
    events = _events(store_path, state, tz).select(*polars_schema(raw=raw), "_rank").collect()
    # parts usually hold the lines in reading order already: a sort copies every column
    key = events.select(pl.col("_rank") * (1 << 40) + pl.col("line")).to_series()
    if not key.is_sorted():
        events = events.sort("_rank", "line")
    events = events.drop("_rank")
    if sort and not events["event_ms"].is_sorted():
        events = events.sort("event_ms", maintain_order=True)
    return LoadResult(events=events, report=_report(store_path, state, events))


def _report(store: Path, state: _State, events: pl.DataFrame) -> LoadReport:
    """The load report of the store's lines: ``events`` (``file``, ``line``, ``type``,
    ``event_ms`` of every stored event, in the load's order) and the notes."""
    names = _file_names(state)
    notes_parts = _parts(store, state, "notes")
    notes = (
        pl.scan_parquet([polars_path(p) for p in notes_parts])
        .join(names.lazy(), on="source", how="left")
        .sort("_rank", "line", "nseq")
        .collect()
        if notes_parts
        else pl.DataFrame(schema={**_NOTES_SCHEMA, "file": pl.String, "_rank": pl.Int64})
    )
    rejects = notes.filter(pl.col("kind") == "reject").select(
        "file", "line", pl.col("detail").alias("reason"), "raw"
    )
    no_time = no_timestamp_issues(events)
    issues = pl.concat(
        [
            notes.filter(~pl.col("kind").is_in(LINE_NOTES)).select(
                "file", "line", "kind", pl.col("detail").alias("field")
            ),
            no_time,
        ]
    ).sort(["file", "line"], maintain_order=True)
    # lines of a rewritten file that repeat lines held already are not lines read again
    repeats = dict(notes.filter(pl.col("kind") == "repeat").group_by("source").len().iter_rows())
    lines: dict[str, int] = {}
    blank: dict[str, int] = {}
    for c, name in zip(_ordered_cursors(state), names["file"], strict=True):
        lines[name] = lines.get(name, 0) + c.lines - repeats.get(c.id, 0)
        blank[name] = blank.get(name, 0) + c.blank
    return LoadReport(
        files=list(dict.fromkeys(names["file"])),
        lines=lines,
        blank=blank,
        rejects=rejects,
        issues=issues,
        by_type=_counts(events.select("type"), "type"),
        events=events.height,
        exact_lines=sum(c.exact for c in state.cursors),
    )


def store_report(store: str | os.PathLike[str]) -> LoadReport:
    """The report :func:`load_store` gives, reading four narrow columns instead of the events.

    For a query answered from the store's tables (``a2a-lab check STORE``), which still
    reports the load (its rejects are ``load.rejects`` findings).
    """
    store_path = Path(store).expanduser()
    state = verified_state(store_path)
    events = (
        _named(_scan_events(store_path, state).select("source", "line", "type", "event_ms"), state)
        .sort("_rank", "line")
        .select("file", "line", "type", "event_ms")
        .collect()
        .sort("event_ms", maintain_order=True)
    )
    return _report(store_path, state, events)


def _scan_lines(store: Path, state: _State) -> pl.LazyFrame:
    """Every ingested line as ``source, line, kind, bytes`` (unordered)."""
    frames = [
        _scan_events(store, state).select(
            "source",
            "line",
            pl.lit("event").alias("kind"),
            pl.coalesce("orig", pl.col("raw").cast(pl.Binary)).alias("bytes"),
        )
    ]
    notes_parts = _parts(store, state, "notes")
    if notes_parts:
        frames.append(
            pl.scan_parquet([polars_path(p) for p in notes_parts])
            .filter(pl.col("kind").is_in(LINE_NOTES))
            .select("source", "line", "kind", pl.col("orig").alias("bytes"))
        )
    return pl.concat(frames)


def store_lines(store: str | os.PathLike[str]) -> pl.DataFrame:
    """Every line ingested, exactly as read: ``file, line, kind, bytes``, in reading order.

    ``kind`` is ``event``, ``reject``, ``blank`` or ``repeat`` (a line of a rewritten file
    repeating a line held already); ``bytes`` is the line without its newline.
    """
    store_path = Path(store).expanduser()
    state = verified_state(store_path)
    return (
        _scan_lines(store_path, state)
        .join(_file_names(state).lazy(), on="source", how="left")
        .sort("_rank", "line")
        .select("file", "line", "kind", "bytes")
        .collect()
    )


def export_store(store: str | os.PathLike[str], directory: str | os.PathLike[str]) -> list[Path]:
    """Write the ingested lines back as log files, byte for byte, into ``directory``.

    One file per ingested file content, under its last known name, in the loader's order
    of a directory (oldest first); a ``.gz`` name loses
    its suffix (the content is written uncompressed), and a later content under a name
    already used (a file truncated and rewritten) gets a ``.N`` suffix. Returns the files
    written, in reading order.
    """
    out_dir = Path(directory).expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    store_path = Path(store).expanduser()
    state = verified_state(store_path)
    lines = _scan_lines(store_path, state).sort("source", "line").collect()
    by_source = lines.partition_by("source", as_dict=True, include_key=False)
    written: list[Path] = []
    used: dict[str, int] = {}
    for cursor in _ordered_cursors(state):
        name = cursor.name.removesuffix(".gz")
        version = used.get(name, 0)
        used[name] = version + 1
        target = out_dir / (name if version == 0 else f"{name}.{version}")
        part = by_source.get((cursor.id,))
        rows = part["bytes"].to_list() if part is not None else []
        text = b"\n".join(rows) + (b"" if cursor.open_end or not rows else b"\n")
        target.write_bytes(text)
        written.append(target)
    return written
