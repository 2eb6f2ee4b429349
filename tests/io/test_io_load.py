"""Lossless loading: every physical line is an event, a reject or a blank line."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.io import (
    SourceError,
    decode_bytes,
    from_records,
    load,
    resolve_source,
    write_events,
)
from a2a_lab.io._decode import decode_text
from a2a_lab.schema import polars_schema
from tests.support.paths import DATA

TRICKY = DATA / "peer" / "tricky.ndjson"
GEN300 = DATA / "peer" / "gen300_s11_bad5.ndjson"


def _write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


def _accounted(res) -> bool:
    r = res.report
    return r.total_lines == r.events + r.rejects.height + r.total_blank


# ---- conformance logs -------------------------------------------------------------------


def test_gen300_counts_match_the_reference_readme() -> None:
    res = load(GEN300)
    r = res.report
    assert (r.total_lines, r.events, r.rejects.height, r.total_blank) == (1721, 1716, 4, 1)
    assert r.rejects["line"].to_list() == [261, 483, 514, 704]
    assert r.rejects["reason"].to_list() == [
        "no type field",
        "not an object: JSON array",
        "not JSON: Expecting value at column 1",
        r.rejects["reason"][3],
    ]
    assert r.rejects["reason"][3].startswith("not JSON:")
    assert res.events.schema == polars_schema(raw=False)
    assert load(GEN300, raw=True).events.schema == polars_schema()


def test_tricky_keeps_exactly_the_reference_parsed_events() -> None:
    # the reference parsed 55 events from 60 non-empty lines (peer meta); lines 46-49, 52 rejected
    res = load(TRICKY)
    assert res.events.height == 55
    assert sorted(res.report.rejects["line"].to_list()) == [46, 47, 48, 49, 52]
    assert res.report.total_blank == 2
    kinds = res.report.issues.select("line", "kind", "field").rows()
    assert (26, "wrong_type", "data.depth") in kinds
    assert (43, "wrong_type", "ts") in kinds
    assert (55, "wrong_type", "data.workSessionId") in kinds
    assert (44, "no_timestamp", None) in kinds


def test_time_order_is_stable_and_follows_rules_2() -> None:
    ev = load(TRICKY).events
    assert ev["event_ms"].is_sorted()
    by_line = dict(zip(ev["line"].to_list(), ev["event_ms"].to_list(), strict=True))
    t = 1771500000000
    assert by_line[40] != by_line[41]  # timestampMs wins over ts
    assert by_line[42] == t + 101000  # ISO timestamp
    assert by_line[43] == t + 101500  # ts as string -> ISO with +09:00
    assert by_line[44] == 0
    ties = ev.filter(pl.col("event_ms") == by_line[2])["line"].to_list()
    assert ties == sorted(ties)  # ties keep file order
    assert ev["event_time"].dt.epoch("ms").to_list() == [int(x) for x in ev["event_ms"].to_list()]


@pytest.mark.parametrize("path", [TRICKY, GEN300])
def test_fast_path_equals_exact_path(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", errors="replace")
    fast, exact = decode_text(text), decode_text(text, exact=True)
    assert_frame_equal(fast.events, exact.events)
    assert_frame_equal(fast.rejects, exact.rejects)
    assert_frame_equal(fast.issues, exact.issues)


# ---- awkward input ----------------------------------------------------------------------


def test_crlf_bom_and_js_whitespace_are_trimmed(tmp_path: Path) -> None:
    content = '\ufeff{"type":"a","ts":1}\r\n\u3000{"type":"b","ts":2}\u00a0\n \t\r\n'
    res = load(_write(tmp_path, "x.ndjson", content), raw=True)
    assert res.events["type"].to_list() == ["a", "b"]
    assert res.report.total_blank == 1 and res.report.total_lines == 3
    # raw is the physical line: BOM, CR and JS whitespace kept for a byte-exact write-back
    assert res.events["raw"].to_list() == [
        '\ufeff{"type":"a","ts":1}\r',
        '\u3000{"type":"b","ts":2}\u00a0',
    ]


def test_final_newline_does_not_start_a_line(tmp_path: Path) -> None:
    assert load(_write(tmp_path, "a.ndjson", '{"type":"a"}\n')).report.total_lines == 1
    assert load(_write(tmp_path, "b.ndjson", '{"type":"a"}')).report.total_lines == 1
    assert load(_write(tmp_path, "c.ndjson", '{"type":"a"}\n\n')).report.total_blank == 1


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"type":"a","ts":NaN}', "not JSON: NaN is not valid JSON"),
        ('{"type":"a","ts":Infinity}', "not JSON: Infinity is not valid JSON"),
        ('{"type":"a","ts":-Infinity}', "not JSON: -Infinity is not valid JSON"),
        ("[1,2,3]", "not an object: JSON array"),
        ('"text"', "not an object: JSON string"),
        ("42", "not an object: JSON number"),
        ("null", "not an object: JSON null"),
        ('{"ts":1}', "no type field"),
        ('{"type":"  \\u3000"}', "type is blank"),
        ('{"type":null}', "type is not a string (JSON null)"),
        ('{"type":["a"]}', "type is not a string (JSON array)"),
    ],
)
def test_reject_reasons_are_specific(tmp_path: Path, line: str, reason: str) -> None:
    res = load(_write(tmp_path, "x.ndjson", '{"type":"ok"}\n' + line + "\n"))
    assert res.events.height == 1
    rej = res.report.rejects.row(0, named=True)
    assert (rej["line"], rej["reason"]) == (2, reason)


def test_truncated_and_trailing_garbage_lines(tmp_path: Path) -> None:
    res = load(
        _write(
            tmp_path,
            "x.ndjson",
            '{"type":"a","data":{"x":1\n{"type":"a"} {"type":"b"}\n{"type":"a",}\n',
        )
    )
    assert res.events.height == 0
    assert all(r.startswith("not JSON:") for r in res.report.rejects["reason"])


def test_huge_line_is_kept_and_huge_reject_is_truncated(tmp_path: Path) -> None:
    big = "x" * 5_000_000
    content = (
        json.dumps({"type": "a2a.send", "ts": 1, "data": {"message": big}})
        + "\n"
        + "{"
        + big
        + "\n"
    )
    res = load(_write(tmp_path, "x.ndjson", content))
    assert res.events["data"].struct.field("message").str.len_chars().to_list() == [5_000_000]
    assert len(res.report.rejects["raw"][0]) == 200


def test_invalid_utf8_is_replaced_and_reported(tmp_path: Path) -> None:
    content = b'{"type":"a","data":{"message":"caf\xe9"}}\n{"type":"b"}\n'
    res = load(_write(tmp_path, "x.ndjson", content))
    assert res.events.height == 2
    assert res.events.filter(pl.col("type") == "a")["data"].struct.field("message").to_list() == [
        "caf\ufffd"
    ]
    assert res.report.issues.filter(pl.col("kind") == "invalid_utf8")["line"].to_list() == [1]


def test_wrong_types_keep_the_event_and_are_counted(tmp_path: Path) -> None:
    lines = [
        '{"type":"a","ts":"5","data":{"depth":"2","workSessionId":7,"announced":1,"fromAgent":true}}',
        '{"type":"a","ts":1,"data":{"collabSubTags":["x",1,"y",null]}}',
        '{"type":"a","ts":2,"data":"not an object"}',
        '{"type":"a","ts":3,"data":{"turn":true,"message":"12"}}',
    ]
    res = load(_write(tmp_path, "x.ndjson", "\n".join(lines)), sort=False)
    d = res.events["data"]
    assert res.events.height == 4
    assert d.struct.field("depth").to_list() == [None, None, None, None]
    assert d.struct.field("workSessionId").to_list() == [None, None, None, None]
    assert d.struct.field("collabSubTags").to_list()[1] == ["x", "y"]
    assert d.struct.field("message").to_list()[3] == "12"  # a numeric-looking STRING stays
    assert d.struct.field("turn").to_list()[3] is None  # a boolean is not a number
    fields = res.report.issues.filter(pl.col("kind") == "wrong_type")["field"].to_list()
    assert sorted(fields) == sorted(
        [
            "ts",
            "data.depth",
            "data.workSessionId",
            "data.announced",
            "data.fromAgent",
            "data.collabSubTags",
            "data",
            "data.turn",
        ]
    )


def test_duplicate_keys_last_wins_like_json_parse(tmp_path: Path) -> None:
    res = load(
        _write(
            tmp_path, "x.ndjson", '{"type":"a","type":"b","data":{"toAgent":"x","toAgent":"y"}}\n'
        )
    )
    assert res.events["type"].to_list() == ["b"]
    assert res.events["data"].struct.field("toAgent").to_list() == ["y"]


def test_lone_surrogate_escape_is_kept_as_replacement(tmp_path: Path) -> None:
    res = load(
        _write(tmp_path, "x.ndjson", '{"type":"a","data":{"message":"x\\ud800y"}}\n'), raw=True
    )
    assert res.events["data"].struct.field("message").to_list() == ["x\ufffdy"]
    assert res.events["raw"].to_list() == ['{"type":"a","data":{"message":"x\\ud800y"}}']


# ---- sources --------------------------------------------------------------------------


def test_directory_reads_rotated_siblings_oldest_first_live_last(tmp_path: Path) -> None:
    _write(tmp_path, "coordination-events.ndjson", '{"type":"live","ts":5}\n')
    _write(tmp_path, "coordination-events-2026-01.ndjson", '{"type":"jan","ts":5}\n')
    _write(
        tmp_path,
        "coordination-events-2026-01-15T10-00-00-000Z.ndjson",
        '{"type":"jan-size","ts":5}\n',
    )
    (tmp_path / "coordination-events-2025-12.ndjson.gz").write_bytes(
        gzip.compress(b'{"type":"dec","ts":5}\n')
    )
    _write(tmp_path, "unrelated.ndjson", '{"type":"nope"}\n')
    res = load(tmp_path)
    names = [Path(f).name for f in res.report.files]
    assert names == [
        "coordination-events-2025-12.ndjson.gz",
        "coordination-events-2026-01-15T10-00-00-000Z.ndjson",
        "coordination-events-2026-01.ndjson",
        "coordination-events.ndjson",
    ]
    # equal timestamps: file order decides
    assert res.events["type"].to_list() == ["dec", "jan-size", "jan", "live"]


def test_list_and_glob_sources(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.ndjson", '{"type":"a","ts":1}\n')
    b = _write(tmp_path, "b.ndjson", '{"type":"b","ts":1}\n')
    assert load([b, a]).events["type"].to_list() == ["b", "a"]
    assert len(resolve_source(str(tmp_path / "*.ndjson"))) == 2


@pytest.mark.parametrize("bad", ["/definitely/not/here.ndjson", "/definitely/not/*.ndjson"])
def test_missing_source_raises_clear_error(bad: str) -> None:
    with pytest.raises(SourceError, match="no "):
        load(bad)


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no coordination-events"):
        load(tmp_path)


# ---- write-back ----------------------------------------------------------------------


@pytest.mark.parametrize("path", [TRICKY, GEN300])
def test_write_back_reproduces_every_good_line_byte_for_byte(path: Path, tmp_path: Path) -> None:
    res = load(path, sort=False, raw=True)
    out = tmp_path / "out.ndjson"
    report = write_events(res.events, out)
    assert report.exact and report.lines == res.events.height
    physical = path.read_bytes().split(b"\n")
    expected = b"".join(physical[i - 1] + b"\n" for i in res.events["line"].to_list())
    assert out.read_bytes() == expected


@pytest.mark.parametrize("path", [TRICKY, GEN300])
def test_write_back_without_raw_is_canonical_json_of_the_declared_fields(
    path: Path, tmp_path: Path
) -> None:
    res = load(path, sort=False)
    out = tmp_path / "out.ndjson"
    report = write_events(res.events, out)
    assert (report.original, report.canonical) == (0, res.events.height) and not report.exact
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").split("\n")[:-1]]
    assert [o["type"] for o in written] == res.events["type"].to_list()
    assert all(list(o)[:2] == ["type", "agentId"] for o in written if "agentId" in o)
    # reloading the canonical lines gives the same typed columns
    again = load(out, sort=False).events
    assert_frame_equal(again.drop("file", "line"), res.events.drop("file", "line"))


def test_write_back_of_typed_rows_omits_absent_fields() -> None:
    ev = from_records(
        [
            {
                "type": "a2a.send",
                "agentId": "ruda",
                "ts": 5,
                "data": {"fromAgent": "ruda", "depth": 1},
            }
        ]
    )
    text = write_events(ev.with_columns(pl.lit(None, pl.String).alias("raw")))
    assert (
        text
        == '{"type":"a2a.send","agentId":"ruda","ts":5,"data":{"fromAgent":"ruda","depth":1}}\n'
    )


# ---- properties ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_any_bytes_are_fully_accounted_for(content: bytes) -> None:
    dec, _ = decode_bytes(content)
    assert dec.lines == dec.events.height + dec.rejects.height + dec.blank
    expected_lines = content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
    assert dec.lines == expected_lines


_KEYS = ["type", "agentId", "ts", "timestampMs", "timestamp", "status", "data", "extra"]
# data keys the decoder types (texts, numbers, a boolean, a list), and one it does not know
_TEXT_DATA_KEYS = ["fromAgent", "toAgent", "workSessionId", "message", "conversationId"]
_DATA_KEYS = [*_TEXT_DATA_KEYS, "depth", "turn", "announced", "collabSubTags", "other"]
_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        ["12", "true", "1.5e3", "-0", " main ", "a2a.send", "\u3000", "[URGENT] x", "{y}", "[]"]
    ),
)
_json_values = st.recursive(
    _json_scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6,
)


@st.composite
def _object_lines(draw) -> str:
    """JSON object text with known and unknown keys, wrong types, duplicates and spacing."""

    def obj(keys: list[str], nested: bool) -> str:
        items = []
        for _ in range(draw(st.integers(0, 6))):
            k = draw(st.sampled_from(keys))
            if nested and k == "data" and draw(st.booleans()):
                v = obj(_DATA_KEYS, False)
            else:
                v = json.dumps(draw(_json_values), ensure_ascii=draw(st.booleans()))
            sep = draw(st.sampled_from([":", ": ", " : "]))
            items.append(f"{json.dumps(k)}{sep}{v}")
        return "{" + draw(st.sampled_from([",", ", "])).join(items) + "}"

    return obj(_KEYS, True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_object_lines(), min_size=1, max_size=20))
def test_fast_path_equals_exact_path_on_random_objects(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    fast, exact = decode_text(text), decode_text(text, exact=True)
    assert_frame_equal(fast.events, exact.events)
    assert_frame_equal(fast.rejects, exact.rejects)
    assert_frame_equal(fast.issues, exact.issues)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_object_lines(), min_size=1, max_size=10))
def test_write_back_round_trips_random_objects(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    dec = decode_text(text)
    ev = dec.events.with_columns(pl.lit("f").alias("file"), pl.lit(0.0).alias("event_ms"))
    out = write_events(ev)
    assert out is not None
    written = [json.loads(x) for x in out.split("\n")[:-1]]
    expected = [json.loads(lines[i - 1]) for i in dec.events["line"].to_list()]
    assert written == expected


def test_environment_does_not_leak_into_load(tmp_path: Path) -> None:
    os.environ.pop("TZ", None)
    res = load(_write(tmp_path, "x.ndjson", '{"type":"a","timestamp":"2026-02-19T11:20:00"}\n'))
    assert res.events["event_ms"].to_list() == [1771500000000.0]
    res9 = load(tmp_path / "x.ndjson", tz="Asia/Seoul")
    assert res9.events["event_ms"].to_list() == [1771500000000.0 - 9 * 3600_000]


def test_escaped_surrogate_pair_decodes_to_one_character(tmp_path: Path) -> None:
    res = load(_write(tmp_path, "x.ndjson", '{"type":"a","data":{"message":"\\ud83d\\ude00"}}\n'))
    assert res.events["data"].struct.field("message").to_list() == ["\U0001f600"]


def test_integer_too_large_for_a_double_is_not_a_number(tmp_path: Path) -> None:
    huge = "1" + "0" * 400
    res = load(
        _write(
            tmp_path,
            "x.ndjson",
            f'{{"type":"a","ts":{huge},"data":{{"depth":{huge},"hop":-{huge}}}}}\n',
        )
    )
    assert res.events.height == 1
    assert res.events["ts"].to_list() == [None]
    assert res.events["data"].struct.field("depth").to_list() == [None]
    fields = sorted(res.report.issues.filter(pl.col("kind") == "wrong_type")["field"].to_list())
    assert fields == ["data.depth", "data.hop", "ts"]


def test_padded_iso_timestamp_is_trimmed_before_parsing(tmp_path: Path) -> None:
    res = load(
        _write(tmp_path, "x.ndjson", '{"type":"a","timestamp":" 2026-02-19T11:20:01Z\\u3000"}\n')
    )
    assert res.events["event_ms"].to_list() == [1771500001000.0]
