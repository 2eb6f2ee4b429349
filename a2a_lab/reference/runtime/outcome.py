"""No-reply outcome texts (runtime §2 step 3, §3b; reference ``buildNoReplyOutcomeMessage``).

When the target never replies, the reference writes an ``a2a.response`` whose ``message``
(and ``replyPreview``) is an ``[outcome]`` sentence with the reason appended in parentheses,
checked in order: the wait error; ``waitStatus`` ``not_found``; ``waitStatus`` ``error``; the
300 s ceiling exceeded or ``waitStatus`` ``timeout``; else nothing. Today's wording is
``[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다``; older logs carry
``[outcome] blocked: 응답을 받지 못했습니다`` (with ``outcome: "blocked"``).

Reasons use one vocabulary whether they come from the event's fields
(:func:`no_reply_reason`) or from its text (:func:`parse_outcome_text`): the trimmed wait
error itself, or ``"not_found"``, ``"error"``, ``"timeout"``, or None.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Final, NamedTuple

from a2a_lab.reference.jsstr import js_trim

#: Today's no-reply sentence.
NO_REPLY_TEXT: Final = "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다"
#: The older wording of the same outcome.
LEGACY_NO_REPLY_TEXT: Final = "[outcome] blocked: 응답을 받지 못했습니다"

#: The parenthesised text the reference appends for each ``waitStatus`` reason.
REASON_TEXTS: Final = MappingProxyType(
    {"not_found": "실행 상태를 찾을 수 없음", "error": "실행 오류"}
)


def timeout_reason_text(max_wait_ms: float = 300_000) -> str:
    """The appended text for an exceeded wait (``대기 시간 300초 초과`` by default)."""
    return f"대기 시간 {math.floor(max_wait_ms / 1000)}초 초과"


_TIMEOUT_TEXT: Final = re.compile(r"대기 시간 \d+초 초과")
# `[outcome] <kind>[: <rest>]`; the rest may span lines
_OUTCOME: Final = re.compile(r"\[outcome\][ \t]*([^\s:]+)[ \t]*(?::[ \t]*(.*))?", re.DOTALL)
# `(<reason>)` at the end; the closing parenthesis is missing when a preview cut it off
_SUFFIX: Final = re.compile(r"\((.*?)\)?", re.DOTALL)


def no_reply_reason(
    wait_status: str | None,
    wait_error: str | None,
    *,
    max_wait_exceeded: bool = False,
) -> str | None:
    """The reason of a no-reply outcome from the event's ``waitStatus`` / ``waitError``.

    Same order as the reference's outcome text: a non-blank wait error (trimmed), then
    ``not_found``, ``error``, then ``timeout`` (status ``timeout`` or the ceiling exceeded).

    Examples
    --------
    >>> no_reply_reason("error", "  LLM request rejected "), no_reply_reason("not_found", None)
    ('LLM request rejected', 'not_found')
    >>> no_reply_reason(None, None, max_wait_exceeded=True), no_reply_reason("ok", "")
    ('timeout', None)
    """
    error = js_trim(wait_error) if isinstance(wait_error, str) else ""
    if error:
        return error
    if wait_status in REASON_TEXTS:
        return wait_status
    if max_wait_exceeded or wait_status == "timeout":
        return "timeout"
    return None


def build_no_reply_outcome_message(
    wait_status: str | None,
    wait_error: str | None,
    *,
    max_wait_exceeded: bool = False,
    max_wait_ms: float = 300_000,
    legacy: bool = False,
) -> str:
    """The ``message`` of a no-reply ``a2a.response`` (reference ``buildNoReplyOutcomeMessage``).

    Parameters
    ----------
    wait_status, wait_error
        The last ``agent.wait`` status and error.
    max_wait_exceeded
        Whether the total wait reached its ceiling.
    max_wait_ms
        The ceiling, printed in whole seconds.
    legacy
        Use the older ``[outcome] blocked: …`` wording.

    Examples
    --------
    >>> build_no_reply_outcome_message("timeout", None)
    '[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 300초 초과)'
    >>> build_no_reply_outcome_message("error", None, legacy=True)
    '[outcome] blocked: 응답을 받지 못했습니다 (실행 오류)'
    """
    head = LEGACY_NO_REPLY_TEXT if legacy else NO_REPLY_TEXT
    error = js_trim(wait_error) if isinstance(wait_error, str) else ""
    if error:
        suffix = error
    elif wait_status is not None and wait_status in REASON_TEXTS:
        suffix = REASON_TEXTS[wait_status]
    elif max_wait_exceeded or wait_status == "timeout":
        suffix = timeout_reason_text(max_wait_ms)
    else:
        return head
    return f"{head} ({suffix})"


class OutcomeText(NamedTuple):
    """An ``[outcome] …`` text, parsed: its kind and the reason (vocabulary above)."""

    kind: str
    reason: str | None


# (kind, sentence) after `[outcome] `: today's and the older wording of "no reply"
_NO_REPLY_SENTENCES: Final = tuple(
    tuple(t.removeprefix("[outcome] ").split(": ", 1))
    for t in (NO_REPLY_TEXT, LEGACY_NO_REPLY_TEXT)
)


def _reason_of(suffix: str) -> str | None:
    """The reason in a ``(…)`` suffix (None when there is none)."""
    match = _SUFFIX.fullmatch(js_trim(suffix))
    if match is None:
        return None
    text = js_trim(match.group(1))
    if _TIMEOUT_TEXT.fullmatch(text):
        return "timeout"
    for reason, reason_text in REASON_TEXTS.items():
        if text == reason_text:
            return reason
    return text or None


def parse_outcome_text(text: str | None) -> OutcomeText | None:
    """Parse an ``[outcome] …`` text from a ``message`` or ``replyPreview`` (runtime §3b).

    Parameters
    ----------
    text
        The field's value.

    Returns
    -------
    OutcomeText or None
        None when the (JavaScript-trimmed) text does not start with ``[outcome]``. Today's
        no-reply sentence and the older ``blocked: 응답을 받지 못했습니다`` both give kind
        ``"no_reply"`` with the reason from the parenthesised suffix: ``"timeout"``
        (``대기 시간 N초 초과``), ``"not_found"``, ``"error"``, else the wait error text
        (cut short if a preview truncated it), or None without a suffix. Any other
        ``[outcome] <kind>: <rest>`` gives ``<kind>`` and the rest (None when empty).

    Examples
    --------
    >>> parse_outcome_text("[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 300초 초과)")
    OutcomeText(kind='no_reply', reason='timeout')
    >>> parse_outcome_text("[outcome] blocked: 응답을 받지 못했습니다")
    OutcomeText(kind='no_reply', reason=None)
    >>> parse_outcome_text("[outcome] blocked: 응답을 받지 못했습니다 (LLM request rejected)")
    OutcomeText(kind='no_reply', reason='LLM request rejected')
    >>> parse_outcome_text("[outcome] success"), parse_outcome_text("hello")
    (OutcomeText(kind='success', reason=None), None)
    """
    if not isinstance(text, str):
        return None
    match = _OUTCOME.match(js_trim(text))
    if match is None:
        return None
    kind, rest = match.group(1), match.group(2) or ""
    for sentence_kind, sentence in _NO_REPLY_SENTENCES:
        if kind == sentence_kind and rest.startswith(sentence):
            return OutcomeText("no_reply", _reason_of(rest[len(sentence) :]))
    return OutcomeText(kind, js_trim(rest) or None)
