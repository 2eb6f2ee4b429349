"""The API contract over ``a2a_lab.__all__`` (docs/architecture.md, "The column contract").

Every frame a public function returns has snake_case top-level columns, and its
``Datetime`` columns carry a time zone; ``dir(al)`` lists every ``__all__`` name. Checked on
the bundled sample and on a small log simulated at test time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis import calibrate, checks, pm

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
NOW_MS = 1_900_000_000_000  # after both logs: every session has a status

#: Public names that are not functions returning frames (classes, constants, modules, writers).
NOT_FRAME_FUNCTIONS = {
    "ENRICHMENT_COLUMNS", "TASK_MONITOR_V1", "CoordinationEvent", "EventData", "LoadReport", "LoadResult",
    "LogFollower", "RuleSet", "SimConfig", "WorkSessionsResult", "__version__", "conversation_tree",
    "graph_metrics", "interaction_graph", "main_agents_from_openclaw", "plots", "rules", "runtime",
    "samples", "schema", "sim", "simulate", "threads", "checks", "pm", "write_events", "write_graph",
    "ingest", "IngestReport",
}


def _frames(name: str, value: Any) -> Iterator[tuple[str, pl.DataFrame | pl.LazyFrame]]:
    """The frames inside a public function's result, named for the failure message."""
    if isinstance(value, pl.DataFrame | pl.LazyFrame):
        yield name, value
    elif isinstance(value, al.WorkSessionsResult):
        yield f"{name}.sessions", value.sessions
        yield f"{name}.threads", value.threads
        yield f"{name}.thread_events", value.thread_events
    elif isinstance(value, al.LoadResult):
        yield f"{name}.events", value.events
        yield f"{name}.report.rejects", value.report.rejects
        yield f"{name}.report.issues", value.report.issues
    else:
        yield f"{name}.events", value.events  # EventsResult


def _calls(events: pl.DataFrame) -> dict[str, Callable[[], Any]]:
    """Each public function returning frames, called on ``events`` (a loaded log)."""
    enriched = al.enrich(events)
    conv = al.conversations(enriched)
    payloads = al.payload_events(enriched)
    return {
        "from_records": lambda: al.from_records([{"type": "a2a.send", "agentId": "ruda", "timestampMs": 5}]),
        "scan": lambda: al.scan(al.samples.sample_dir()),
        "enrich": lambda: enriched,
        "work_sessions": lambda: al.work_sessions(enriched, now=NOW_MS),
        "events_query": lambda: al.events_query(enriched),
        "exchange_events": lambda: al.exchange_events(enriched),
        "conversations": lambda: conv,
        "pair_stats": lambda: al.pair_stats(conv, by_hour=True),
        "target_stats": lambda: al.target_stats(conv, by_hour=True),
        "payload_events": lambda: payloads,
        "question_answers": lambda: al.question_answers(payloads),
        "delegation_reports": lambda: al.delegation_reports(payloads),
        "status_timeline": lambda: al.status_timeline(payloads),
        # reached as al.<module>.<function>, one import away
        "checks.check": lambda: checks.check(events, now=NOW_MS),
        "pm.directly_follows": lambda: pm.directly_follows(enriched),
        "pm.variants": lambda: pm.variants(enriched),
        "calibrate.exchanges": lambda: calibrate.exchanges(enriched),
    }


@pytest.fixture(scope="module")
def logs() -> dict[str, pl.DataFrame]:
    simulated = al.simulate(al.SimConfig(n_messages=150), seed=5).events
    return {"sample": al.load(al.samples.sample_dir()).events, "simulated": simulated}


def test_every_public_name_is_listed_by_dir() -> None:
    assert set(al.__all__) <= set(dir(al))
    for name in al.__all__:
        assert getattr(al, name) is not None, name


def test_every_public_frame_function_is_covered(logs: dict[str, pl.DataFrame]) -> None:
    covered = {n for n in _calls(logs["simulated"].head(0)) if "." not in n} | {"load", "polars_schema"}
    assert set(al.__all__) - NOT_FRAME_FUNCTIONS == covered


@pytest.mark.parametrize("log", ["sample", "simulated"])
def test_public_frames_are_snake_case_with_zoned_times(logs: dict[str, pl.DataFrame], log: str) -> None:
    events = logs[log]
    results = {name: call() for name, call in _calls(events).items()}
    results["load"] = al.load(al.samples.sample_dir())
    checked = 0
    for name, result in results.items():
        for label, frame in _frames(name, result):
            schema = frame.collect_schema()
            bad = [c for c in schema.names() if not SNAKE.match(c)]
            assert not bad, f"{label}: columns not snake_case: {bad}"
            naive = [c for c, dtype in schema.items() if isinstance(dtype, pl.Datetime) and dtype.time_zone is None]
            assert not naive, f"{label}: Datetime columns without a time zone: {naive}"
            checked += 1
    assert checked >= 20


def test_the_event_frame_schema_is_snake_case_and_data_keeps_log_names() -> None:
    schema = al.polars_schema()
    assert all(SNAKE.match(c) for c in schema.names())
    assert {"agent_id", "timestamp_ms"} <= set(schema.names())
    assert {"fromAgent", "conversationId"} <= {f.name for f in schema["data"].fields}  # type: ignore[union-attr]


def test_durations_are_seconds_and_counts_integers(logs: dict[str, pl.DataFrame]) -> None:
    enriched = al.enrich(logs["simulated"])  # whole-millisecond times: the Datetimes are exact

    def seconds(first: str, last: str) -> pl.Expr:
        return (pl.col(last) - pl.col(first)).dt.total_milliseconds() / 1000.0

    ws = al.work_sessions(enriched, now=NOW_MS)
    for column, dtype in [("start_time", pl.Datetime("ms", "UTC")), ("last_time", pl.Datetime("ms", "UTC")),
                          ("duration_s", pl.Float64), ("event_count", pl.Int64), ("thread_count", pl.Int64)]:
        assert ws.sessions.schema[column] == dtype, column
    spans = ws.sessions.select(seconds("start_time", "last_time").alias("want"), "duration_s").rename({"duration_s": "got"})
    assert spans.height > 0 and (spans["want"] == spans["got"]).all()

    conv = al.conversations(enriched)
    for column, dtype in [("start_time", pl.Datetime("ms", "UTC")), ("end_time", pl.Datetime("ms", "UTC")),
                          ("first_reply_s", pl.Float64), ("duration_s", pl.Float64), ("turns", pl.Int64)]:
        assert conv.schema[column] == dtype, column
    done = conv.filter(pl.col("end_time").is_not_null()).select(
        seconds("start_time", "end_time").alias("want"), pl.col("duration_s").alias("got"), "first_reply_s"
    )
    assert done.height > 0 and (done["want"] == done["got"]).all()
    assert (done["first_reply_s"].drop_nulls() <= done["got"].max()).all()
