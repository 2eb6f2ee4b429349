"""Load a coordination log into the event frame, losing nothing."""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import polars as pl

from a2a_lab.io._decode import (
    RAW_PREVIEW,
    ChunkDecoder,
    DecodedText,
    decode_chunk,
    file_label,
    issues_frame,
    label_path,
)
from a2a_lab.io._result import LoadResult, _concat_contiguous, _finish, _take_events
from a2a_lab.io._sources import Source, SourceDamage, read_blocks, resolve_source
from a2a_lab.schema import data_dtype, polars_schema
from a2a_lab.time import EventTime, Zone, check_tz

#: Bytes read (and decoded) at a time: bounds the decoder's temporaries.
CHUNK_BYTES = 8 * 2**20
#: Chunks of a file decoded at once, in threads (Polars releases the GIL while it decodes),
#: so that a load uses more than one core, as B21 does (issue 12). A constant, not the CPU
#: count: which fields a chunk's decoder has adopted (and so the report's ``exact_lines``)
#: depends on how many chunks run ahead, and must not depend on the machine.
DECODE_THREADS = 3


def _decode_file(
    path: Path, tz: str, raw: bool, bar: Any, keep: tuple[str, ...] | None = None
) -> DecodedText:
    """Decode one file in bounded chunks of whole lines; a damaged ``.gz`` keeps its
    readable lines and rejects the damaged tail. ``keep``: the ``data`` fields each chunk's
    events keep (:func:`narrow_data`; ``None``: all)."""
    zone = tz if isinstance(tz, Zone) else check_tz(tz)
    return joined_chunks(list(decoded_chunks(path, zone.event_time, raw, bar, keep)))


def joined_chunks(parts: list[DecodedText]) -> DecodedText:
    """The decoded chunks of one file as one (their events concatenated, freed as they go)."""
    if len(parts) == 1:
        return parts[0]
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


def decoded_chunks(
    path: Path, event_time: EventTime, raw: bool, bar: Any, keep: tuple[str, ...] | None = None
) -> Iterator[DecodedText]:
    """The decoded chunks of one file, in file order (at least one, maybe empty).

    What :func:`_decode_file` concatenates; a caller that consumes them one at a time
    (``a2a_lab.analysis._chunked``) holds at most :data:`DECODE_THREADS` decoded chunks.
    ``event_time``: the event time in the load's zone (:attr:`a2a_lab.time.Zone.event_time`),
    resolved once by the caller for every file: the decoding does not handle the zone.
    """
    chunks = ChunkDecoder(event_time=event_time, raw=raw, file=file_label(path))

    def decode(data: bytes, first_line: int = 1, decoder: ChunkDecoder = chunks) -> DecodedText:
        # the fields dropped never reach the file's frame (every field is still decoded
        # and checked: the report does not change)
        dec = decoder.decode(data, first_line)
        if keep is not None:
            dec.events = narrow_data(dec.events, keep)
        return dec

    yielded = False
    next_line = 1
    pending = b""
    damage: str | None = None
    # chunks after the first (which primes the decoder's schema) are decoded
    # DECODE_THREADS at a time, each by a fork of the file's decoder taken when it is read;
    # results (and the fields each fork adopted) are taken in file order, so the outcome
    # does not depend on timing, and at most DECODE_THREADS chunks are held (bounded memory)
    with ThreadPoolExecutor(DECODE_THREADS) as pool:
        ahead: deque[tuple[ChunkDecoder, Future[DecodedText]]] = deque()

        def take() -> DecodedText:
            fork, done = ahead.popleft()
            out = done.result()
            chunks.learn(fork)
            return out

        for block in read_blocks(path, CHUNK_BYTES, bar):
            if isinstance(block, SourceDamage):
                damage = block.reason
                break
            buf = pending + block if pending else block
            cut = buf.rfind(b"\n") + 1
            pending = buf[cut:]
            if cut:
                complete = buf[:cut] if cut < len(buf) else buf
                if yielded:
                    fork = chunks.fork()
                    ahead.append((fork, pool.submit(decode, complete, next_line, fork)))
                else:
                    yielded = True
                    yield decode(complete, next_line)
                next_line += complete.count(b"\n")
                del buf, complete
                while len(ahead) >= DECODE_THREADS:
                    yield take()
        while ahead:
            yield take()
    if damage is None and pending:
        yielded = True
        yield decode(pending, next_line)
    elif damage is not None:
        yielded = True
        yield _damaged(decode(b"").events, next_line, pending, damage)
    if not yielded:
        yield decode(b"")


def _damaged(empty: pl.DataFrame, line: int, pending: bytes, damage: str) -> DecodedText:
    """What was decompressed of the line where the data broke off, and the reason."""
    text = pending.decode("utf-8", errors="replace")
    rej = pl.DataFrame(
        {
            "line": [line],
            "reason": [f"damaged compressed data: {damage}"],
            "raw": [text[:RAW_PREVIEW]],
        },
        schema={"line": pl.Int64, "reason": pl.String, "raw": pl.String},
    )
    return DecodedText(events=empty, rejects=rej, issues=issues_frame([]), lines=1, blank=0)


def data_fields_option(fields: Collection[str] | None) -> tuple[str, ...] | None:
    """``load``'s ``data_fields`` in the derived ``data`` order (``None``: every field).

    Raises ``ValueError`` naming a field the schema does not declare.
    """
    if fields is None:
        return None
    if isinstance(fields, str):
        fields = [fields]
    declared = list(data_dtype().to_schema())
    unknown = sorted(set(fields) - set(declared))
    if unknown:
        raise ValueError(f"data_fields: no such data field: {', '.join(unknown)}")
    if not fields:
        raise ValueError("data_fields: name at least one field (None keeps every field)")
    wanted = set(fields)
    return tuple(f for f in declared if f in wanted)


def narrow_data(events: pl.DataFrame, keep: tuple[str, ...]) -> pl.DataFrame:
    """``events`` with its ``data`` struct cut to the fields ``keep`` (in that order); a
    null ``data`` stays null. The other columns are not copied."""
    data = pl.col("data")
    if tuple(cast(pl.Struct, events.schema["data"]).to_schema()) == keep:
        return events
    narrow = pl.struct([data.struct.field(f) for f in keep])
    if events["data"].null_count():
        narrow = pl.when(data.is_not_null()).then(narrow)
    return events.with_columns(narrow.alias("data"))


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
    data_fields: Collection[str] | None = None,
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
    data_fields
        Keep only these ``data`` fields (in the schema's order) in ``.events``: for an
        analysis that reads a few of them, the others never take memory (issue 12; the
        ``a2a-lab work-sessions`` command loads so). Every line is still decoded and
        checked, so the report is the same. ``None`` (default): every field.

    Returns
    -------
    LoadResult
        ``.events`` (the event frame of ``a2a_lab.schema.polars_schema(raw=raw)``, ``data``
        cut to ``data_fields`` if given) and ``.report``.

    Examples
    --------
    >>> import a2a_lab as al
    >>> res = al.load(al.samples.sample_dir())
    >>> res.report.total_lines == res.report.events + res.report.rejects.height + res.report.total_blank
    True
    """
    from a2a_lab.io._store import is_store
    from a2a_lab.io._store_read import load_store

    # resolved once (a Zone, as the CLI passes, is not checked again)
    zone = tz if isinstance(tz, Zone) else check_tz("UTC" if tz is None else tz)
    keep = data_fields_option(data_fields)
    if isinstance(source, (str, os.PathLike)) and is_store(source):
        res = load_store(source, tz=zone, sort=sort, raw=raw)
    else:
        files = resolve_source(source)
        decoded = []
        with _progress(files, progress) as bar:
            for path in files:
                dec = _decode_file(path, zone, raw, bar, keep)
                decoded.append((file_label(path), dec, issues_frame([])))
        res = _finish(decoded, sort, raw)
    if keep is not None:  # an empty load or a store: cut here (no copy when already cut)
        res.events = narrow_data(res.events, keep)
    return res


def from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    file: str = "<memory>",
    tz: str | None = None,
    sort: bool = True,
) -> pl.DataFrame:
    """Build the event frame from already-parsed event objects (``line`` = 1-based position).

    Records without a usable ``type`` raise ``ValueError`` (there is no report to put them in).
    ``tz`` is the zone of ISO timestamps without an offset, as for :func:`load`.

    Examples
    --------
    >>> ev = from_records([{"type": "a2a.send", "ts": 5, "data": {"fromAgent": "ruda"}}])
    >>> ev.select("type", "event_ms", pl.col("data").struct.field("fromAgent")).row(0)
    ('a2a.send', 5.0, 'ruda')
    """
    zone = check_tz("UTC" if tz is None else tz)
    lines = []
    for rec in records:
        text = json.dumps(dict(rec), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if _LONE_SURROGATE.search(text):  # not encodable as UTF-8: keep it as a JSON escape
            text = json.dumps(dict(rec), separators=(",", ":"), allow_nan=False)
        lines.append(text + "\n")
    dec = decode_chunk("".join(lines).encode("utf-8"), file=file, tz=zone, raw=True)
    if dec.rejects.height:
        line, reason = dec.rejects.row(0)[:2]
        raise ValueError(f"record {line}: {reason}")
    return _finish([(file, dec, issues_frame([]))], sort).events


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


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
        path = label_path(file)
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
