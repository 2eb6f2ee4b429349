"""Work sessions and the event query (rules §7-§8): the reference's tests and outputs, edge
cases, the non-default modes, and a property test against the slow oracle."""

from __future__ import annotations

import json
import math
import tempfile
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.enrich import enrich
from a2a_lab.io import from_records, load
from a2a_lab.sessions import (
    UNASSIGNED_SESSION_ID,
    SessionQuery,
    events_query,
    js_number,
    limit_count,
    load_overrides,
    work_sessions,
)
from tests.support.paths import DATA
from tests.support.reference_impl import enrich_ref
from tests.support.reference_impl import sessions_ref as ref

PEER = DATA / "peer"
T0 = 1_771_500_000_000  # 2026-02-19T11:20:00Z


@cache
def enriched_log(path: Path) -> pl.DataFrame:
    return enrich(load(path).events)


def sessions_of(
    records: list[dict[str, Any]], now: Any = T0, overrides: Any = None, **query: Any
) -> dict[str, Any]:
    """``to_api()`` of the work sessions of in-memory records (all sessions, summary events)."""
    result = work_sessions(
        enrich(from_records(records)),
        SessionQuery(limit="Infinity", **query),
        now=now,
        overrides=overrides,
    )
    return result.to_api(thread_events="summary")


def event(ts: float, ws: str | None = "ws_1", **data: Any) -> dict[str, Any]:
    event_type = data.pop("type", "a2a.send")
    if ws is not None:
        data["workSessionId"] = ws
    return {"type": event_type, "ts": ts, "data": data}


# ---------------------------------------------------------------------------------------
# The reference's own unit tests (work-sessions.test-cases.json)
# ---------------------------------------------------------------------------------------
CASES = json.loads((DATA / "work-sessions.test-cases.json").read_text(encoding="utf-8"))["cases"]


def check_expectations(body: dict[str, Any], expect: dict[str, Any], now_index: int | None) -> None:
    sessions = body["sessions"]
    first = sessions[0] if sessions else None
    for key, value in expect.items():
        if key == "sessions":
            assert len(sessions) == value
        elif key == "threads":
            assert len(first["threads"]) == value
        elif key == "threadConversationIdsSorted":
            assert sorted(t["conversationId"] for t in first["threads"]) == value
        elif key.startswith("status@nowMs["):
            if int(key[len("status@nowMs[") : -1]) == now_index:
                assert first["status"] == value
        elif key.startswith("roleCounts."):
            assert first["roleCounts"][key[len("roleCounts.") :]] == value
        elif key.startswith("thread0."):
            thread = first["threads"][0]
            field = key[len("thread0.") :]
            if field == "eventTypes":
                assert [e["type"] for e in thread["events"]] == value
            else:
                assert thread[field] == value
        else:
            assert first[key] == value, key


def case_runs(case: dict[str, Any]) -> list[tuple[int | None, int]]:
    now = case["nowMs"]
    return list(enumerate(now)) if isinstance(now, list) else [(None, now)]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reference_unit_cases(case: dict[str, Any]) -> None:
    options = case["options"]
    # the same events from memory and from the transcribed log file
    log = enriched_log(DATA / "work-sessions.test-inputs.ndjson")
    ws_ids = {e["data"]["workSessionId"] for e in case["events"]}
    from_file = log.filter(pl.col("data").struct.field("workSessionId").is_in(sorted(ws_ids)))
    assert from_file.height == len(case["events"])
    for frame in (enrich(from_records(case["events"])), from_file):
        for now_index, now in case_runs(case):
            body = work_sessions(
                frame,
                SessionQuery(
                    roles=options.get("roleFilters"), types=options.get("eventTypeFilters")
                ),
                now=now,
                overrides=options.get("categoryOverrides"),
            ).to_api(thread_events="summary")
            check_expectations(body, case["expect"], now_index)


# ---------------------------------------------------------------------------------------
# The reference's outputs (peer/*.json): every session, thread and event sequence
# ---------------------------------------------------------------------------------------
PEER_FILES = sorted(p.name for p in PEER.glob("*__*.json"))


@pytest.mark.parametrize("name", PEER_FILES)
def test_peer_sessions_reproduced(name: str) -> None:
    peer = json.loads((PEER / name).read_text(encoding="utf-8"))
    meta = peer["meta"]
    assert meta["mainAgents"] == ["main", "ruda"] and meta["categoryOverrides"] == {}
    result = work_sessions(
        enriched_log(PEER / meta["log"]),
        SessionQuery(roles=meta["roleFilters"], types=meta["eventTypeFilters"], limit="Infinity"),
        now=meta["nowMs"],
    )
    expected = peer["sessions"]
    for session in expected:
        for thread in session["threads"]:
            if thread["conversationId"] is None:  # JSON.stringify drops undefined
                del thread["conversationId"]
    body = result.to_api(thread_events="summary")
    assert body["sessions"] == expected
    assert body["totalSessions"] == len(expected)
    # the frames say the same as the body
    assert result.sessions["id"].to_list() == [s["id"] for s in expected]
    assert result.threads.select("work_session_id", "id").rows() == [
        (s["workSessionId"], t["id"]) for s in expected for t in s["threads"]
    ]
    assert result.thread_events.select("line", "ts", "type").rows() == [
        (e["line"], e["ts"], e["type"]) for s in expected for t in s["threads"] for e in t["events"]
    ]


def test_peer_thread_events_are_full_objects_in_order() -> None:
    # the full body carries the enriched objects of exactly the summary's lines
    result = work_sessions(enriched_log(PEER / "tricky.ndjson"), now=1_771_507_200_000)
    full = result.to_api()
    summary = result.to_api(thread_events="summary")
    lines = (PEER / "tricky.ndjson").read_text(encoding="utf-8").split("\n")
    for s_full, s_sum in zip(full["sessions"], summary["sessions"], strict=True):
        for t_full, t_sum in zip(s_full["threads"], s_sum["threads"], strict=True):
            for obj, brief in zip(t_full["events"], t_sum["events"], strict=True):
                record = ref.js_json_parse(ref.js_trim(lines[brief["line"] - 1]))
                assert obj["type"] == brief["type"] == ref.js_trim(record["type"])
                assert obj["data"]["workSessionId"] == record["data"]["workSessionId"]


# ---------------------------------------------------------------------------------------
# Rules §7 in detail
# ---------------------------------------------------------------------------------------
def test_sort_is_stable_and_latest_event_wins_ties() -> None:
    body = sessions_of(
        [
            event(T0 + 5, type="a2a.complete", conversationId="c"),
            event(T0 + 5, type="a2a.response", conversationId="c"),  # same time, later: latest
            event(T0 + 1, conversationId="c"),
        ]
    )
    (session,) = body["sessions"]
    assert session["status"] == "ACTIVE"
    assert [e["line"] for e in session["threads"][0]["events"]] == [3, 1, 2]


def test_unsorted_frame_is_sorted_by_time_keeping_ties_in_frame_order() -> None:
    records = [
        event(T0 + 2, conversationId="c"),
        event(T0 + 1, conversationId="c"),
        event(T0 + 1, conversationId="c"),
    ]
    frame = enrich(from_records(records, sort=False))
    body = work_sessions(frame, now=T0).to_api(thread_events="summary")
    assert [e["line"] for e in body["sessions"][0]["threads"][0]["events"]] == [2, 3, 1]


def test_pair_key_uses_utf16_order_and_bucket_key_uses_js_numbers() -> None:
    body = sessions_of(
        [
            # U+FF01 sorts after U+1F600 in UTF-16 (a surrogate pair), before it by code point
            event(T0, fromAgent="\uff01", toAgent="\U0001f600"),
            event(T0 + 1, fromAgent="\U0001f600", toAgent="\uff01"),
            event(-0.0, ws="ws_zero", type="x.y"),
            event(1.0, ws="ws_zero", type="x.y"),  # ts 0 falls through: both in bucket "0"
            event(3e26, ws="ws_huge", type="x.y"),
        ],
        now=T0,
    )
    by_id = {s["workSessionId"]: s for s in body["sessions"]}
    assert [t["id"] for t in by_id["ws_1"]["threads"]] == ["pair:\U0001f600_\uff01"]
    assert by_id["ws_1"]["threads"][0]["eventCount"] == 2
    assert [t["id"] for t in by_id["ws_zero"]["threads"]] == ["event:x.y:0"]
    assert [t["id"] for t in by_id["ws_huge"]["threads"]] == ["event:x.y:1e+21"]


def test_unknown_pair_and_literal_unknown_agents() -> None:
    body = sessions_of(
        [
            event(T0, fromAgent="unknown"),  # "unknown" + missing to: the bucket thread
            event(T0 + 1, fromAgent="unknown_unknown"),  # a real pair
            event(T0 + 2, conversationId=" c1 ", fromAgent="x"),  # trimmed conversation id
        ]
    )
    ids = [t["id"] for t in body["sessions"][0]["threads"]]
    assert ids == ["conv:c1", "pair:unknown_unknown_unknown", "event:a2a.send:5905000"]


def test_terminal_rules_and_archive_boundary() -> None:
    def status(last: dict[str, Any], now: int = T0 + 10) -> str:
        return sessions_of([event(T0, conversationId="c"), last], now=now)["sessions"][0]["status"]

    assert status(event(T0 + 1, type="a2a.spawn_result", status=" error ")) == "QUIET"
    assert status(event(T0 + 1, type="a2a.spawn_result", status="ok")) == "ACTIVE"
    assert status(event(T0 + 1, type="continuation.completed")) == "QUIET"
    assert status(event(T0 + 1, type="task.update", status="Completed")) == "ACTIVE"
    top_level = event(T0 + 1, type="task.update")
    top_level["status"] = " abandoned "
    assert status(top_level) == "QUIET"
    # quirk: a real task.completed has no status, so it does not end the session
    assert status(event(T0 + 1, type="task.completed")) == "ACTIVE"
    assert status(event(T0 + 1, type="a2a.complete"), now=T0 + 1 + 86_400_000) == "QUIET"
    assert status(event(T0 + 1, type="a2a.complete"), now=T0 + 2 + 86_400_000) == "ARCHIVED"


def test_lifecycle_terminal_mode() -> None:
    records = [event(T0, taskId="t"), event(T0 + 1, type="task.cancelled", taskId="t")]
    assert sessions_of(records)["sessions"][0]["status"] == "ACTIVE"
    assert sessions_of(records, lifecycle_terminal=True)["sessions"][0]["status"] == "QUIET"


def test_unassigned_mode_collects_events_without_work_session() -> None:
    records = [
        event(T0, ws=None, fromAgent="a", toAgent="b"),
        event(T0 + 1, ws="  "),
        event(T0 + 2),
    ]
    assert [s["id"] for s in sessions_of(records)["sessions"]] == ["ws:ws_1"]
    sessions = sessions_of(records, unassigned=True)["sessions"]
    assert [(s["id"], s["workSessionId"], s["eventCount"]) for s in sessions] == [
        ("ws:ws_1", "ws_1", 1),
        (UNASSIGNED_SESSION_ID, None, 2),
    ]


def test_category_and_sub_tags_come_from_the_first_informative_event() -> None:
    body = sessions_of(
        [
            event(T0, message="hello"),  # fallback engineering_build, no tags
            event(T0 + 1, collabCategory="qa_validation", collabSubTags=[" E2E ", "", 3]),
            event(T0 + 2, message="deploy the docker"),
        ]
    )
    (session,) = body["sessions"]
    assert session["collabCategory"] == "qa_validation"
    assert session["collabSubTags"] == ["E2E"]
    assert session["categorySource"] == "event"


def test_overrides_validate_trim_and_inherit_object_prototype_quirk(tmp_path: Path) -> None:
    records = [event(T0, ws="ws_a"), event(T0 + 1, ws="ws_b"), event(T0 + 2, ws="constructor")]
    path = tmp_path / "overrides.json"
    path.write_text(
        json.dumps(
            {
                "ws_a": {"collabCategory": " legal_compliance ", "updatedAt": "x"},
                "ws_b": {"collabCategory": "LEGAL_COMPLIANCE"},
                "ws:ws_b": {"collabCategory": "infra_ops"},  # keys are bare ids
            }
        ),
        encoding="utf-8",
    )
    by_id = {s["workSessionId"]: s for s in sessions_of(records, overrides=path)["sessions"]}
    assert (by_id["ws_a"]["collabCategory"], by_id["ws_a"]["categorySource"]) == (
        "legal_compliance",
        "manual_override",
    )
    assert (by_id["ws_b"]["collabCategory"], by_id["ws_b"]["categorySource"]) == (
        "engineering_build",
        "event",
    )
    # overrides[wsId] on a plain JavaScript object finds Object.prototype.constructor
    assert (by_id["constructor"]["collabCategory"], by_id["constructor"]["categorySource"]) == (
        "engineering_build",
        "manual_override",
    )


def test_load_overrides_errors(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        load_overrides(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError):
        load_overrides(bad)
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="JSON object"):
        load_overrides(bad)
    assert load_overrides({"w": "not an object", "v": {"collabCategory": 5}}) == {}


def test_query_filters_and_echo() -> None:
    records = [
        event(T0, ws="ws_a", type="a2a.send", fromAgent="ruda", toAgent="main", message="e2e test"),
        event(T0 + 1, ws="ws_b", type="task.started", message="deploy"),
        event(T0 + 2, ws="ws_b", type="a2a.complete", fromAgent="x", toAgent="y"),
    ]
    query = SessionQuery(
        roles=["conversation.main, bogus", " delegation.subagent"],
        types=" a2a.send , ,a2a.complete",
        status=["QUIET", "quiet", "ACTIVE"],
        view_category="all",
        sub_tag="E2E",
        limit="-3",
    )
    result = work_sessions(enrich(from_records(records)), query, now=T0)
    body = result.to_api(thread_events="summary")
    assert body["role"] == ["conversation.main", "delegation.subagent"]
    assert body["type"] == ["a2a.send", "a2a.complete"]
    assert body["status"] == ["QUIET", "ACTIVE"]
    assert (body["viewCategory"], body["subTag"]) == ("all", "E2E")
    assert (body["totalSessions"], body["totalMatched"], body["count"]) == (2, 1, 1)
    assert body["sessions"][0]["collabSubTags"] == ["test", "e2e"]
    assert body["categoryCounts"] == {"qa_validation": 1}


def test_now_accepts_datetimes() -> None:
    records = [event(T0, type="a2a.complete")]
    when = datetime(2026, 2, 20, 11, 20, 0, 1000, tzinfo=UTC)  # T0 + 24 h + 1 ms
    assert sessions_of(records, now=when)["sessions"][0]["status"] == "ARCHIVED"
    assert (
        sessions_of(records, now=when.replace(tzinfo=None))["sessions"][0]["status"] == "ARCHIVED"
    )
    assert (
        sessions_of(records, now=when - timedelta(milliseconds=1))["sessions"][0]["status"]
        == "QUIET"
    )
    # an ISO string is an instant too (one parser, naive = UTC); an unparsable one is an error
    assert (
        sessions_of(records, now="2026-02-20T11:20:00.001")["sessions"][0]["status"] == "ARCHIVED"
    )
    assert sessions_of(records, now="2026-02-20T20:20:00+09:00")["sessions"][0]["status"] == "QUIET"
    with pytest.raises(ValueError, match="^now: "):
        work_sessions(enrich(from_records(records)), now="soon")
    with pytest.raises(TypeError):
        work_sessions(enrich(from_records(records)), now=None)  # type: ignore[arg-type]


def test_the_filters_are_one_session_query() -> None:
    """The old keyword form fails, naming the options object; the query string gives the query."""
    frame = enrich(from_records([event(T0, conversationId="c")]))
    with pytest.raises(TypeError, match=r"work_sessions\(\) takes roles= in its options object"):
        work_sessions(frame, now=T0, roles="conversation.main")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"query=SessionQuery\(unassigned=\.\.\.\)"):
        work_sessions(frame, now=T0, unassigned=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        work_sessions(frame, now=T0, nope=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="query must be a SessionQuery, not dict"):
        work_sessions(frame, {"roles": "x"}, now=T0)  # type: ignore[arg-type]
    params = {"role": "a, b", "type": "a2a.send", "status": "QUIET", "viewCategory": "all"}
    params |= {"subTag": "e2e", "limit": "7", "since": "ignored: not a reference parameter"}
    assert SessionQuery.from_params(params) == SessionQuery(
        roles="a, b",
        types="a2a.send",
        status="QUIET",
        view_category="all",
        sub_tag="e2e",
        limit="7",
    )
    assert repr(SessionQuery(status="QUIET", unassigned=True)) == (
        "SessionQuery(status='QUIET', unassigned=True)"
    )
    assert (
        work_sessions(frame, SessionQuery(), now=T0).to_api()
        == work_sessions(frame, now=T0).to_api()
    )


@pytest.mark.parametrize(
    ("limit", "count"),
    [
        (None, 100),
        ("0", 100),
        ("", 100),
        ("abc", 100),
        ("1_0", 100),
        (0, 100),
        (math.nan, 100),
        ("-3", 1),
        (-3, 1),
        ("-Infinity", 1),
        ("0.5", 1),
        ("2.5", 2),
        (" 7\n", 7),
        ("1e1", 10),
        ("0x10", 16),
        ("0b11", 3),
        ("Infinity", None),
        (math.inf, None),
        ("-0", 100),
    ],
)
def test_limit_follows_javascript_number(limit: Any, count: int | None) -> None:
    assert limit_count(limit) == count


def test_limit_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        limit_count(True)
    assert math.isnan(js_number("0x")) and math.isnan(js_number("1 2")) and js_number(".5") == 0.5


# ---------------------------------------------------------------------------------------
# The enriched event objects
# ---------------------------------------------------------------------------------------
def test_enriched_object_keeps_key_positions_like_javascript(tmp_path: Path) -> None:
    line = (
        '{"eventRole":"junk","type":" a2a.send ","b":1,"5":2,"1":3,"b":4,'
        '"data":{"collabIntent":"  ","x":12345678901234567891,"y":1e400,"z":1'
        + "0"
        * 400
        + ',"2":0,"categoryVersion":" v0 ",'
        '"workSessionId":"ws_1"},"ts":1771500000000}'
    )
    path = tmp_path / "log.ndjson"
    path.write_text(line + "\n", encoding="utf-8")
    (obj,) = events_query(enriched_log(path)).to_api()["events"]
    assert list(obj) == [
        "1", "5", "eventRole", "type", "b", "data", "ts", "fromSessionType", "toSessionType",
        "collabCategory", "collabSubTags", "categoryConfidence", "categorySource",
    ]  # fmt: skip
    assert (obj["type"], obj["b"], obj["eventRole"]) == ("a2a.send", 4, "delegation.subagent")
    data = obj["data"]
    assert list(data)[:6] == ["2", "x", "y", "z", "categoryVersion", "workSessionId"]
    assert "collabIntent" not in data  # a blank intent is undefined, which JSON drops
    assert data["x"] == float(12345678901234567891) and data["y"] is None and data["z"] is None
    assert data["categoryVersion"] == "v0"


# ---------------------------------------------------------------------------------------
# GET /api/events
# ---------------------------------------------------------------------------------------
def test_events_limit_keeps_the_last_events_in_file_order(tmp_path: Path) -> None:
    rotated = tmp_path / "coordination-events-2026-01.ndjson"
    live = tmp_path / "coordination-events.ndjson"
    rotated.write_text(json.dumps({"type": "a", "ts": T0 + 50}) + "\n", encoding="utf-8")
    live.write_text(
        "\n".join(
            json.dumps({"type": t, "ts": T0 + ts}) for t, ts in [("b", 100), ("c", 10), ("d", 20)]
        )
        + "\n",
        encoding="utf-8",
    )
    loaded = load(tmp_path)
    frame = enrich(loaded.events)
    assert frame["type"].to_list() == ["c", "d", "a", "b"]  # time order
    result = events_query(frame, limit=3)
    assert [e["type"] for e in result.to_api()["events"]] == ["b", "c", "d"]
    # the reading order given explicitly: here the same as the default
    assert events_query(frame, limit=3, files=loaded.report.files).events["type"].to_list() == [
        "b",
        "c",
        "d",
    ]
    reversed_order = list(reversed(loaded.report.files))
    assert events_query(frame, limit=2, files=reversed_order).events["type"].to_list() == ["d", "a"]


def test_events_since_role_type_and_view_category() -> None:
    frame = enrich(
        from_records(
            [
                {"type": "task.started", "ts": T0, "data": {"message": "deploy"}},
                {
                    "type": "a2a.send",
                    "ts": T0 + 1000,
                    "data": {"fromAgent": "ruda", "toAgent": "main"},
                },
                {"type": "a2a.send", "timestamp": "2026-02-19T11:20:02Z", "data": {}},
            ]
        )
    )
    assert events_query(frame, since="2026-02-19T11:20:01Z").total_matched == 2
    assert events_query(frame, since="2026-02-19T20:20:01+09:00").total_matched == 2
    assert (
        events_query(frame, since=datetime(2026, 2, 19, 11, 20, 1, tzinfo=UTC)).total_matched == 2
    )
    assert events_query(frame, since="").total_matched == 3
    assert events_query(frame, since="yesterday").total_matched == 0
    body = events_query(frame, role=" conversation.main ", types="a2a.send,, x").to_api()
    assert (body["role"], body["type"], body["totalMatched"]) == (
        "conversation.main",
        ["a2a.send", "x"],
        1,
    )
    assert events_query(frame, role="conversation.main,delegation.subagent").total_matched == 0
    body = events_query(frame, view_category=" infra_ops ").to_api()
    assert (body["viewCategory"], body["categoryCounts"], body["total"]) == (
        "infra_ops",
        {"infra_ops": 1},
        3,
    )


# ---------------------------------------------------------------------------------------
# Property test: the Polars implementation equals the slow oracle on random logs
# ---------------------------------------------------------------------------------------
class Raw(str):
    """JSON text to embed as is."""


TEXT = st.text(
    alphabet=st.sampled_from(list("ab_ Zz😀\uff01\u3000\ufeff\x85\t가테스트eE2İΣςkpi,")), max_size=6
)
AGENTS = st.one_of(
    st.sampled_from(
        ["ruda", "main", "eden", "Zed", "adam", "unknown", " RUDA ", "", "  ", "😀", "\uff01"]
    ),
    TEXT,
    st.integers(-2, 2),
)
TIMES = st.sampled_from(
    [T0, T0, T0 + 1, T0 + 299_999, T0 + 300_000, T0 - 86_400_000, T0 + 3_600_000, 0, -0.0, -1, 0.5,
     3e26, 1e300, 2**63 + 1, T0 + 0.25, "1771500000000", True, Raw("1" + "0" * 400)]
)  # fmt: skip
ISO = st.sampled_from(
    ["2026-02-19T11:20:00Z", "2026-02-19T20:20:00.5+09:00", "2026-02-19", "2026-02-19T11:20:00",
     "2026-02-19 11:20:01Z", "nope", "", 7]
)  # fmt: skip
TYPES = st.sampled_from(
    ["a2a.send", "a2a.response", "a2a.complete", " a2a.complete ", "a2a.spawn", "a2a.spawn_result",
     "task.started", "task.completed", "task.cancelled", "task.update", "continuation.complete",
     "continuation.completed", "milestone.sync_failed", "custom.thing", "plan.submitted"]
)  # fmt: skip
STATUSES = st.sampled_from(
    [
        "completed",
        " failed ",
        "Completed",
        "error",
        " error ",
        "ok",
        "",
        "cancelled",
        "abandoned",
        3,
    ]
)
WS_IDS = st.sampled_from(
    ["ws_a", "ws_a", " ws_a ", "ws_b", "ws_b", "ws_c", "", "  ", "constructor", "테스트", 5]
)
CATEGORIES = st.sampled_from(["qa_validation", " infra_ops ", "QA_VALIDATION", "biz_strategy", 3])
SUB_TAGS = st.one_of(
    st.lists(
        st.one_of(TEXT, st.sampled_from(["E2E", " e2e ", "implement"]), st.integers()), max_size=7
    ),
    TEXT,
)
MESSAGES = st.one_of(
    st.sampled_from(
        [
            "please implement the feature",
            "latest docs",
            "e2e test",
            "배포 장애",
            "kpi roadmap",
            "hello",
        ]
    ),
    TEXT,
)
ROLES = st.sampled_from(
    [
        "conversation.main",
        " delegation.subagent ",
        "orchestration.task",
        "bogus",
        "Conversation.Main",
    ]
)

DATA_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "workSessionId": WS_IDS,
    "conversationId": st.sampled_from(["c1", " c1 ", "c2", "", 4]),
    "fromAgent": AGENTS,
    "toAgent": AGENTS,
    "senderAgentId": AGENTS,
    "targetAgentId": AGENTS,
    "status": STATUSES,
    "message": MESSAGES,
    "replyPreview": MESSAGES,
    "taskId": st.sampled_from(["task_latest", "t1", "android"]),
    "collabCategory": CATEGORIES,
    "collabSubTags": SUB_TAGS,
    "collabIntent": st.one_of(TEXT, st.integers()),
    "categoryVersion": st.sampled_from(["v0", " v2 ", "", 1]),
    "eventRole": ROLES,
    "depth": st.sampled_from([0, 1, "1", None]),
    "parentConversationId": st.sampled_from(["p", "", None]),
    "sourceSessionKey": st.sampled_from(
        ["agent:ruda:main", "agent:x:subagent:y", "AGENT:eden:MAIN", "z"]
    ),
    "5": st.integers(0, 3),
    "zz": st.sampled_from([[1, {"2": 3, "1": 4}], {"b": 1, "0": 2}]),
}
TOP_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "agentId": AGENTS,
    "ts": TIMES,
    "timestampMs": TIMES,
    "timestamp": ISO,
    "status": STATUSES,
    "eventRole": ROLES,
    "collabCategory": CATEGORIES,
    "10": st.integers(0, 3),
    "extra": st.sampled_from([None, [1, 2], {"k": "v"}, 12345678901234567891, Raw("1e400")]),
}


def often(draw: st.DrawFn) -> bool:
    return draw(st.integers(0, 9)) < 8


@st.composite
def json_objects(
    draw: st.DrawFn,
    fields: dict[str, st.SearchStrategy[Any]],
    required: dict[str, Any],
    usual: tuple[str, ...] = (),
) -> str:
    """A JSON object's text: usual fields most of the time, a few others, in a random order,
    sometimes a key twice (the last one wins)."""
    names = [name for name in usual if often(draw)]
    others = sorted(set(fields) - set(usual))
    names += draw(st.lists(st.sampled_from(others), unique=True, max_size=5))
    pairs = [(name, draw(fields[name])) for name in names]
    pairs += [(k, v) for k, v in required.items()]
    pairs = draw(st.permutations(pairs))
    if pairs and not often(draw):
        name, _ = draw(st.sampled_from(pairs))
        pairs.append((name, draw(fields.get(name, TEXT))))
    return (
        "{"
        + ",".join(
            f"{json.dumps(k)}:{v if isinstance(v, Raw) else json.dumps(v, ensure_ascii=False)}"
            for k, v in pairs
        )
        + "}"
    )


JUNK_LINES = [
    "",
    "   ",
    "not json",
    "[1,2,3]",
    '{"type": 5}',
    '{"data": {}}',
    '{"type":"a2a.send",}',
]
USUAL_DATA = ("workSessionId", "conversationId", "fromAgent", "toAgent", "message")


@st.composite
def log_lines(draw: st.DrawFn) -> str:
    if not often(draw):
        return draw(st.sampled_from(JUNK_LINES))
    if often(draw):
        data = draw(json_objects(DATA_FIELDS, {}, USUAL_DATA))
    else:
        data = draw(st.sampled_from(["[1]", '"text"', "null"]))
    return draw(json_objects(TOP_FIELDS, {"type": draw(TYPES), "data": Raw(data)}, ("ts",)))


LOGS = st.lists(log_lines(), max_size=24).map(lambda lines: "\n".join(lines) + "\n")
QUERY_VALUES = {
    "role": st.lists(
        st.sampled_from(
            ["conversation.main", " delegation.subagent", "orchestration.task,bogus", ""]
        ),
        max_size=2,
    ),
    "type": st.lists(
        st.sampled_from(["a2a.send", " a2a.complete , task.started", "", "nope"]), max_size=2
    ),
    "status": st.lists(st.sampled_from(["ACTIVE", "QUIET,ARCHIVED", "quiet", ""]), max_size=2),
    "viewCategory": st.lists(
        st.sampled_from(["all", " infra_ops ", "qa_validation", "engineering_build", ""]),
        max_size=1,
    ),
    "subTag": st.lists(st.sampled_from(["e2e", "IMPLEMENT", "테스트", "ab", " "]), max_size=1),
    "limit": st.lists(
        st.sampled_from(["0", "-3", "abc", "1", "2.5", "Infinity", " 3 ", "0x2"]), max_size=1
    ),
}
OVERRIDES = st.dictionaries(
    st.sampled_from(["ws_a", "ws_b", "테스트", "constructor", "ws:ws_a"]),
    st.one_of(
        st.fixed_dictionaries(
            {"collabCategory": CATEGORIES, "updatedAt": st.just("2026-02-20T00:00:00.000Z")}
        ),
        st.just("junk"),
    ),
    max_size=3,
)


def write_log(text: str, directory: str) -> Path:
    path = Path(directory) / "coordination-events.ndjson"
    path.write_text(text, encoding="utf-8")
    return path


def oracle_events(text: str) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The reference's enriched events (file order) and their id() -> line map."""
    events = []
    lines = {}
    for line, record in ref.parse_log(text):
        enrichment = enrich_ref.enrich_event(record, {"main", "ruda"})
        obj = ref.enriched_event_object(record, enrichment)
        events.append(obj)
        lines[id(obj)] = line
    return events, lines


def first(values: list[str]) -> str | None:
    return values[0] if values else None


@settings(max_examples=60)
@given(
    text=LOGS,
    query=st.fixed_dictionaries(QUERY_VALUES),
    overrides=OVERRIDES,
    now=st.sampled_from([T0, T0 + 3_600_000, T0 + 86_400_000, T0 + 86_400_001, 0]),
    lifecycle_terminal=st.booleans(),
    unassigned=st.booleans(),
)
def test_work_sessions_equal_the_oracle(
    text: str,
    query: dict[str, list[str]],
    overrides: dict[str, Any],
    now: int,
    lifecycle_terminal: bool,
    unassigned: bool,
) -> None:
    events, _ = oracle_events(text)
    expected = ref.work_sessions_response(
        events,
        now_ms=now,
        query=query,
        overrides=ref.read_overrides(overrides),
        lifecycle_terminal=lifecycle_terminal,
        unassigned=unassigned,
    )
    with tempfile.TemporaryDirectory() as directory:
        frame = enrich(load(write_log(text, directory)).events)
        session_query = SessionQuery(
            roles=query["role"],
            types=query["type"],
            status=query["status"],
            view_category=first(query["viewCategory"]),
            sub_tag=first(query["subTag"]),
            limit=first(query["limit"]),
            lifecycle_terminal=lifecycle_terminal,
            unassigned=unassigned,
        )
        result = work_sessions(frame, session_query, now=now, overrides=overrides)
        assert ref.ordered(result.to_api()) == ref.ordered(expected)
    # the counts add up: every built session's events are the filtered events with an id
    assert int(result.sessions["event_count"].sum()) == result.thread_events.height


@settings(max_examples=60)
@given(
    text=LOGS,
    since=st.sampled_from(
        [None, "", "not-a-date", "2026-02-19T11:20:00Z", "2026-02-19T11:20:00.001Z", "1970-01-01"]
    ),
    role=st.sampled_from(
        [None, "", "conversation.main", " delegation.subagent ", "a,b", "system.observability"]
    ),
    query=st.fixed_dictionaries({k: QUERY_VALUES[k] for k in ("type", "viewCategory", "limit")}),
)
def test_events_query_equals_the_oracle(
    text: str, since: str | None, role: str | None, query: dict[str, list[str]]
) -> None:
    events, _ = oracle_events(text)
    full_query = dict(query)
    if since is not None:
        full_query["since"] = [since]
    if role is not None:
        full_query["role"] = [role]
    expected = ref.events_response(events, query=full_query)
    with tempfile.TemporaryDirectory() as directory:
        frame = enrich(load(write_log(text, directory)).events)
        result = events_query(
            frame,
            since=since,
            role=role,
            types=query["type"],
            view_category=first(query["viewCategory"]),
            limit=first(query["limit"]),
        )
        assert ref.ordered(result.to_api()) == ref.ordered(expected)


def test_lazy_source_collected_in_chunks_equals_the_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LazyFrame is collected CHUNK_ROWS rows at a time (issue 12: memory): the sessions,
    threads, membership and the API body (its event objects re-read) are the whole frame's."""
    import a2a_lab.sessions._build as build
    from a2a_lab.samples import write_log

    log = tmp_path / "coordination-events.ndjson"
    write_log(log, 4_000, seed=11)
    enriched = enrich(load(log).events)
    now = 1_790_000_000_000
    whole = work_sessions(enriched, SessionQuery(limit=5), now=now)
    monkeypatch.setattr(build, "CHUNK_ROWS", 700)
    chunked = work_sessions(enriched.lazy(), SessionQuery(limit=5), now=now)
    assert whole.sessions.height > 5
    assert chunked.sessions.equals(whole.sessions)
    assert chunked.threads.equals(whole.threads)
    assert chunked.thread_events.equals(whole.thread_events)
    assert chunked.to_api() == whole.to_api()
    # chunk borders inside the window, and role/type filters, change nothing either
    query = SessionQuery(
        roles="delegation.subagent",
        types="a2a.send",
        since=int(enriched["event_ms"][50]),
        until=int(enriched["event_ms"][3_500]),
    )
    got = work_sessions(enriched.lazy(), query, now=now)
    assert got.to_api() == work_sessions(enriched, query, now=now).to_api()
