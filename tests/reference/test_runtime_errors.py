"""Error classes of a wait (runtime §4; reference classifyA2AError)."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_lab.reference.runtime.errors import ErrorCategory, classify_error
from tests.support.runtime_cases import cases, load_doc


def _cases(function: str) -> list[Any]:
    return cases("a2a-error-classification", function)


def test_fixture_has_every_case() -> None:
    doc = load_doc("a2a-error-classification")
    assert len(doc["cases"]) == 25 and doc["skipped"] == []
    assert len(_cases("classifyA2AError")) == 21


@pytest.mark.parametrize("case", _cases("classifyA2AError"))
def test_classify_a2a_error_cases(case: dict[str, Any]) -> None:
    given = case["input"]
    error = RuntimeError(given["message"]) if given["kind"] == "Error" else given["value"]
    info = classify_error(error)
    result = {
        "category": info.category.value,
        "code": info.code,
        "reason": info.reason,
        "retriable": info.retriable,
    }
    for key, value in case["expect"].items():
        assert result[key] == value
    assert result == case["derived"]["result"]


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        ({"status": "error"}, "error_unknown", "unknown error"),
        ({"status": "error", "error": "Rate-Limit hit"}, "rate_limit", "Rate-Limit hit"),
        (
            {"status": "error", "error": "Prompt is TOO LONG"},
            "context_exceeded",
            "Prompt is TOO LONG",
        ),
        ({"status": "error", "error": "HTTP 529"}, "server_overload", "HTTP 529"),
        (
            {"status": "error", "error": "Permission denied"},
            "request_rejected",
            "Permission denied",
        ),
        (
            {"status": "error", "error": "429 but also invalid"},
            "rate_limit",
            "429 but also invalid",
        ),  # order
        (
            {"status": "error", "error": "not\u2028found"},
            "error_unknown",
            "not\u2028found",
        ),  # JS `.`
        (
            {"status": "error", "error": 503},
            "error_unknown",
            "unknown error",
        ),  # not a string: absent
        ({}, "unexpected_status", "unexpected status: undefined"),
        ({"status": None}, "unexpected_status", "unexpected status: null"),
        ({"status": "OK"}, "unexpected_status", "unexpected status: OK"),
    ],
)
def test_wait_responses(error: dict[str, Any], code: str, reason: str) -> None:
    info = classify_error(error)
    assert (info.code, info.reason) == (code, reason)


def test_exceptions() -> None:
    assert classify_error(TimeoutError("Request TIMEOUT")).category is ErrorCategory.TRANSIENT
    assert classify_error(PermissionError("HTTP 403")).code == "auth_failure"
    assert classify_error(ValueError("dns and 401")).code == "gateway_connection"  # first rule wins
    unknown = classify_error(KeyboardInterrupt())
    assert (unknown.code, unknown.reason, unknown.retriable) == ("gateway_unknown", "", True)
