"""Load a coordination log into the event frame, losing nothing."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, overload

import polars as pl
from polars.datatypes import DataTypeClass

from a2a_lab.io._decode import (
    RAW_PREVIEW,
    ChunkDecoder,
    DecodedText,
    decode_chunk,
    issues_frame,
)
from a2a_lab.io._result import LoadResult, _concat_contiguous, _finish, _take_events
from a2a_lab.io._sources import Source, SourceDamage, read_blocks, resolve_source
from a2a_lab.schema import polars_schema
from a2a_lab.timeparse import check_tz, resolve_tz

#: Bytes read (and decoded) at a time: bounds the decoder's temporaries.
CHUNK_BYTES = 8 * 2**20


def _decode_file(path: Path, timezone: str, raw: bool, bar: Any) -> DecodedText:
    """Decode one file in bounded chunks of whole lines; a damaged ``.gz`` keeps its
    readable lines and rejects the damaged tail."""
    decoder = ChunkDecoder(timezone=timezone, raw=raw, file=str(path))
    parts: list[DecodedText] = []
    next_line = 1
    pending = b""
    damage: str | None = None
    for block in read_blocks(path, CHUNK_BYTES, bar):
        if isinstance(block, SourceDamage):
            damage = block.reason
            break
        buf = pending + block if pending else block
        cut = buf.rfind(b"\n") + 1
        pending = buf[cut:]
        if cut:
            complete = buf[:cut] if cut < len(buf) else buf
            parts.append(decoder.decode(complete, next_line))
            next_line += complete.count(b"\n")
    if damage is None and pending:
        parts.append(decoder.decode(pending, next_line))
    elif damage is not None:
        # what was decompressed of the line where the data broke off, and the reason
        text = pending.decode("utf-8", errors="replace")
        rej = pl.DataFrame(
            {
                "line": [next_line],
                "reason": [f"damaged compressed data: {damage}"],
                "raw": [text[:RAW_PREVIEW]],
            },
            schema={"line": pl.Int64, "reason": pl.String, "raw": pl.String},
        )
        parts.append(
            DecodedText(
                events=decoder.decode(b"").events,
                rejects=rej,
                issues=issues_frame([]),
                lines=1,
                blank=0,
            )
        )
    if not parts:
        return decoder.decode(b"")
    empty = parts[0].events.clear()
    events = _take_events(parts)
    return DecodedText(
        events=_concat_contiguous(events) if events else empty,
        rejects=pl.concat([p.rejects for p in parts]),
        issues=pl.concat([p.issues for p in parts]),
        lines=sum(p.lines for p in parts),
        blank=sum(p.blank for p in parts),
        exact_lines=sum(p.exact_lines for p in parts),
    )


def _progress(files: list[Path], enabled: bool | None) -> Any:
    """A byte-count progress bar (``tqdm.auto``) that appears only for slow loads.

    ``None``: shown after two seconds on an interactive terminal or notebook, never when
    the ``CI`` environment variable is set or ``A2A_LAB_PROGRESS=0`` (``make test`` sets it:
    stored notebook outputs must not depend on how fast the machine is).
    """
    if enabled is None:
        enabled = not os.environ.get("CI") and os.environ.get("A2A_LAB_PROGRESS") != "0"
        disable: bool | None = None if enabled else True  # None: tqdm hides itself off a TTY
    else:
        disable = not enabled
    if disable:
        # the plain class: tqdm.auto in a kernel without ipywidgets warns on stderr even when off
        from tqdm import tqdm
    else:
        from tqdm.auto import tqdm
    total = sum(p.stat().st_size for p in files)
    return tqdm(
        total=total, unit="B", unit_scale=True, desc="load", delay=2.0, disable=disable, leave=False
    )


def load(
    source: Source,
    *,
    tz: str | None = None,
    sort: bool = True,
    raw: bool = False,
    progress: bool | None = None,
    timezone: str | None = None,
) -> LoadResult:
    """Load a coordination log: a file, a list of files, a glob, or a log directory.

    A directory means the live ``coordination-events.ndjson`` plus every rotated sibling
    ``coordination-events-*.ndjson`` (optionally ``.gz``), rotated files oldest first and the
    live file last. The events come back in time order (rules §2; ties keep file order) with
    their source ``file`` and 1-based physical ``line``; nothing is lost: every physical line
    is an event, a reject (in ``report.rejects`` with a specific reason) or a blank line. A
    damaged ``.gz`` keeps the lines read before the damage and rejects the rest as one line.

    Parameters
    ----------
    source
        Path, glob, directory, a list of paths, or a history store (see :func:`ingest`).
    tz
        IANA zone for ISO ``timestamp`` values without an offset (the reference host's local
        time); default UTC. An unknown zone raises ``ValueError`` naming ``tz``.
    sort
        Sort by event time (stable). ``False`` keeps file order.
    raw
        Keep each event's physical line in a ``raw`` column (for a byte-exact
        :func:`write_events`). Without it the lines are re-read from the files on demand
        (:func:`original_lines`), while the files are unchanged.
    progress
        Show a progress bar (``tqdm.auto``); by default only for loads that take more than
        two seconds, on a terminal or in a notebook, and never when ``CI`` is set.
    timezone
        Deprecated name of ``tz`` (warns).

    Returns
    -------
    LoadResult
        ``.events`` (the event frame of ``a2a_lab.schema.polars_schema(raw=raw)``) and ``.report``.

    Examples
    --------
    >>> import a2a_lab as al
    >>> res = al.load(al.samples.sample_dir())
    >>> res.report.total_lines == res.report.events + res.report.rejects.height + res.report.total_blank
    True
    """
    from a2a_lab.io._store import is_store
    from a2a_lab.io._store_read import load_store

    timezone = resolve_tz(tz, timezone, where="load")
    if isinstance(source, (str, os.PathLike)) and is_store(source):
        return load_store(source, tz=timezone, sort=sort, raw=raw)
    files = resolve_source(source)
    decoded = []
    with _progress(files, progress) as bar:
        for path in files:
            decoded.append((str(path), _decode_file(path, timezone, raw, bar), issues_frame([])))
    return _finish(decoded, timezone, sort, raw)


def from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    file: str = "<memory>",
    tz: str | None = None,
    sort: bool = True,
    timezone: str | None = None,
) -> pl.DataFrame:
    """Build the event frame from already-parsed event objects (``line`` = 1-based position).

    Records without a usable ``type`` raise ``ValueError`` (there is no report to put them in).
    ``tz`` is the zone of ISO timestamps without an offset, as for :func:`load` (``timezone``
    is its deprecated name).

    Examples
    --------
    >>> ev = from_records([{"type": "a2a.send", "ts": 5, "data": {"fromAgent": "ruda"}}])
    >>> ev.select("type", "event_ms", pl.col("data").struct.field("fromAgent")).row(0)
    ('a2a.send', 5.0, 'ruda')
    """
    timezone = resolve_tz(tz, timezone, where="from_records")
    lines = []
    for rec in records:
        text = json.dumps(dict(rec), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if _LONE_SURROGATE.search(text):  # not encodable as UTF-8: keep it as a JSON escape
            text = json.dumps(dict(rec), separators=(",", ":"), allow_nan=False)
        lines.append(text + "\n")
    dec = decode_chunk("".join(lines).encode("utf-8"), file=file, timezone=timezone, raw=True)
    if dec.rejects.height:
        line, reason = dec.rejects.row(0)[:2]
        raise ValueError(f"record {line}: {reason}")
    return _finish([(file, dec, issues_frame([]))], timezone, sort).events


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class WriteReport:
    """What :func:`write_events` wrote.

    Attributes
    ----------
    lines
        Lines written (one per event).
    original
        Lines written from the event's original line (``raw``): byte for byte as read,
        except that a line read with invalid UTF-8 is written as decoded (U+FFFD).
    canonical
        Lines written as canonical JSON from the typed columns (no ``raw``): reference field
        order, absent fields omitted, and only the declared fields (unknown ones are not in
        the frame).
    dropped_numbers
        Non-finite numbers left out of canonical lines (JSON has no Infinity or NaN).
    path
        The file written, or None when the text was returned.
    """

    lines: int
    original: int
    canonical: int
    dropped_numbers: int = 0
    path: str | None = None

    @property
    def exact(self) -> bool:
        """Every line came from its original line."""
        return self.canonical == 0


@overload
def write_events(events: pl.DataFrame, path: None = None) -> str: ...
@overload
def write_events(events: pl.DataFrame, path: str | Path) -> WriteReport: ...
def write_events(events: pl.DataFrame, path: str | Path | None = None) -> str | WriteReport:
    """Write events as NDJSON, one line per row, in the frame's order.

    A row with its original line (``raw``: loaded with ``raw=True``, or read from a store)
    is written as that line, byte for byte (a CR before the newline included). Other rows
    (made in memory, e.g. by the simulator, or loaded without ``raw``) are written as
    canonical JSON in the reference field order ``type, agentId, ts, …, data``, absent
    fields omitted; the report says how many. Every line is valid JSON. All of it is
    Polars expressions: no per-row Python.

    Returns
    -------
    str or WriteReport
        The text when ``path`` is None, else the report of what was written.

    Examples
    --------
    >>> ev = from_records([{"type": "a2a.send", "ts": 5, "data": {"fromAgent": "ruda"}}]).drop("raw")
    >>> write_events(ev)
    '{"type":"a2a.send","ts":5,"data":{"fromAgent":"ruda"}}\\n'
    """
    has_raw = "raw" in events.columns
    n_original = events.height - events["raw"].null_count() if has_raw else 0
    lines = (
        events.get_column("raw")
        if has_raw
        else pl.Series("raw", [None] * events.height, dtype=pl.String)
    )
    n_dropped = 0
    if n_original < events.height:
        # canonical JSON only for the rows without their original line
        missing = events.select(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"),
            pl.col("raw").is_null() if has_raw else pl.lit(True),
        )
        idx = missing.filter(missing.to_series(1)).get_column("_i")
        todo = (
            events.drop("raw", strict=False)[idx]
            if n_original
            else events.drop("raw", strict=False)
        )
        canonical, dropped = _canonical_line_expr(todo)
        written = todo.select(
            canonical.alias("raw"), *([dropped.alias("_dropped")] if dropped is not None else [])
        )
        n_dropped = int(written["_dropped"][0]) if dropped is not None else 0
        lines = (
            written.get_column("raw")
            if not n_original
            else lines.scatter(idx, written.get_column("raw"))
        )
    if path is None:
        return "".join(s + "\n" for s in lines.to_list())
    target = Path(path)
    # quote_style "never": the lines go out as they are, one per row, LF-terminated
    pl.DataFrame([lines]).write_csv(
        target, include_header=False, quote_style="never", line_terminator="\n"
    )
    return WriteReport(
        events.height, n_original, events.height - n_original, n_dropped, str(target)
    )


def _json_value(expr: pl.Expr, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
    """JSON text of one column's values (null where the value is absent or not finite)."""
    if dtype.is_float():
        integral = (expr == expr.floor()) & (expr.abs() < 1e21)
        return (
            pl.when(~expr.is_finite())
            .then(None)
            .when(integral)
            # Int128: an integral float beyond int64 (up to 1e21) keeps every digit
            .then(expr.cast(pl.Int128, strict=False).cast(pl.String))
            .otherwise(expr.cast(pl.String))
        )
    if dtype.is_integer():
        return expr.cast(pl.String)
    if dtype == pl.Boolean:
        return pl.when(expr).then(pl.lit("true")).when(~expr).then(pl.lit("false"))
    if isinstance(dtype, pl.List):
        items = expr.list.eval(_json_string(pl.element())).list.join(",")
        return pl.lit("[") + items + pl.lit("]")
    return _json_string(expr)


#: JSON string escapes (RFC 8259 §7): quote, backslash and the control characters.
_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_ESCAPES.update({chr(c): f"\\u{c:04x}" for c in range(0x20) if chr(c) not in _ESCAPES})


def _json_string(expr: pl.Expr) -> pl.Expr:
    """A JSON string literal of each value (Polars strings are UTF-8: no lone surrogates)."""
    return (
        pl.lit('"') + expr.str.replace_many(list(_ESCAPES), list(_ESCAPES.values())) + pl.lit('"')
    )


def _members(exprs: list[tuple[str, pl.Expr]]) -> pl.Expr:
    """``{"k":v,…}`` of the non-null members, in the given order."""
    parts = [pl.lit(json.dumps(k) + ":") + v for k, v in exprs]
    if not parts:
        return pl.lit("{}")
    return pl.lit("{") + pl.concat_str(parts, separator=",", ignore_nulls=True) + pl.lit("}")


def _canonical_line_expr(frame: pl.DataFrame) -> tuple[pl.Expr, pl.Expr | None]:
    """The canonical JSON line of a row from its typed columns, and a count of dropped numbers.

    Fields that are null in every row are left out of the expression (they would write
    nothing), which spares most of the 63 ``data`` fields on a typical log.
    """
    from a2a_lab.schema import FRAME_COLUMN_NAMES, REFERENCE_FIELD_ORDER, raw_event_dtype

    schema = frame.schema
    present = (
        set(
            frame.select(pl.col("data").struct.unnest())
            .select(pl.all().is_not_null().any())
            .row(0, named=True)
            .items()
        )
        if "data" in schema
        else set()
    )
    present_data = {k for k, v in present if v}

    # JSON keys are the log's field names; the frame holds them under snake_case columns
    top = [
        f.name for f in raw_event_dtype().fields if FRAME_COLUMN_NAMES.get(f.name, f.name) in schema
    ]
    order = [
        *(n for n in REFERENCE_FIELD_ORDER if n in top),
        *(n for n in top if n not in REFERENCE_FIELD_ORDER),
    ]
    members: list[tuple[str, pl.Expr]] = []
    dropped: list[pl.Expr] = []
    for name in order:
        col = FRAME_COLUMN_NAMES.get(name, name)
        dtype = schema[col]
        if name == "data":
            fields = [
                (f.name, _json_value(pl.col("data").struct.field(f.name), f.dtype))
                for f in cast(pl.Struct, dtype).fields
                if f.name in present_data
            ]
            members.append((name, pl.when(pl.col("data").is_not_null()).then(_members(fields))))
            dropped += [
                (~pl.col("data").struct.field(f.name).is_finite()).fill_null(False).sum()
                for f in cast(pl.Struct, dtype).fields
                if f.dtype.is_float() and f.name in present_data
            ]
        else:
            members.append((name, _json_value(pl.col(col), dtype)))
            if dtype.is_float():
                dropped.append((~pl.col(col).is_finite()).fill_null(False).sum())
    return _members(members), (pl.sum_horizontal(dropped) if dropped else None)


def original_lines(keys: pl.DataFrame) -> pl.Series:
    """The physical lines at ``keys`` (columns ``file``, ``line``), re-read from the files.

    For frames loaded without ``raw``: the lines are read again from their files, so they
    are the original lines only while the files are unchanged (an appended live log is
    fine; a rotated or rewritten one is not). A line that cannot be read is null.

    Examples
    --------
    >>> import a2a_lab as al
    >>> ev = al.load(al.samples.sample_dir()).events.head(2)
    >>> original_lines(ev.select("file", "line")).str.starts_with("{").to_list()
    [True, True]
    """
    found: dict[tuple[str, int], str] = {}
    for file, wanted in keys.group_by("file").agg(pl.col("line").unique().sort()).iter_rows():
        if file is None:
            continue
        path = Path(file)
        if not path.is_file():
            continue
        want = set(wanted)
        last = max(want)
        next_line = 1
        pending = b""
        for block in read_blocks(path, CHUNK_BYTES):
            if isinstance(block, SourceDamage) or next_line > last:
                break
            buf = pending + block
            cut = buf.rfind(b"\n") + 1
            pending = buf[cut:]
            n = buf.count(b"\n", 0, cut)
            if any(next_line <= w < next_line + n for w in want):
                for i, line in enumerate(buf[:cut].split(b"\n")[:-1], start=next_line):
                    if i in want:
                        found[(file, i)] = line.decode("utf-8", errors="replace")
            next_line += n
        if pending and next_line in want:
            found[(file, next_line)] = pending.decode("utf-8", errors="replace")
    return pl.Series(
        "raw",
        [found.get((f, ln)) for f, ln in keys.select("file", "line").iter_rows()],
        dtype=pl.String,
    )


def scan(source: Source, *, tz: str = "UTC", raw: bool = False) -> pl.LazyFrame:
    """The events of a log as a ``pl.LazyFrame`` (snake_case top-level columns).

    Nothing is read until the frame is collected. Then the files are decoded as by
    :func:`load` (the exact decoder cannot be pushed into Polars' NDJSON scan: it must see
    every line to route, reject and count it); filters and projections apply to what it
    returns. The load report is not part of a lazy frame: call :func:`load` for it.

    A history store (``a2a-lab ingest``) answers with ``pl.scan_parquet`` of its parts
    (:func:`a2a_lab.io.scan_store`): filters and projections reach the Parquet reader, and
    ``raw`` is read only when asked for.

    Parameters
    ----------
    source
        As for :func:`load`; checked at once (a missing source raises ``SourceError`` here,
        not at collect time).
    tz
        IANA zone for ISO ``timestamp`` values without an offset (default UTC).
    raw
        Include each event's original line (``raw``).

    Examples
    --------
    >>> import a2a_lab as al
    >>> lf = al.scan(al.samples.sample_dir())
    >>> lf.filter(pl.col("type") == "a2a.send").select("agent_id", "event_time").collect().height > 0
    True
    """
    check_tz(tz)
    from a2a_lab.io._store import is_store
    from a2a_lab.io._store_read import scan_store

    if isinstance(source, (str, os.PathLike)) and is_store(source):
        return scan_store(source, tz=tz, raw=raw)
    files = resolve_source(source)
    schema = polars_schema(raw=raw)

    def collect() -> pl.DataFrame:
        return load(files, tz=tz, raw=raw).events

    return pl.defer(collect, schema=schema)
