"""Early termination of the ping-pong (runtime §3; reference shouldTerminatePingPong)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_lab.reference.jsstr import js_trim, utf16_len
from a2a_lab.reference.runtime.termination import (
    TERMINATION_REASONS,
    TERMINATION_RULES_V1,
    TerminationResult,
    calculate_similarity,
    should_terminate_ping_pong,
)
from tests.support.runtime_cases import cases


def _cases(function: str) -> list[Any]:
    return cases("a2a-intent-classifier", function)


@pytest.mark.parametrize("case", _cases("shouldTerminatePingPong"))
def test_should_terminate_ping_pong_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    result = should_terminate_ping_pong(given["replyText"], given["previousReplies"])
    assert result.terminate == case["expect"]["terminate"]
    if "reason" in case["expect"]:
        assert result.reason == case["expect"]["reason"]
    derived = case.get("derived", {})
    if "reason" in derived:  # which check fired, read off the implementation
        assert result.reason == derived["reason"]
    if "result" in derived:
        assert result == TerminationResult(
            derived["result"]["terminate"], derived["result"]["reason"]
        )
    if "trimmed_length" in derived:
        assert utf16_len(js_trim(given["replyText"])) == derived["trimmed_length"]
    if "similarity_to_last" in derived:
        similarity = calculate_similarity(js_trim(given["replyText"]), given["previousReplies"][-1])
        assert similarity == derived["similarity_to_last"]


@pytest.mark.parametrize("case", _cases("calculateSimilarity"))
def test_calculate_similarity_cases(case: dict[str, Any]) -> None:
    result = calculate_similarity(case["input"]["a"], case["input"]["b"])
    if "result" in case["expect"]:
        assert result == case["expect"]["result"]
    if "result_greater_than" in case["expect"]:
        assert result > case["expect"]["result_greater_than"]
    if "result" in case.get("derived", {}):
        assert result == case["derived"]["result"]


def test_order_and_thresholds() -> None:
    # repetition is checked first, against the LAST previous reply only
    long_reply = "the deployment finished and every check passed on staging"
    assert should_terminate_ping_pong(long_reply, [long_reply, "other"]).terminate is False
    assert (
        should_terminate_ping_pong(long_reply, ["other", long_reply]).reason
        == "repetition_detected"
    )
    assert should_terminate_ping_pong("ok", ["ok"]).reason == "repetition_detected"
    # an empty last reply is skipped, not compared
    assert should_terminate_ping_pong("ok", ["ok", ""]).reason == "minimal_content"
    # minimal content: 20 UTF-16 units is enough, and an emoji counts twice
    assert should_terminate_ping_pong("x" * 19).reason == "minimal_content"
    assert should_terminate_ping_pong("x" * 20).terminate is False
    assert should_terminate_ping_pong("😀" * 10).terminate is False
    assert should_terminate_ping_pong("   short?   ").terminate is False
    # conclusion phrases only at the start, case-insensitive, with JavaScript white space
    assert (
        should_terminate_ping_pong("THANKS for all the detailed notes").reason
        == "conclusion_detected"
    )
    assert (
        should_terminate_ping_pong("네,\u3000이해했습니다. 바로 진행하겠습니다").reason
        == "conclusion_detected"
    )
    assert should_terminate_ping_pong("I understood the whole plan just fine").terminate is False
    assert (
        TERMINATION_RULES_V1.similarity_threshold == 0.85
        and TERMINATION_RULES_V1.min_content_length == 20
    )


def test_repetition_needs_strictly_more_than_085() -> None:
    previous = " ".join(f"word{i}" for i in range(20))
    at_threshold = " ".join(f"word{i}" for i in range(17))  # 17 shared / 20 in the union = 0.85
    above = " ".join(f"word{i}" for i in range(18))  # 18 / 20 = 0.9
    assert calculate_similarity(at_threshold, previous) == 0.85
    assert should_terminate_ping_pong(at_threshold, [previous]).terminate is False
    assert should_terminate_ping_pong(above, [previous]).reason == "repetition_detected"


def test_similarity_uses_javascript_white_space_and_lower_case() -> None:
    assert calculate_similarity("a\u3000b", "a b") == 1.0  # U+3000 separates words in JavaScript
    assert calculate_similarity("a\x1cb", "a b") == 0.0  # U+001C does not (Python's split would)
    assert calculate_similarity("ΟΔΟΣ", "\u03bf\u03b4\u03bf\u03c2") == 1.0  # final sigma ς
    assert calculate_similarity("ΟΔΟΣ", "\u03bf\u03b4\u03bf\u03c3") == 0.0


def test_every_reason_is_listed() -> None:
    assert {
        "repetition_detected",
        "minimal_content",
        "conclusion_detected",
        "explicit_skip",
    } <= set(TERMINATION_REASONS)
