"""From decoded bytes to a :class:`LoadResult`: pieces joined per file, the event frame, the report.

The loader (``_load``), the follower (``_follow``) and the history store (``_store``) all
end here, so none of them imports another for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from a2a_lab.io._tracking import Piece
from a2a_lab.schema import polars_schema
from a2a_lab.time import Zone, check_tz

if TYPE_CHECKING:
    # the decoder (pydantic) loads when a decode needs it: a store's reads import none of it
    from a2a_lab.io._decode import DecodedText

__all__ = [
    "LoadReport",
    "LoadResult",
    "decode_bytes",
    "decode_piece",
    "decode_pieces",
    "join_decoded",
]

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
        One row per rejected line: ``file, line, reason, raw`` (raw cut to 200 characters). The
        damaged tail of a compressed file is one rejected line (``damaged compressed data: …``).
    issues
        One row per problem in a KEPT event: ``file, line, kind, field`` where kind is
        ``wrong_type`` (a field of the wrong JSON type, treated as absent), ``invalid_utf8``
        (bytes decoded to U+FFFD), ``no_timestamp`` (no usable time; event time 0) or
        ``out_of_range`` (a time beyond JavaScript's ±8.64e15 ms, whose ``event_time`` is
        null, or another number beyond ±2^63; the value is kept, as the reference uses it).
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
            "rejects_by_reason": _counts(
                self.rejects.with_columns(pl.col("reason").str.replace(r" at column \d+$", "")),
                "reason",
            ),
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
            "| | count |",
            "|---|---:|",
            f"| files | {len(s['files'])} |",
            f"| lines | {s['lines']} |",
            f"| events | {s['events']} |",
            f"| rejected lines | {s['rejects']} |",
            f"| blank lines | {s['blank']} |",
            f"| warnings | {s['warnings']} |",
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

    def __iter__(self) -> Iterator[pl.DataFrame | LoadReport]:  # ``events, report = load(...)``
        yield self.events
        yield self.report


def no_timestamp_issues(events: pl.DataFrame) -> pl.DataFrame:
    """One ``no_timestamp`` issue row (``file``, ``line``, ``kind``, ``field``) per event
    without a usable time (``event_ms == 0``)."""
    # select, then filter: filtering the frame would first copy every column of the kept rows
    return (
        events.select("file", "line", "event_ms")
        .filter(pl.col("event_ms") == 0)
        .select(
            "file",
            "line",
            pl.lit("no_timestamp").alias("kind"),
            pl.lit(None, pl.String).alias("field"),
        )
    )


def _finish(
    decoded: list[tuple[str, DecodedText, pl.DataFrame]],
    sort: bool,
    raw: bool = True,
) -> LoadResult:
    """Concatenate per-file results, sort by event time, build the report."""
    schema = polars_schema(raw=raw)
    frames = _take_events([dec for _, dec, _ in decoded])
    events = _concat_contiguous(frames) if frames else pl.DataFrame(schema=schema)
    no_time = no_timestamp_issues(events)
    if sort and not events["event_ms"].is_sorted():
        holder = [events]
        del events
        events = _sorted_by_time(holder)
    if events.columns != list(schema):
        events = events.select([c for c in schema if c in events.columns or c != "raw"])
    report = load_report(decoded, events, no_time)
    return LoadResult(events=events, report=report)


def load_report(
    decoded: list[tuple[str, DecodedText, pl.DataFrame]],
    events: pl.DataFrame,
    no_time: pl.DataFrame,
) -> LoadReport:
    """The report of a load: ``decoded`` per file (name, chunks, extra issues), the events
    (``type`` is read) and their ``no_timestamp`` issues (:func:`no_timestamp_issues`)."""
    rejects = [
        dec.rejects.with_columns(pl.lit(name, dtype=pl.String).alias("file"))
        for name, dec, _ in decoded
    ]
    issues = [
        pl.concat([dec.issues, extra]).with_columns(pl.lit(name, dtype=pl.String).alias("file"))
        for name, dec, extra in decoded
    ]
    return LoadReport(
        files=[name for name, _, _ in decoded],
        lines={name: dec.lines for name, dec, _ in decoded},
        blank={name: dec.blank for name, dec, _ in decoded},
        rejects=pl.concat(rejects).select("file", "line", "reason", "raw")
        if rejects
        else _empty_rejects(),
        exact_lines=sum(dec.exact_lines for _, dec, _ in decoded),
        issues=pl.concat(
            [*(i.select("file", "line", "kind", "field") for i in issues), no_time]
        ).sort(["file", "line"], maintain_order=True)
        if issues
        else _empty_issues(),
        by_type=_counts(events.select("type"), "type"),
        events=events.height,
    )


def _take_events(parts: list[DecodedText]) -> list[pl.DataFrame]:
    """The non-empty event frames of ``parts``, which keep empty ones: the caller then holds
    the only reference, so :func:`_concat_contiguous` frees each chunk's column once copied."""
    frames = [p.events for p in parts if p.events.height]
    for p in parts:
        p.events = p.events.clear()
    return frames


def _sorted_by_time(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The one frame of ``frames`` sorted by ``event_ms`` (stable), a column at a time.

    ``DataFrame.sort`` gathers every column at once, holding the frame twice; gathering
    column by column (``data`` field by field) and dropping each source column once
    gathered keeps the peak at the frame plus one column. ``frames`` is emptied: pass the
    only reference.
    """
    (events,) = frames
    order = events.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).sort_by("event_ms", maintain_order=True)
    ).to_series()
    null = events["data"].is_null().gather(order)
    schema = events.schema
    del events
    return _rebuild(frames, lambda parts: parts[0].gather(order), schema, null)


def _rebuild(
    frames: list[pl.DataFrame],
    build: Callable[[list[pl.Series]], pl.Series],
    schema: pl.Schema,
    data_null: pl.Series,
) -> pl.DataFrame:
    """A frame of ``schema`` whose columns are ``build([column of each frame])``, built one
    column (and ``data`` field) at a time; each source column is dropped once built.

    ``data_null`` (already in the new row order) marks the rows whose ``data`` is null.
    """
    data_fields = [fld.name for fld in cast(pl.Struct, schema["data"]).fields]
    # the data fields as their own columns (zero-copy), prefixed: some share a top-level name
    # (``unnest`` of the Series: one call, where a select of every field costs ~4 ms a frame)
    flat = [
        pl.DataFrame(
            [
                *f.drop("data"),
                *f["data"].struct.unnest().select(pl.all().name.prefix("data.")),
            ]
        )
        for f in frames
    ]
    del frames[:]
    built: dict[str, pl.Series] = {}
    for name in flat[0].columns:
        parts = [f.drop_in_place(name) for f in flat]
        if all(p.null_count() == len(p) for p in parts):
            # a field no line carries: one null broadcast, not a buffer per row (most of the
            # 63 ``data`` fields in a typical log)
            built[name] = parts[0].clear(1).new_from_index(0, len(data_null))
        else:
            built[name] = build(parts)
        del parts
    data = pl.struct([built.pop("data." + n).alias(n) for n in data_fields], eager=True).alias(
        "data"
    )
    # a row without `data` keeps a null struct (the struct's own validity)
    if data_null.any():
        data = pl.select(pl.when(~data_null).then(data)).to_series().alias("data")
    return pl.DataFrame([data if n == "data" else built[n] for n in schema.names()])


def _concat_contiguous(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Concatenate chunk frames into one contiguous frame, column by column.

    Polars copies a multi-chunk frame into contiguous buffers on its first eager
    operation, which doubles the memory of a large log at that moment. Building each
    column once (``data`` field by field) and dropping the chunks' copy of it right away
    keeps the peak at the frame's size plus one column.
    """
    if len(frames) == 1:
        return frames[0]
    schema = frames[0].schema
    null = pl.concat([f["data"].is_null() for f in frames])
    return _rebuild(frames, lambda parts: pl.concat(parts, rechunk=True), schema, null)


def _empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema={**_REPORT_COLS, "reason": pl.String, "raw": pl.String})


def _empty_issues() -> pl.DataFrame:
    return pl.DataFrame(schema={**_REPORT_COLS, "kind": pl.String, "field": pl.String})


def decode_bytes(
    data: bytes, tz: str = "UTC", file: str | None = None, *, raw: bool = True
) -> tuple[DecodedText, pl.DataFrame]:
    """Decode one file's bytes (UTF-8 as Node does: invalid → U+FFFD, line kept and reported).

    Returns the decoded text and an (empty) frame of extra issues, for :func:`_finish`.
    ``tz``: best a :class:`~a2a_lab.time.Zone` (resolved once for every piece).
    """
    from a2a_lab.io._decode import ChunkDecoder, issues_frame

    zone = tz if isinstance(tz, Zone) else check_tz(tz)
    dec = ChunkDecoder(event_time=zone.event_time, raw=raw, file=file).decode(data)
    return dec, issues_frame([])


def decode_piece(piece: Piece, tz: str) -> tuple[DecodedText, pl.DataFrame]:
    """Decode one piece with the loader; lines renumbered to the file's physical lines.

    The one place that calls the loader's decoder: a change of its interface is one edit.
    Returns the decoded text and the extra issue rows (invalid UTF-8), as ``decode_bytes``.
    """
    dec, extra = decode_bytes(piece.data, tz, str(piece.path))
    if piece.first_line:
        shift = pl.col("line") + piece.first_line
        dec.events = dec.events.with_columns(shift)
        dec.rejects = dec.rejects.with_columns(shift)
        dec.issues = dec.issues.with_columns(shift)
        extra = extra.with_columns(shift)
    return dec, extra


def decode_pieces(pieces: list[Piece], tz: str) -> list[tuple[str, DecodedText, pl.DataFrame]]:
    """Decode pieces, one entry per file, for the loader's report."""
    return join_decoded([(str(p.path), *decode_piece(p, tz)) for p in pieces])


def join_decoded(
    decoded: list[tuple[str, DecodedText, pl.DataFrame]],
) -> list[tuple[str, DecodedText, pl.DataFrame]]:
    """Join consecutive decoded pieces of one file into one entry."""
    from a2a_lab.io._decode import DecodedText

    out: list[tuple[str, DecodedText, pl.DataFrame]] = []
    for name, dec, extra in decoded:
        if out and out[-1][0] == name:
            _, prev, prev_extra = out[-1]
            dec = DecodedText(
                events=pl.concat([prev.events, dec.events]),
                rejects=pl.concat([prev.rejects, dec.rejects]),
                issues=pl.concat([prev.issues, dec.issues]),
                lines=prev.lines + dec.lines,
                blank=prev.blank + dec.blank,
                exact_lines=prev.exact_lines + dec.exact_lines,
            )
            extra = pl.concat([prev_extra, extra])
            out[-1] = (name, dec, extra)
        else:
            out.append((name, dec, extra))
    return out
