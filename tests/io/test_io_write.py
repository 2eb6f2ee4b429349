"""The fast canonical writer against the exact one (issue 12 item 4).

``_exact_lines`` is the writer as it was before the shape-grouped encoder (one expression
per field, for every row): the slow, obvious oracle. ``_canonical_lines`` must give the same
bytes on every frame: the sample, the conformance logs, simulated logs and generated frames
of any values (hypothesis), with the shape groups forced down to one row so that every
row goes through the fast encoder wherever it can.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.io import _write
from a2a_lab.io._write import _canonical_lines, _exact_lines, write_events
from a2a_lab.schema import polars_schema
from tests.support.paths import DATA

LOGS = [DATA / "peer" / "tricky.ndjson", DATA / "peer" / "gen300_s11_bad5.ndjson", DATA / "fuzz"]


@pytest.fixture(autouse=True)
def _every_shape_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # a shape of one row is written by the fast encoder too (the default keeps rare shapes
    # for the exact one, which would hide the fast one's mistakes on small frames)
    monkeypatch.setattr(_write, "MIN_GROUP_ROWS", 1)


def _same(frame: pl.DataFrame) -> None:
    fast, fast_dropped = _canonical_lines(frame)
    slow, slow_dropped = _exact_lines(frame)
    assert fast.to_list() == slow.to_list()
    assert fast_dropped == slow_dropped


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_fast_writer_matches_the_exact_one_on_the_test_logs(path: Path) -> None:
    _same(al.load(path, sort=False).events.drop("raw", strict=False))


@pytest.mark.slow
def test_fast_writer_matches_the_exact_one_on_the_sample_and_generated_logs(
    tmp_path: Path,
) -> None:
    _same(al.load(al.samples.sample_dir()).events.drop("raw", strict=False))
    log = tmp_path / "gen.ndjson"
    al.samples.write_log(log, 3000, seed=7)
    _same(al.load(log).events.drop("raw", strict=False))
    _same(al.sim.simulate(al.sim.SimConfig(n_messages=400), seed=3).events)


def test_fast_writer_is_used_and_odd_rows_are_counted() -> None:
    ev = al.from_records(
        [
            {"type": "a", "ts": 5, "data": {"message": 'say "hi"\n', "depth": 2.5}},
            {"type": "a", "ts": 6, "data": {"message": "x", "depth": 2.0}},
            {"type": "b"},
            {"type": "c", "data": {}},
            {"type": "d", "data": {"collabSubTags": ["a", "b"], "announced": True}},
        ],
        sort=False,
    ).drop("raw")
    odd = ev.with_columns(
        pl.Series("ts", [math.inf, 1.8e19, math.nan, -1e22, 1.0]),
        pl.Series("timestamp_ms", [math.nan, None, None, None, None], dtype=pl.Float64),
    )
    _same(pl.concat([ev, odd]))
    lines, dropped = _canonical_lines(pl.concat([ev, odd]))
    assert dropped == 3
    assert lines[0] == '{"type":"a","ts":5,"data":{"depth":2.5,"message":"say \\"hi\\"\\n"}}'
    assert lines[3] == '{"type":"c","data":{}}'
    assert lines[7] == '{"type":"b"}'  # NaN left out
    for line in lines:  # valid JSON, no NaN or Infinity
        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} written"))


@pytest.mark.slow
def test_write_events_writes_in_chunks_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ev = al.load(DATA / "peer" / "gen300_s11_bad5.ndjson", raw=True, sort=False).events
    # half the rows keep their original line, half are written as canonical JSON
    mixed = ev.with_columns(
        pl.when(pl.int_range(pl.len()) % 2 == 0).then(pl.col("raw")).alias("raw")
    )
    whole = write_events(mixed)
    monkeypatch.setattr(_write, "WRITE_CHUNK_ROWS", 7)
    report = write_events(mixed, tmp_path / "out.ndjson")
    assert (tmp_path / "out.ndjson").read_text(encoding="utf-8") == whole == write_events(mixed)
    assert report.original == (ev.height + 1) // 2 and report.lines == ev.height
    expected = [
        raw if k % 2 == 0 else line
        for k, (raw, line) in enumerate(
            zip(ev["raw"].to_list(), _exact_lines(ev.drop("raw"))[0].to_list(), strict=True)
        )
    ]
    assert whole == "".join(x + "\n" for x in expected)


# ---- generated frames --------------------------------------------------------------------

_SCHEMA = polars_schema(raw=False)
_DATA = _SCHEMA["data"]
assert isinstance(_DATA, pl.Struct)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "ruda", 'a"b', "a\\b", "\n\t\r\b\f\x00\x1f\x7f", "\u2028\u2029\ufeff", "😀", "</script>"]
)
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1.0, 2.5, 1e16, 2.0**63, -(2.0**63), 1e21, 1e-7, 9007199254740993.0, 5e-324]
)


def _value(dtype: pl.DataType) -> st.SearchStrategy[object]:
    if dtype.is_float():
        return st.none() | _FLOATS
    if dtype == pl.Boolean:
        return st.none() | st.booleans()
    if isinstance(dtype, pl.List):
        return st.none() | st.lists(st.none() | _TEXT, max_size=3)
    return st.none() | _TEXT


#: a few fields of each kind, so that rows share shapes and differ in them
_TOP = ["type", "agent_id", "ts", "timestamp_ms", "status"]
_FIELDS = ["fromAgent", "message", "depth", "turn", "announced", "collabSubTags", "payloadJson"]


@st.composite
def _frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(1, 30))
    fields = {f.name: f.dtype for f in _DATA.fields}
    rows = []
    for _ in range(n):
        row: dict[str, object] = {c: draw(_value(_SCHEMA[c])) for c in _TOP}
        data = {k: draw(_value(fields[k])) for k in _FIELDS}
        row["data"] = draw(st.none() | st.just(data))
        rows.append(row)
    frame = pl.DataFrame(
        rows,
        schema={
            **{c: _SCHEMA[c] for c in _TOP},
            "data": pl.Struct({k: fields[k] for k in _FIELDS}),
        },
    )
    return frame.with_columns(pl.col("data").cast(_DATA))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_frames())
def test_fast_writer_matches_the_exact_one_on_any_values(frame: pl.DataFrame) -> None:
    _same(frame)
    for line in _canonical_lines(frame)[0].to_list():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} written"))
