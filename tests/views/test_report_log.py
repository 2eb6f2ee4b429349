"""The report of a log file, read once a bucket at a time, equals the whole-load report.

:func:`a2a_lab.app.report.collect` of the loaded log is the slow obvious reference (every
event in one frame, the exchanges matched twice); :func:`a2a_lab.app.report_log.collect_log`
reads the log once, matches each bucket of whole conversations once for the conversations
and the check, and keeps only projections of the events. Tiny buckets make every
conversation class its own bucket, so the merges across buckets are exercised.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.analysis import _chunked
from a2a_lab.app.report import ReportData, collect, setting
from a2a_lab.app.report_log import collect_log
from a2a_lab.io import SourceError
from a2a_lab.samples import write_log
from a2a_lab.views.report import ReportOptions, report
from tests.support.report_logs import report_frames, write_hostile_log

NOW = "2026-12-01T00:00:00Z"
TZ = "Asia/Seoul"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile_log(tmp_path_factory.mktemp("rlog") / "coordination-events.ndjson")


@pytest.fixture(scope="module")
def two_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of two logs whose times interleave (the load sorts them together), one
    of them with bad lines."""
    root = tmp_path_factory.mktemp("rlog2")
    write_log(root / "coordination-events.ndjson", 1500, seed=3, bad_line_fraction=0.02)
    write_log(root / "coordination-events.1.ndjson", 1200, seed=4)
    return root


def _assert_same(whole: ReportData, bucketed: ReportData) -> None:
    a, b = report_frames(whole), report_frames(bucketed)
    for name, frame in a.items():
        assert frame.equals(b[name]), name
    assert whole.figures == bucketed.figures
    assert whole.load.report.summary() == bucketed.load.report.summary()
    # the page's event timeline reads the lean frame: same rows and times
    cols = ["file", "line", "type", "event_ms", "event_time"]
    assert whole.events.select(cols).equals(bucketed.events.select(cols))


@pytest.mark.slow
@pytest.mark.parametrize("bucket", [_chunked.SPILL_BYTES, 4096])
@pytest.mark.parametrize("windowed", [False, True])
def test_bucketed_report_equals_the_whole_load(
    hostile: Path, bucket: int, windowed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_chunked, "SPILL_BYTES", bucket)
    window: tuple[float | None, float | None] = (None, None)
    if windowed:  # an event exactly at `until` is left out (half-open), one at `since` kept
        times = al.load(hostile).events.filter(pl.col("event_ms") > 0)["event_ms"]
        window = (float(times.quantile(0.3, "nearest")), float(times.quantile(0.6, "nearest")))
    whole = collect(
        al.load(hostile, tz=TZ), source="s", window=window, tz=TZ, now=NOW, progress=False
    )
    s = setting("s", window, TZ, NOW)
    bucketed = collect_log(hostile, s, shown=30, progress=False)
    assert whole.figures["exchanges"] > 100
    if windowed:
        assert 0 < whole.figures["events"] < al.load(hostile).events.height
    _assert_same(whole, bucketed)


@pytest.mark.slow
def test_bucketed_report_of_two_files_equals_the_whole_load(
    two_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_chunked, "SPILL_BYTES", 8192)
    loaded = al.load(two_files, tz=TZ)
    assert loaded.report.rejects.height > 0
    _assert_same(
        collect(loaded, source="s", tz=TZ, now=NOW, progress=False),
        collect_log(two_files, setting("s", (None, None), TZ, NOW), shown=5),
    )


@pytest.mark.slow
def test_the_page_is_the_same_from_a_file_and_from_its_load(
    hostile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_chunked, "SPILL_BYTES", 4096)
    o = ReportOptions(title="t", max_sessions=4, embed_font=False)
    from_file = report(hostile, o, tz=TZ, now=NOW, progress=False)
    from_load = report(al.load(hostile, tz=TZ), o, tz=TZ, now=NOW, progress=False)
    assert from_file.data.source == from_load.data.source == str(hostile)
    # the rendered sessions read only their own events back from the spill
    shown = from_file.data.enriched.height
    assert 0 < shown < from_load.data.enriched.height
    assert from_file.html == from_load.html


def test_the_old_keywords_name_the_options_object(hostile: Path) -> None:
    with pytest.raises(TypeError, match=r"report\(\.\.\., options=ReportOptions\(since=\.\.\.\)\)"):
        report(hostile, since=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="ReportOptions"):
        report(hostile, {"since": 1})  # type: ignore[arg-type]
    # a field's value is checked before the log is read
    with pytest.raises(ValueError, match="^max_rows"):
        report(hostile, dataclasses.replace(ReportOptions(), max_rows=-2))


def test_a_missing_log_raises_the_loads_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="absent"):
        report(tmp_path / "absent.ndjson", ReportOptions(embed_font=False))
