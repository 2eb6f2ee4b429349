"""What the report shows, computed from a log file read once, never holding its event frame.

:func:`a2a_lab.app.report.collect` takes a loaded log: the whole event frame with every
``data`` field (1.1 GB for the 860,000-event benchmark log before anything is computed),
then matches its exchanges twice (conversations, then the check). :func:`collect_log` reads
the log once through :func:`a2a_lab.analysis.logs.analyse_log`, which spills the exchange
events by hash class of the conversation id and matches a bucket of whole conversations at
a time, for the conversations and the A2A sequence rules at once. Each decoded chunk is cut,
as it is read, into the projections the rest of the report reads, kept in Parquet until the
buckets are matched:

- the enriched events with the columns and ``data`` fields work sessions read (enrichment
  is row by row, so a chunk at a time gives the same rows);
- the search index's texts (:func:`a2a_lab.app.report.message_texts`);
- the events that can name a task's title (``taskId`` or ``payloadJson`` present);
- the chunk's events whole: after the sessions are built, only those of the sessions whose
  messages the page renders are read back (and enriched).

The health rules other than the A2A sequence read the lean frame of the check
(:data:`a2a_lab.analysis.logs.LEAN_FIELDS`), as do the guard replays, the figures and the
timeline. The result equals :func:`~a2a_lab.app.report.collect` of the loaded log
(``tests/views/test_report_log.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import polars as pl

from a2a_lab.analysis.checks import CheckOptions
from a2a_lab.analysis.logs import analyse_log, spill_dir
from a2a_lab.app.report import (
    Computed,
    ReportData,
    Setting,
    _stages,
    finish,
    in_report_window,
    indexed_messages,
    message_texts,
    session_rows,
)
from a2a_lab.enrich import ENRICHMENT_COLUMNS, enrich
from a2a_lab.io.chunks import DecodedText, Source, data_fields_option, narrow_data
from a2a_lab.sessions import SessionQuery, WorkSessionsResult, work_sessions

__all__ = ["collect_log"]

#: The ``data`` fields work sessions read.
SESSION_FIELDS: Final = ("workSessionId", "conversationId", "status")
#: The ``data`` fields a task's title is read from (:func:`a2a_lab.views.titles.task_titles`).
TITLE_FIELDS: Final = ("taskId", "title", "payloadJson")
#: The top-level columns of the lean enriched events.
_COLUMNS: Final = ("file", "line", "type", "agent_id", "event_ms", "event_time", "status", "data")


def _fields(names: tuple[str, ...]) -> tuple[str, ...]:
    keep = data_fields_option(names)
    assert keep is not None
    return keep


class _Projections:
    """The chunk sink: each decoded chunk's projections, written to Parquet."""

    def __init__(self, tmp: Path, s: Setting) -> None:
        self.tmp, self.setting = tmp, s
        self.sessions, self.titles = _fields(SESSION_FIELDS), _fields(TITLE_FIELDS)
        self.files: dict[str, list[Path]] = {"lean": [], "text": [], "title": [], "whole": []}

    def _write(self, kind: str, frame: pl.DataFrame) -> None:
        path = self.tmp / f"{kind}-{len(self.files[kind]):06d}.parquet"
        frame.write_parquet(path, compression="lz4", statistics=False)
        self.files[kind].append(path)

    def __call__(self, i: int, dec: DecodedText) -> None:
        ev = in_report_window(dec.events, self.setting)
        enriched = enrich(ev)
        lean = enriched.select(*_COLUMNS, *(c for c in ENRICHMENT_COLUMNS if c != "type"))
        self._write("lean", narrow_data(lean, self.sessions))
        self._write("text", message_texts(enriched).collect())
        d = pl.col("data").struct
        named = ev.filter(d.field("taskId").is_not_null() | d.field("payloadJson").is_not_null())
        self._write("title", narrow_data(named.select("event_ms", "data"), self.titles))
        self._write("whole", ev)

    def read(self, kind: str) -> pl.DataFrame:
        """The projection's rows in the load's order (file order, then a stable sort by time)."""
        frame = pl.read_parquet(self.files[kind]) if self.files[kind] else None
        assert frame is not None  # every file gives at least one chunk
        return frame.sort("event_ms", maintain_order=True)

    def members(self, sessions: WorkSessionsResult, shown: int) -> pl.DataFrame:
        """The enriched events of the threads of the first ``shown`` sessions the page lists."""
        ids = session_rows(sessions).head(shown)["work_session_id"].to_list()
        keys = (
            sessions.thread_events.filter(pl.col("work_session_id").is_in(ids, nulls_equal=True))
            .select("file", "line")
            .unique()
        )
        parts = [
            pl.scan_parquet(p).join(keys.lazy(), on=["file", "line"], how="semi").collect()
            for p in self.files["whole"]
        ]
        whole = pl.concat(parts, how="vertical_relaxed")
        return enrich(whole.sort("event_ms", maintain_order=True))


def collect_log(
    source: Source, s: Setting, *, shown: int, tz: str = "UTC", progress: bool | None = None
) -> ReportData:
    """Compute what the report of the log ``source`` (files, not a store) shows, reading it
    once and holding one bucket of conversations and the lean projections at a time.

    Parameters
    ----------
    source
        A log file, directory, glob or list of files (as :func:`a2a_lab.load`).
    s
        The report's setting (:func:`a2a_lab.app.report.setting`).
    shown
        How many sessions' messages the page renders (their events are read back whole).
    tz
        The load's time zone.
    progress
        The stage bar on stderr (the read shows the load's bar).

    Returns
    -------
    ReportData
        As :func:`a2a_lab.app.report.collect` gives for the loaded log, but ``events`` is
        the lean frame and ``enriched`` only the shown sessions' events.
    """
    window = (s.since_ms, s.until_ms)
    with spill_dir() as tmp, _stages(8, progress) as bar:
        sink = _Projections(Path(tmp), s)
        # the same rules as check(events, now=...): no load findings, the report's window
        res = analyse_log(
            source,
            CheckOptions(now=s.now_ms),
            tz=tz,
            conversations=True,
            sink=sink,
            window=window,
            with_report=False,
        )
        bar.update(4)
        assert res.conversations is not None
        enriched = sink.read("lean")
        sessions = work_sessions(enriched, SessionQuery(unassigned=True), now=s.now_ms)
        bar.update()
        messages = indexed_messages(sink.read("text").lazy(), sessions)
        members = sink.members(sessions, shown)
        bar.update()
        computed = _computed(res, enriched, sessions, messages, members, sink.read("title"), s)
        return finish(computed, s, bar)


def _computed(
    res: Any,
    enriched: pl.DataFrame,
    sessions: WorkSessionsResult,
    messages: pl.DataFrame,
    members: pl.DataFrame,
    titles: pl.DataFrame,
    s: Setting,
) -> Computed:
    """The parts :func:`a2a_lab.app.report.finish` takes; ``enriched`` (lean, every event)
    counts the agents, ``members`` is what the page renders messages from."""
    events = in_report_window(res.load.events, s)
    c = Computed(
        load=res.load,
        events=events,
        enriched=members,
        sessions=sessions,
        conversations=res.conversations,
        findings=res.findings,
        messages=messages,
        title_events=titles,
        every_enriched=enriched,
    )
    return c
