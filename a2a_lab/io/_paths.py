"""Paths as bytes-safe names for Polars (issue 27 item 5).

A POSIX file name is bytes; Python keeps bytes that are not UTF-8 as lone surrogates
(``os.fsdecode``'s surrogateescape), and Polars, whose paths are Rust strings, refuses such
a name ("Object does not have a .read() method"). Handing Polars an open file object instead
would read a Parquet part into memory, losing the projection and row-group streaming the
store relies on; so Polars gets a UTF-8 alias of the same directory: a symbolic link in a
private temporary directory that points at the real one (by its bytes). Reads, writes and
renames through the alias reach the real files; messages keep naming the real path.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

_LOCK = threading.Lock()
_ALIASES: dict[str, Path] = {}
_HOME: list[Path] = []


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _alias(target: str) -> Path:
    """A UTF-8 path that is a symbolic link to ``target`` (an absolute path), made once."""
    with _LOCK:
        found = _ALIASES.get(target)
        if found is not None and os.path.lexists(found):
            return found
        if not _HOME or not _HOME[0].is_dir():
            home = Path(tempfile.mkdtemp(prefix="a2a_lab-paths-"))
            if not _HOME:
                # the links only (rmtree never follows a link into its target)
                atexit.register(lambda: shutil.rmtree(_HOME[0], ignore_errors=True))
            _HOME[:] = [home]
        link = _HOME[0] / str(len(_ALIASES))
        os.symlink(os.fsencode(target), link)
        _ALIASES[target] = link
        return link


def polars_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as Polars can take it: itself when its name is UTF-8, else an alias.

    The alias stands for the path's directory (so files written next to each other, a
    temporary part and its final name, stay in one directory) or, when the file's own name
    is not UTF-8, for the file.

    Parameters
    ----------
    path
        A file or directory path; bytes that are not UTF-8 held as surrogates.

    Returns
    -------
    Path
        A path whose text is UTF-8 and which names the same file.

    Examples
    --------
    >>> polars_path("store/events/part-1.parquet")
    PosixPath('store/events/part-1.parquet')
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> odd = os.path.join(d, os.fsdecode(b"st\\xff"), "part.parquet")
    >>> alias = polars_path(odd)
    >>> str(alias).encode("utf-8") and alias.name, os.path.realpath(alias.parent) == os.path.realpath(os.path.dirname(odd))
    ('part.parquet', True)
    """
    text = os.fspath(path)
    if _is_utf8(text):
        return Path(text)
    full = os.path.abspath(text)
    parent, name = os.path.split(full)
    if _is_utf8(name):
        return _alias(parent) / name
    return _alias(full)


def file_label(path: str | os.PathLike[str]) -> str:
    """A file's name as the frames' ``file`` column holds it: valid UTF-8 always.

    A name with bytes that are not UTF-8 (Python holds them as lone surrogates, which
    Polars and every text output refuse) shows each such byte as ``\\xNN``; a UTF-8 name
    is kept as it is. :func:`label_path` finds the file again.

    >>> file_label(os.fsdecode(b"log\\xff.ndjson")), file_label("로그.ndjson")
    ('log\\\\xff.ndjson', '로그.ndjson')
    """
    name = str(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name


def label_path(label: str) -> Path:
    """The file a :func:`file_label` names (the label itself when such a file exists)."""
    path = Path(label)
    if path.exists() or "\\x" not in label:
        return path
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), label.encode())
    return Path(os.fsdecode(raw))
