"""No-reply outcome texts and their reasons (runtime §2 step 3, §3b)."""

from __future__ import annotations

import pytest

from a2a_lab.reference.runtime.outcome import (
    LEGACY_NO_REPLY_TEXT,
    NO_REPLY_TEXT,
    OutcomeText,
    build_no_reply_outcome_message,
    no_reply_reason,
    parse_outcome_text,
)

_CASES = [
    # (waitStatus, waitError, max_wait_exceeded, suffix, reason)
    (None, "LLM request rejected", False, " (LLM request rejected)", "LLM request rejected"),
    (
        "error",
        "  context_length_exceeded ",
        False,
        " (context_length_exceeded)",
        "context_length_exceeded",
    ),
    ("not_found", None, False, " (실행 상태를 찾을 수 없음)", "not_found"),
    ("error", "   ", False, " (실행 오류)", "error"),  # a blank error does not count
    ("timeout", None, False, " (대기 시간 300초 초과)", "timeout"),
    ("weird", None, True, " (대기 시간 300초 초과)", "timeout"),
    (None, None, False, "", None),
    ("ok", "", False, "", None),
]


@pytest.mark.parametrize(("status", "error", "exceeded", "suffix", "reason"), _CASES)
@pytest.mark.parametrize("legacy", [False, True])
def test_message_reason_and_parse_agree(
    status: str | None,
    error: str | None,
    exceeded: bool,
    suffix: str,
    reason: str | None,
    legacy: bool,
) -> None:
    message = build_no_reply_outcome_message(
        status, error, max_wait_exceeded=exceeded, legacy=legacy
    )
    assert message == (LEGACY_NO_REPLY_TEXT if legacy else NO_REPLY_TEXT) + suffix
    assert no_reply_reason(status, error, max_wait_exceeded=exceeded) == reason
    assert parse_outcome_text(message) == OutcomeText("no_reply", reason)


def test_spec_examples() -> None:
    assert parse_outcome_text(
        "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 300초 초과)"
    ) == ("no_reply", "timeout")
    assert parse_outcome_text("[outcome] blocked: 응답을 받지 못했습니다") == ("no_reply", None)


def test_other_ceilings_and_truncated_previews() -> None:
    message = build_no_reply_outcome_message("timeout", None, max_wait_ms=120_500)
    assert (
        message.endswith("(대기 시간 120초 초과)")
        and parse_outcome_text(message).reason == "timeout"
    )
    long_error = "upstream said: " + "x" * 300
    preview = build_no_reply_outcome_message("error", long_error)[
        :200
    ]  # replyPreview is cut to 200
    parsed = parse_outcome_text(preview)
    assert (
        parsed is not None
        and parsed.kind == "no_reply"
        and long_error.startswith(parsed.reason or "-")
    )
    assert parse_outcome_text("[outcome] blocked: 응답을 받지 못했습니다 (a (nested) reason)") == (
        "no_reply",
        "a (nested) reason",
    )


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("[outcome] success", OutcomeText("success", None)),
        ("\u3000[outcome] blocked: concurrency limit", OutcomeText("blocked", "concurrency limit")),
        ("[outcome]   done:  all good\nnext line", OutcomeText("done", "all good\nnext line")),
        ("Result: [outcome] success", None),  # only at the start
        ("plain reply", None),
        ("", None),
        (None, None),
    ],
)
def test_other_outcome_texts(text: str | None, parsed: OutcomeText | None) -> None:
    assert parse_outcome_text(text) == parsed
