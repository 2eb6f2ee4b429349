"""The announce decision (reference shouldRunAnnounce)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_lab.reference.runtime.announce import (
    AnnounceTarget,
    is_agent_session_key,
    should_run_announce,
)

FIXTURE = Path(__file__).parent / "data" / "runtime" / "a2a-intent-classifier.test-cases.json"


def _cases(function: str) -> list[Any]:
    doc = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["name"]) for c in doc["cases"] if c["function"] == function]


@pytest.mark.parametrize("case", _cases("shouldRunAnnounce"))
def test_should_run_announce_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    target = given["announceTarget"]
    result = should_run_announce(
        AnnounceTarget(**target) if target is not None else None,
        given.get("latestReply"),
        given.get("requesterSessionKey"),
        given.get("targetSessionKey"),
    )
    assert result is case["expect"]["result"]


@pytest.mark.parametrize(
    ("requester", "target", "announce"),
    [
        ("agent:ruda:main", "agent:eden:a2a:c-1", False),
        ("AGENT:ruda:SUBAGENT:x", "agent:eden:main", False),
        ("agent:ruda:main", "agent:eden:discord:group:1", True),
        ("agent:ruda:main", None, True),  # both keys are needed to call it internal
        ("agent:ruda:mainline", "agent:eden:main", False),  # the reference regex is a prefix test
        ("agent::main", "agent:eden:main", True),
    ],
)
def test_internal_exchanges_are_not_announced(
    requester: str, target: str | None, announce: bool
) -> None:
    assert (
        should_run_announce(AnnounceTarget("discord", "1"), "Done.", requester, target) is announce
    )


def test_blank_reply_uses_javascript_trim() -> None:
    target = AnnounceTarget("discord", "1")
    assert should_run_announce(target, "\ufeff\u3000") is False
    assert should_run_announce(target, "\x1c") is True  # not white space in JavaScript
    assert is_agent_session_key("agent:a:main") and not is_agent_session_key(" agent:a:main")
