"""The exchange analyses of a log read a bounded chunk of whole conversations at a time.

Loading a log holds every event with every ``data`` field at once: 2.2-2.6 GB for the
860,000-event benchmark log, and more the more events a log has (issue 24, item 2). The
exchanges of a conversation never span conversation ids (every rule of
:func:`a2a_lab.exchanges.exchange_events` is keyed by the id and its direction), so the
matcher can run on any set of whole conversations and give the rows it would give on the
whole log. Here the log is read once, chunk by chunk (:func:`a2a_lab.io.chunks.decoded_chunks`);
each chunk's exchange events, cut to the fields the analyses read, are spilled to temporary
Arrow IPC files (LZ4: cheaper to write and to read back than Parquet), one *bucket* per
hash class of the conversation id; the buckets are then matched one at a time. A bucket's
size is set by the log's bytes, never by time, so the peak does not depend on how densely
the events fall in time.

A bucket's rows keep the load's order (file order, then a stable sort by ``event_ms``), and
``_gseq`` gives each its position in the loaded frame: what ``seq`` says after a whole load.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import polars as pl

from a2a_lab._deep import deep_call
from a2a_lab._frames import data_text
from a2a_lab.exchanges import EXCHANGE_FIELDS, EXCHANGE_TYPES, exchange_events
from a2a_lab.io.chunks import (
    DecodedText,
    Source,
    data_fields_option,
    decoded_chunks,
    narrow_data,
    read_progress,
    resolve_source,
)
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules
from a2a_lab.schema import polars_schema
from a2a_lab.time import EventTime, Instant, Zone, check_tz, window_ms

__all__ = [
    "SPILL_BYTES",
    "Spill",
    "bucket_frames",
    "chunked_exchange_events",
    "empty_conversations",
    "log_conversations",
    "spill_exchanges",
]

#: Log bytes per bucket: about 60,000 events of the benchmark log's kind, matched at once (64 MB
#: buckets of the log with its events in one day peaked at 1.36 GB in export-otlp, 32 MB at 1.13 GB).
SPILL_BYTES: Final = 32 * 2**20
#: A gzipped log holds about this many times its size in text.
_GZIP_RATIO: Final = 8
#: The ``data`` fields kept: what the matcher reads, and the agent fields (rules §3).
SPILL_FIELDS: Final = (*EXCHANGE_FIELDS, "fromAgent", "toAgent", "senderAgentId", "targetAgentId")
#: The top-level columns kept.
_COLUMNS: Final = ("file", "line", "type", "agent_id", "event_ms", "event_time", "data")


@dataclass
class Spill:
    """The exchange events of a log, spilled by hash class of the conversation id.

    Attributes
    ----------
    buckets
        Per bucket, its Arrow IPC files in file order (a bucket no event fell in: none).
    event_ms
        ``event_ms`` of every event (of the window) in file order: the load's sort order.
    """

    buckets: list[list[Path]]
    event_ms: list[pl.Series] = field(default_factory=list)

    def ranks(self) -> pl.Series:
        """Each event's position (file order in, loaded order out): the load's stable sort."""
        ms = pl.DataFrame({"event_ms": pl.concat(self.event_ms, rechunk=True)})
        order = ms.select(
            pl.int_range(pl.len(), dtype=pl.UInt32).sort_by("event_ms", maintain_order=True)
        ).to_series()
        return order.arg_sort().cast(pl.UInt32)


def _bucket_count(files: list[Path]) -> int:
    size = sum(p.stat().st_size * (_GZIP_RATIO if p.suffix == ".gz" else 1) for p in files)
    return max(1, -(-size // SPILL_BYTES))


#: What :func:`spill_exchanges` hands each decoded chunk to: the file's position in the
#: source and the chunk (its events with the ``data`` fields decoded).
ChunkSink = Callable[[int, DecodedText], None]


def spill_exchanges(
    source: Source,
    tmp: Path,
    *,
    event_time: EventTime | None = None,
    since: Instant | None = None,
    until: Instant | None = None,
    sink: ChunkSink | None = None,
    until_open: bool = False,
) -> Spill:
    """Read ``source`` (a log, not a store) once and spill its exchange events to ``tmp``.

    ``event_time`` reads the events' times (:attr:`a2a_lab.time.Zone.event_time` of the
    load's zone, resolved by the caller; None: UTC).

    Only the events in ``[since, until]`` (on ``event_ms``, as :func:`a2a_lab.time.in_window`)
    are kept; ``until_open``: ``[since, until)``, the report's window. ``sink`` gets each
    decoded chunk first, with every ``data`` field (without a sink only
    :data:`SPILL_FIELDS` are kept). Raises what :func:`a2a_lab.load` raises for a missing
    or unreadable source.
    """
    files = resolve_source(source)
    n = _bucket_count(files)
    keep = data_fields_option(SPILL_FIELDS)
    assert keep is not None
    lo, hi = window_ms(since, until)
    times = check_tz("UTC").event_time if event_time is None else event_time
    spill = Spill([[] for _ in range(n)])
    held: list[list[pl.DataFrame]] = [[] for _ in range(n)]
    chunk = 0
    with read_progress(files) as bar:
        for i, path in enumerate(files):
            for dec in decoded_chunks(path, times, False, bar, None if sink else keep):
                ev = narrow_data(dec.events.select(_COLUMNS), keep)
                if sink is not None:
                    sink(i, dec)
                dec.events = ev.clear()
                if lo is not None:
                    ev = ev.filter(pl.col("event_ms") >= lo)
                if hi is not None:
                    ev = ev.filter(
                        pl.col("event_ms") < hi if until_open else pl.col("event_ms") <= hi
                    )
                _spill_chunk(spill, ev, held, tmp / f"{chunk:06d}")
                chunk += 1
    for b in range(n):
        _write_held(spill, held, b, tmp / f"{chunk:06d}")
    return spill


#: A bucket's events are held in memory up to this size before they are written: fewer,
#: larger files cost less to write and to read back than one per chunk and bucket (the
#: 860,000-event log: 784 files, 1.4 + 1.0 CPU s; about 160, 0.8 + 0.8 s); at most
#: ``_HOLD_BYTES`` per bucket are held, a few tens of MB in all.
_HOLD_BYTES: Final = 2 * 2**20


def _spill_chunk(
    spill: Spill, ev: pl.DataFrame, held: list[list[pl.DataFrame]], stem: Path
) -> None:
    """Append the exchange events of one chunk (in file order) to their buckets (``held``
    in memory until a bucket holds :data:`_HOLD_BYTES`)."""
    n = len(spill.buckets)
    row = sum(len(s) for s in spill.event_ms)
    spill.event_ms.append(ev["event_ms"])
    conv = data_text("conversationId")
    ex = (
        ev.with_row_index("_row", offset=row)
        .filter(pl.col("type").is_in(EXCHANGE_TYPES) & conv.is_not_null())
        .with_columns((conv.hash(seed=0) % n).alias("_bucket"))
    )
    parts = ex.partition_by("_bucket", as_dict=True, include_key=False)
    for (b,), frame in parts.items():
        held[int(b)].append(frame)
        if sum(f.estimated_size() for f in held[int(b)]) >= _HOLD_BYTES:
            _write_held(spill, held, int(b), stem)


def _write_held(spill: Spill, held: list[list[pl.DataFrame]], b: int, stem: Path) -> None:
    """Write the events bucket ``b`` holds (in file order) to one file, if any."""
    if not held[b]:
        return
    out = stem.with_name(f"{b}-{stem.name}.arrow")
    pl.concat(held[b]).write_ipc(out, compression="lz4")
    spill.buckets[b].append(out)
    held[b].clear()


def bucket_frames(spill: Spill, *, ranked: bool = False) -> Iterator[pl.DataFrame]:
    """Each bucket's events in the load's order (``_row`` dropped).

    ``ranked`` adds ``_gseq``: each event's position in the frame a whole load gives.
    """
    ranks = spill.ranks() if ranked else None
    for files in spill.buckets:
        if not files:
            continue
        frame = _in_load_order(pl.scan_ipc(files).collect())
        if ranks is not None:
            frame = frame.with_columns(ranks.gather(frame["_row"]).alias("_gseq"))
        yield frame.drop("_row")


def _in_load_order(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (in file order) stably sorted by ``event_ms``: as it is, when its times
    already ascend (a log written in time order; the sort would copy every column)."""
    ms = frame["event_ms"]
    if ms.null_count() == 0 and not ms.is_nan().any() and ms.is_sorted():
        return frame
    return frame.sort("event_ms", maintain_order=True)


def chunked_exchange_events(
    frame: pl.DataFrame, *, intent_rules: IntentRules = INTENT_RULES_V1
) -> pl.DataFrame:
    """:func:`a2a_lab.exchange_events` of one bucket, ``seq`` as a whole load numbers it
    (``frame`` from :func:`bucket_frames` with ``ranked``)."""
    gseq = frame["_gseq"]
    ex = matched(frame.drop("_gseq"), intent_rules)
    return ex.with_columns(gseq.gather(ex["seq"]).alias("seq"))


def matched(
    frame: pl.DataFrame,
    intent_rules: IntentRules = INTENT_RULES_V1,
    outcome: tuple[str, str] | None = None,
) -> pl.DataFrame:
    """:func:`a2a_lab.exchange_events` of one bucket, with room to recurse (``outcome``:
    as :func:`~a2a_lab.exchange_events` takes it).

    The matcher's exact search recurses once per event of a segment of overlapping
    exchanges; a log dense in time has segments of thousands of events, past Python's
    recursion limit (the 860,000 events of the benchmark log in one day raised
    RecursionError). :func:`a2a_lab._deep.deep_call` runs it again in a thread with a stack
    and a limit that fit the bucket.
    """

    def run() -> pl.DataFrame:
        with in_memory_engine():
            lazy = exchange_events(frame.lazy(), intent_rules=intent_rules, outcome=outcome)
            return lazy.collect()

    return deep_call(run, depth=frame.height)


def log_conversations(
    source: Source,
    *,
    tz: str = "UTC",
    since: Instant | None = None,
    until: Instant | None = None,
    intent_rules: IntentRules = INTENT_RULES_V1,
) -> pl.DataFrame:
    """:func:`a2a_lab.conversations` of a log, a bucket of whole conversations at a time.

    The same rows as ``conversations(load(source, tz=tz).events, since=..., until=...)``
    (``tests/analysis/test_chunked.py``), at the peak of one bucket.
    """
    from a2a_lab.analysis.conversations import _OUTCOME, _conversations_of, _sorted_by_start

    with spill_dir() as tmp:
        zone = tz if isinstance(tz, Zone) else check_tz(tz)
        spill = spill_exchanges(
            source, Path(tmp), event_time=zone.event_time, since=since, until=until
        )
        frames = []
        for f in bucket_frames(spill):
            ex = matched(f, intent_rules, _OUTCOME).lazy()
            with in_memory_engine():
                frames.append(_conversations_of(ex, intent_rules, with_ms=True))
    if not frames:
        return empty_conversations(intent_rules)
    return _sorted_by_start(frames)


def empty_conversations(intent_rules: IntentRules = INTENT_RULES_V1) -> pl.DataFrame:
    """:func:`a2a_lab.conversations` of a log without exchange events (its columns)."""
    from a2a_lab.analysis.conversations import _conversations_of

    return _conversations_of(exchange_events(pl.DataFrame(schema=polars_schema())), intent_rules)


def in_memory_engine() -> pl.Config:
    """Collect lazy frames with Polars' in-memory engine in this block (a context).

    A bucket's plans are small (tens of thousands of events) and many (about 150 per
    bucket): the streaming engine, Polars' default, costs more to set up than the work
    (the 860,000-event log's conversations: 2.9 CPU s more for the matching and the rows).
    A bucket's size is bounded by the spill, so its peak is too.
    """
    return pl.Config(engine_affinity="in-memory")


def spill_dir() -> tempfile.TemporaryDirectory[str]:
    """A temporary directory for a spill (removed when the context ends)."""
    return tempfile.TemporaryDirectory(prefix="a2a_lab_chunks_")
