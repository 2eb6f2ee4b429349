"""One ``tz`` parameter and one time-window rule across the package (issue 13 item 4).

Every public function with a time zone names it ``tz``, defaults to UTC, and refuses an
unknown zone at once with a ``ValueError`` naming ``tz``; the old keyword ``timezone``
still works with a ``DeprecationWarning``. ``since`` / ``until`` bound ``event_ms``, both
inclusive, the same way in ``work_sessions``, ``conversations``, ``interaction_graph`` and
``check``. Checked on logs simulated at test time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis.calibrate import fit_log
from a2a_lab.sim.output import write_logdir
from a2a_lab.time import check_tz, default_tz, in_window
from a2a_lab.views import plots
from a2a_lab.views.messages import thread_messages
from a2a_lab.views.widgets import sessions_table, thread_view

NOW_MS = 1_900_000_000_000


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    return al.simulate(al.SimConfig(n_messages=200), seed=11).events


@pytest.fixture(scope="module")
def enriched(events: pl.DataFrame) -> pl.DataFrame:
    return al.enrich(events)


#: Every public function taking a time zone: its parameter must be ``tz``, default UTC.
TZ_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "load": al.load,
    "scan": al.scan,
    "from_records": al.from_records,
    "fit_log": fit_log,
    "sim.output.write_logdir": write_logdir,
    "thread_messages": thread_messages,
    "thread_view": thread_view,
    "sessions_table": sessions_table,
    "events_query": al.events_query,
    "report": al.report,
    "LogFollower": al.LogFollower,
    "ingest": al.io.ingest,
    "io.load_store": al.io.load_store,
    "io.scan_store": al.io.scan_store,
}


#: The functions whose deprecated ``timezone=`` was removed (issue 25: one name per job).
_NO_TIMEZONE = frozenset(
    {
        "load",
        "scan",
        "from_records",
        "fit_log",
        "sim.output.write_logdir",
        "LogFollower",
        "ingest",
        "io.load_store",
        "io.scan_store",
    }
)


@pytest.mark.parametrize("name", sorted(TZ_FUNCTIONS))
def test_the_time_zone_parameter_is_tz_defaulting_to_utc(name: str) -> None:
    params = inspect.signature(TZ_FUNCTIONS[name]).parameters
    assert "tz" in params, name
    assert params["tz"].default in ("UTC", None), name
    if name in _NO_TIMEZONE:  # the deprecated alias is gone (issue 25)
        assert "timezone" not in params, name
    elif "timezone" in params:  # the deprecated alias, keyword-only and unset by default
        assert params["timezone"].default is None
        assert params["timezone"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize(
    "call",
    [
        lambda ev, en, tmp: al.load(al.samples.sample_dir(), tz="Mars/Olympus"),
        lambda ev, en, tmp: al.scan(al.samples.sample_dir(), tz="Mars/Olympus"),
        lambda ev, en, tmp: al.from_records([{"type": "x", "ts": 1}], tz="Mars/Olympus"),
        lambda ev, en, tmp: fit_log(ev, tz="Mars/Olympus"),
        lambda ev, en, tmp: write_logdir(ev, tmp, tz="Mars/Olympus"),
        lambda ev, en, tmp: plots.set_display_timezone("Mars/Olympus"),
        lambda ev, en, tmp: plots.swimlane(en, tz="Mars/Olympus"),
        lambda ev, en, tmp: sessions_table(al.work_sessions(en, now=NOW_MS), en, tz="Mars/Olympus"),
        lambda ev, en, tmp: al.LogFollower(tmp, tz="Mars/Olympus"),
        lambda ev, en, tmp: al.io.load_store(tmp, tz="Mars/Olympus"),
        lambda ev, en, tmp: al.io.scan_store(tmp, tz="Mars/Olympus"),
        lambda ev, en, tmp: al.load(al.samples.sample_dir(), tz=""),
        lambda ev, en, tmp: al.load(al.samples.sample_dir(), tz=9),
    ],
    ids=[
        "load",
        "scan",
        "from_records",
        "fit_log",
        "write_logdir",
        "set_display_timezone",
        "swimlane",
        "sessions_table",
        "LogFollower",
        "load_store",
        "scan_store",
        "load-empty",
        "load-number",
    ],
)
def test_an_unknown_time_zone_fails_at_once_naming_tz(
    call: Callable[[pl.DataFrame, pl.DataFrame, Path], Any],
    events: pl.DataFrame,
    enriched: pl.DataFrame,
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="^tz: "):
        call(events, enriched, tmp_path / "log")
    assert not (tmp_path / "log").exists()  # nothing was written before the check
    assert plots.display_timezone() == "UTC"


def test_the_old_timezone_keyword_is_gone(tmp_path: Path) -> None:
    """``timezone=`` was the deprecated name of ``tz``: now it is an unknown keyword."""
    sample = al.samples.sample_dir()
    logdir, store = tmp_path / "logs", tmp_path / "store"
    logdir.mkdir()
    (logdir / "coordination-events.ndjson").write_text(
        '{"type":"a2a.send","timestamp":"2026-02-18T09:00:00"}\n'
    )
    al.io.ingest(logdir, store, tz="Asia/Seoul")
    calls: list[Callable[[], Any]] = [
        lambda: al.load(sample, timezone="Asia/Seoul"),  # type: ignore[call-arg]
        lambda: al.from_records([], timezone="Asia/Seoul"),  # type: ignore[call-arg]
        lambda: al.LogFollower(logdir, timezone="Asia/Seoul"),  # type: ignore[call-arg]
        lambda: al.io.ingest(logdir, store, timezone="Asia/Seoul"),  # type: ignore[call-arg]
        lambda: al.io.load_store(store, timezone="UTC"),  # type: ignore[call-arg]
        lambda: al.io.scan_store(store, timezone="UTC"),  # type: ignore[call-arg]
    ]
    for call in calls:
        with pytest.raises(TypeError, match="timezone"):
            call()


def test_the_follower_and_the_store_take_tz(tmp_path: Path) -> None:
    logdir, store = tmp_path / "logs", tmp_path / "store"
    logdir.mkdir()
    (logdir / "coordination-events.ndjson").write_text(
        '{"type":"a2a.send","timestamp":"2026-02-18T09:00:00"}\n'
    )
    assert al.LogFollower(logdir, tz="Asia/Seoul").tz == "Asia/Seoul"
    al.io.ingest(logdir, store, tz="Asia/Seoul")
    new_load = al.io.load_store(store, tz="UTC").events
    # naive ISO times move with the zone: 09:00 in Seoul is 00:00 UTC, 09:00 UTC is 9 h later
    assert new_load["event_ms"][0] - al.io.load_store(store).events["event_ms"][0] == 9 * 3_600_000
    assert new_load.equals(al.io.scan_store(store, tz="UTC").collect().select(new_load.columns))


def test_tz_moves_naive_log_timestamps_the_same_way_everywhere() -> None:
    rec = [{"type": "a2a.send", "timestamp": "2026-02-18T09:00:00", "data": {}}]
    utc = al.from_records(rec)["event_ms"].item()
    seoul = al.from_records(rec, tz="Asia/Seoul")["event_ms"].item()
    assert utc - seoul == 9 * 3_600_000


def test_fit_log_hours_are_local_to_tz(events: pl.DataFrame) -> None:
    """The fitted profile is by local hour of ``tz``, and the twin's clock starts in it."""
    day = al.simulate(al.SimConfig(n_messages=None, duration_s=2 * 86_400.0), seed=3).events
    utc = fit_log(day, hourly=True)
    seoul = fit_log(day, hourly=True, tz="Asia/Seoul")
    shifted = utc.hourly.with_columns((pl.col("hour") + 9) % 24).sort("hour")
    assert shifted["exchanges"].to_list() == seoul.hourly.sort("hour")["exchanges"].to_list()
    assert str(seoul.config.start.tzinfo) == "Asia/Seoul"
    assert utc.config.start.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_write_log_names_months_in_tz(tmp_path: Path) -> None:
    # 2026-03-31T20:00Z is already April 1st in Seoul
    recs = [{"type": "a2a.send", "ts": 1_774_987_200_000 + i, "data": {}} for i in range(3)]
    ev = al.from_records(recs)
    utc = write_logdir(ev, tmp_path / "utc")
    seoul = write_logdir(ev, tmp_path / "kst", tz="Asia/Seoul")
    assert [f.name for f in utc] == [f.name for f in seoul] == ["coordination-events.ndjson"]
    later = al.from_records([*recs, {"type": "a2a.send", "ts": 1_775_001_600_000, "data": {}}])
    # 04-01T00:00Z: a new month in UTC, the same (April) in Seoul
    assert [f.name for f in write_logdir(later, tmp_path / "u2")] == [
        "coordination-events-2026-03.ndjson",
        "coordination-events.ndjson",
    ]
    assert [f.name for f in write_logdir(later, tmp_path / "k2", tz="Asia/Seoul")] == [
        "coordination-events.ndjson"
    ]


def test_thread_views_show_times_in_tz(enriched: pl.DataFrame) -> None:
    ws = al.work_sessions(enriched, now=NOW_MS)
    session = ws.sessions["id"][0]
    utc = thread_messages(ws, enriched, session)
    seoul = thread_messages(ws, enriched, session, tz="Asia/Seoul")
    assert utc.schema["time"].time_zone == "UTC"  # type: ignore[attr-defined]
    assert seoul.schema["time"].time_zone == "Asia/Seoul"  # type: ignore[attr-defined]
    assert (utc["time"] == seoul["time"].dt.convert_time_zone("UTC")).all()  # the same instants
    table = sessions_table(ws, enriched, tz="Asia/Seoul")
    assert table.tz == "Asia/Seoul" and "times in Asia/Seoul" in table.to_html()
    with pytest.raises(TypeError, match="'timezone': use tz="):
        sessions_table(ws, enriched, timezone="Asia/Seoul")  # type: ignore[call-arg]


def test_default_tz_reads_the_environment_only_when_asked() -> None:
    assert default_tz({}) == "UTC"
    assert default_tz({"A2A_LAB_TZ": " Asia/Seoul "}) == "Asia/Seoul"
    with pytest.raises(ValueError, match="^A2A_LAB_TZ: unknown time zone"):
        default_tz({"A2A_LAB_TZ": "Mars/Olympus"})
    assert check_tz("America/New_York") == "America/New_York"


def test_library_defaults_ignore_a2a_lab_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = [{"type": "a2a.send", "timestamp": "2026-02-18T09:00:00", "data": {}}]
    want = al.from_records(rec)["event_ms"].item()
    monkeypatch.setenv("A2A_LAB_TZ", "Asia/Seoul")
    assert al.from_records(rec)["event_ms"].item() == want


# ---------------------------------------------------------------------------------------
# since / until
# ---------------------------------------------------------------------------------------
def test_in_window_is_inclusive_and_keeps_the_frame_kind(events: pl.DataFrame) -> None:
    ms = events["event_ms"].sort()
    lo, hi = ms[10], ms[50]
    got = in_window(events, lo, hi)
    assert got.height == int(((ms >= lo) & (ms <= hi)).sum())
    assert got["event_ms"].min() == lo and got["event_ms"].max() == hi
    assert isinstance(in_window(events.lazy(), lo, None), pl.LazyFrame)
    assert in_window(events, None, None) is events
    with pytest.raises(ValueError, match="since .* is after until"):
        in_window(events, hi, lo)
    with pytest.raises(ValueError, match="^until: "):
        in_window(events, None, "2026-02-30")


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_since_until_mean_the_same_in_every_function(enriched: pl.DataFrame, lazy: bool) -> None:
    ms = enriched["event_ms"].sort()
    lo, hi = float(ms[len(ms) // 4]), float(ms[3 * len(ms) // 4])
    inside = in_window(enriched, lo, hi)
    frame = enriched.lazy() if lazy else enriched

    ws = al.work_sessions(frame, al.SessionQuery(since=lo, until=hi), now=NOW_MS)
    want = al.work_sessions(inside, now=NOW_MS)
    assert ws.sessions.equals(want.sessions) and ws.threads.equals(want.threads)
    assert (
        0
        < ws.sessions["event_count"].sum()
        < al.work_sessions(enriched, now=NOW_MS).sessions["event_count"].sum()
    )

    conv = al.conversations(frame, since=lo, until=hi)
    assert isinstance(conv, pl.LazyFrame if lazy else pl.DataFrame)
    conv = conv.lazy().collect()
    assert conv.equals(al.conversations(inside))
    assert 0 < conv.height < al.conversations(enriched).height

    g = al.interaction_graph(frame, since=lo, until=hi)
    assert sorted(g.edges) == sorted(al.interaction_graph(inside).edges)

    found = al.check(frame, now=NOW_MS, since=lo, until=hi)
    lines = set(inside["line"])
    assert set(found.lazy().collect()["lines"].explode().drop_nulls()) <= lines


@pytest.mark.parametrize(
    "call",
    [
        lambda en: al.work_sessions(
            en, al.SessionQuery(since="2026-02-19", until="2026-02-18"), now=NOW_MS
        ),
        lambda en: al.conversations(en, since="2026-02-19", until="2026-02-18"),
        lambda en: al.interaction_graph(en, since="2026-02-19", until="2026-02-18"),
    ],
    ids=["work_sessions", "conversations", "interaction_graph"],
)
def test_an_inverted_window_is_an_error(
    call: Callable[[pl.DataFrame], Any], enriched: pl.DataFrame
) -> None:
    with pytest.raises(ValueError, match="since"):
        call(enriched)


def test_work_sessions_now_takes_every_instant_spelling(enriched: pl.DataFrame) -> None:
    from datetime import UTC, datetime

    want = al.work_sessions(enriched, now=1_900_000_000_000).sessions
    iso = "2030-03-17T17:46:40Z"  # = 1.9e12 ms
    assert al.work_sessions(enriched, now=iso).sessions.equals(want)
    assert al.work_sessions(enriched, now=datetime(2030, 3, 17, 17, 46, 40)).sessions.equals(want)
    assert al.work_sessions(
        enriched, now=datetime(2030, 3, 17, 17, 46, 40, tzinfo=UTC)
    ).sessions.equals(want)
    for bad in ["2026-02-30", float("nan"), float("inf")]:
        with pytest.raises(ValueError, match="^now: "):
            al.work_sessions(enriched, now=bad)
