"""Hostile input at load and write-back (issue 14 items 1, 3, 4): nothing crashes, nothing is lost."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import a2a_lab as al
from a2a_lab.io import decode_chunk, iso_to_ms_expr, load, parse_line, scan, write_events
from a2a_lab.io._decode import _parse_deep
from a2a_lab.io._load import _progress


def _write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


def _accounted(res: al.LoadResult) -> bool:
    r = res.report
    return r.total_lines == r.events + r.rejects.height + r.total_blank


def _ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp() * 1000)


# ---- impossible calendar dates follow Date.parse ---------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02-30", _ms(2026, 3, 2)),
        ("2025-02-29", _ms(2025, 3, 1)),
        ("2024-02-29", _ms(2024, 2, 29)),
        ("2026-04-31T10:00:00Z", _ms(2026, 5, 1, 10)),
        ("2026-02-30T00:00:00+09:00", _ms(2026, 3, 1, 15)),
        ("2026-13-01", None),
        ("2026-02-32", None),
        ("2026-00-10", None),
        ("+275760-09-13T00:00:00.000Z", 8_640_000_000_000_000),
        ("+275760-09-13T00:00:00.001Z", None),
        ("-271821-04-20T00:00:00.000Z", -8_640_000_000_000_000),
        ("-271821-04-19T23:59:59.999Z", None),
        ("-000000-01-01T00:00:00Z", None),
        ("-000001-01-01T00:00:00Z", -62198755200000),
    ],
)
def test_iso_dates_roll_over_or_are_nan_as_in_javascript(text: str, expected: int | None) -> None:
    assert pl.select(iso_to_ms_expr(pl.lit(text))).item() == expected


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9999), st.integers(1, 12), st.integers(1, 31), st.integers(0, 23))
def test_day_overflow_rolls_into_the_next_month(year: int, month: int, day: int, hour: int) -> None:
    # JavaScript's MakeDay: the first of the month plus (day - 1) days
    expected = datetime(year, month, 1, hour, tzinfo=UTC) + timedelta(days=day - 1)
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:00:00Z"
    assert pl.select(iso_to_ms_expr(pl.lit(text))).item() == int(expected.timestamp() * 1000)


def test_impossible_dates_load_and_nan_dates_get_time_zero(tmp_path: Path) -> None:
    lines = [
        '{"type":"a","timestamp":"2026-02-30"}',
        '{"type":"b","timestamp":"2025-02-29"}',
        '{"type":"c","timestamp":"2026-13-01"}',
        '{"type":"d","timestamp":"+275760-09-13T00:00:00.001Z"}',
    ]
    res = load(_write(tmp_path, "d.ndjson", "\n".join(lines) + "\n"), sort=False, tz="Asia/Seoul")
    assert res.events["event_ms"].to_list() == [_ms(2026, 3, 2), _ms(2025, 3, 1), 0.0, 0.0]
    no_time = res.report.issues.filter(pl.col("kind") == "no_timestamp")["line"].to_list()
    assert no_time == [3, 4]


def test_since_with_an_impossible_date_does_not_raise() -> None:
    ev = al.enrich(al.from_records([{"type": "a2a.send", "ts": _ms(2026, 3, 3)}]))
    assert al.events_query(ev, since="2026-02-30").events.height == 1


# ---- numbers out of range ----------------------------------------------------------------


def test_out_of_range_numbers_are_kept_for_parity_and_reported(tmp_path: Path) -> None:
    lines = [
        '{"type":"a","ts":1e19}',
        '{"type":"b","ts":8640000000000001,"data":{"turn":1e19,"depth":-1e300}}',
        '{"type":"c","ts":8640000000000000,"data":{"turn":3.5}}',
    ]
    res = load(_write(tmp_path, "n.ndjson", "\n".join(lines) + "\n"), sort=False)
    assert res.events.height == 3
    assert res.events["ts"].to_list() == [1e19, 8640000000000001.0, 8.64e15]
    assert res.events["event_time"].is_null().to_list() == [True, True, False]
    issues = (
        res.report.issues.filter(pl.col("kind") == "out_of_range").select("line", "field").rows()
    )
    assert issues == [(1, "ts"), (2, "ts"), (2, "data.depth"), (2, "data.turn")]


def test_analyses_run_on_out_of_range_times(tmp_path: Path) -> None:
    res = load(
        _write(
            tmp_path,
            "n.ndjson",
            '{"type":"a2a.send","ts":1e19,"data":{"fromAgent":"a","toAgent":"b"}}\n',
        )
    )
    ws = al.work_sessions(al.enrich(res.events), now=0)
    assert ws.to_api()["totalSessions"] >= 0


# ---- nesting, encoding ----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_deep_nesting_is_an_event_not_a_reject(tmp_path: Path, depth: int) -> None:
    line = (
        '{"type":"deep","ts":5,"x":'
        + "[" * depth
        + "]" * depth
        + ',"data":{"fromAgent":"a","y":'
        + '{"k":' * depth
        + "1"
        + "}" * depth
        + "}}"
    )
    bad = '{"type":"deep","x":' + "[" * depth + "}"
    res = load(_write(tmp_path, "deep.ndjson", line + "\n" + bad + "\n"), raw=True)
    assert res.events["type"].to_list() == ["deep"]
    assert res.events["data"].struct.field("fromAgent").to_list() == ["a"]
    assert res.report.rejects["line"].to_list() == [2]
    assert res.report.rejects["reason"][0].startswith("not JSON:")
    out = tmp_path / "out.ndjson"
    write_events(res.events, out)
    assert out.read_text(encoding="utf-8") == line + "\n"


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "type", "data"]), c, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json, st.booleans())
def test_the_deep_parser_agrees_with_the_standard_library(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _parse_deep(text) == parse_line(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]:,"0123456789.-+eEtrufalsn \\u', max_size=40))
def test_the_deep_parser_rejects_what_the_standard_library_rejects(text: str) -> None:
    assert (_parse_deep(text)[0] is None) == (parse_line(text)[0] is None)


# ---- damaged compressed files ----------------------------------------------------------------


def _gz_lines(n: int) -> bytes:
    return gzip.compress(
        "".join(
            f'{{"type":"t","ts":{i + 1},"data":{{"message":"m{i:05d}"}}}}\n' for i in range(n)
        ).encode()
    )


def test_truncated_gzip_keeps_its_readable_lines_and_rejects_the_tail(tmp_path: Path) -> None:
    full = _gz_lines(5000)
    (tmp_path / "coordination-events-2026-01.ndjson.gz").write_bytes(full[: len(full) // 2])
    _write(tmp_path, "coordination-events.ndjson", '{"type":"live","ts":1}\n')
    res = load(tmp_path)
    assert _accounted(res)
    rej = res.report.rejects.row(0, named=True)
    assert rej["file"].endswith(".gz") and rej["reason"].startswith(
        "damaged compressed data: truncated"
    )
    gz_events = res.events.filter(pl.col("file").str.ends_with(".gz"))
    assert 0 < gz_events.height < 5000
    assert gz_events["line"].to_list() == list(range(1, gz_events.height + 1))
    assert rej["line"] == gz_events.height + 1
    assert "live" in res.events["type"].to_list()


def test_corrupt_deflate_keeps_the_lines_before_the_damage(tmp_path: Path) -> None:
    full = bytearray(_gz_lines(20000))
    for i in range(len(full) // 2, len(full) // 2 + 64):
        full[i] ^= 0xFF
    res = load(_write(tmp_path, "x.ndjson.gz", bytes(full)), sort=False)
    assert _accounted(res)
    # deflate may inflate corrupt data into garbage lines (rejected as not JSON) before zlib
    # notices (at the latest at the checksum); the damage itself is the last reject
    reasons = res.report.rejects["reason"].to_list()
    assert reasons[-1].startswith("damaged compressed data:")
    assert res.report.rejects["line"][-1] == res.report.total_lines
    assert 1000 < res.events.height < 20000
    # what was kept before the damage is what the file held, in order
    ts = res.events["ts"].to_list()
    assert ts[:1000] == [float(i + 1) for i in range(1000)]


def test_concatenated_gzip_members_are_all_read(tmp_path: Path) -> None:
    data = gzip.compress(b'{"type":"a","ts":1}\n') + gzip.compress(b'{"type":"b","ts":2}\n')
    assert load(_write(tmp_path, "x.ndjson.gz", data)).events["type"].to_list() == ["a", "b"]


def test_gzip_with_a_bad_header_is_one_reject(tmp_path: Path) -> None:
    res = load(_write(tmp_path, "x.ndjson.gz", b"not gzip at all\n"))
    assert res.events.height == 0 and res.report.rejects.height == 1 and _accounted(res)


# ---- write-back is always valid JSON and exact where it can be ------------------------------


def test_write_back_is_byte_exact_for_crlf_bom_and_odd_numbers(tmp_path: Path) -> None:
    content = (
        b'{"type":"a","ts":1}\r\n'
        b'\xef\xbb\xbf{"type":"b","ts":1e400,"data":{"message":"x\\ud800y","k":[1e400]}}\n'
        b'  {"type":"c","ts":3, "data" : {"turn": 1.0}}\t\r\n'
        b"not json\n"
    )
    src = _write(tmp_path, "x.ndjson", content)
    res = load(src, raw=True, sort=False)
    out = tmp_path / "out.ndjson"
    report = write_events(res.events, out)
    assert report.exact and report.lines == 3
    assert out.read_bytes() == b"".join(content.split(b"\n")[i] + b"\n" for i in range(3))


def test_canonical_write_back_never_writes_invalid_json(tmp_path: Path) -> None:
    ev = al.from_records(
        [{"type": "a", "ts": 5, "data": {"message": "x\ud800y", "depth": 2}}]
    ).drop("raw")
    ev = pl.concat(
        [
            ev,
            ev.with_columns(
                pl.lit(float("inf")).alias("ts"), pl.lit(float("nan")).alias("timestamp_ms")
            ),
        ]
    )
    out = tmp_path / "out.ndjson"
    report = write_events(ev, out)
    assert report.canonical == 2 and report.dropped_numbers == 2
    lines = out.read_text(encoding="utf-8").split("\n")[:-1]
    objs = [json.loads(x, parse_constant=lambda c: pytest.fail(f"{c} written")) for x in lines]
    assert objs[0] == {"type": "a", "ts": 5, "data": {"message": "x\ufffdy", "depth": 2}}
    assert objs[1] == {"type": "a", "data": {"message": "x\ufffdy", "depth": 2}}


@pytest.mark.parametrize("ts", ["18000000000000000000", "-9.5e20", "9223372036854775808"])
def test_canonical_write_back_keeps_integral_times_beyond_int64(ts: str, tmp_path: Path) -> None:
    src = tmp_path / "in.ndjson"
    src.write_text(f'{{"type":"a2a.send","ts":{ts},"data":{{"fromAgent":"a"}}}}\n')
    loaded = al.load(src).events
    out = tmp_path / "out.ndjson"
    report = write_events(loaded.drop("raw", strict=False), out)
    assert report.canonical == 1 and report.dropped_numbers == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["ts"] == json.loads(ts)  # the same number, not left out
    assert al.load(out).events["ts"].equals(loaded["ts"])


_hostile_line = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda t, ts, msg, extra: json.dumps(
            {"type": t, "ts": ts, "data": {"message": msg, "x": extra}}, ensure_ascii=False
        ),
        st.text(min_size=1, max_size=5),
        st.one_of(st.integers(-(2**80), 2**80), st.floats(allow_nan=False), st.text(max_size=5)),
        st.text(max_size=10),
        _json,
    ),
    st.sampled_from(
        [
            '{"type":"a","timestamp":"2026-02-30"}',
            '{"type":"a","ts":1e400}',
            '{"type":"a","data":{"turn":1e19}}',
            '{"type":"a","data":{"message":"\\ud800"}}',
            '{"type":"a","x":' + "[" * 5000 + "]" * 5000 + "}",
            '{"type":"a","ts":8.64e15}',
            '{"type":"a","timestamp":"+275760-09-13T00:00:00.001Z"}',
            '\ufeff{"type":"b"}\r',
        ]
    ),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_hostile_line, max_size=15))
def test_fuzzed_lines_are_accounted_for_and_write_back_is_valid(lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass") if lines else b""
    dec = decode_chunk(data, file="f", raw=True)
    assert dec.lines == dec.events.height + dec.rejects.height + dec.blank
    text = write_events(dec.events)
    for line in text.split("\n")[:-1]:
        obj, reason = parse_line(line.strip(" \t\r\ufeff\u3000\u00a0"))
        assert obj is not None, reason
    canonical = write_events(dec.events.drop("raw"))
    again = decode_chunk(canonical.encode("utf-8"), file="f")
    assert again.events.height == dec.events.height and again.rejects.height == 0


# ---- lazy frames, progress ---------------------------------------------------------------------


def test_scan_is_lazy_snake_case_and_equals_load() -> None:
    src = al.samples.sample_dir()
    lf = scan(src)
    assert isinstance(lf, pl.LazyFrame)
    assert {"agent_id", "timestamp_ms"} <= set(
        lf.collect_schema()
    ) and "agentId" not in lf.collect_schema()
    eager = load(src).events
    assert_frame_equal(lf.collect(), eager)
    sends = lf.filter(pl.col("type") == "a2a.send").select("agent_id").collect()
    assert sends.height == eager.filter(pl.col("type") == "a2a.send").height


def test_scan_checks_the_source_at_once() -> None:
    with pytest.raises(al.io.SourceError):
        scan("/definitely/not/here.ndjson")


def test_progress_is_quiet_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    f = _write(tmp_path, "x.ndjson", '{"type":"a"}\n')
    monkeypatch.setenv("CI", "1")
    with _progress([f], None) as bar:
        assert bar.disable
    with _progress([f], False) as bar:
        assert bar.disable
