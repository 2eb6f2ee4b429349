"""What the report shows, computed from the tables a history store materialised at ingest.

``a2a-lab ingest`` makes, besides the event parts, derived tables (:mod:`a2a_lab.materialize`):
the enriched columns of every event, the conversations frame (one row per exchange), the
findings of ``check``, the lean rows its rules read and the report's texts. :func:`collect_store` reads them
instead of loading, enriching and matching the events again:

- the conversations, the findings (:func:`a2a_lab.materialize.stored_check`, the load's
  findings left out as the report of a log leaves them out) and the store's load report
  are read as they are;
- the figures, the timeline and the guard replays read the lean rows of the check
  (``check_lean``) in the load's order;
- the work sessions (every session, the events without one included, with every event's
  thread: the search index names them) are built from the enriched table's columns;
- the search index's texts and the events that name a task's title are read from their
  narrow table (``report_texts``);
- only the events of the sessions whose messages the page renders are read from the
  stored events (their lines, decoded and enriched again).

It answers None when the tables cannot answer (one not current: events ingested without
``materialize``, another rule set, matcher or zone; or a time window, which the tables do
not cut): the caller then computes the report from the store's events. The result equals
:func:`a2a_lab.app.report.collect` of the loaded store (``tests/views/test_report_store.py``).
"""

from __future__ import annotations

import os
from typing import Final

import polars as pl

from a2a_lab.analysis.checks import CheckOptions
from a2a_lab.app import report as base
from a2a_lab.enrich import enrich
from a2a_lab.io import LoadResult, StoreSnapshot, decode_bytes, open_store
from a2a_lab.materialize import (
    ENRICHED_TABLE,
    REPORT_TEXTS,
    has_text,
    scan_conversations,
    scan_materialized,
    stored_check,
)
from a2a_lab.schema import polars_schema
from a2a_lab.sessions import AGGREGATE_COLUMNS, SessionQuery, WorkSessionsResult, work_sessions

__all__ = ["collect_store"]

#: The store's table of the check's lean rows (``a2a_lab.materialize``'s ``check_lean``, which
#: it does not export; ``tests/views/test_report_store.py`` checks the name).
CHECK_LEAN: Final = "check_lean"
#: What the figures and the timeline read of every event (the lean rows hold them).
SLIM: Final = ("file", "line", "type", "agent_id", "event_ms", "event_time")
#: The messages the guard replays count (:data:`a2a_lab.app.report.GUARDS`: the sends and
#: replies of the loop guard, the sends of the collaborate limit); the others are left out
#: before the replays, which see the same messages in the same order.
GUARD_TYPES: Final = ("a2a.send", "a2a.response")
#: The ``data`` fields the guard replays read (:func:`a2a_lab.analysis.checks.replay_guard`).
GUARD_FIELDS: Final = ("fromAgent", "toAgent", "senderAgentId", "targetAgentId", "turn")
#: The enriched columns the agents figure reads.
AGENT_COLUMNS: Final = ("from_agent", "to_agent", "agent_id")


def _current(snap: StoreSnapshot) -> bool:
    """Whether the lean rows of the check cover every stored event and the texts table is
    whole (both are written with the enriched columns, event by event)."""
    lean, enriched = snap.table(CHECK_LEAN), snap.table(ENRICHED_TABLE)
    texts = snap.table(REPORT_TEXTS)
    return (
        lean.meta == enriched.meta == texts.meta
        and lean.total_rows == snap.events
        and bool(lean.files)
        and bool(texts.files)
    )


def in_order(snap: StoreSnapshot, frame: pl.LazyFrame, *, by_time: bool = True) -> pl.DataFrame:
    """Stored rows (with ``source`` and ``line``) collected, named (``file``) and in the
    load's order: files in reading order, lines in order, then (``by_time``) a stable sort
    by time; without ``source``. The parts usually hold their lines in that order already:
    a sort (which copies every column) is made only where the keys are not sorted."""
    rows = snap.named(frame).collect()
    key = rows.select(pl.col("_rank") * (1 << 40) + pl.col("line")).to_series()
    if not key.is_sorted():
        rows = rows.sort("_rank", "line")
    if by_time and not rows["event_ms"].is_sorted():
        rows = rows.sort("event_ms", maintain_order=True)
    return rows.drop("_rank", "source", strict=False)


def _texts_and_titles(snap: StoreSnapshot) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The search index's texts (:func:`~a2a_lab.app.report.message_texts` of every stored
    event) and the events that can name a task's title (``event_ms`` and ``data`` cut to
    the title fields), both in the load's order: one read of the narrow table made at
    ingest (:data:`~a2a_lab.materialize.REPORT_TEXTS`), not of the stored ``data`` (which
    the reader decodes whole whatever fields are selected: 1.1 CPU s at 860,000 events)."""
    table = snap.scan_table(REPORT_TEXTS)
    assert table is not None
    rows = in_order(snap, table)
    texts = rows.filter(has_text()).select("file", "line", "event_ms", "sender", "receiver", "text")
    titles = rows.filter(pl.col("title").is_not_null()).select(
        "event_ms", pl.col("title").alias("data")
    )
    return texts, titles


def _shown_events(snap: StoreSnapshot, sessions: WorkSessionsResult, shown: int) -> pl.DataFrame:
    """The enriched events of the threads of the first ``shown`` sessions the page lists,
    decoded again from their stored lines (``raw``) in the store's zone, as the ingest
    decoded them: the stored ``data`` struct would be decoded whole for every event to
    keep a few (1.3 CPU s at 860,000 events, the lines 0.3 s)."""
    ids = base.session_rows(sessions).head(shown)["work_session_id"].to_list()
    keys = (
        sessions.thread_events.filter(pl.col("work_session_id").is_in(ids, nulls_equal=True))
        .select("file", "line")
        .unique()
        .join(snap.files().select("source", "file"), on="file")
        .select("source", "line")
    )
    wanted = pl.col("line").is_in(keys["line"].unique().implode())
    lines = in_order(
        snap,
        snap.scan_events()
        .select("source", "line", "event_ms", "raw")
        .filter(wanted)
        .join(keys.lazy(), on=["source", "line"], how="semi"),
    )
    text = "".join(f"{line}\n" for line in lines["raw"].to_list()) if lines.height else ""
    decoded = decode_bytes(text.encode(), snap.timezone, raw=False)[0].events
    if lines["raw"].null_count() or decoded.height != lines.height:
        # a line not kept (or that decodes otherwise): the stored events, read whole
        events = (
            snap.scan_events().filter(wanted).join(keys.lazy(), on=["source", "line"], how="semi")
        )
        decoded = in_order(snap, events.drop("file", "_rank", strict=False))
    else:
        decoded = decoded.with_columns(lines["file"], lines["line"])
    # the original lines are not kept: no view shows them
    return enrich(decoded.select(list(polars_schema(raw=False))))


def _enriched(snap: StoreSnapshot) -> pl.LazyFrame:
    enriched = snap.scan_table(ENRICHED_TABLE)
    assert enriched is not None
    return enriched


def _sessions(snap: StoreSnapshot, now_ms: float) -> WorkSessionsResult:
    """Every work session (the events without one as one more) and every event's thread,
    from the enriched table's columns in reading order (as the loader reads the log)."""
    columns = [c for c in AGGREGATE_COLUMNS if c != "file"]
    frame = in_order(snap, _enriched(snap).select("source", *columns), by_time=False)
    return work_sessions(frame.select(AGGREGATE_COLUMNS), SessionQuery(unassigned=True), now=now_ms)


def _lean(snap: StoreSnapshot) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The lean rows of the check in the load's order (one read): the columns the figures
    and the timeline read, for every event; with the ``data`` fields the guard replays
    read, for the messages they count."""
    lean = snap.scan_table(CHECK_LEAN)
    assert lean is not None
    d = pl.col("data").struct
    guard_data = pl.struct([d.field(f) for f in GUARD_FIELDS])
    counted = pl.col("type").is_in(GUARD_TYPES)
    rows = in_order(
        snap,
        lean.select(
            "source",
            *SLIM[1:],
            pl.when(counted & pl.col("data").is_not_null()).then(guard_data).alias("data"),
        ),
    )
    return rows.drop("data"), rows.filter(counted)


def collect_store(
    store: str | os.PathLike[str], s: base.Setting, *, shown: int, progress: bool | None = None
) -> base.ReportData | None:
    """Compute what the report of the history store ``store`` shows from its tables.

    Parameters
    ----------
    store
        A history store (:func:`a2a_lab.io.ingest`, then :func:`a2a_lab.materialize.materialize`,
        as ``a2a-lab ingest`` does).
    s
        The report's setting (:func:`a2a_lab.app.report.setting`); its zone must be the
        store's.
    shown
        How many sessions' messages the page renders (their events are read whole).
    progress
        The stage bar on stderr.

    Returns
    -------
    ReportData or None
        As :func:`a2a_lab.app.report.collect` gives for the loaded store, but ``events``
        is the lean frame and ``enriched`` only the shown sessions' events; None when the
        tables cannot answer (not current, another zone, a time window).
    """
    if s.since_ms is not None or s.until_ms is not None:
        return None
    # each is None when its table is not current (or ``store`` is no readable store)
    enriched = scan_materialized(store, tz=s.tz)
    conv = scan_conversations(store, tz=s.tz)
    # the report of a log has no load findings (its check reads the events): ignore them
    checked = stored_check(store, CheckOptions(now=s.now_ms, ignore=["load."]), tz=s.tz)
    if enriched is None or conv is None or checked is None:
        return None
    snap = open_store(store)
    if not _current(snap):
        return None
    findings, loaded = checked
    with base._stages(8, progress) as bar:
        events, counted = _lean(snap)
        guards = base.guard_replays(counted)
        del counted
        bar.update()
        sessions = _sessions(snap, s.now_ms)
        bar.update()
        texts, title_events = _texts_and_titles(snap)
        messages = base.indexed_messages(texts.lazy(), sessions)
        del texts
        bar.update()
        shown_events = _shown_events(snap, sessions, shown)
        agents = _enriched(snap).select(AGENT_COLUMNS).unique().collect()
        bar.update(2)
        computed = base.Computed(
            load=LoadResult(events=events, report=loaded.report),
            events=events,
            enriched=shown_events,
            sessions=sessions,
            conversations=conv,
            findings=findings,
            messages=messages,
            title_events=title_events,
            every_enriched=agents,
            guards=guards,
        )
        return base.finish(computed, s, bar)
