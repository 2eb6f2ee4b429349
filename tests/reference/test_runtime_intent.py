"""Intent classifier, payload intents and the ping-pong turn budget (runtime §3)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_lab.reference.runtime.intent import (
    INTENT_RULES_V1,
    PING_PONG_LIMITS_0B3325A28,
    IntentResult,
    classify_intent,
    effective_turns,
    payload_intent,
    resolve_intent,
    resolve_ping_pong_turns,
)
from tests.support.runtime_cases import cases, load_doc


def _cases(function: str) -> list[Any]:
    return cases("a2a-intent-classifier", function)


def test_fixture_has_every_case() -> None:
    doc = load_doc("a2a-intent-classifier")
    assert len(doc["cases"]) == 49
    assert doc["skipped"] == []


@pytest.mark.parametrize("case", _cases("classifyMessageIntent"))
def test_classify_message_intent_cases(case: dict[str, Any]) -> None:
    result = classify_intent(case["input"]["message"])
    reference = {
        "intent": result.intent,
        "suggestedTurns": result.suggested_turns,
        "confidence": result.confidence,
    }
    for key, value in case["expect"].items():
        assert reference[key] == value
    assert reference == case["derived"]["result"]


@pytest.mark.parametrize("case", _cases("resolveEffectivePingPongTurns"))
def test_resolve_effective_ping_pong_turns_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    intent = given["classifiedIntent"]
    result = effective_turns(
        given["configMaxTurns"],
        IntentResult(intent["intent"], intent["suggestedTurns"], intent["confidence"]),
        skip_ping_pong=given["explicitSkipPingPong"],
    )
    assert result == case["expect"]["result"]


@pytest.mark.parametrize(
    ("message", "intent", "confidence"),
    [
        ("Is this right?", "question", 0.7),
        ("Is this right?\n", "collaboration", 0.5),  # JavaScript `$` is the very end only
        ("작업\n완료", "collaboration", 0.5),  # `.` does not cross a line break ...
        ("작업\u2028완료", "collaboration", 0.5),  # ... nor U+2028 (Python's `.` would)
        ("작업 다 완료", "result_report", 0.8),
        ("DONE", "result_report", 0.8),
        ("let's WORK TOGETHER", "collaboration", 0.8),
        ("wor\u212a together", "collaboration", 0.5),  # KELVIN SIGN is not folded onto "k"
        ("plea\u017fe", "collaboration", 0.5),  # nor LONG S onto "s" (Python's re would)
        ("PLEASE look", "question", 0.7),
        ("[urgent] now", "escalation", 1.0),
    ],
)
def test_classifier_uses_javascript_regex_semantics(
    message: str, intent: str, confidence: float
) -> None:
    result = classify_intent(message)
    assert (result.intent, result.confidence) == (intent, confidence)


def test_rules_are_data_an_analyst_can_change() -> None:
    assert [r.result.intent for r in INTENT_RULES_V1.rules] == [
        "notification",
        "escalation",
        "result_report",
        "request",
        "collaboration",
        "question",
    ]
    only_default = type(INTENT_RULES_V1)(rules=(), default=IntentResult("question", 2, 0.1))
    assert classify_intent("[URGENT]", only_default) == IntentResult("question", 2, 0.1)


@pytest.mark.parametrize(
    ("payload_type", "spec_turns"),
    [("task_delegation", -1), ("status_report", 1), ("question", 1), ("answer", 0)],
)
def test_payload_intents(payload_type: str, spec_turns: int) -> None:
    spec = payload_intent(payload_type)
    caller = payload_intent(payload_type, reference_caller=True)
    assert spec is not None and caller is not None
    assert spec.intent == caller.intent
    assert (spec.suggested_turns, spec.confidence) == (spec_turns, 1.0)
    assert (caller.suggested_turns, caller.confidence) == (-1, 1.0)


def test_a_payload_type_wins_over_the_classifier() -> None:
    assert payload_intent("memo") is None and payload_intent(None) is None
    assert resolve_intent("[URGENT] now", "answer").intent == "notification"
    assert resolve_intent("[URGENT] now", "memo").intent == "escalation"
    assert resolve_intent(None).intent == "collaboration"
    assert effective_turns(5, resolve_intent("fyi", "answer")) == 0
    assert effective_turns(5, resolve_intent("fyi", "answer", reference_caller=True)) == 5


@pytest.mark.parametrize(
    ("raw", "main", "old"),
    [
        (None, 5, 30),
        ("3", 5, 30),
        (True, 5, 30),
        (float("nan"), 5, 30),
        (float("inf"), 5, 30),
        (10**400, 5, 30),
        (3, 3, 3),
        (2.9, 2, 2),
        (-0.5, 0, 0),
        (12, 5, 12),
        (99, 5, 30),
    ],
)
def test_resolve_ping_pong_turns(raw: object, main: int, old: int) -> None:
    assert resolve_ping_pong_turns(raw) == main
    assert resolve_ping_pong_turns(raw, PING_PONG_LIMITS_0B3325A28) == old
