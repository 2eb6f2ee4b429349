"""Load a coordination log into the event frame, losing nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab._deep import deep_call
from a2a_lab.reference.jsstr import js_trim, js_well_formed_json
from a2a_lab.io._decode import (
    DecodedText,
    decode_lines,
    decode_text,
    issues_frame,
    rows_to_events,
    typed_row,
)
from a2a_lab.io._sources import Source, read_gzip_prefix, resolve_source
from a2a_lab.io._timestamps import MAX_DATE_MS, with_event_time
from a2a_lab.schema import LOG_FIELD_NAMES, polars_schema

_REPORT_COLS = {"file": pl.String, "line": pl.Int64}


@dataclass(repr=False)
class LoadReport:
    """What a load read: every physical line is an event, a reject or a blank line.

    Attributes
    ----------
    files
        The files read, in reading order.
    lines
        Physical lines per file (a final newline does not start another line).
    blank
        Blank (whitespace-only) lines per file.
    rejects
        One row per rejected line: ``file, line, reason, raw`` (raw cut to 200 characters).
    issues
        One row per problem in a KEPT event: ``file, line, kind, field`` where kind is
        ``wrong_type`` (a field of the wrong JSON type, treated as absent), ``invalid_utf8``
        (bytes decoded to U+FFFD) or ``no_timestamp`` (no usable time; event time 0).
    by_type
        Events per type.
    events
        Number of events kept.
    exact_lines
        Lines decoded by the exact (standard-library) path instead of the Polars fast path
        (malformed, wrongly typed or ambiguous lines); a performance figure, not a problem.
    """

    files: list[str]
    lines: dict[str, int]
    blank: dict[str, int]
    rejects: pl.DataFrame
    issues: pl.DataFrame
    by_type: dict[str, int]
    events: int
    exact_lines: int = 0

    @property
    def total_lines(self) -> int:
        """All physical lines read."""
        return sum(self.lines.values())

    @property
    def total_blank(self) -> int:
        """All blank lines."""
        return sum(self.blank.values())

    @property
    def warnings(self) -> int:
        """Number of issue rows (problems in kept events)."""
        return self.issues.height

    def summary(self) -> dict[str, Any]:
        """The report as plain JSON-able counts (``a2a-lab load --json``).

        Keys: ``files, lines, events, rejects, blank, warnings, by_type`` (all counts are
        integers), plus ``issues_by_kind`` and ``rejects_by_reason`` for detail.
        """
        return {
            "files": list(self.files),
            "lines": self.total_lines,
            "events": self.events,
            "rejects": self.rejects.height,
            "blank": self.total_blank,
            "warnings": self.warnings,
            "by_type": dict(self.by_type),
            "issues_by_kind": _counts(self.issues, "kind"),
            "rejects_by_reason": _counts(self.rejects.with_columns(pl.col("reason").str.replace(r" at column \d+$", "")), "reason"),
        }

    def __str__(self) -> str:
        s = self.summary()
        return (
            f"{len(s['files'])} file(s), {s['lines']} lines: {s['events']} events, "
            f"{s['rejects']} rejected, {s['blank']} blank, {s['warnings']} warnings"
        )

    def __repr__(self) -> str:
        return f"LoadReport({self})"

    def _repr_markdown_(self) -> str:
        s = self.summary()
        rows = [
            "| | count |", "|---|---:|",
            f"| files | {len(s['files'])} |", f"| lines | {s['lines']} |",
            f"| events | {s['events']} |", f"| rejected lines | {s['rejects']} |",
            f"| blank lines | {s['blank']} |", f"| warnings | {s['warnings']} |",
        ]
        return "\n".join(rows)


def _counts(frame: pl.DataFrame, col: str) -> dict[str, int]:
    if frame.height == 0:
        return {}
    agg = frame.group_by(col).len().sort(["len", col], descending=[True, False])
    return {str(k): int(v) for k, v in agg.iter_rows()}


@dataclass
class LoadResult:
    """The events of a load and its report."""

    events: pl.DataFrame
    report: LoadReport = field(repr=False)

    def __iter__(self):  # lets ``events, report = load(...)`` work
        yield self.events
        yield self.report


def _finish(decoded: list[tuple[str, DecodedText, pl.DataFrame]], timezone: str, sort: bool) -> LoadResult:
    """Concatenate per-file results, add provenance and time columns, sort, build the report."""
    schema = polars_schema()
    frames = []
    rejects = []
    issues = []
    for name, dec, extra_issues in decoded:
        frames.append(
            dec.events if "file" in dec.events.columns and dec.events["file"].null_count() == 0
            else dec.events.with_columns(pl.lit(name, dtype=pl.String).alias("file"))
        )
        rejects.append(dec.rejects.with_columns(pl.lit(name, dtype=pl.String).alias("file")))
        issues.append(pl.concat([dec.issues, extra_issues]).with_columns(pl.lit(name, dtype=pl.String).alias("file")))
    events = (
        pl.concat(frames, how="vertical", rechunk=False) if frames else pl.DataFrame(schema={k: v for k, v in schema.items() if k not in ("event_ms", "event_time")})
    )
    # A JavaScript Date holds ±8.64e15 ms; a number beyond it (or ±Infinity from 1e400) is
    # no time at all, so it is absent (reported), never a value that panics later.
    out_of_range = [
        events.select("file", "line", c).filter(~pl.col(c).abs().le(MAX_DATE_MS)).select("file", "line").with_columns(
            pl.lit("out_of_range").alias("kind"), pl.lit(c).alias("field"))
        for c in ("ts", "timestamp_ms")
    ]
    if any(f.height for f in out_of_range):
        events = events.with_columns(pl.when(pl.col(c).abs() <= MAX_DATE_MS).then(pl.col(c)).alias(c) for c in ("ts", "timestamp_ms"))
        if "event_ms" in events.columns:
            events = events.drop("event_ms", "event_time")
        issues.extend(out_of_range)
    if "event_ms" not in events.columns:
        events = with_event_time(events, timezone)
    # select, then filter: filtering the frame would first copy every column of the kept rows
    no_time = events.select("file", "line", "event_ms").filter(pl.col("event_ms") == 0).select(
        "file", "line", pl.lit("no_timestamp").alias("kind"), pl.lit(None, pl.String).alias("field")
    )
    if sort and not events["event_ms"].is_sorted():
        events = events.sort("event_ms", maintain_order=True)
    if events.columns != list(schema):
        events = events.select(list(schema))
    report = LoadReport(
        files=[name for name, _, _ in decoded],
        lines={name: dec.lines for name, dec, _ in decoded},
        blank={name: dec.blank for name, dec, _ in decoded},
        rejects=pl.concat(rejects).select("file", "line", "reason", "raw") if rejects else _empty_rejects(),
        exact_lines=sum(dec.exact_lines for _, dec, _ in decoded),
        issues=pl.concat([*(i.select("file", "line", "kind", "field") for i in issues), no_time]).sort(["file", "line"], maintain_order=True) if issues else _empty_issues(),
        by_type=_counts(events.select("type"), "type"),
        events=events.height,
    )
    return LoadResult(events=events, report=report)


def _empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema={**_REPORT_COLS, "reason": pl.String, "raw": pl.String})


def _empty_issues() -> pl.DataFrame:
    return pl.DataFrame(schema={**_REPORT_COLS, "kind": pl.String, "field": pl.String})


def _lines_or_none(source: Path | bytes) -> pl.Series | None:
    """Physical lines read by Polars (split on LF; a CR before it dropped, which the JS trim
    would remove anyway); None when the bytes are not valid UTF-8."""
    try:
        return pl.read_lines(source, name="text").to_series()
    except pl.exceptions.ComputeError as exc:
        if "utf8" in str(exc).lower() or "utf-8" in str(exc).lower():
            return None
        raise


def decode_bytes(data: bytes, timezone: str = "UTC", file: str | None = None) -> tuple[DecodedText, pl.DataFrame]:
    """Decode one file's bytes: UTF-8 as Node does (invalid → U+FFFD, line kept and reported)."""
    lines = _lines_or_none(data) if data else pl.Series("text", [], dtype=pl.String)
    if lines is not None:
        return decode_lines(lines, timezone=timezone, file=file), issues_frame([])
    return _decode_invalid_utf8(data, timezone, file)


def _decode_invalid_utf8(data: bytes, timezone: str, file: str | None) -> tuple[DecodedText, pl.DataFrame]:
    bad_lines = []
    for i, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            bad_lines.append(i)
    dec = decode_text(data.decode("utf-8", errors="replace"), timezone=timezone, file=file)
    extra = issues_frame([{"line": i, "kind": "invalid_utf8", "field": None} for i in bad_lines])
    return dec, extra


def _decode_file(path: Path, timezone: str) -> tuple[DecodedText, pl.DataFrame]:
    """Let Polars read a plain file itself (no copy through Python); gzip and invalid UTF-8
    go through :func:`decode_bytes`."""
    if path.suffix != ".gz" and path.stat().st_size > 0:
        lines = _lines_or_none(path)
        if lines is not None:
            return decode_lines(lines, file=str(path), timezone=timezone), issues_frame([])
    if path.suffix != ".gz":
        return decode_bytes(path.read_bytes(), timezone, str(path))
    data, damage = read_gzip_prefix(path)
    if damage is None:
        return decode_bytes(data, timezone, str(path))
    # The readable lines load; the damaged tail (the partial last line and whatever the
    # stream lost after it) is one reject, so the file still accounts for every line read.
    cut = data.rfind(b"\n") + 1
    dec, extra = decode_bytes(data[:cut], timezone, str(path))
    tail = pl.DataFrame(
        {"line": [dec.lines + 1], "reason": [f"damaged gzip: {damage}"], "raw": [data[cut:][:200].decode("utf-8", "replace")]},
        schema=dec.rejects.schema,
    )
    dec.rejects = pl.concat([dec.rejects, tail])
    dec.lines += 1
    return dec, extra


def load(source: Source, *, timezone: str = "UTC", sort: bool = True) -> LoadResult:
    """Load a coordination log: a file, a list of files, a glob, or a log directory.

    A directory means the live ``coordination-events.ndjson`` plus every rotated sibling
    ``coordination-events-*.ndjson`` (optionally ``.gz``), rotated files oldest first and the
    live file last. The events come back in time order (rules §2; ties keep file order) with
    their source ``file`` and 1-based physical ``line``; nothing is lost: every physical line
    is an event, a reject (in ``report.rejects`` with a specific reason) or a blank line.

    Parameters
    ----------
    source
        Path, glob, directory, a list of paths, or a history store (see :func:`ingest`).
    timezone
        Zone for ISO ``timestamp`` values without an offset (the reference host's local time).
    sort
        Sort by event time (stable). ``False`` keeps file order.

    Returns
    -------
    LoadResult
        ``.events`` (the event frame of ``a2a_lab.schema.polars_schema()``) and ``.report``.

    Examples
    --------
    >>> import a2a_lab as al
    >>> res = al.load(al.samples.sample_dir())
    >>> res.report.total_lines == res.report.events + res.report.rejects.height + res.report.total_blank
    True
    """
    from a2a_lab.io._store import is_store, load_store

    if isinstance(source, (str, os.PathLike)) and is_store(source):
        return load_store(source, timezone=timezone, sort=sort)
    files = resolve_source(source)
    decoded = []
    for path in files:
        dec, extra = _decode_file(path, timezone)
        decoded.append((str(path), dec, extra))
    return _finish(decoded, timezone, sort)


def from_records(
    records: Iterable[Mapping[str, Any]], *, file: str = "<memory>", timezone: str = "UTC", sort: bool = True
) -> pl.DataFrame:
    """Build the event frame from already-parsed event objects (``line`` = 1-based position).

    Records without a usable ``type`` raise ``ValueError`` (there is no report to put them in).

    Examples
    --------
    >>> ev = from_records([{"type": "a2a.send", "ts": 5, "data": {"fromAgent": "ruda"}}])
    >>> ev.select("type", "event_ms", pl.col("data").struct.field("fromAgent")).row(0)
    ('a2a.send', 5.0, 'ruda')
    """
    from a2a_lab.io._decode import parse_line

    rows = []
    for i, rec in enumerate(records, start=1):
        raw = json.dumps(dict(rec), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        obj, reason = parse_line(raw)
        if obj is None:
            raise ValueError(f"record {i}: {reason}")
        row, _ = typed_row(obj)
        row["line"] = i
        row["raw"] = raw
        rows.append(row)
    dec = DecodedText(events=rows_to_events(rows), rejects=_empty_rejects().drop("file"), issues=issues_frame([]), lines=len(rows), blank=0)
    return _finish([(file, dec, issues_frame([]))], timezone, sort).events


def write_events(events: pl.DataFrame, path: str | Path | None = None) -> str | None:
    """Write events as NDJSON in the reference field order ``type, agentId, ts, data``.

    Rows loaded from a log are written from their ``raw`` JSON (re-ordered, unknown fields
    kept), so a write-back reproduces every good input line as an equal JSON object. Rows
    made in memory (``raw`` null, e.g. by the simulator) are written from their typed
    columns with absent (null) fields omitted. Returns the text when ``path`` is None.
    """
    out: list[str] = []
    typed_cols = [c for c in ("type", "agent_id", "ts", "timestamp_ms", "timestamp", "status", "data") if c in events.columns]
    has_raw = "raw" in events.columns
    for row in events.select([*typed_cols, *(["raw"] if has_raw else [])]).iter_rows(named=True):
        raw = row.get("raw")
        obj = deep_call(json.loads, raw, depth=len(raw)) if raw is not None else _from_typed(row, typed_cols)
        out.append(_dump_line(obj, raw))
    text = "".join(line + "\n" for line in out)
    if path is None:
        return text
    Path(path).write_text(text, encoding="utf-8")
    return None


def _dump_line(obj: dict[str, Any], raw: str | None) -> str:
    """One output line: valid JSON and UTF-8 whatever the object holds.

    A number beyond float range (``1e400``) has no finite Python value: such a line is
    written as its original text, which is valid JSON (it loaded). A lone surrogate cannot be
    UTF-8: it is written as a ``\\u`` escape, as ``JSON.stringify`` writes it.
    """
    try:
        text = deep_call(json.dumps, _reference_order(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        if raw is None:
            raise
        return js_trim(raw)
    return js_well_formed_json(text)


def _from_typed(row: Mapping[str, Any], cols: list[str]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for c in cols:
        v = row[c]
        if v is None:
            continue
        if c == "data":
            v = {k: x for k, x in v.items() if x is not None}
        elif isinstance(v, float) and v.is_integer():
            v = int(v)
        obj[LOG_FIELD_NAMES.get(c, c)] = v
    if "data" in obj:
        obj["data"] = {k: (int(x) if isinstance(x, float) and x.is_integer() else x) for k, x in obj["data"].items()}
    return obj


def _reference_order(obj: dict[str, Any]) -> dict[str, Any]:
    from a2a_lab.schema import REFERENCE_FIELD_ORDER

    ordered = {k: obj[k] for k in REFERENCE_FIELD_ORDER if k in obj}
    ordered.update((k, v) for k, v in obj.items() if k not in ordered)
    return ordered

