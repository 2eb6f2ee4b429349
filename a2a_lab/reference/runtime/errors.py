"""Error classes of an A2A wait (runtime §4; reference ``classifyA2AError``).

The requester waits for the target's run with ``agent.wait``; a failure is either an
exception from the gateway call (connection level) or a wait response ``{status, error}``.
Each is classified into a category (``transient``, ``permanent``, ``unknown``), a code and
whether it is retried. The keyword lists and their order are the data in
:data:`EXCEPTION_RULES` and :data:`WAIT_ERROR_RULES`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from a2a_lab.reference.runtime.js import JS_DOT, PatternRule, first_match, js_string


class ErrorCategory(StrEnum):
    """Reference ``A2AErrorCategory``."""

    TRANSIENT = "transient"
    PERMANENT = "permanent"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One classified error (reference ``A2AErrorInfo``)."""

    category: ErrorCategory
    code: str
    reason: str
    retriable: bool


#: A failure whose lower-cased message matches the pattern gets this class; for a wait
#: response without an error text, the result's ``reason`` is what the reference writes.
ErrorRule = PatternRule[ErrorInfo]


def _rule(
    source: str, category: ErrorCategory, code: str, retriable: bool, reason: str = ""
) -> ErrorRule:
    """Compile a reference pattern; its ``.`` (only ever in ``.?``) becomes :data:`JS_DOT`.

    The reference matches with the ``i`` flag on the already lower-cased message, so the
    lower-case ASCII patterns need no flag here.
    """
    pattern = re.compile(source.replace(".?", JS_DOT + "?"))
    return PatternRule(pattern, ErrorInfo(category, code, reason, retriable))


#: Connection-level exceptions, first match wins; anything else is ``unknown/gateway_unknown``.
#: The reference tests ``message.includes(needle)`` for each needle of a rule.
EXCEPTION_RULES: Final[tuple[ErrorRule, ...]] = tuple(
    _rule("|".join(map(re.escape, needles)), category, code, retriable)
    for needles, category, code, retriable in (
        (
            ("timeout", "econnreset", "socket hang up", "econnrefused", "dns", "fetch failed"),
            ErrorCategory.TRANSIENT,
            "gateway_connection",
            True,
        ),
        (
            ("unauthorized", "forbidden", "401", "403"),
            ErrorCategory.PERMANENT,
            "auth_failure",
            False,
        ),
    )
)


#: ``status: "error"`` responses, first match wins; else ``unknown/error_unknown``.
WAIT_ERROR_RULES: Final[tuple[ErrorRule, ...]] = (
    _rule(
        "rate.?limit|429|too many requests",
        ErrorCategory.TRANSIENT,
        "rate_limit",
        True,
        "rate limit",
    ),
    _rule(
        "context.?length|token.?limit|too.?long|maximum.?context",
        ErrorCategory.PERMANENT,
        "context_exceeded",
        False,
        "context exceeded",
    ),
    _rule(
        "overload|529|capacity|server.?error|500|502|503",
        ErrorCategory.TRANSIENT,
        "server_overload",
        True,
        "server overload",
    ),
    _rule(
        "not.?found|invalid|denied|forbidden",
        ErrorCategory.PERMANENT,
        "request_rejected",
        False,
        "request rejected",
    ),
)


def classify_error(error: BaseException | Mapping[str, object]) -> ErrorInfo:
    """Classify a wait failure like the reference ``classifyA2AError``.

    Parameters
    ----------
    error
        An exception raised by the gateway call (its ``str()`` is the message), or an
        ``agent.wait`` response mapping with ``status`` and optional ``error``. A value that
        is not a string counts as absent.

    Returns
    -------
    ErrorInfo
        For an exception: ``transient/gateway_connection`` (retried), ``permanent/
        auth_failure``, else ``unknown/gateway_unknown`` (retried). For a response by
        status: ``ok`` (not an error, not retried), ``not_found`` → ``permanent/
        run_not_found``, ``error`` → by the message (:data:`WAIT_ERROR_RULES`, else
        ``unknown/error_unknown``), ``timeout`` → ``transient/wait_chunk_timeout`` (the wait
        loop just waits another chunk), anything else → ``unknown/unexpected_status``.

    Examples
    --------
    >>> classify_error(ConnectionError("read ECONNRESET")).code
    'gateway_connection'
    >>> info = classify_error({"status": "error", "error": "429 Too Many Requests"})
    >>> info.category, info.code, info.reason, info.retriable
    (<ErrorCategory.TRANSIENT: 'transient'>, 'rate_limit', '429 Too Many Requests', True)
    >>> classify_error({"status": "weird"}).reason
    'unexpected status: weird'
    """
    if isinstance(error, BaseException):
        message = str(error)
        lowered = message.lower()
        found = first_match(EXCEPTION_RULES, lowered)
        if found is not None:
            return replace(found, reason=message)
        return ErrorInfo(ErrorCategory.UNKNOWN, "gateway_unknown", message, True)

    status = error.get("status")
    raw_error = error.get("error")
    error_text = raw_error if isinstance(raw_error, str) else None
    if status == "ok":
        return ErrorInfo(ErrorCategory.TRANSIENT, "ok", "not an error", False)
    if status == "not_found":
        return ErrorInfo(
            ErrorCategory.PERMANENT, "run_not_found", "run ID not found on gateway", False
        )
    if status == "error":
        lowered = (error_text or "").lower()
        found = first_match(WAIT_ERROR_RULES, lowered)
        if found is not None:
            return found if error_text is None else replace(found, reason=error_text)
        reason = error_text if error_text is not None else "unknown error"
        return ErrorInfo(ErrorCategory.UNKNOWN, "error_unknown", reason, True)
    if status == "timeout":
        reason = "agent.wait chunk timeout (agent still running)"
        return ErrorInfo(ErrorCategory.TRANSIENT, "wait_chunk_timeout", reason, True)
    shown = js_string(status) if "status" in error else "undefined"
    return ErrorInfo(
        ErrorCategory.UNKNOWN, "unexpected_status", f"unexpected status: {shown}", True
    )
