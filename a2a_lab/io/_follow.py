"""Follow a live log incrementally, across rotation and truncation, losing nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import polars as pl

from a2a_lab.io._load import LoadResult, _finish, decode_bytes
from a2a_lab.io._sources import LIVE_NAME


@dataclass
class LogFollower:
    """Read only what was appended to a log since the last :meth:`refresh`.

    Parameters
    ----------
    path
        The live log file, or a log directory (then its ``coordination-events.ndjson``).
    timezone
        As for :func:`a2a_lab.load`.

    Notes
    -----
    * A trailing partial line (no newline yet) is held back until its newline arrives.
    * Rotation (the file renamed and a new one created): the follower keeps the old file
      open, reads what was appended to it before the rename, then starts the new file from
      its first byte. Truncation in place (size below the offset): reading restarts at 0.
    * Line numbers are physical line numbers in the file they were read from; ``file`` is
      the live path (a rotated file is reported under the live name, with its lines).

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
    _fh: BinaryIO | None = field(default=None, init=False, repr=False)
    _ino: int | None = field(default=None, init=False, repr=False)
    _offset: int = field(default=0, init=False)
    _pending: bytes = field(default=b"", init=False, repr=False)
    _lines_done: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        p = Path(self.path).expanduser()
        self.path = p / LIVE_NAME if p.is_dir() else p

    @property
    def offset(self) -> int:
        """Bytes of the current file consumed (complete lines only are decoded)."""
        return self._offset

    def _open(self) -> bool:
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            return False
        self._fh = fh
        self._ino = os.fstat(fh.fileno()).st_ino
        self._offset = 0
        self._pending = b""
        self._lines_done = 0
        return True

    def _read_available(self) -> bytes:
        assert self._fh is not None
        self._fh.seek(self._offset)
        chunk = self._fh.read()
        self._offset += len(chunk)
        return chunk

    def _take_lines(self, chunk: bytes, final: bool) -> tuple[bytes, int]:
        """Complete lines of pending + chunk, and the first line number they carry."""
        buf = self._pending + chunk
        cut = len(buf) if final else buf.rfind(b"\n") + 1
        complete, self._pending = buf[:cut], buf[cut:]
        first = self._lines_done
        self._lines_done += complete.count(b"\n") + (1 if final and complete and not complete.endswith(b"\n") else 0)
        return complete, first

    def refresh(self) -> LoadResult:
        """Decode every complete line appended since the last call (in time order)."""
        pieces: list[tuple[bytes, int]] = []
        if self._fh is None and not self._open():
            return _finish([], self.timezone, True)
        try:
            st = os.stat(self.path)
            current_ino: int | None = st.st_ino
            current_size = st.st_size
        except FileNotFoundError:
            current_ino, current_size = None, 0
        if current_ino == self._ino and current_size < self._offset:
            # truncated in place: start over on the same file
            self._offset, self._pending, self._lines_done = 0, b"", 0
        pieces.append(self._take_lines(self._read_available(), final=False))
        if current_ino is not None and current_ino != self._ino:
            # rotated: the old handle still reads the renamed file; flush its last line too
            pieces.append(self._take_lines(self._read_available(), final=True))
            assert self._fh is not None
            self._fh.close()
            self._fh = None
            if self._open():
                pieces.append(self._take_lines(self._read_available(), final=False))
        decoded = []
        for data, first_line in pieces:
            if not data:
                continue
            dec, extra = decode_bytes(data, self.timezone, str(self.path))
            shift = pl.col("line") + first_line
            dec.events = dec.events.with_columns(shift)
            dec.rejects = dec.rejects.with_columns(shift)
            dec.issues = dec.issues.with_columns(shift)
            decoded.append((str(self.path), dec, extra.with_columns(shift)))
        return _finish(decoded, self.timezone, True)

    def close(self) -> None:
        """Close the open file handle."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
