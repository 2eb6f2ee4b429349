"""Which bytes of a log directory are new: file identity across rotation, gzip and truncation.

A :class:`Cursor` remembers how far one file's content has been read. A file keeps its
cursor while its content keeps its beginning and the bytes just before the cursor, whatever
its name or inode becomes: the reference writer renames the live file on rotation (same
inode, new name), ``gzip`` replaces a rotated file by a compressed copy (new inode, same
content), ``logrotate copytruncate`` copies it and empties the original. So a file is
matched to a cursor by its first bytes (``head``, kept whole) and a digest of the bytes
just before the cursor (``tail``); the device and inode only make the common case cheap.
A file that starts like a known content but ends before its cursor is a copy still being
written and is skipped. A file matching no cursor is new and read from its first byte,
which is how a truncated and rewritten live file is noticed even when the rewrite is
longer than what was read before.

A content can also be rewritten in place: shortened keeping its beginning (same inode, its
bytes before the cursor changed), or replaced by an edited copy (``sed -i``: new inode,
same name). Such a file is matched to the cursor it replaces (same inode, or same name, or
same first line, while no file holds that cursor's content any more) and read again from
its first byte as a new content, but its lines that repeat lines already read from the old
content (by line fingerprint, counted: a line read once is dropped once) come as
``repeat`` pieces, which a reader does not return again.

Both :class:`~a2a_lab.io.LogFollower` and :func:`~a2a_lab.io.ingest` read through
:func:`new_pieces`; the follower keeps its cursors in memory, the store in its state file.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.io._sources import LIVE_NAME, log_files_in_dir

#: Bytes of a file's beginning, and of the content just before a cursor, that identify it.
HEAD = 4096
TAIL = 4096
_HEAD_B64 = len(base64.b64encode(bytes(HEAD)))
#: Bytes read at a time; a piece handed to the decoder holds at most about this much.
BLOCK = 64 * 1024 * 1024


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class Cursor:
    """How far one file's (decompressed) content has been read.

    Attributes
    ----------
    id
        Stable number of the file's content (a store refers to it in every event).
    name
        The file's name when it was last seen.
    offset
        Bytes consumed: always the end of a complete line, or the end of a rotated file.
    lines
        Physical lines consumed.
    blank, exact
        Blank lines among them, and lines the decoder sent through its exact path.
    head
        The content's first bytes (at most :data:`HEAD`), base64: kept whole, not as a
        digest, so that a copy still being written (shorter) is recognised as one.
    tail_len, tail
        Length and digest of the bytes just before ``offset`` (at most :data:`TAIL`).
    dev, ino, size, mtime_ns
        The file's identity and state when read; an unchanged file is not opened again.
    complete
        The content was read to its end for that recorded state.
    open_end
        Its last line, read at the end of a rotated file, has no newline.
    """

    id: int
    name: str
    offset: int = 0
    lines: int = 0
    blank: int = 0
    exact: int = 0
    head: str = ""
    tail_len: int = 0
    tail: str = ""
    dev: int = -1
    ino: int = -1
    size: int = -1
    mtime_ns: int = -1
    complete: bool = False
    open_end: bool = False

    def to_json(self) -> dict[str, Any]:
        """The cursor as a JSON object (the store's state file)."""
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Cursor:
        """Inverse of :meth:`to_json`."""
        return cls(**obj)


@dataclass
class Piece:
    """Complete lines newly read from one file.

    ``first_line`` lines of the file precede ``data``; ``path`` is where they were read.
    ``repeat``: these lines repeat lines already read from the content this file rewrote
    (see the module notes); a reader counts them but does not return them again.
    """

    cursor: Cursor
    path: Path
    data: bytes
    first_line: int
    repeat: bool = False


#: Fingerprints of the lines already read from a content (see :func:`line_fingerprints`).
SeenLines = Callable[[Cursor], pl.Series]


def line_fingerprints(data: bytes) -> pl.Series:
    """One 64-bit fingerprint per physical line of ``data`` (newline excluded).

    A final fragment without newline is a line too (a rotated file's last line). The
    fingerprint is Polars' hash with fixed seeds: stable within a process, which is all
    a reader needs (it compares lines it holds now).
    """
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return pl.Series("fp", lines, dtype=pl.Binary).hash(seed=0)


def is_gz(path: Path) -> bool:
    """Whether the file is gzip-compressed (by its name, as the loader decides)."""
    return path.suffix == ".gz"


def _plain_blocks(path: Path, start: int) -> Iterator[bytes]:
    with path.open("rb") as fh:
        fh.seek(start)
        while block := fh.read(BLOCK):
            yield block


def _gz_blocks(path: Path, start: int, damage: list[str]) -> Iterator[bytes]:
    """Decompressed content from byte ``start``; a damaged or unfinished stream ends early
    and its reason is appended to ``damage`` (a ``gzip`` still writing looks the same)."""
    skip = start
    with path.open("rb") as fh:
        dec = zlib.decompressobj(wbits=31)
        fed = False  # the current member has received input
        while True:
            raw = fh.read(1 << 20)
            if not raw:
                if fed and not dec.eof:
                    damage.append("compressed data ends early")
                return
            while raw:
                try:
                    out = dec.decompress(raw)
                except zlib.error as exc:
                    damage.append(f"corrupt compressed data: {exc}")
                    return
                fed = True
                raw = b""
                if dec.eof:
                    # concatenated gzip members are one stream, as gunzip reads them
                    raw = dec.unused_data
                    dec = zlib.decompressobj(wbits=31)
                    fed = False
                if skip >= len(out):
                    skip -= len(out)
                    continue
                yield out[skip:]
                skip = 0


def content_blocks(path: Path, start: int = 0, damage: list[str] | None = None) -> Iterator[bytes]:
    """The file's content from byte ``start`` (gunzipped for ``.gz``), in blocks."""
    if is_gz(path):
        return _gz_blocks(path, start, [] if damage is None else damage)
    return _plain_blocks(path, start)


def read_span(path: Path, start: int, end: int) -> bytes:
    """Content bytes ``[start, end)`` (fewer when the content is shorter)."""
    if end <= start:
        return b""
    if not is_gz(path):
        with path.open("rb") as fh:
            fh.seek(start)
            return fh.read(end - start)
    out = bytearray()
    for block in _gz_blocks(path, start, []):
        out += block
        if len(out) >= end - start:
            break
    return bytes(out[: end - start])


def _compare(cursor: Cursor, path: Path, head: bytes) -> str:
    """``"same"``: the file holds the cursor's content up to its offset; ``"prefix"``: it
    holds the beginning of it (a copy or gzip still being written); ``"other"``: another
    content."""
    known = base64.b64decode(cursor.head)
    if cursor.offset == 0 or head[: len(known)] != known[: len(head)]:
        return "other"
    if len(head) < len(known):
        return "prefix"
    tail = read_span(path, cursor.offset - cursor.tail_len, cursor.offset)
    if len(tail) < cursor.tail_len:
        return "prefix"
    return "same" if _digest(tail) == cursor.tail else "other"


def watched_files(directory: Path, single: str | None) -> list[Path]:
    """The files followed, oldest first: one named file, or the live file and its siblings."""
    try:
        if single is not None:
            path = directory / single
            return [path] if path.is_file() else []
        return log_files_in_dir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _assign(
    files: list[Path], cursors: list[Cursor], next_id: int
) -> tuple[list[tuple[Path, Cursor, os.stat_result]], int, dict[int, Cursor]]:
    """Pair each file with its cursor (a new one for new content); copies are left out.

    Also returns the new cursors that are rewrites of an old one (by new cursor id): a
    file that replaced a content no other file holds any more (same name or first line), whose lines repeating the old content's are then not returned again.
    """
    stats: dict[Path, os.stat_result] = {}
    for path in files:
        try:
            stats[path] = path.stat()
        except FileNotFoundError:
            continue
    by_inode = {(c.dev, c.ino): c for c in cursors}
    claimed: dict[int, Path] = {}
    owner: dict[Path, Cursor] = {}
    heads: dict[Path, bytes] = {}

    def head_of(path: Path) -> bytes:
        if path not in heads:
            heads[path] = read_span(path, 0, HEAD)
        return heads[path]

    # first the files that kept their inode (renamed or appended to): the cheap, common case
    for path, st in stats.items():
        c = by_inode.get((st.st_dev, st.st_ino))
        if c is None or c.id in claimed:
            continue
        unchanged = c.complete and c.size == st.st_size and c.mtime_ns == st.st_mtime_ns
        if unchanged or _compare(c, path, head_of(path)) == "same":
            claimed[c.id] = path
            owner[path] = c
    # then content that moved to another inode (gzip, copy), or that is new
    fresh: list[Path] = []
    shrunk: list[Path] = []  # starts like a known content, but shorter
    for path in stats:
        if path in owner:
            continue
        verdicts = [(c, _compare(c, path, head_of(path))) for c in cursors]
        free = [c for c, v in verdicts if v == "same" and c.id not in claimed]
        if free:
            claimed[free[0].id] = path
            owner[path] = free[0]
        elif all(v == "other" for _, v in verdicts):
            fresh.append(path)
        else:
            # the beginning of a known content: a copy still being written (gzip, cp) while
            # the original holds it, or, if no file holds that content any more, the
            # content rewritten shorter (below)
            shrunk.append(path)
    candidates = [*shrunk, *_originals_only(fresh, head_of, stats)]
    replaced: dict[Path, Cursor] = {}
    # what a file replaced: first by content (its first line among the old content's first
    # bytes), then by name, so that a new live file does not take the content a rotated
    # rewrite holds
    for by_name in (False, True):
        for path in candidates:
            if path not in replaced:
                old = _replaced(path, cursors, claimed, head_of, by_name=by_name)
                if old is not None:
                    replaced[path] = old
                    claimed[old.id] = path
    rewrites: dict[int, Cursor] = {}
    for path in candidates:
        if path in shrunk and path not in replaced:
            continue  # the beginning of a content still held elsewhere: a copy
        owner[path] = Cursor(id=next_id, name=path.name)
        if path in replaced:
            rewrites[next_id] = replaced[path]
        next_id += 1
    return [(p, owner[p], stats[p]) for p in stats if p in owner], next_id, rewrites


def _replaced(
    path: Path,
    cursors: list[Cursor],
    claimed: dict[int, Path],
    head_of: Callable[[Path], bytes],
    *,
    by_name: bool,
) -> Cursor | None:
    """The content a new or shrunk file rewrote: a cursor no file holds any more whose first
    bytes hold the file's first line as a whole line (a file shrunk or edited near its
    start, then perhaps rotated), or (``by_name``) of the file's name (an edited or
    recreated file). Not the inode: a deleted file's inode is soon reused by another."""
    free = [c for c in cursors if c.id not in claimed and c.offset > 0]
    if by_name:
        same = [c for c in free if c.name == path.name]
        return same[-1] if same else None
    head = head_of(path)
    if b"\n" not in head:
        return None
    first = head[: head.find(b"\n") + 1]
    for c in reversed(free):
        known = base64.b64decode(c.head)
        if known.startswith(first) or b"\n" + first in known:
            return c
    return None


def _originals_only(
    fresh: list[Path], head_of: Callable[[Path], bytes], stats: dict[Path, os.stat_result]
) -> list[Path]:
    """New contents, one file each: of a file and its copy in progress (both new since the
    last read, e.g. rotated and gzipped in between), keep the plain, then the larger one."""

    def same_start(a: bytes, b: bytes) -> bool:
        # at least one whole line in common: a new live file holding only a partial line
        # is not a copy of anything
        n = min(len(a), len(b))
        return a[:n] == b[:n] and b"\n" in a[:n]

    kept: list[Path] = []
    for path in fresh:
        n_rival = next(
            (i for i, q in enumerate(kept) if same_start(head_of(path), head_of(q))), None
        )
        if n_rival is None:
            kept.append(path)
        elif (not is_gz(path), stats[path].st_size) > (
            not is_gz(kept[n_rival]),
            stats[kept[n_rival]].st_size,
        ):
            kept[n_rival] = path
    return kept


def new_pieces(
    directory: Path,
    cursors: list[Cursor],
    next_id: int,
    *,
    single: str | None = None,
    seen: SeenLines | None = None,
) -> Iterator[Piece]:
    """Read what is new in the followed files, oldest file first, updating the cursors.

    New cursors (new content) are appended to ``cursors``. Only complete lines are read from
    the live file; a rotated file (the reference writer never appends to it again) is read to
    its end, a last line without newline included. A damaged compressed file yields its
    readable complete lines. Each cursor is updated after its file's last piece is consumed,
    so a consumer that stops early must not keep the cursors.

    ``seen`` gives the fingerprints of the lines already read from a content
    (:func:`line_fingerprints` of them, in any order); a file that rewrote that content
    yields its repeated lines as ``repeat`` pieces. Without it they are read as new.
    """
    files = watched_files(directory, single)
    known = {c.id for c in cursors}
    assigned, _, rewrites = _assign(files, cursors, next_id)
    for path, cursor, st in assigned:
        final = single is None and path.name not in (LIVE_NAME, LIVE_NAME + ".gz")
        if (
            cursor.complete
            and cursor.size == st.st_size
            and cursor.mtime_ns == st.st_mtime_ns
            and (cursor.dev, cursor.ino) == (st.st_dev, st.st_ino)
        ):
            cursor.name = path.name
            continue
        old = rewrites.get(cursor.id)
        if old is not None and seen is not None:
            yield from _drop_repeats(_read_file(path, cursor, st, final), seen(old))
        else:
            yield from _read_file(path, cursor, st, final)
        if cursor.offset > 0 and cursor.id not in known:
            cursors.append(cursor)
            known.add(cursor.id)


def _stamp(cursor: Cursor, st: os.stat_result, *, complete: bool) -> None:
    """Record the file's identity and size as read, and whether it was read to its end."""
    cursor.dev, cursor.ino, cursor.size, cursor.mtime_ns = (
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )
    cursor.complete = complete


def _read_file(path: Path, cursor: Cursor, st: os.stat_result, final: bool) -> Iterator[Piece]:
    damage: list[str] = []
    offset, lines = cursor.offset, cursor.lines
    pending = b""
    recent = b""  # the last TAIL bytes consumed, for the new tail fingerprint
    first = b"" if offset > 0 else None
    for block in content_blocks(path, offset, damage):
        buf = pending + block
        cut = buf.rfind(b"\n") + 1
        pending = buf[cut:]
        if cut:
            data = buf[:cut]
            if first is None:
                first = data[:HEAD]
            yield Piece(cursor, path, data, lines)
            offset += cut
            lines += data.count(b"\n")
            # the piece's last TAIL bytes only: concatenating the whole piece copied it
            recent = (recent + data[-TAIL:])[-TAIL:]
    ended = not damage
    if pending and final and ended:
        if first is None:
            first = pending[:HEAD]
        yield Piece(cursor, path, pending, lines)
        offset += len(pending)
        lines += 1
        recent = (recent + pending)[-TAIL:]
        cursor.open_end = True
        pending = b""
    cursor.name = path.name
    if offset == cursor.offset:
        _stamp(cursor, st, complete=ended and not pending and (is_gz(path) or offset >= st.st_size))
        return
    cursor.offset, cursor.lines = offset, lines
    if len(cursor.head) < _HEAD_B64:
        head = first if first else read_span(path, 0, min(HEAD, offset))
        cursor.head = base64.b64encode(head[: min(HEAD, offset)]).decode("ascii")
    tail_len = min(TAIL, offset)
    tail = (
        recent[-tail_len:]
        if len(recent) >= tail_len
        else read_span(path, offset - tail_len, offset)
    )
    cursor.tail_len, cursor.tail = tail_len, _digest(tail)
    _stamp(cursor, st, complete=ended and not pending and (is_gz(path) or offset >= st.st_size))


def _drop_repeats(pieces: Iterator[Piece], seen: pl.Series) -> Iterator[Piece]:
    """The pieces of a rewritten content, its lines already read (``seen``) as repeats.

    Counted: a line read ``k`` times before is a repeat for its first ``k`` occurrences.
    """
    left: dict[int, int] = dict(seen.value_counts().iter_rows())
    for piece in pieces:
        prints = line_fingerprints(piece.data).to_list()
        repeat = []
        for fp in prints:
            n = left.get(fp, 0)
            repeat.append(n > 0)
            if n:
                left[fp] = n - 1
        yield from _split_runs(piece, repeat)


def _split_runs(piece: Piece, repeat: list[bool]) -> Iterator[Piece]:
    """``piece`` cut into runs of lines that are all repeats or all new."""
    if not any(repeat):
        yield piece
        return
    data = piece.data
    start = 0
    run_start = 0
    for i in range(1, len(repeat) + 1):
        if i < len(repeat) and repeat[i] == repeat[run_start]:
            continue
        # the end of line i-1 (after its newline, or the data's end for a last open line)
        end = start
        for _ in range(i - run_start):
            nl = data.find(b"\n", end)
            end = len(data) if nl < 0 else nl + 1
        yield Piece(
            piece.cursor,
            piece.path,
            data[start:end],
            piece.first_line + run_start,
            repeat=repeat[run_start],
        )
        start, run_start = end, i
