"""Follow a live log incrementally, across rotation, gzip and truncation, losing nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from a2a_lab.io._decode import DecodedText
from a2a_lab.io._load import LoadResult, _finish, decode_bytes
from a2a_lab.io._sources import LIVE_NAME
from a2a_lab.io._tracking import Cursor, Piece, new_pieces


def decode_piece(piece: Piece, timezone: str) -> tuple[DecodedText, pl.DataFrame]:
    """Decode one piece with the loader; lines renumbered to the file's physical lines.

    The one place that calls the loader's decoder: a change of its interface is one edit.
    Returns the decoded text and the extra issue rows (invalid UTF-8), as ``decode_bytes``.
    """
    dec, extra = decode_bytes(piece.data, timezone, str(piece.path))
    if piece.first_line:
        shift = pl.col("line") + piece.first_line
        dec.events = dec.events.with_columns(shift)
        dec.rejects = dec.rejects.with_columns(shift)
        dec.issues = dec.issues.with_columns(shift)
        extra = extra.with_columns(shift)
    return dec, extra


def decode_pieces(
    pieces: list[Piece], timezone: str
) -> list[tuple[str, DecodedText, pl.DataFrame]]:
    """Decode pieces, one entry per file, for the loader's report."""
    return join_decoded([(str(p.path), *decode_piece(p, timezone)) for p in pieces])


def join_decoded(
    decoded: list[tuple[str, DecodedText, pl.DataFrame]],
) -> list[tuple[str, DecodedText, pl.DataFrame]]:
    """Join consecutive decoded pieces of one file into one entry."""
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


def split_target(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """A follow target as (directory, single file name or None for the live file + siblings).

    A directory, or a path named ``coordination-events.ndjson``, follows the live file and
    its rotated siblings; another file name follows that one file. A path that does not
    exist yet and has no ``.ndjson``/``.gz`` suffix is taken as a directory to come.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        return p, None
    if p.name == LIVE_NAME:
        return p.parent, None
    if p.is_file() or p.suffix in (".ndjson", ".gz"):
        return p.parent, p.name
    return p, None


@dataclass
class LogFollower:
    """Read only what was appended to a log since the last :meth:`refresh`.

    Parameters
    ----------
    path
        A log directory (the live ``coordination-events.ndjson`` and its rotated siblings,
        which may appear later, as may the directory itself), the live file (same), or
        another file (followed alone).
    timezone
        As for :func:`a2a_lab.load`.
    store
        A history store (see :func:`a2a_lab.io.ingest`): each refresh then ingests the new
        lines into it, resuming from the store's own record of what was read, and returns
        them. Requires a directory (or the live file) as ``path``.

    Notes
    -----
    * A trailing partial line of the live file (no newline yet) is held back until its
      newline arrives. A rotated file is read to its end: the reference writer never
      appends to it again.
    * Rotation, several rotations between two refreshes, gzip of rotated files, truncation
      and a rewrite of any length: a file keeps its place by the fingerprint of its first
      bytes and of the bytes before the point read (see ``a2a_lab.io._tracking``), so each
      line is returned once. Lines written and truncated away between two refreshes were
      never readable and are not returned.
    * ``file`` is the path a line was read from (a rotated file under its new name), and
      ``line`` its physical line number in that file's content.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); f = d / "coordination-events.ndjson"
    >>> _ = f.write_text('{"type":"a2a.send","ts":1}\\n{"type":"a2a.re')
    >>> fol = LogFollower(d)
    >>> fol.refresh().events.height
    1
    >>> with f.open("a") as fh: _ = fh.write('sponse","ts":2}\\n')
    >>> fol.refresh().events["type"].to_list()
    ['a2a.response']
    """

    path: Path
    timezone: str = "UTC"
    store: Path | None = None
    _dir: Path = field(init=False, repr=False)
    _single: str | None = field(init=False, repr=False)
    _cursors: list[Cursor] = field(default_factory=list, init=False, repr=False)
    _next_id: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path).expanduser()
        self._dir, self._single = split_target(self.path)
        if self.store is not None:
            if self._single is not None:
                raise ValueError(
                    f"path: a store follows a log directory, not the single file {self.path}"
                )
            self.store = Path(self.store).expanduser()

    def refresh(self) -> LoadResult:
        """Decode every complete line written since the last call (in time order)."""
        if self.store is not None:
            from a2a_lab.io._store import ingest

            if not self._dir.is_dir():  # the directory may appear later
                return _finish([], self.timezone, True)
            return ingest(self._dir, self.store, tz=self.timezone, keep_events=True).new
        return _finish(decode_pieces(self._pieces(), self.timezone), self.timezone, True)

    def _pieces(self) -> list[Piece]:
        pieces = list(new_pieces(self._dir, self._cursors, self._next_id, single=self._single))
        self._next_id = max((c.id for c in self._cursors), default=-1) + 1
        return pieces

    def close(self) -> None:
        """Nothing stays open between refreshes; kept for code written against older versions."""
