"""Session key → agent id and the A2A message context block (sessions-send-helpers)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_lab.reference.runtime.message_context import (
    agent_id_from_session_key,
    build_agent_to_agent_message_context,
    normalize_agent_id,
)
from tests.support.runtime_cases import every_case

# the 6 skipped need a mocked gateway
CASES = every_case("sessions-send-helpers.context", 3, skipped=6)


@pytest.mark.parametrize("case", CASES)
def test_build_agent_to_agent_message_context_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    result = build_agent_to_agent_message_context(
        given["targetSessionKey"],
        given.get("requesterSessionKey"),
        given.get("requesterChannel"),
        given.get("requesterContextSummary"),
    )
    for text in case["expect"].get("result_contains", []):
        assert text in result
    for text in case["expect"].get("result_not_contains", []):
        assert text not in result
    assert result == case["derived"]["result"]


@pytest.mark.parametrize(
    ("key", "agent"),
    [
        ("agent:Ruda:main", "ruda"),
        ("agent::ruda::main", "ruda"),  # empty segments are dropped
        ("  agent:eden:a2a:c-1 ", "eden"),
        ("agent:eden", "main"),  # no rest
        ("subagent:x:y", "main"),
        ("agent:Dev Team!:main", "dev-team"),
        ("agent:" + "a" * 70 + ":main", "a" * 64),
        ("agent:!!:main", "main"),
        (None, "main"),
    ],
)
def test_agent_id_from_session_key(key: str | None, agent: str) -> None:
    assert agent_id_from_session_key(key) == agent


def test_normalize_agent_id_is_path_safe() -> None:
    assert normalize_agent_id("-a_b-") == "a_b"
    assert normalize_agent_id("Ünïcode") == "n-code"
    assert normalize_agent_id("\u3000") == "main"
