"""Follow a live log incrementally, across rotation, gzip and truncation, losing nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from a2a_lab.io._result import LoadResult, _finish, decode_pieces
from a2a_lab.io._sources import split_target
from a2a_lab.io._tracking import Cursor, Piece, line_fingerprints, new_pieces
from a2a_lab.time import Zone, check_tz


@dataclass
class LogFollower:
    """Read only what was appended to a log since the last :meth:`refresh`.

    Parameters
    ----------
    path
        A log directory (the live ``coordination-events.ndjson`` and its rotated siblings,
        which may appear later, as may the directory itself), the live file (same), or
        another file (followed alone).
    tz
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
    * A file rewritten in place (shortened keeping its beginning, or edited into a new
      inode as ``sed -i`` does, then perhaps rotated) is read again, without the lines it
      repeats from what was already returned (matched by line fingerprint, counted). For
      this the follower keeps 8 bytes per line returned.
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
    tz: str = "UTC"
    store: Path | None = None
    _dir: Path = field(init=False, repr=False)
    _single: str | None = field(init=False, repr=False)
    _cursors: list[Cursor] = field(default_factory=list, init=False, repr=False)
    _next_id: int = field(default=0, init=False, repr=False)
    _prints: dict[int, pl.Series] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.tz, Zone):  # resolved once: the CLI's is not checked again
            self.tz = check_tz(self.tz)
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
                return _finish([], True)
            new = ingest(self._dir, self.store, tz=self.tz, keep_events=True).new
            if new is None:  # keep_events=True always keeps them
                raise RuntimeError("ingest(keep_events=True) returned no events")
            return new
        return _finish(decode_pieces(self._pieces(), self.tz), True)

    def _pieces(self) -> list[Piece]:
        pieces = list(
            new_pieces(
                self._dir, self._cursors, self._next_id, single=self._single, seen=self._seen
            )
        )
        self._next_id = max((c.id for c in self._cursors), default=-1) + 1
        for p in pieces:
            prints = line_fingerprints(p.data)
            held = self._prints.get(p.cursor.id)
            if held is not None:
                # one Series per content, its chunks merged now and then: a follower
                # refreshed every second must not keep a Series per refresh
                prints = held.append(prints)
                if prints.n_chunks() > 64:
                    prints = prints.rechunk()
            self._prints[p.cursor.id] = prints
        return [p for p in pieces if not p.repeat]

    def _seen(self, cursor: Cursor) -> pl.Series:
        """Fingerprints of the lines read from ``cursor``'s content (a rewrite drops them).

        The old content is gone once rewritten: its fingerprints are not needed again.
        """
        prints = self._prints.pop(cursor.id, None)
        return prints if prints is not None else pl.Series("fp", [], dtype=pl.UInt64)

    def close(self) -> None:
        """Nothing stays open between refreshes; kept for code written against older versions."""
