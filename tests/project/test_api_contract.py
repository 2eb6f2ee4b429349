"""The API contract over ``a2a_lab.__all__`` (docs/api.md).

Every frame a public function returns has snake_case top-level columns, and its
``Datetime`` columns carry a time zone; ``dir(al)`` lists every ``__all__`` name. Checked on
the bundled sample and on a small log simulated at test time.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis import calibrate, checks, pm

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
NOW_MS = 1_900_000_000_000  # after both logs: every session has a status

#: Public functions that return no frame (trees, graphs, writers, exports, converters).
NOT_FRAME_FUNCTIONS = {
    "conversation_tree",
    "graph_metrics",
    "interaction_graph",
    "main_agents_from_openclaw",
    "simulate",
    "write_events",
    "write_graph",
    "ingest",
    "report",
    "fit_log",
    "compare",
    "to_epoch_ms",
    "to_node_link",
    "to_ocel2",
    "write_ocel2",
    "write_frame",
    # OTLP export (a result object) and import (a LoadResult, like load)
    "to_otlp",
    "load_otlp",
    # flatten's columns are the input's nested names joined ("data.fromAgent"): an export format
    "flatten",
}


def _not_frame_names() -> set[str]:
    """Public names that are no function returning frames: classes, modules, constants and
    :data:`NOT_FRAME_FUNCTIONS`."""
    return NOT_FRAME_FUNCTIONS | {
        name
        for name in al.__all__
        if inspect.isclass(getattr(al, name))
        or inspect.ismodule(getattr(al, name))
        or not callable(getattr(al, name))
    }


#: Public functions taking a frame first, called on a lazy and an eager input: the result
#: (or the frame the result holds) must be of the kind given. ``work_sessions`` and
#: ``events_query`` return result objects whose frames are always eager (docs/api.md).
KIND_CALLS: dict[str, Callable[[pl.DataFrame | pl.LazyFrame, dict[str, pl.DataFrame]], Any]] = {
    "enrich": lambda f, d: al.enrich(f),
    "conversations": lambda f, d: al.conversations(f),
    "exchange_events": lambda f, d: al.exchange_events(f),
    "payload_events": lambda f, d: al.payload_events(f),
    "check": lambda f, d: al.check(f, now=NOW_MS),
    "directly_follows": lambda f, d: al.directly_follows(f),
    "variants": lambda f, d: al.variants(f),
    "message_counts": lambda f, d: al.message_counts(f),
    "flatten": lambda f, d: al.flatten(f),
    "calibrate.exchanges": lambda f, d: calibrate.exchanges(f),
}
#: The same for functions whose input is a derived frame (conversations, payload events).
KIND_CALLS_DERIVED: dict[str, tuple[str, Callable[[pl.DataFrame | pl.LazyFrame], Any]]] = {
    "pair_stats": ("conv", lambda f: al.pair_stats(f)),
    "exchange_summary": ("conv", lambda f: al.exchange_summary(f)),
    "target_stats": ("conv", lambda f: al.target_stats(f)),
    "question_answers": ("payloads", lambda f: al.question_answers(f)),
    "delegation_reports": ("payloads", lambda f: al.delegation_reports(f)),
    "status_timeline": ("payloads", lambda f: al.status_timeline(f)),
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
        "from_records": lambda: al.from_records(
            [{"type": "a2a.send", "agentId": "ruda", "timestampMs": 5}]
        ),
        "scan": lambda: al.scan(al.samples.sample_dir()),
        "enrich": lambda: enriched,
        "work_sessions": lambda: al.work_sessions(enriched, now=NOW_MS),
        "events_query": lambda: al.events_query(enriched),
        "exchange_events": lambda: al.exchange_events(enriched),
        "conversations": lambda: conv,
        "exchange_summary": lambda: al.exchange_summary(conv),
        "pair_stats": lambda: al.pair_stats(conv, by_hour=True),
        "target_stats": lambda: al.target_stats(conv, by_hour=True),
        "payload_events": lambda: payloads,
        "question_answers": lambda: al.question_answers(payloads),
        "delegation_reports": lambda: al.delegation_reports(payloads),
        "status_timeline": lambda: al.status_timeline(payloads),
        # reached as al.<module>.<function>, one import away
        "check": lambda: al.check(events, now=NOW_MS),
        "load_findings": lambda: al.load_findings(al.load(al.samples.sample_dir()).report),
        "directly_follows": lambda: al.directly_follows(enriched),
        "variants": lambda: al.variants(enriched),
        "message_counts": lambda: al.message_counts(enriched),
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
    covered = {n for n in _calls(logs["simulated"].head(0)) if "." not in n} | {
        "load",
        "polars_schema",
    }
    assert set(al.__all__) - _not_frame_names() == covered


@pytest.mark.parametrize("log", ["sample", "simulated"])
def test_public_frames_are_snake_case_with_zoned_times(
    logs: dict[str, pl.DataFrame], log: str
) -> None:
    events = logs[log]
    results = {name: call() for name, call in _calls(events).items()}
    results["load"] = al.load(al.samples.sample_dir())
    checked = 0
    for name, result in results.items():
        for label, frame in _frames(name, result):
            schema = frame.collect_schema()
            bad = [c for c in schema.names() if not SNAKE.match(c)]
            assert not bad, f"{label}: columns not snake_case: {bad}"
            naive = [
                c
                for c, dtype in schema.items()
                if isinstance(dtype, pl.Datetime) and dtype.time_zone is None
            ]
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
    for column, dtype in [
        ("start_time", pl.Datetime("ms", "UTC")),
        ("last_time", pl.Datetime("ms", "UTC")),
        ("duration_s", pl.Float64),
        ("event_count", pl.Int64),
        ("thread_count", pl.Int64),
    ]:
        assert ws.sessions.schema[column] == dtype, column
    spans = ws.sessions.select(
        seconds("start_time", "last_time").alias("want"), "duration_s"
    ).rename({"duration_s": "got"})
    assert spans.height > 0 and (spans["want"] == spans["got"]).all()

    conv = al.conversations(enriched)
    for column, dtype in [
        ("start_time", pl.Datetime("ms", "UTC")),
        ("end_time", pl.Datetime("ms", "UTC")),
        ("first_reply_s", pl.Float64),
        ("duration_s", pl.Float64),
        ("turns", pl.Int64),
    ]:
        assert conv.schema[column] == dtype, column
    done = conv.filter(pl.col("end_time").is_not_null()).select(
        seconds("start_time", "end_time").alias("want"),
        pl.col("duration_s").alias("got"),
        "first_reply_s",
    )
    assert done.height > 0 and (done["want"] == done["got"]).all()
    assert (done["first_reply_s"].drop_nulls() <= done["got"].max()).all()


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_every_function_returns_the_frame_kind_it_was_given(
    logs: dict[str, pl.DataFrame], lazy: bool
) -> None:
    events = logs["simulated"]
    enriched = al.enrich(events)
    derived = {"conv": al.conversations(enriched), "payloads": al.payload_events(enriched)}
    want = pl.LazyFrame if lazy else pl.DataFrame
    wrong = []
    for name, call in KIND_CALLS.items():
        frame = enriched if name not in ("enrich", "check") else events
        got = call(frame.lazy() if lazy else frame, derived)
        if not isinstance(got, want):
            wrong.append(f"{name}: {type(got).__name__}")
    for name, (source, call) in KIND_CALLS_DERIVED.items():
        got = call(derived[source].lazy() if lazy else derived[source])
        if not isinstance(got, want):
            wrong.append(f"{name}: {type(got).__name__}")
    assert not wrong, f"{'lazy' if lazy else 'eager'} input, other kind out: {wrong}"


def test_kind_calls_cover_every_frame_function(logs: dict[str, pl.DataFrame]) -> None:
    frame_functions = (
        set(al.__all__)
        - _not_frame_names()
        - {
            "load",
            "polars_schema",
            "from_records",
            "work_sessions",
            "events_query",
            "load_findings",
            "scan",
        }
    )  # scan takes a source, not a frame
    assert frame_functions <= set(KIND_CALLS) | set(KIND_CALLS_DERIVED)


def test_rule_set_repr_is_short() -> None:
    import pydoc

    assert len(repr(al.TASK_MONITOR_V1)) < 100
    assert len(pydoc.render_doc(al.enrich)) < 5000


@pytest.mark.parametrize("tz_env", ["UTC", "Asia/Seoul", "America/New_York"])
def test_naive_now_means_utc_whatever_the_machine_zone(
    tz_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time
    from datetime import datetime

    monkeypatch.setenv("TZ", tz_env)
    time.tzset()
    try:
        want = 1_771_372_800_000.0  # 2026-02-18T00:00:00Z
        assert al.to_epoch_ms("2026-02-18") == want
        assert al.to_epoch_ms("2026-02-18T00:00:00") == want
        assert al.to_epoch_ms(datetime(2026, 2, 18)) == want
        assert al.to_epoch_ms(want) == want
        assert al.to_epoch_ms("2026-02-18T09:00:00+09:00") == want
        events = al.from_records([{"type": "x", "ts": int(want) + 400_000}])
        assert al.check(events, now=datetime(2026, 2, 18), select=["clock.future_ts"]).height == 1
        assert al.check(events, now="2026-02-18T00:10", select=["clock.future_ts"]).height == 0
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize(
    "bad", ["2026-02-30", "yesterday", float("nan"), float("inf"), 1e308, True]
)
def test_bad_instants_fail_naming_the_parameter(bad: object) -> None:
    with pytest.raises(ValueError, match="^now"):
        al.check(al.from_records([{"type": "x", "ts": 1}]), now=bad)  # type: ignore[arg-type]


def test_check_since_until_select_ignore(logs: dict[str, pl.DataFrame]) -> None:
    events = logs["simulated"]
    every = al.check(events, now=NOW_MS)
    assert set(al.check(events, now=NOW_MS, ignore=["a2a."])["rule"]) == set(every["rule"]) - {
        r for r in every["rule"] if r.startswith("a2a.")
    }
    middle = events["event_ms"].median()
    later = al.check(events, now=NOW_MS, since=middle)
    lines = set(events.filter(pl.col("event_ms") >= middle)["line"])
    assert set(later["lines"].explode().drop_nulls()) <= lines
    assert al.check(events, now=NOW_MS, since="2100-01-01").height == 0
    with pytest.raises(ValueError, match="since"):
        al.check(events, since="2026-02-19", until="2026-02-18")


def test_result_objects_accept_lazy_input(logs: dict[str, pl.DataFrame]) -> None:
    """Functions returning a result object or a graph take a LazyFrame as well (docs/api.md):
    the same result as from the eager frame."""
    enriched = al.enrich(logs["simulated"])
    lazy = enriched.lazy()
    ws, ws_lazy = al.work_sessions(enriched, now=NOW_MS), al.work_sessions(lazy, now=NOW_MS)
    assert ws_lazy.sessions.equals(ws.sessions) and ws_lazy.threads.equals(ws.threads)
    assert ws_lazy.to_api() == ws.to_api()
    assert al.events_query(lazy).to_api() == al.events_query(enriched).to_api()
    g, g_lazy = al.interaction_graph(enriched), al.interaction_graph(lazy)
    assert sorted(g_lazy.edges(data="sends")) == sorted(g.edges(data="sends"))
    assert g.number_of_edges() > 0
    assert calibrate.fit_log(lazy).config == calibrate.fit_log(enriched).config


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    import inspect

    from a2a_lab.views import messages, widgets

    for name in al.__all__:
        value = getattr(al, name)
        if inspect.isfunction(value):
            yield name, value
    for module in (al.plots, messages, widgets, calibrate, checks, pm):
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            if inspect.isfunction(value):
                yield f"{module.__name__}.{name}", value


def test_one_time_zone_parameter_name() -> None:
    """``tz`` is the one name; ``timezone`` survives only as a deprecated, unset alias."""
    import inspect

    seen = 0
    for name, func in _public_callables():
        params = inspect.signature(func).parameters
        assert "timezone_name" not in params, name
        if "timezone" in params:
            assert "tz" in params and params["timezone"].default is None, name
        if "tz" in params:
            seen += 1
            assert params["tz"].default in (None, "UTC", inspect.Parameter.empty), name
    assert seen >= 8


def test_the_sessions_modules_stay_small() -> None:
    from pathlib import Path

    import a2a_lab.sessions as sessions

    folder = Path(sessions.__file__).parent
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    assert len(sizes) >= 4 and max(sizes.values()) <= 800, sizes
