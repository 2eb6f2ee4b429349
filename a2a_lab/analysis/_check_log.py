""":func:`a2a_lab.check` of a log at a bounded peak (issue 24, item 2).

A whole load holds every event with every ``data`` field (2.6 GB for the 860,000-event
benchmark log). Here the log is read once (:func:`a2a_lab.analysis._chunked.spill_exchanges`):

- the A2A sequence rules, which match exchanges, run a bucket of whole conversations at a
  time on the spilled exchange events (the ambiguity summary is merged across buckets);
- the other rules (tasks, guards, relay depth, clock, identity) read a *lean* frame: every
  event with the few top-level columns and ``data`` fields they read, and the hash of its
  full ``data`` (:func:`a2a_lab.analysis.checks.data_hash`, computed chunk by chunk), which
  is all the duplicate-event rule compares;
- the load report is built from the decoded chunks as :func:`a2a_lab.load` builds it.

The findings are those of ``check(load(source).events, report=load(source).report)``
(``tests/analysis/test_chunked.py``). :func:`analyse_log` gives the conversations of the
same matching too (each bucket's exchanges are matched once, for both), and hands every
decoded chunk to a caller's :class:`LeanEvents`: the report's path
(:mod:`a2a_lab.app.report_log`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from a2a_lab.analysis._check_a2a import _ambiguous, ambiguity, sequence_frame, sequence_rules
from a2a_lab.analysis._chunked import (
    Spill,
    bucket_frames,
    chunked_exchange_events,
    empty_conversations,
    spill_dir,
    spill_exchanges,
)
from a2a_lab.analysis.checks import (
    _DATA_HASH,
    LEAN_FIELDS,
    CheckOptions,
    _in_check_window,
    data_hash,
    findings_of,
    rule_parts,
)
from a2a_lab.analysis.checks import LEAN_COLUMNS as _LEAN_COLUMNS
from a2a_lab.io import LoadResult
from a2a_lab.io.chunks import (
    DecodedText,
    Source,
    chunked_result,
    data_fields_option,
    narrow_data,
    resolve_source,
)
from a2a_lab.time import Zone, check_tz

__all__ = ["LEAN_FIELDS", "LeanEvents", "LogAnalysis", "analyse_log", "log_check"]


class LeanEvents:
    """Collects, chunk by chunk, the lean events and what the load report needs.

    A caller that needs more of each chunk subclasses it: :meth:`__call__` sees every
    decoded chunk (every ``data`` field), :meth:`project` may add columns to the lean frame
    (row by row: the chunk's rows, in its order).
    """

    def __init__(self, files: int, tmp: Path) -> None:
        keep = data_fields_option(LEAN_FIELDS)
        assert keep is not None
        self.keep = keep
        self.tmp = tmp
        # the lean chunks wait on disk while the buckets are matched (a dense log's
        # buckets take most of the peak: both at once went past 1.25 GB)
        self.frames: list[Path] = []
        self.chunks: list[list[DecodedText]] = [[] for _ in range(files)]

    def project(self, events: pl.DataFrame) -> pl.DataFrame:
        """The lean frame of one chunk's events."""
        return narrow_data(
            events.select(*_LEAN_COLUMNS, "data", data_hash().alias(_DATA_HASH)), self.keep
        )

    def lean_phase(self, res: LoadResult, events: pl.DataFrame) -> LoadResult:
        """Called with the lean frame (``events``: cut to the window) once the rules that
        read it have run and before the buckets are matched; returns what
        :attr:`LogAnalysis.load` keeps (a subclass computes its own parts here and keeps
        less, so that the matching's peak does not come on top of the lean frame's)."""
        return res

    def __call__(self, i: int, dec: DecodedText) -> None:
        lean = self.project(dec.events)
        self.frames.append(self.tmp / f"lean-{len(self.frames):06d}.parquet")
        lean.write_parquet(self.frames[-1], compression="lz4", statistics=False)
        # the chunk's events are dropped by the spill: the report reads the rest
        self.chunks[i].append(dec)

    def result(self, files: list[Path]) -> LoadResult:
        """The lean events in the load's order, and the load's report."""
        # every file gives at least one chunk (maybe without events, with the schema)
        parts = [pl.read_parquet(f) for f in self.frames]
        self.frames.clear()
        return chunked_result(files, self.chunks, parts)


@dataclass(frozen=True)
class LogAnalysis:
    """What :func:`analyse_log` computed from one read of a log.

    Attributes
    ----------
    findings
        The health findings (:func:`a2a_lab.check`'s frame).
    load
        The lean :class:`~a2a_lab.io.LoadResult`: ``report`` is the load's, ``events``
        hold every event (of the whole log, in the load's order) with only what the
        rules read (:data:`LEAN_FIELDS`, the top-level columns and ``_data_hash``).
    conversations
        :func:`a2a_lab.conversations` of the events in the window, from the same matching
        as the findings (None unless asked for).
    """

    findings: pl.DataFrame
    load: LoadResult
    conversations: pl.DataFrame | None = None


def analyse_log(
    source: Source,
    opts: CheckOptions,
    *,
    tz: str = "UTC",
    conversations: bool = False,
    lean: Callable[[int, Path], LeanEvents] = LeanEvents,
    window: tuple[float | None, float | None] | None = None,
    with_report: bool = True,
) -> LogAnalysis:
    """Check a log (and match its conversations) reading it once, a bucket at a time.

    Parameters
    ----------
    source
        A log (not a store), as :func:`a2a_lab.load` takes it.
    opts
        The check's settings; its ``since`` / ``until`` keep ``[since, until]``.
    tz
        The load's time zone.
    conversations
        Also build :func:`a2a_lab.conversations` from each bucket's matched exchanges.
    lean
        Makes the collector of the lean frame from the number of files and a temporary
        directory (:class:`LeanEvents` or a subclass, which sees every decoded chunk).
    window
        ``(since_ms, until_ms)``: keep ``since <= event_ms < until`` (the report's window)
        for the findings and conversations; None: ``opts``'s.
    with_report
        Add the load report's findings (``load.*``) to the findings.
    """
    files = resolve_source(source)
    # the zone is read here, once: the spill decodes with its event time
    zone = tz if isinstance(tz, Zone) else check_tz(tz)
    since, until = (opts.since, opts.until) if window is None else window
    with spill_dir() as tmp:
        collector = lean(len(files), Path(tmp))
        spill = spill_exchanges(
            source,
            Path(tmp),
            event_time=zone.event_time,
            since=since,
            until=until,
            sink=collector,
            until_open=window is not None,
        )
        # the lean rules first, then the lean frame is let go: the matching's peak never
        # comes on top of it
        res = collector.result(files)
        events = res.events
        if window is not None:
            lo, hi = window
            events = events.filter(
                (pl.lit(True) if lo is None else pl.col("event_ms") >= lo)
                & (pl.lit(True) if hi is None else pl.col("event_ms") < hi)
            )
        else:
            events = _in_check_window(events, opts)
        report = res.report if with_report else None
        rules = pl.collect_all(rule_parts(events, opts, report, windowed=True))
        res = collector.lean_phase(res, events)
        del events
        a2a, conv = _matched_buckets(spill, conversations)
    found = findings_of(a2a + [f.lazy() for f in rules], opts)
    return LogAnalysis(findings=found, load=res, conversations=conv)


def _matched_buckets(
    spill: Spill, conversations: bool
) -> tuple[list[pl.LazyFrame], pl.DataFrame | None]:
    """Each bucket's exchanges matched once: the A2A sequence findings (with the ambiguity
    summary merged across buckets) and, if asked, the conversations."""
    from a2a_lab.analysis.conversations import _conversations_of, _sorted_by_start

    a2a: list[pl.DataFrame] = []
    heads: list[pl.DataFrame] = []
    counts: list[pl.DataFrame] = []
    convs: list[pl.DataFrame] = []
    for frame in bucket_frames(spill, ranked=True):
        ex = chunked_exchange_events(frame)
        del frame
        if conversations:
            convs.append(_conversations_of(ex.lazy(), with_ms=True))
        seq = sequence_frame(ex)
        a2a += pl.collect_all(sequence_rules(seq))
        head, count = pl.collect_all(ambiguity(seq))
        heads.append(head)
        counts.append(count)
    # the ambiguity summary: the first ambiguous exchanges of every bucket, in log order
    parts = (
        [_ambiguous(pl.concat(heads).sort("seq").lazy(), pl.concat(counts).sum().lazy())]
        if heads
        else []
    )
    conv = None
    if conversations:
        conv = _sorted_by_start(convs) if convs else empty_conversations()
    return parts + [f.lazy() for f in a2a], conv


def log_check(
    source: Source, opts: CheckOptions, *, tz: str = "UTC"
) -> tuple[pl.DataFrame, LoadResult]:
    """:func:`a2a_lab.check` of the log ``source`` with its load report, at the peak of one
    bucket of conversations plus the lean frame.

    Returns the findings and the lean :class:`~a2a_lab.io.LoadResult` (its ``report`` is the
    load's; its ``events`` hold only what the rules read).
    """
    res = analyse_log(source, opts, tz=tz)
    return res.findings, res.load
