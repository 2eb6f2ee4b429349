"""Resolve a log source (file, list, glob or log directory) to an ordered list of files."""

from __future__ import annotations

import glob as _glob
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The live log file's name (rules §9).
LIVE_NAME = "coordination-events.ndjson"
_ROTATED = re.compile(
    r"^coordination-events-(?P<stamp>\d{4}-\d{2}(?P<rest>[-T0-9Z]*))\.ndjson(?:\.gz)?$"
)

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class SourceError(ValueError):
    """A log source that names no readable file."""


def rotation_key(path: Path) -> tuple[int, str, int, str]:
    """Order rotated siblings oldest first.

    Size rotations are named by the ISO time of the rotation inside month M
    (``coordination-events-2026-02-19T11-20-00-000Z.ndjson``); the month rotation
    (``coordination-events-2026-02.ndjson``) holds the rest of month M, so within one month
    the time-stamped files come first. The live file is always last.
    """
    if path.name in (LIVE_NAME, LIVE_NAME + ".gz"):
        return (1, "", 0, "")
    m = _ROTATED.match(path.name)
    if m is None:
        return (0, path.name, 2, path.name)
    stamp = m.group("stamp")
    month = stamp[:7]
    return (0, month, 1 if not m.group("rest") else 0, stamp)


def log_files_in_dir(directory: Path) -> list[Path]:
    """The live file and its rotated siblings (optionally ``.gz``), oldest first."""
    names = [
        p
        for p in directory.iterdir()
        if p.is_file()
        and (p.name in (LIVE_NAME, LIVE_NAME + ".gz") or _ROTATED.match(p.name) is not None)
    ]
    return sorted(names, key=rotation_key)


def resolve_source(source: Source) -> list[Path]:
    """Turn a file, a list of files, a glob or a log directory into an ordered file list.

    A directory yields its live ``coordination-events.ndjson`` last and every rotated
    sibling ``coordination-events-*.ndjson[.gz]`` before it, oldest first. A list keeps the
    caller's order; a glob is expanded and ordered like a directory's siblings.

    Raises
    ------
    SourceError
        If the source names nothing that exists.
    """
    if isinstance(source, (str, os.PathLike)):
        items: Iterable[str | os.PathLike[str]] = [source]
        single = True
    else:
        items = list(source)
        single = False
        if not items:
            raise SourceError("empty list of log files")
    files: list[Path] = []
    for item in items:
        path = Path(os.fspath(item)).expanduser()
        if path.is_dir():
            found = log_files_in_dir(path)
            if not found:
                raise SourceError(f"no coordination-events*.ndjson files in directory {path}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif _glob.has_magic(str(path)):
            matched = [Path(p) for p in _glob.glob(str(path), recursive=True) if Path(p).is_file()]
            if not matched:
                raise SourceError(f"no file matches {path}")
            files.extend(sorted(matched, key=lambda p: (str(p.parent), rotation_key(p))))
        elif path.exists():
            raise SourceError(f"not a regular file or directory: {path}")
        else:
            raise SourceError(f"no such file or directory: {path}")
    if single and len(files) == 0:  # pragma: no cover - guarded above
        raise SourceError(f"nothing to read in {source}")
    return files


def _until_error(inflater: Any, block: bytes, step: int = 1024) -> bytes:
    out = []
    for i in range(0, len(block), step):
        try:
            out.append(inflater.decompress(block[i : i + step]))
        except zlib.error:
            break
    return b"".join(out)


@dataclass(frozen=True)
class SourceDamage:
    """The end of what could be read of a damaged compressed file, and why."""

    reason: str


def read_blocks(path: Path, size: int, progress: Any = None) -> Iterator[bytes | SourceDamage]:
    """The file's bytes in blocks of about ``size`` (gunzipped when the name ends in ``.gz``).

    A damaged ``.gz`` (truncated, corrupt deflate data, bad header or checksum) yields what
    decompressed before the damage, then a :class:`SourceDamage`. Concatenated gzip members
    are read one after another, as ``gzip`` does. ``progress`` (a tqdm bar) is advanced by
    the bytes read from disk.
    """
    with path.open("rb") as fh:
        if path.suffix != ".gz":
            while block := fh.read(size):
                if progress is not None:
                    progress.update(len(block))
                yield block
            return
        inflater = zlib.decompressobj(wbits=31)
        started = False
        while True:
            block = fh.read(size // 4)
            if progress is not None:
                progress.update(len(block))
            if not block:
                if started and not inflater.eof:
                    yield SourceDamage("truncated (the compressed stream ends early)")
                return
            while block:
                saved = inflater.copy()
                try:
                    out = inflater.decompress(block)
                except zlib.error as exc:
                    # zlib returns nothing from a failing call: redo it in small steps to
                    # keep what decompresses before the corrupt spot
                    yield _until_error(saved, block)
                    yield SourceDamage(f"corrupt ({exc})")
                    return
                started = True
                if out:
                    yield out
                if inflater.eof:
                    # the next gzip member (if any) starts in what the last one left over
                    block = inflater.unused_data
                    inflater = zlib.decompressobj(wbits=31)
                    started = bool(block)
                else:
                    block = b""


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
