"""The report of a history store, from the tables made at ingest, equals the log's.

:func:`a2a_lab.app.report.collect` of the loaded log directory is the slow obvious
reference; :func:`a2a_lab.app.report_store.collect_store` reads the store's materialised
tables (conversations, findings, enriched columns, lean rows) and only a few columns of the
stored events. The logs are ingested in pieces (incremental materialisation), as
``tests/materialize/test_materialize_check.py`` does.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.app.report import ReportData, collect, setting
from a2a_lab.app.report_store import collect_store
from a2a_lab.io import ingest
from a2a_lab.materialize import materialize
from a2a_lab.samples import write_log
from a2a_lab.views.report import ReportOptions, report
from tests.support.paths import ROOT
from tests.support.report_logs import report_frames, write_hostile_log
from tests.support.store_logs import LIVE, Pieces, ingest_in_pieces, pieces
from tests.support.texts_table import assert_texts_current

NOW = "2026-12-01T00:00:00Z"


def assert_same_report(whole: ReportData, stored: ReportData) -> None:
    """Field by field: the frames, the figures, the load report, the timeline's events and
    the rendered sessions' enriched events."""
    a, b = report_frames(whole), report_frames(stored)
    for name, frame in a.items():
        try:
            assert_frame_equal(frame, b[name])
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    assert whole.figures == stored.figures
    assert whole.load.report.summary() == stored.load.report.summary()
    cols = ["file", "line", "type", "event_ms", "event_time"]
    assert_frame_equal(whole.events.select(cols), stored.events.select(cols))
    # the rendered sessions' events: the same rows as in the whole frame
    keys = stored.enriched.select("file", "line")
    shown = whole.enriched.join(keys, on=["file", "line"], how="semi", maintain_order="left")
    assert_frame_equal(shown, stored.enriched)


def _both(
    logdir: Path, store: Path, tz: str = "UTC", shown: int = 30
) -> tuple[ReportData, ReportData]:
    whole = collect(al.load(logdir, tz=tz), source="s", tz=tz, now=NOW, progress=False)
    stored = collect_store(store, setting("s", (None, None), tz, NOW), shown=shown, progress=False)
    assert stored is not None, "the tables should answer after materialize"
    return whole, stored


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The hostile report log ingested in three pieces: (log directory, store)."""
    root = tmp_path_factory.mktemp("rstore")
    lines = write_hostile_log(root / "h.ndjson").read_bytes().split(b"\n")
    *_, store = ingest_in_pieces(root, random.Random(5), [x for x in lines if x], 3)
    return root / "logs", store


@pytest.mark.slow
def test_the_store_report_equals_the_report_of_the_log(hostile_store: tuple[Path, Path]) -> None:
    logdir, store = hostile_store
    whole, stored = _both(logdir, store)
    assert whole.figures["exchanges"] > 100 and whole.figures["findings"] > 0
    assert 0 < stored.enriched.height < whole.enriched.height
    assert_same_report(whole, stored)


@pytest.mark.slow
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(p=pieces(4))
def test_the_store_report_of_peer_logs_in_pieces(tmp_path_factory: Any, p: Pieces) -> None:
    root = tmp_path_factory.mktemp("rp")
    for store in p.ingest(root):
        assert_same_report(*_both(root / "logs", store, shown=3))
        # the texts table itself, after every append (the report reads it)
        assert_texts_current(root / "logs", store)


@pytest.mark.slow
def test_the_page_from_the_store_is_the_page_of_the_log(hostile_store: tuple[Path, Path]) -> None:
    logdir, store = hostile_store
    o = ReportOptions(title="t", max_sessions=4, embed_font=False)
    from_log = report(logdir, o, now=NOW, progress=False)
    from_store = report(store, o, now=NOW, progress=False)
    # only the source line names another path: the store's, not the log directory's
    assert from_store.data.source == str(store) and from_log.data.source == str(logdir)
    assert from_store.html.replace(str(store), str(logdir)) == from_log.html


def test_tables_that_cannot_answer_fall_back_to_the_loaded_store(
    hostile_store: tuple[Path, Path], tmp_path: Path
) -> None:
    _, store = hostile_store
    s = setting("s", (None, None), "UTC", NOW)
    # a time window: the tables are of the whole store
    windowed = setting("s", (None, "2026-02-20T00:00:00Z"), "UTC", NOW)
    assert collect_store(store, windowed, shown=3) is None
    # another zone than the store's
    assert collect_store(store, setting("s", (None, None), "Asia/Seoul", NOW), shown=3) is None
    # lines ingested without materialize: the tables are behind the events
    write_log(tmp_path / "log.ndjson", 400, seed=2)
    lines = [x for x in (tmp_path / "log.ndjson").read_bytes().split(b"\n") if x]
    (copy,) = ingest_in_pieces(tmp_path, random.Random(1), lines[:300], 1)
    with (tmp_path / "logs" / LIVE).open("ab") as fh:
        fh.write(b"".join(x + b"\n" for x in lines[300:]))
    ingest(tmp_path / "logs", copy)
    assert collect_store(copy, s, shown=3) is None
    o = ReportOptions(title="t", max_sessions=3, embed_font=False)
    # the page is still the log's: from the store's events loaded whole
    behind = report(copy, o, now=NOW, progress=False)
    from_log = report(tmp_path / "logs", o, now=NOW, progress=False)
    assert behind.figures == from_log.figures and behind.figures["events"] == 400
    materialize(copy)
    assert collect_store(copy, s, shown=3) is not None


def test_the_cli_reports_a_store(hostile_store: tuple[Path, Path], tmp_path: Path) -> None:
    """Each run in its own process, as a user runs the CLI. (In one process, the guard
    replays of ``analysis.checks.replay_guard`` depend on the Categorical codes left by the
    logs analysed before: Polars' categories are global. Not this change's; reported.)"""
    logdir, store = hostile_store
    out_log, out_store = tmp_path / "log.html", tmp_path / "store.html"
    args = ["--now", NOW, "--max-sessions", "3", "--title", "t"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "A2A_LAB_PROGRESS": "0"}
    for source, out in ((logdir, out_log), (store, out_store)):
        cmd = [sys.executable, "-m", "a2a_lab", "report", str(source), "-o", str(out), *args]
        assert subprocess.run(cmd, env=env, capture_output=True, check=False).returncode == 0
    # the embedded font's ``head`` table carries the subsetter's clock: blanked
    font = re.compile(r"base64,T1RUTw[A-Za-z0-9+/=]*")
    page = out_store.read_text(encoding="utf-8").replace(str(store), str(logdir))
    assert font.sub("FONT", page) == font.sub("FONT", out_log.read_text(encoding="utf-8"))


def test_the_lean_table_is_the_one_materialize_writes() -> None:
    from a2a_lab.app import report_store
    from a2a_lab.materialize import _names

    assert report_store.CHECK_LEAN == _names.CHECK_LEAN


@pytest.mark.slow
def test_shown_events_fall_back_to_the_stored_events(
    hostile_store: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines that do not decode to as many events (or were not kept) are read whole from
    the stored events: the same report."""
    from a2a_lab.app import report_store

    logdir, store = hostile_store
    # a decoder that gives no event: the lines cannot stand for the stored events
    nothing = SimpleNamespace(events=pl.DataFrame())
    monkeypatch.setattr(report_store, "decode_bytes", lambda *a, **k: (nothing, None))
    assert_same_report(*_both(logdir, store))


def test_guard_replays_do_not_depend_on_earlier_categories() -> None:
    """``replay_guard`` numbers the pairs in their sorted order whatever Polars' global
    categories hold (they once gave the codes, and a process's earlier logs changed them)."""
    from a2a_lab.analysis.checks import replay_guard
    from a2a_lab.io import from_records

    sends = [
        {"type": "a2a.send", "ts": 1000 * i, "data": {"fromAgent": a, "toAgent": b}}
        for i in range(8)
        for a, b in (("a", "b"), ("y", "z"))
    ]
    fresh = replay_guard(from_records(sends), limit=6)
    # categories seen first in the other order, and kept alive
    kept = pl.Series(["y::z", "a::b"]).cast(pl.Categorical)
    again = replay_guard(from_records(sends), limit=6)
    assert kept.len() == 2 and fresh["blocked"].sum() == 4
    assert_frame_equal(fresh, again)
