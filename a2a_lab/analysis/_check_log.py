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
(``tests/analysis/test_chunked.py``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from a2a_lab.analysis._check_a2a import _ambiguous, ambiguity, sequence_frame, sequence_rules
from a2a_lab.analysis._chunked import (
    bucket_frames,
    chunked_exchange_events,
    spill_dir,
    spill_exchanges,
)
from a2a_lab.analysis.checks import _DATA_HASH, LEAN_FIELDS, CheckOptions, data_hash, run_checks
from a2a_lab.analysis.checks import LEAN_COLUMNS as _LEAN_COLUMNS
from a2a_lab.io import LoadResult
from a2a_lab.io._decode import DecodedText, file_label, issues_frame
from a2a_lab.io._load import data_fields_option, joined_chunks, narrow_data
from a2a_lab.io._result import load_report, no_timestamp_issues
from a2a_lab.io._sources import Source, resolve_source

__all__ = ["LEAN_FIELDS", "log_check"]


class _Lean:
    """Collects, chunk by chunk, the lean events and what the load report needs."""

    def __init__(self, files: int, tmp: Path) -> None:
        keep = data_fields_option(LEAN_FIELDS)
        assert keep is not None
        self.keep = keep
        self.tmp = tmp
        # the lean chunks wait on disk while the buckets are matched (a dense log's
        # buckets take most of the peak: both at once went past 1.25 GB)
        self.frames: list[Path] = []
        self.chunks: list[list[DecodedText]] = [[] for _ in range(files)]

    def __call__(self, i: int, dec: DecodedText) -> None:
        ev = dec.events
        lean = narrow_data(
            ev.select(*_LEAN_COLUMNS, "data", data_hash().alias(_DATA_HASH)), self.keep
        )
        self.frames.append(self.tmp / f"lean-{len(self.frames):06d}.parquet")
        lean.write_parquet(self.frames[-1], compression="lz4", statistics=False)
        # the chunk's events are dropped by the spill: the report reads the rest
        self.chunks[i].append(dec)

    def result(self, files: list[Path]) -> LoadResult:
        """The lean events in the load's order, and the load's report."""
        # every file gives at least one chunk (maybe without events, with the schema)
        events = pl.read_parquet(self.frames).rechunk()
        self.frames.clear()
        no_time = no_timestamp_issues(events)
        events = events.sort("event_ms", maintain_order=True)
        decoded = [
            (file_label(path), joined_chunks(parts), issues_frame([]))
            for path, parts in zip(files, self.chunks, strict=True)
        ]
        return LoadResult(events=events, report=load_report(decoded, events, no_time))


def log_check(
    source: Source, opts: CheckOptions, *, tz: str = "UTC"
) -> tuple[pl.DataFrame, LoadResult]:
    """:func:`a2a_lab.check` of the log ``source`` with its load report, at the peak of one
    bucket of conversations plus the lean frame.

    Returns the findings and the lean :class:`~a2a_lab.io.LoadResult` (its ``report`` is the
    load's; its ``events`` hold only what the rules read).
    """
    files = resolve_source(source)
    with spill_dir() as tmp:
        lean = _Lean(len(files), Path(tmp))
        spill = spill_exchanges(
            source, Path(tmp), tz=tz, since=opts.since, until=opts.until, sink=lean
        )
        a2a: list[pl.DataFrame] = []
        heads: list[pl.DataFrame] = []
        counts: list[pl.DataFrame] = []
        for frame in bucket_frames(spill, ranked=True):
            ex = sequence_frame(chunked_exchange_events(frame))
            del frame
            a2a += pl.collect_all(sequence_rules(ex))
            head, count = pl.collect_all(ambiguity(ex))
            heads.append(head)
            counts.append(count)
        res = lean.result(files)
    # the ambiguity summary: the first ambiguous exchanges of every bucket, in log order
    parts = (
        [_ambiguous(pl.concat(heads).sort("seq").lazy(), pl.concat(counts).sum().lazy())]
        if heads
        else []
    )
    return run_checks(res.events, opts, res.report, parts + [f.lazy() for f in a2a]), res
