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
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from a2a_lab.reference.runtime._js import JS_DOT, js_string


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


@dataclass(frozen=True, slots=True)
class ExceptionRule:
    """An exception whose lower-cased message contains any of ``needles`` gets this class."""

    needles: tuple[str, ...]
    category: ErrorCategory
    code: str
    retriable: bool


@dataclass(frozen=True, slots=True)
class WaitErrorRule:
    """A ``status: "error"`` response whose lower-cased error matches ``pattern``."""

    pattern: re.Pattern[str]
    category: ErrorCategory
    code: str
    retriable: bool
    fallback_reason: str


#: Connection-level exceptions, first match wins; anything else is ``unknown/gateway_unknown``.
EXCEPTION_RULES: Final[tuple[ExceptionRule, ...]] = (
    ExceptionRule(
        ("timeout", "econnreset", "socket hang up", "econnrefused", "dns", "fetch failed"),
        ErrorCategory.TRANSIENT,
        "gateway_connection",
        True,
    ),
    ExceptionRule(
        ("unauthorized", "forbidden", "401", "403"), ErrorCategory.PERMANENT, "auth_failure", False
    ),
)


def _wait_rule(
    source: str, category: ErrorCategory, code: str, retriable: bool, fallback: str
) -> WaitErrorRule:
    """Compile a reference pattern; its ``.`` (only ever in ``.?``) becomes :data:`JS_DOT`.

    The reference matches with the ``i`` flag on the already lower-cased message, so the
    lower-case ASCII patterns need no flag here.
    """
    pattern = re.compile(source.replace(".?", JS_DOT + "?"))
    return WaitErrorRule(pattern, category, code, retriable, fallback)


#: ``status: "error"`` responses, first match wins; else ``unknown/error_unknown``.
WAIT_ERROR_RULES: Final[tuple[WaitErrorRule, ...]] = (
    _wait_rule(
        "rate.?limit|429|too many requests",
        ErrorCategory.TRANSIENT,
        "rate_limit",
        True,
        "rate limit",
    ),
    _wait_rule(
        "context.?length|token.?limit|too.?long|maximum.?context",
        ErrorCategory.PERMANENT,
        "context_exceeded",
        False,
        "context exceeded",
    ),
    _wait_rule(
        "overload|529|capacity|server.?error|500|502|503",
        ErrorCategory.TRANSIENT,
        "server_overload",
        True,
        "server overload",
    ),
    _wait_rule(
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
        for rule in EXCEPTION_RULES:
            if any(needle in lowered for needle in rule.needles):
                return ErrorInfo(rule.category, rule.code, message, rule.retriable)
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
        for wait_rule in WAIT_ERROR_RULES:
            if wait_rule.pattern.search(lowered):
                reason = error_text if error_text is not None else wait_rule.fallback_reason
                return ErrorInfo(wait_rule.category, wait_rule.code, reason, wait_rule.retriable)
        reason = error_text if error_text is not None else "unknown error"
        return ErrorInfo(ErrorCategory.UNKNOWN, "error_unknown", reason, True)
    if status == "timeout":
        reason = "agent.wait chunk timeout (agent still running)"
        return ErrorInfo(ErrorCategory.TRANSIENT, "wait_chunk_timeout", reason, True)
    shown = js_string(status) if "status" in error else "undefined"
    return ErrorInfo(
        ErrorCategory.UNKNOWN, "unexpected_status", f"unexpected status: {shown}", True
    )
