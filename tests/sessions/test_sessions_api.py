"""The reference's HTTP bodies (``peer-api/``) reproduced by ``to_api()`` and ``events_query()``.

Every ``GET /api/work-sessions`` and ``GET /api/events`` body the reference's handlers
produced on the two conformance logs, with their query, clock and category overrides, is
compared key order included. In the work-session files each thread event is cut to
``{line, ts, type}``; the full enriched objects are checked separately against the original
lines and the reference's enrichment of them (``peer/*.json``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import polars as pl
import pytest

from a2a_lab.enrich import enrich
from a2a_lab.io import load
from a2a_lab.sessions import events_query, work_sessions
from tests.support.paths import DATA
from tests.support.reference_impl import sessions_ref as ref

API = DATA / "peer-api"
PEER = DATA / "peer"
WS_FILES = sorted(p.name for p in API.glob("*__ws__*.json"))
EV_FILES = sorted(p.name for p in API.glob("*__ev__*.json"))


@cache
def enriched_log(log: str) -> pl.DataFrame:
    return enrich(load(PEER / log).events)


@cache
def reference_objects(log: str) -> dict[int, dict[str, Any]]:
    """line -> the reference's enriched object, from the line and peer/*.json's enrichment."""
    stem = log.removesuffix(".ndjson")
    peer = json.loads(next(PEER.glob(f"{stem}__*__all.json")).read_text(encoding="utf-8"))
    enrichment = {e["line"]: {k: e[k] for k in ref.TOP_LEVEL_ENRICHMENT} for e in peer["events"]}
    lines = (PEER / log).read_text(encoding="utf-8").split("\n")
    return {
        line: ref.enriched_event_object(ref.js_json_parse(ref.js_trim(lines[line - 1])), values)
        for line, values in enrichment.items()
    }


def load_case(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    case = json.loads((API / name).read_text(encoding="utf-8"))
    return case["meta"], case["response"]


def work_sessions_of(meta: dict[str, Any]) -> Any:
    query = meta["query"]
    overrides = meta["overrides"]["file"]
    return work_sessions(
        enriched_log(meta["log"]),
        now=meta["nowMs"],
        roles=query.get("role"),
        types=query.get("type"),
        status=query.get("status"),
        view_category=query.get("viewCategory"),
        sub_tag=query.get("subTag"),
        limit=query.get("limit"),
        overrides=API / "overrides" / overrides if overrides else None,
    )


@pytest.mark.parametrize("name", WS_FILES)
def test_work_sessions_body(name: str) -> None:
    meta, expected = load_case(name)
    assert meta["mainAgents"] == ["main", "ruda"]
    result = work_sessions_of(meta)
    assert ref.ordered(result.to_api(thread_events="summary")) == ref.ordered(expected)


@pytest.mark.parametrize("name", WS_FILES)
def test_work_sessions_full_events(name: str) -> None:
    meta, expected = load_case(name)
    body = work_sessions_of(meta).to_api()
    objects = reference_objects(meta["log"])
    got = [e for s in body["sessions"] for t in s["threads"] for e in t["events"]]
    lines = [e["line"] for s in expected["sessions"] for t in s["threads"] for e in t["events"]]
    assert [ref.ordered(e) for e in got] == [ref.ordered(objects[line]) for line in lines]


def test_overrides_reader_result_matches_the_reference() -> None:
    from a2a_lab.sessions import load_overrides

    for name in WS_FILES:
        meta, _ = load_case(name)
        if meta["overrides"]["file"]:
            read = load_overrides(API / "overrides" / meta["overrides"]["file"])
            assert read == meta["overrides"]["readerResult"]


@pytest.mark.parametrize("name", EV_FILES)
def test_events_body(name: str) -> None:
    meta, expected = load_case(name)
    query = meta["query"]
    result = events_query(
        enriched_log(meta["log"]),
        since=query.get("since"),
        role=query.get("role"),
        types=query.get("type"),
        view_category=query.get("viewCategory"),
        limit=query.get("limit"),
    )
    body = result.to_api()
    assert ref.ordered(body) == ref.ordered(expected)
    assert result.events["line"].to_list() == meta["responseEventLines"]
    # the objects are the reference's enrichment of the original lines
    objects = reference_objects(meta["log"])
    assert [ref.ordered(e) for e in body["events"]] == [
        ref.ordered(objects[n]) for n in meta["responseEventLines"]
    ]
