"""The public exchange-matching cases (conformance/exchanges, issue 22 item 3): small logs
whose exchanges are fully determined by what the log says; every field of each expected
file must come out exactly, and ``check`` raises no false sequence finding on them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from a2a_lab.analysis import checks
from a2a_lab.analysis.conversations import conversations
from a2a_lab.exchanges import exchange_events
from a2a_lab.io import load
from tests.support.paths import DATA

CASES = DATA / "exchanges"
NAMES = sorted(p.name.removesuffix(".expected.json") for p in CASES.glob("*.expected.json"))
KEYS = ["conversation_id", "requester", "target", "exchange"]


def _rows(name: str) -> dict[int, dict]:
    """Per exchange (keyed by the line of its send): the fields the expected files use."""
    events = load(CASES / f"{name}.ndjson").events
    ex = exchange_events(events)
    conv = conversations(events).rename({"from_agent": "requester", "to_agent": "target"})
    t = pl.col("type")
    first = pl.col("_kind").is_in(["reply", "no_reply", "blocked"])
    lines = (
        ex.with_columns(
            pl.when(pl.col("data").struct.field("turn").is_null() & (t == "a2a.response"))
            .then(pl.lit("reply"))
            .alias("_kind")
        )
        .sort("event_ms", "seq")
        .group_by(KEYS)
        .agg(
            pl.col("line").sort().alias("lines"),
            pl.col("line").filter(t == "a2a.send").first().alias("send_line"),
            pl.col("line").filter(first).first().alias("first_reply_line"),
            pl.col("line").filter(t == "a2a.complete").first().alias("complete_line"),
        )
    )
    table = conv.join(lines, on=KEYS, how="left", nulls_equal=True)
    out = {}
    for row in table.iter_rows(named=True):
        row["from_agent"], row["to_agent"] = row["requester"], row["target"]
        out[row["send_line"]] = row
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_expected_field_is_exact(name: str) -> None:
    expected = json.loads((CASES / f"{name}.expected.json").read_text())["exchanges"]
    got = _rows(name)
    assert len(got) == len(expected)
    for want in expected:
        row = got[want["send_line"]]
        for field, value in want.items():
            mine = row[field]
            if field.endswith("_s") and value is not None and mine is not None:
                # seconds of a millisecond log: the same number of milliseconds (Polars
                # divides by 1000 as a product with 0.001, 115112 ms -> 115.11200000000001 s,
                # the API's definition of every *_s column, tests/project/test_api_contract.py)
                mine, value = round(mine * 1000), round(value * 1000)
            assert mine == value, (want["send_line"], field, row[field], want[field])


@pytest.mark.parametrize("name", NAMES)
def test_check_raises_no_false_sequence_finding(name: str) -> None:
    events = load(CASES / f"{name}.ndjson").events
    rules = ["a2a.event_after_complete", "a2a.turns_out_of_order", "a2a.ambiguous_exchanges"]
    assert checks.check(events, select=rules).height == 0
    # the one exchange the log shows unfinished is the one reported
    missing = checks.check(events, select=["a2a.missing_complete"])
    assert missing["lines"].to_list() == ([[4]] if name == "complete-before-later-send" else [])
