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
- the events that can name a task's title (:func:`names_a_title`);
- the chunk's events whole: after the sessions are built, only those of the sessions whose
  messages the page renders are read back (and enriched).

The health rules other than the A2A sequence read the lean frame of the check
(:data:`a2a_lab.analysis.logs.LEAN_FIELDS`), as do the guard replays, the figures and the
timeline. The result equals :func:`~a2a_lab.app.report.collect` of the loaded log
(``tests/views/test_report_log.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import polars as pl

from a2a_lab.analysis.checks import CheckOptions
from a2a_lab.analysis.logs import LeanEvents, analyse_log, spill_dir
from a2a_lab.app.report import (
    Computed,
    ReportData,
    Setting,
    _stages,
    finish,
    guard_replays,
    in_report_window,
    indexed_messages,
    message_texts,
    session_rows,
)
from a2a_lab.enrich import enrich
from a2a_lab.io import LoadResult
from a2a_lab.io.chunks import DecodedText, Source, data_fields_option, narrow_data, sorted_by_time
from a2a_lab.materialize import TITLE_FIELDS, names_a_title
from a2a_lab.sessions import SessionQuery, WorkSessionsResult, work_sessions

__all__ = ["TITLE_FIELDS", "collect_log", "names_a_title"]

#: The enrichment columns work sessions read, added to the lean frame of the check.
SESSION_COLUMNS: Final = (
    "event_role",
    "collab_category",
    "collab_sub_tags",
    "from_agent",
    "to_agent",
)
#: The enriched (JS-trimmed) ``type`` in the lean frame; ``type`` stays the logged one.
_TYPE: Final = "_enriched_type"
#: The ``data`` fields work sessions read.
_SESSION_DATA: Final = data_fields_option(("workSessionId", "conversationId", "status")) or ()
#: What the figures, the agents count and the timeline read of every event.
_SLIM: Final = (
    "file",
    "line",
    "type",
    "agent_id",
    "event_ms",
    "event_time",
    "from_agent",
    "to_agent",
)


class _Collector(LeanEvents):
    """The lean frame of the check plus the enrichment columns work sessions read; and per
    chunk, in Parquet: the search texts, the events that can name a title, the events whole."""

    def __init__(self, files: int, tmp: Path, s: Setting, mine: Path, shown: int) -> None:
        super().__init__(files, tmp)
        self.setting, self.mine, self.shown = s, mine, shown
        self.titles = data_fields_option(TITLE_FIELDS) or TITLE_FIELDS
        self.files: dict[str, list[Path]] = {"text": [], "title": [], "whole": []}
        self._enriched: pl.DataFrame | None = None

    def _write(self, kind: str, frame: pl.DataFrame) -> None:
        path = self.mine / f"{kind}-{len(self.files[kind]):06d}.parquet"
        frame.write_parquet(path, compression="lz4", statistics=False)
        self.files[kind].append(path)

    def project(self, events: pl.DataFrame) -> pl.DataFrame:
        assert self._enriched is not None
        extra = self._enriched.select(*SESSION_COLUMNS, pl.col("type").alias(_TYPE))
        return pl.concat([super().project(events), extra], how="horizontal")

    def __call__(self, i: int, dec: DecodedText) -> None:
        # enrichment is row by row: a chunk at a time gives the rows of the whole frame
        self._enriched = enrich(dec.events)
        super().__call__(i, dec)
        shown = in_report_window(self._enriched, self.setting)
        self._enriched = None
        # the events whole, as logged: the shown sessions' are read back and enriched
        self._write("whole", in_report_window(dec.events, self.setting))
        self._write("text", message_texts(shown).collect())
        named = shown.filter(names_a_title())
        self._write("title", narrow_data(named.select("event_ms", "data"), self.titles))

    def lean_phase(self, res: LoadResult, events: pl.DataFrame) -> LoadResult:
        """Everything that reads the lean frame, before the buckets are matched: the work
        sessions, the search index, the shown sessions' events, the titles, the guard
        replays; then only the columns the figures and the timeline read are kept."""
        s = self.setting
        self.sessions = work_sessions(
            sessions_frame(events), SessionQuery(unassigned=True), now=s.now_ms
        )
        self.messages = indexed_messages(self.read("text").lazy(), self.sessions)
        self.shown_events = self.members(self.sessions, self.shown)
        self.title_events = self.read("title")
        self.guards = guard_replays(events)
        self.events = events.select(*_SLIM)
        return LoadResult(events=res.events.select(*_SLIM), report=res.report)

    def read(self, kind: str) -> pl.DataFrame:
        """The projection's rows in the load's order (file order, then a stable sort by time)."""
        # every file gives at least one chunk (maybe without events, with the schema)
        return sorted_by_time([pl.read_parquet(f) for f in self.files[kind]])

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
        return enrich(sorted_by_time([pl.concat(parts, how="vertical_relaxed")]))


def sessions_frame(lean: pl.DataFrame) -> pl.DataFrame:
    """The lean frame as work sessions read it (and keep): ``type`` the enriched one,
    ``data`` cut to the fields they read (the columns are shared, not copied)."""
    frame = lean.select(
        "file",
        "line",
        pl.col(_TYPE).alias("type"),
        "agent_id",
        "event_ms",
        "status",
        "data",
        *SESSION_COLUMNS,
    )
    return narrow_data(frame, _SESSION_DATA)


def collect_log(
    source: Source, s: Setting, *, shown: int, progress: bool | None = None
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
    progress
        The stage bar on stderr (the read shows the load's bar).

    Returns
    -------
    ReportData
        As :func:`a2a_lab.app.report.collect` gives for the loaded log, but ``events`` is
        the lean frame and ``enriched`` only the shown sessions' events.
    """
    window = (s.since_ms, s.until_ms)
    collectors: list[_Collector] = []
    with spill_dir() as mine, _stages(8, progress) as bar:

        def collector(files: int, tmp: Path) -> _Collector:
            collectors.append(_Collector(files, tmp, s, Path(mine), shown))
            return collectors[0]

        # the same rules as check(events, now=...): no load findings, the report's window
        res = analyse_log(
            source,
            CheckOptions(now=s.now_ms),
            tz=s.tz,  # the zone of the page is the load's
            conversations=True,
            lean=collector,
            window=window,
            with_report=False,
        )
        bar.update(6)
        c = collectors[0]
        assert res.conversations is not None
        # the fields in Computed's order; the slim events count the agents
        computed = Computed(
            *(res.load, c.events, c.shown_events, c.sessions, res.conversations),
            *(res.findings, c.messages, c.title_events, c.events, c.guards),
        )
        return finish(computed, s, bar)
