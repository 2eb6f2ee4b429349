"""Conversation analytics: exchanges, outcomes (runtime §3b), intents, payload linking."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.analysis.conversations import (
    conversations,
    delegation_reports,
    exchange_events,
    intent_expr,
    outcome_text_expr,
    pair_stats,
    payload_events,
    question_answers,
    target_stats,
)
from a2a_lab.io import from_records
from a2a_lab.reference.runtime.intent import classify_intent
from a2a_lab.reference.runtime.outcome import build_no_reply_outcome_message, parse_outcome_text
from tests.support.paths import DATA

T0 = 1_771_500_000_000


def ev(i: int, type_: str, frm: str, to: str, conv: str = "c1", **data) -> dict:
    return {
        "type": type_,
        "agentId": frm,
        "ts": T0 + i * 1000,
        "data": {"conversationId": conv, "fromAgent": frm, "toAgent": to, **data},
    }


def one(records: list[dict]) -> dict:
    out = conversations(from_records(records))
    assert out.height == 1, out
    return out.row(0, named=True)


# ---- outcomes, runtime §3b ---------------------------------------------------------------


def test_reply_then_turns_then_complete_is_replied() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b", message="배포 상태 알려줘"),
            ev(5, "a2a.response", "b", "a", replyPreview="다 됐어요"),
            ev(7, "a2a.response", "a", "b", turn=1, maxTurns=3, replyPreview="확인"),
            ev(9, "a2a.response", "b", "a", turn=2, maxTurns=3, replyPreview="네"),
            ev(
                10,
                "a2a.complete",
                "a",
                "b",
                announced=True,
                actualTurns=2,
                configuredMaxTurns=5,
                effectiveTurns=3,
                terminationReason="minimal_content",
            ),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("replied", None)
    assert row["first_reply_s"] == 5.0 and row["duration_s"] == 10.0
    assert (row["responses"], row["turns"], row["actual_turns"]) == (3, 2, 2.0)
    assert row["announced"] is True and row["termination_reason"] == "minimal_content"


def test_turns_counted_from_responses_when_not_logged() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(1, "a2a.response", "b", "a"),
            ev(2, "a2a.response", "a", "b", turn=1),
            ev(3, "a2a.complete", "a", "b"),
        ]
    )
    assert row["turns"] == 1 and row["actual_turns"] is None


@pytest.mark.parametrize(
    ("wait", "reason"),
    [
        ({"waitStatus": "timeout"}, "timeout"),
        ({"waitStatus": "not_found"}, "not_found"),
        ({"waitStatus": "error"}, "error"),
        ({"waitStatus": "error", "waitError": " rate limited "}, "rate limited"),
    ],
)
def test_no_reply_reason_from_wait_fields(wait: dict, reason: str) -> None:
    text = build_no_reply_outcome_message(wait.get("waitStatus"), wait.get("waitError"))
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(300, "a2a.response", "b", "a", outcome="no_reply", message=text, **wait),
            ev(301, "a2a.complete", "a", "b", announced=False),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("no_reply", reason)
    assert row["first_reply_s"] is None


def test_legacy_blocked_with_wait_fields_is_no_reply() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(
                300,
                "a2a.response",
                "b",
                "a",
                outcome="blocked",
                waitStatus="timeout",
                message="[outcome] blocked: 응답을 받지 못했습니다 (대기 시간 300초 초과)",
            ),
            ev(301, "a2a.complete", "a", "b"),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("no_reply", "timeout")


def test_blocked_followed_by_concurrency_blocked_complete() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(30, "a2a.response", "a", "b", outcome="blocked", waitStatus="timeout"),
            ev(31, "a2a.complete", "a", "b", concurrencyBlocked=True, announced=False),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("concurrency_blocked", "concurrency_gate")


def test_outcome_text_alone_is_parsed() -> None:
    text = build_no_reply_outcome_message("not_found", None)
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(2, "a2a.response", "b", "a", replyPreview=text),
            ev(3, "a2a.complete", "a", "b"),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("no_reply", "not_found")


def test_legacy_blocked_without_anything_is_no_reply() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(2, "a2a.response", "b", "a", outcome="blocked"),
            ev(3, "a2a.complete", "a", "b"),
        ]
    )
    assert (row["outcome"], row["outcome_reason"]) == ("no_reply", "unknown")


def test_no_complete_is_incomplete() -> None:
    row = one([ev(0, "a2a.send", "a", "b"), ev(2, "a2a.response", "b", "a")])
    assert (row["outcome"], row["outcome_reason"]) == ("incomplete", "no_complete")
    assert row["first_reply_s"] == 2.0


def test_retries_are_counted() -> None:
    row = one(
        [
            ev(0, "a2a.send", "a", "b"),
            ev(30, "a2a.retry", "a", "b", attempt=0, errorCode="rate_limit"),
            ev(40, "a2a.retry", "a", "b", attempt=1),
            ev(50, "a2a.response", "b", "a"),
            ev(51, "a2a.complete", "a", "b"),
        ]
    )
    assert row["retries"] == 2 and row["outcome"] == "replied"


# ---- exchanges ---------------------------------------------------------------------------


def _table(*records: dict) -> pl.DataFrame:
    """The conversation table of these events."""
    return conversations(from_records(list(records)))


def test_reused_conversation_id_is_cut_at_each_send() -> None:
    out = _table(
        ev(0, "a2a.send", "a", "b"),
        ev(1, "a2a.response", "b", "a"),
        ev(2, "a2a.complete", "a", "b"),
        ev(10, "a2a.send", "a", "b"),
        ev(13, "a2a.response", "b", "a"),
        ev(14, "a2a.complete", "a", "b"),
    )
    assert out["exchange"].to_list() == [1, 2]
    assert out["first_reply_s"].to_list() == [1.0, 3.0]


def test_question_back_to_the_requester_inside_an_exchange() -> None:
    # a -> b; while working, b asks a (b -> a, same conversation id); then b answers a
    out = _table(
        ev(0, "a2a.send", "a", "b"),
        ev(5, "a2a.send", "b", "a"),
        ev(6, "a2a.response", "a", "b"),
        ev(7, "a2a.response", "b", "a", turn=1),
        ev(8, "a2a.complete", "b", "a"),
        ev(20, "a2a.response", "b", "a"),
        ev(21, "a2a.complete", "a", "b"),
    ).sort("start_time")
    assert out.select("from_agent", "to_agent", "first_reply_s", "responses", "outcome").rows() == [
        ("a", "b", 20.0, 1, "replied"),
        ("b", "a", 1.0, 2, "replied"),
    ]


def test_relay_hop_reusing_the_parent_id_is_its_own_exchange() -> None:
    out = _table(
        ev(0, "a2a.send", "a", "b"),
        ev(1, "a2a.send", "b", "c", parentConversationId="c1", depth=1),
        ev(4, "a2a.response", "c", "b"),
        ev(5, "a2a.complete", "b", "c"),
        ev(8, "a2a.response", "b", "a"),
        ev(9, "a2a.complete", "a", "b"),
    )
    assert sorted(out.select("from_agent", "to_agent", "first_reply_s").rows()) == [
        ("a", "b", 8.0),
        ("b", "c", 3.0),
    ]
    assert out.filter(pl.col("from_agent") == "b")["depth"].to_list() == [1.0]


def test_orphan_response_is_exchange_zero() -> None:
    row = one([ev(0, "a2a.response", "b", "a"), ev(1, "a2a.complete", "a", "b")])
    assert row["exchange"] == 0 and row["has_send"] is False


def test_sample_every_exchange_event_is_in_exactly_one_exchange() -> None:
    events = al.load(al.samples.sample_dir()).events
    conv = conversations(events)
    ex = exchange_events(events)
    assert conv["events"].sum() == ex.height
    sends = events.filter(
        (pl.col("type") == "a2a.send") & pl.col("data").struct.field("conversationId").is_not_null()
    )
    assert conv["has_send"].sum() == sends.height
    assert conv.filter(pl.col("exchange") == 0).height == 0
    assert set(conv["outcome"].unique()) == {
        "replied",
        "no_reply",
        "concurrency_blocked",
        "incomplete",
    }


def test_lazy_source_matched_part_by_part_equals_the_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LazyFrame is matched in hash classes of conversation ids (issue 12: memory): the
    rows, their order and every value are those of matching the whole frame at once."""
    import a2a_lab.analysis.conversations as conv_mod

    log = tmp_path / "coordination-events.ndjson"
    al.samples.write_log(log, 6_000, seed=3)
    # an orphan, a reused id across agent pairs and a reply in the opposite direction
    extra = [
        ev(0, "a2a.response", "b", "a", conv="orphan"),
        ev(1, "a2a.send", "a", "b", conv="reused"),
        ev(2, "a2a.send", "b", "c", conv="reused"),
        ev(3, "a2a.response", "c", "b", conv="reused"),
        ev(4, "a2a.response", "b", "a", conv="reused"),
    ]
    with log.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in extra)
    events = al.load(log).events
    whole = conversations(events)
    monkeypatch.setattr(conv_mod, "PART_EVENTS", 1_000)
    monkeypatch.setattr(conv_mod, "SPLIT_ROWS", 2_500)  # the source read in 3 slices
    assert conv_mod._part_count(events.lazy()) > 3
    parted = conversations(events.lazy()).collect()
    assert whole.height > 500
    assert parted.equals(whole)
    window = {"since": int(events["event_ms"][100]), "until": int(events["event_ms"][4_000])}
    assert conversations(events.lazy(), **window).collect().equals(conversations(events, **window))
    # from a history store (the Parquet scan a2a-lab conversations STORE reads), split into
    # the per-part files in one pass: the same rows again
    store = tmp_path / "store"
    al.ingest(tmp_path, store)
    assert conversations(al.scan(store)).collect().equals(whole)


# ---- intents -----------------------------------------------------------------------------


def test_payload_type_wins_then_logged_intent_then_classifier() -> None:
    out = _table(
        ev(
            0,
            "a2a.send",
            "a",
            "b",
            "c1",
            message="분석해줘",
            payloadType="status_report",
            payloadJson='{"type":"status_report","taskId":"t","status":"completed"}',
        ),
        ev(1, "a2a.complete", "a", "b", "c1", messageIntent="request"),
        ev(2, "a2a.send", "a", "b", "c2", message="분석해줘"),
        ev(3, "a2a.complete", "a", "b", "c2", messageIntent="question"),
        ev(4, "a2a.send", "a", "b", "c3", message="분석해줘"),
    ).sort("start_time")
    assert out.select("intent", "intent_source").rows() == [
        ("result_report", "payload"),
        ("question", "logged"),
        ("request", "classifier"),
    ]


def _intent_cases() -> list[str]:
    cases = json.loads(
        (DATA / "runtime" / "a2a-intent-classifier.test-cases.json").read_text(encoding="utf-8")
    )
    out = []
    for case in cases["cases"]:
        msg = case.get("input", {}).get("message") if isinstance(case.get("input"), dict) else None
        if isinstance(msg, str):
            out.append(msg)
    return out


def test_intent_expr_matches_the_reference_classifier_on_fixture_messages() -> None:
    messages = _intent_cases()
    assert len(messages) >= 20
    got = (
        pl.DataFrame({"m": messages}, schema={"m": pl.String})
        .select(intent_expr(pl.col("m")))
        .to_series()
        .to_list()
    )
    assert got == [classify_intent(m).intent for m in messages]


_FRAGMENTS = [
    "[NO_REPLY_NEEDED]",
    "[notification]",
    "전달합니다",
    "[URGENT]",
    "[outcome]",
    "작업",
    "완료",
    "결과",
    "보고",
    "Completed",
    "DONE",
    "해줘",
    "부탁드",
    "논의",
    "의견",
    "줘",
    "let's discuss",
    "LETS DISCUSS",
    "Brainstorm",
    "?",
    "어떻게",
    "Can you",
    "please",
    "\n",
    "\r",
    "\u2028",
    " ",
    "K",
    "\u212a",
    "x",
]


_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _joined(parts: list[str], most: int) -> st.SearchStrategy[list[str]]:
    """Lists of texts, each a run of up to ``most`` of ``parts``."""
    text = st.lists(st.sampled_from(parts), max_size=most).map("".join)
    return st.lists(text, min_size=1, max_size=30)


def _through(expr: Callable[[pl.Expr], pl.Expr], texts: list[str]) -> list[object]:
    """What the Polars expression ``expr`` gives for each text, in order."""
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return frame.select(expr(pl.col("t"))).to_series().to_list()


@_PROPERTY
@given(_joined(_FRAGMENTS, 6))
def test_intent_expr_equals_classify_intent(messages: list[str]) -> None:
    assert _through(intent_expr, messages) == [classify_intent(m).intent for m in messages]


_OUTCOME_PARTS = [
    "[outcome]",
    " ",
    "no_reply",
    "blocked",
    ": ",
    ":",
    "메시지가 전달되었으나 응답을 수신하지 못했습니다",
    "응답을 받지 못했습니다",
    " (",
    "(",
    ")",
    "대기 시간 300초 초과",
    "실행 오류",
    "실행 상태를 찾을 수 없음",
    "rate limited",
    "\n",
    "\u3000",
    "success",
    "x",
]


@_PROPERTY
@given(_joined(_OUTCOME_PARTS, 8))
def test_outcome_text_expr_equals_parse_outcome_text(texts: list[str]) -> None:
    got = _through(outcome_text_expr, texts)
    want: list[object] = []
    for t in texts:
        p = parse_outcome_text(t)
        want.append(
            {"kind": None, "reason": None} if p is None else {"kind": p.kind, "reason": p.reason}
        )
    assert got == want


# ---- per pair ----------------------------------------------------------------------------


def test_pair_quantiles_equal_numpy() -> None:
    records = []
    lat = [3, 1, 7, 20, 5, 11, 2]
    for k, d in enumerate(lat):
        base = k * 100
        records += [
            ev(base, "a2a.send", "a", "b", f"c{k}"),
            ev(base + d, "a2a.response", "b", "a", f"c{k}"),
            ev(base + d + 1, "a2a.complete", "a", "b", f"c{k}"),
        ]
    records += [
        ev(900, "a2a.send", "a", "b", "cx"),
        ev(1200, "a2a.response", "b", "a", "cx", outcome="no_reply", waitStatus="timeout"),
        ev(1201, "a2a.complete", "a", "b", "cx"),
    ]
    stats = pair_stats(conversations(from_records(records))).row(0, named=True)
    seconds = np.array(lat, dtype=float)
    assert stats["exchanges"] == 8 and stats["no_reply"] == 1
    assert stats["p50_first_reply_s"] == pytest.approx(np.percentile(seconds, 50))
    assert stats["p95_first_reply_s"] == pytest.approx(np.percentile(seconds, 95))
    assert stats["p99_first_reply_s"] == pytest.approx(np.percentile(seconds, 99))
    assert stats["no_reply_rate"] == pytest.approx(1 / 8)
    by_target = target_stats(conversations(from_records(records)), by_hour=True)
    assert by_target["exchanges"].sum() == 8


# ---- payloads ----------------------------------------------------------------------------


def _q(i, frm, to, qid, kind="question", **extra):
    body = {
        "type": kind,
        "questionId": qid,
        **({"question": "왜?"} if kind == "question" else {"answer": "네"}),
        **extra,
    }
    return ev(
        i,
        "a2a.send",
        frm,
        to,
        f"c{i}",
        payloadType=kind,
        payloadJson=json.dumps(body, ensure_ascii=False),
    )


def test_questions_link_to_answers() -> None:
    events = from_records(
        [
            _q(0, "a", "b", "q1"),
            _q(5, "b", "a", "q1", kind="answer"),
            _q(7, "a", "c", "q2"),
            _q(9, "c", "a", "q3", kind="answer"),
        ]
    )
    qa = question_answers(payload_events(events))
    rows = {r["question_id"]: r for r in qa.iter_rows(named=True)}
    assert (
        rows["q1"]["answered"]
        and rows["q1"]["answer_latency_s"] == 5.0
        and rows["q1"]["answered_by"] == "b"
    )
    assert not rows["q2"]["answered"] and rows["q2"]["answers"] == 0
    assert rows["q3"]["asked_time"] is None and rows["q3"]["answers"] == 1


def _task(i, frm, to, task, kind, **extra):
    body = {"type": kind, "taskId": task, **extra}
    if kind == "task_delegation":
        body |= {"taskTitle": "t", "taskDescription": "d"}
    return ev(i, "a2a.send", frm, to, f"c{i}", payloadType=kind, payloadJson=json.dumps(body))


def test_delegations_link_to_reports_and_duplicates_are_flagged() -> None:
    events = from_records(
        [
            _task(0, "a", "b", "t1", "task_delegation"),
            _task(3, "a", "b", "t1", "task_delegation"),
            _task(5, "b", "a", "t1", "status_report", status="in_progress", progressPercent=40),
            _task(
                8,
                "b",
                "a",
                "t1",
                "status_report",
                status="blocked",
                progressPercent=60,
                blockers=["key"],
            ),
            _task(9, "a", "c", "t2", "task_delegation"),
            _task(10, "a", "c", "t3", "status_report", status="nope"),  # invalid: not linked
        ]
    )
    d = {r["task_id"]: r for r in delegation_reports(payload_events(events)).iter_rows(named=True)}
    assert d["t1"]["duplicate"] and d["t1"]["delegations"] == 2 and d["t1"]["reports"] == 2
    assert (d["t1"]["last_status"], d["t1"]["last_progress"], d["t1"]["blockers"]) == (
        "blocked",
        60.0,
        ["key"],
    )
    assert not d["t2"]["duplicate"] and d["t2"]["reports"] == 0
    assert "t3" not in d
