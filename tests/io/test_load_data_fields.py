"""``load(data_fields=...)`` and the lean load of ``a2a-lab work-sessions`` (issue 12: memory)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import a2a_lab.cli._sessions as sessions_cli
import a2a_lab.io._load as load_module
from a2a_lab import enrich
from a2a_lab.cli import main
from a2a_lab.io import ingest, load
from a2a_lab.samples import write_log
from a2a_lab.schema import data_dtype, polars_schema

FIELDS = ["workSessionId", "message", "fromAgent", "turn", "collabSubTags"]


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated log with malformed lines, out of time order, with a line without data."""
    path = tmp_path_factory.mktemp("fields") / "log.ndjson"
    write_log(path, 2_000, seed=11, bad_line_fraction=0.01)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    lines.insert(len(lines) // 3, '{"type":"task.started","ts":1}\n')
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _cut(events: pl.DataFrame, fields: list[str]) -> pl.DataFrame:
    """The slow, obvious cut: every column as loaded, ``data`` rebuilt from the fields
    wanted (schema order), null where the line had no ``data``."""
    order = [f for f in data_dtype().to_schema() if f in fields]
    rows = [None if d is None else {f: d[f] for f in order} for d in events["data"].to_list()]
    dtype = pl.Struct({f: data_dtype().to_schema()[f] for f in order})
    cut = pl.Series("data", rows, dtype=dtype)
    # a Python None becomes a struct of nulls in a Series: the null rows are set apart
    present = events["data"].is_not_null()
    return events.with_columns(pl.when(present).then(cut).alias("data"))


@pytest.mark.parametrize("sort", [True, False])
def test_kept_fields_are_the_full_loads_and_the_report_is_the_same(
    shuffled: Path, monkeypatch: pytest.MonkeyPatch, sort: bool
) -> None:
    monkeypatch.setattr(load_module, "CHUNK_BYTES", 65_536)  # many chunks, each cut
    full = load(shuffled, sort=sort)
    assert full.report.rejects.height > 0 and full.events["data"].null_count() == 1
    lean = load(shuffled, sort=sort, data_fields=list(reversed(FIELDS)))
    assert lean.events.schema["data"] == _cut(full.events, FIELDS).schema["data"]
    assert_frame_equal(lean.events, _cut(full.events, FIELDS))
    assert lean.events["data"].null_count() == 1
    assert lean.report.summary() == full.report.summary()
    assert_frame_equal(lean.report.issues, full.report.issues)
    assert_frame_equal(lean.report.rejects, full.report.rejects)
    assert lean.report.exact_lines == full.report.exact_lines  # same chunks, same routing


def test_one_field_by_name_an_empty_file_and_a_store(shuffled: Path, tmp_path: Path) -> None:
    one = load(shuffled, data_fields="message")
    assert one.events.schema["data"] == pl.Struct({"message": pl.String})
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"\n")
    res = load(empty, data_fields=FIELDS)
    assert res.events.height == 0 and res.report.total_blank == 1
    assert res.events.schema["data"] == _cut(load(empty).events, FIELDS).schema["data"]
    logdir = tmp_path / "logs"
    logdir.mkdir()
    (logdir / "coordination-events.ndjson").write_bytes(shuffled.read_bytes())
    ingest(logdir, tmp_path / "store")
    from_store = load(tmp_path / "store", data_fields=FIELDS)
    assert_frame_equal(from_store.events, _cut(load(tmp_path / "store").events, FIELDS))


@pytest.mark.parametrize(("fields", "message"), [(["nope"], "nope"), ([], "at least one")])
def test_unknown_or_no_fields_are_refused(shuffled: Path, fields: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load(shuffled, data_fields=fields)


def test_work_sessions_loads_every_field_enrich_and_the_sessions_read() -> None:
    """The hand-kept list against enrich's own query plan (every ``data`` field it reads)."""
    plan = enrich(pl.LazyFrame(schema=polars_schema())).explain(optimized=False)
    read = set(re.findall(r"field_by_name\((\w+)\)", plan))
    assert len(read) >= 20, "the plan's text changed: update the pattern"
    loaded = set(sessions_cli.loaded_data_fields())
    assert read <= loaded
    assert set(sessions_cli.SESSION_DATA_FIELDS) <= loaded
    # nothing loaded that neither reads
    assert loaded == read | set(sessions_cli.SESSION_DATA_FIELDS)


def test_work_sessions_output_is_the_same_as_from_the_full_load(
    shuffled: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [
        "work-sessions",
        str(shuffled),
        "--limit",
        "1000",
        "--now-ms",
        "1800000000000",
        "--format",
        "json",
    ]
    assert main(argv) == 0
    lean = capsys.readouterr().out
    monkeypatch.setattr(sessions_cli, "loaded_data_fields", lambda: None)
    assert main(argv) == 0
    full = capsys.readouterr().out
    assert lean == full
    assert json.loads(lean)["sessions"]
