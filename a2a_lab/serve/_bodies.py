"""Work-session bodies from kept texts: event objects by line, sessions by their content.

The dashboard's default page holds every event of a hundred sessions as an enriched event
object (rules §6). Each object depends on its own line only (enrichment is row by row), so
its JSON text is made the first time a body needs it and kept (:class:`EventTexts`). A
session's text depends only on its row, its threads and its events, so it is kept too,
under a signature of exactly those (:class:`SessionTexts`), with its deflate stream: after
the log grows or a session turns ARCHIVED, a new body costs the sessions query, the
writing and compression of the sessions that changed, and a join of the others.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import polars as pl

from a2a_lab.serve._json import Fragment, fragment_at, js_json_parts
from a2a_lab.sessions import WorkSessionsResult, event_objects

V = TypeVar("V", bytes, tuple[bytes, bytes])

#: Where a thread's events stand in the body: body → sessions → session → threads → thread
#: → events → the event, two spaces a level.
EVENT_INDENT = " " * 12
#: Where a session stands in the body: body → sessions → the session.
SESSION_INDENT = " " * 4
#: zlib's default level: a kept session is compressed once, so the smaller stream (about
#: 0.6 of level 1's on the dashboard's page) is paid for once and sent at every request.
DEFLATE_LEVEL = 6
#: The level of text deflated for one body only (an events page, the joins between
#: sessions): level 1 takes about half the time of level 6 for about 1.6 times the bytes.
ONCE_LEVEL = 1


def deflated(data: bytes, level: int = DEFLATE_LEVEL) -> bytes:
    """``data`` as raw deflate blocks ending on a byte boundary, none of them the last.

    A sync flush ends the stream without finishing it, so such pieces, each compressed on
    its own, concatenate to one valid deflate stream (closed by :data:`DEFLATE_END`).
    """
    packer = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH)


#: The last block of a deflate stream: empty, fixed Huffman codes, final bit set.
DEFLATE_END = b"\x03\x00"
#: A gzip member's header (RFC 1952): deflate, no name, no time, unknown OS.
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


class Piece(Fragment):
    """A session's text (at :data:`SESSION_INDENT`) with its deflate stream (:func:`deflated`)."""

    __slots__ = ("_deflated",)

    def __init__(self, data: bytes, packed: bytes | None = None) -> None:
        super().__init__(data, SESSION_INDENT)
        self._deflated = packed

    def deflated(self) -> bytes:
        """The deflate stream of the text (made once, by the first caller if not given)."""
        if self._deflated is None:
            self._deflated = deflated(self.data)
        return self._deflated


class Body:
    """A response body made of pieces; its bytes and its gzip encoding made when first asked.

    Parameters
    ----------
    parts
        The body's bytes in order: plain bytes or fragments; the deflate streams of kept
        :class:`Piece` texts are reused by every body they stand in.
    """

    __slots__ = ("_gzip", "_lock", "_plain", "parts", "size")

    def __init__(self, parts: list[bytes | Fragment] | bytes) -> None:
        self.parts = [parts] if isinstance(parts, bytes) else parts
        self.size = sum(len(_data(p)) for p in self.parts)
        self._plain: bytes | None = parts if isinstance(parts, bytes) else None
        self._gzip: bytes | None = None
        self._lock = threading.Lock()

    def chunks(self) -> list[bytes]:
        """The body's bytes in its parts, in order (``b"".join`` of them: :attr:`plain`)."""
        return [_data(p) for p in self.parts]

    @property
    def plain(self) -> bytes:
        """The body's bytes."""
        with self._lock:
            if self._plain is None:
                self._plain = b"".join(_data(p) for p in self.parts)
            return self._plain

    def gzipped(self) -> bytes:
        """The gzip encoding (one member): the pieces' kept deflate streams, the plain parts
        deflated now, the end block, then the CRC-32 and length of the whole text."""
        with self._lock:
            if self._gzip is None:
                crc = 0
                streams = [GZIP_HEADER]
                for part in self.parts:
                    crc = zlib.crc32(_data(part), crc)
                    streams.append(
                        part.deflated()
                        if isinstance(part, Piece)
                        else deflated(_data(part), ONCE_LEVEL)
                    )
                streams.append(DEFLATE_END)
                streams.append(crc.to_bytes(4, "little"))
                streams.append((self.size & 0xFFFFFFFF).to_bytes(4, "little"))
                self._gzip = b"".join(streams)
            return self._gzip


def _data(part: bytes | Fragment) -> bytes:
    return part.data if isinstance(part, Fragment) else part


class _Kept(Generic[V]):
    """Values by key, the least recently used dropped past ``budget_chars`` (thread-safe).

    The values are bytes or tuples of bytes in a plain dict, never objects of a class:
    the garbage collector stops looking into such a dict after its first pass over it,
    where a dict of 100,000 objects is traversed by every full collection, which holds
    the interpreter (hundreds of ms on a loaded machine: every client waits).
    """

    def __init__(self, budget_chars: int) -> None:
        self.budget_chars = budget_chars
        self._values: dict[Any, V] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    @staticmethod
    def _size(value: V) -> int:
        return len(value) if isinstance(value, bytes) else sum(len(v) for v in value)

    def clear(self) -> None:
        """Forget every value (the source was read again: a line may now be another event)."""
        with self._lock:
            self._values.clear()
            self._chars = 0

    def found(self, keys: list[Any]) -> dict[Any, V]:
        """The kept values among ``keys`` (each marked as just used)."""
        values = self._values
        with self._lock:
            found = {}
            for key in keys:
                value = values.pop(key, None)
                if value is not None:
                    values[key] = value  # moved to the end: the most recently used
                    found[key] = value
            return found

    def keep(self, made: dict[Any, V]) -> None:
        """Keep ``made``, then drop the least recently used values past the budget."""
        values = self._values
        with self._lock:
            for key, value in made.items():
                if key not in values:
                    values[key] = value
                    self._chars += self._size(value)
            while self._chars > self.budget_chars and values:
                oldest = next(iter(values))
                self._chars -= self._size(values.pop(oldest))


#: Where an event object's row comes from: the enriched frame in memory, or a function
#: giving the enriched rows (``raw`` included) at ``file, line`` keys, in their order.
EventRows = pl.DataFrame | Callable[[pl.DataFrame], pl.DataFrame]


def rows_at(events: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``events`` at ``keys`` (``file, line``), in the keys' order."""
    return (
        keys.with_row_index("_order")
        .join(events, on=["file", "line"], how="left")
        .sort("_order")
        .drop("_order")
    )


class EventTexts(_Kept[bytes]):
    """Event object texts (at :data:`EVENT_INDENT`) by ``(file, line)``, at most about
    ``budget_chars`` bytes.

    Parameters
    ----------
    budget_chars
        When the kept texts would pass this many characters, the least recently used are
        dropped first (memory is bounded by construction, whatever the pages ask for).
    """

    def __init__(self, budget_chars: int = 256_000_000) -> None:
        super().__init__(budget_chars)

    def texts(self, events: EventRows, keys: pl.DataFrame) -> list[Fragment]:
        """The texts of the events at ``keys`` (``file, line`` rows of ``events``), in order."""
        wanted = list(keys.select("file", "line").iter_rows())
        found = self.found(wanted)
        missing = pl.DataFrame(
            list(dict.fromkeys(k for k in wanted if k not in found)),
            schema={"file": pl.String, "line": pl.Int64},
            orient="row",
        )
        if missing.height:
            rows = events(missing) if callable(events) else rows_at(events, missing)
            made = {
                key: fragment_at(obj, EVENT_INDENT).data
                for key, obj in zip(missing.iter_rows(), event_objects(rows), strict=True)
            }
            found.update(made)
            self.keep(made)
        return [Fragment(found[k], EVENT_INDENT) for k in wanted]


class SessionTexts(_Kept[tuple[bytes, bytes]]):
    """Session texts (at :data:`SESSION_INDENT`) and their deflate streams, by the
    signature of what they are written from."""

    def __init__(self, budget_chars: int = 256_000_000) -> None:
        super().__init__(budget_chars)


def _signatures(
    page: pl.DataFrame, threads: pl.DataFrame, members: pl.DataFrame
) -> list[tuple[int, int]]:
    """Per session of ``page``, a 128-bit hash of its row, its threads' rows and its events'
    membership rows (``file, line, ts, type``), in order: everything its text is written
    from (an event's text is its line's, :class:`EventTexts`)."""
    key = "work_session_id"
    columns = []
    for seed in (1, 2):
        row = pl.struct(pl.all()).hash(seed)
        per_session = [
            frame.group_by(key, maintain_order=True)
            .agg(row.alias(name))
            .with_columns(pl.col(name).hash(seed))
            for frame, name in ((threads, "_t"), (members, "_m"))
        ]
        signed = page.select(key, row.alias("_s"))
        for table in per_session:
            signed = signed.join(table, on=key, how="left", nulls_equal=True, maintain_order="left")
        columns.append(signed.select(pl.struct("_s", "_t", "_m").hash(seed)).to_series())
    return list(zip(columns[0].to_list(), columns[1].to_list(), strict=True))


def work_sessions_body(
    result: WorkSessionsResult,
    events: EventRows,
    texts: EventTexts,
    sessions: SessionTexts,
) -> Body:
    """``JSON.stringify(result.to_api(), null, 2)`` as a :class:`Body` of kept texts.

    Parameters
    ----------
    result
        The sessions query on ``events``.
    events
        The enriched events the query ran on (their ``raw`` lines give the objects), or a
        function giving those of some keys (:data:`EventRows`).
    texts, sessions
        The kept event and session texts (filled with the ones this body makes).

    Returns
    -------
    Body
        Its bytes are those of ``js_json_bytes(result.to_api())``.
    """
    body: dict[str, Any] = result.to_api(thread_events="summary")
    listed: list[dict[str, Any]] = body["sessions"]
    sizes = [sum(len(t["events"]) for t in s["threads"]) for s in listed]
    n_threads = sum(len(s["threads"]) for s in listed)
    # the summary lists the events as the thread-event membership does, in the same order
    members = result.thread_events.head(sum(sizes)).select(
        "work_session_id", "thread_id", "file", "line", "ts", "type"
    )
    signatures = _signatures(
        result.sessions.head(len(listed)), result.threads.head(n_threads), members
    )
    kept = {sig: Piece(*pair) for sig, pair in sessions.found(signatures).items()}
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size)
    todo = [i for i, sig in enumerate(signatures) if sig not in kept]
    if todo:
        keys = pl.concat([members.slice(starts[i], sizes[i]).select("file", "line") for i in todo])
        made_texts = iter(texts.texts(events, keys))
        made: dict[Any, tuple[bytes, bytes]] = {}
        for i in todo:
            for thread in listed[i]["threads"]:
                thread["events"] = [next(made_texts) for _ in thread["events"]]
            data = fragment_at(listed[i], SESSION_INDENT).data
            made[signatures[i]] = (data, deflated(data))
            kept[signatures[i]] = Piece(*made[signatures[i]])
        sessions.keep(made)
    body["sessions"] = [kept[sig] for sig in signatures]
    return Body(js_json_parts(body))
