"""REPLY_SKIP / ANNOUNCE_SKIP under both reference versions."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_lab.reference.runtime.skip_tokens import is_announce_skip, is_reply_skip
from tests.support.runtime_cases import every_case

_FUNCTIONS = {"isReplySkip": is_reply_skip, "isAnnounceSkip": is_announce_skip}
CASES = every_case(
    "sessions-send-helpers", 15, label=lambda c: f"{c['function']}: {c['name']} [{c['part']}]"
)


@pytest.mark.parametrize("case", CASES)
def test_skip_token_cases_at_0b3325a28(case: dict[str, Any]) -> None:
    assert _FUNCTIONS[case["function"]](case["input"]["text"]) is case["expect"]["result"]


@pytest.mark.parametrize("case", CASES)
def test_skip_token_cases_with_the_main_rule(case: dict[str, Any]) -> None:
    result = _FUNCTIONS[case["function"]](case["input"]["text"], mode="main")
    assert result is case["derived"]["result_with_main_implementation"]


@pytest.mark.parametrize(
    ("text", "old", "main"),
    [
        ("\u3000REPLY_SKIP\ufeff", True, True),  # JavaScript trim
        ("REPLY_SKIP\x1c", False, False),  # U+001C is not white space in JavaScript
        ("REPLY_SKIP\nthanks", False, False),  # only "." or a space may follow
        ("REPLY_SKIP..", True, False),
        ("reply_ſkip", True, False),  # toUpperCase maps ſ to S in both languages
    ],
)
def test_skip_token_edges(text: str, old: bool, main: bool) -> None:
    assert is_reply_skip(text) is old
    assert is_reply_skip(text, mode="main") is main
