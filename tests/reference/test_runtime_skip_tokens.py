"""REPLY_SKIP / ANNOUNCE_SKIP under both reference versions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_lab.reference.runtime.skip_tokens import is_announce_skip, is_reply_skip
from tests.support.paths import DATA

FIXTURE = DATA / "runtime" / "sessions-send-helpers.test-cases.json"
_FUNCTIONS = {"isReplySkip": is_reply_skip, "isAnnounceSkip": is_announce_skip}


def _cases() -> list[Any]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert len(doc["cases"]) == 15 and doc["skipped"] == []
    return [pytest.param(c, id=f"{c['function']}: {c['name']} [{c['part']}]") for c in doc["cases"]]


@pytest.mark.parametrize("case", _cases())
def test_skip_token_cases_at_0b3325a28(case: dict[str, Any]) -> None:
    assert _FUNCTIONS[case["function"]](case["input"]["text"]) is case["expect"]["result"]


@pytest.mark.parametrize("case", _cases())
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
