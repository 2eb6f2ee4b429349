"""Message intent and ping-pong turn budget (runtime §3; reference ``a2a-intent-classifier.ts``).

The reference classifies the first message of an exchange with an ordered list of regexes
(first match wins) into an intent with a suggested number of ping-pong turns
(``-1`` = the configured maximum, ``0`` = none) and a confidence; a structured payload's type
replaces the classifier (``mapPayloadTypeToMessageIntent``). The effective number of turns is
then bounded by the configured maximum, itself read from the configuration by
``resolvePingPongTurns`` (floor, clamp to ``[0, max]``, default when not a finite number).

All of it is data: :data:`INTENT_RULES_V1` (patterns, turns, confidences),
:data:`PAYLOAD_INTENTS` and the two :class:`PingPongLimits` of the reference's versions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from a2a_lab.reference.runtime.js import (
    JS_DOT,
    JS_FLAGS_I,
    PatternRule,
    first_match,
    is_finite_js_number,
)

Intent = Literal[
    "notification", "escalation", "result_report", "request", "collaboration", "question"
]


@dataclass(frozen=True, slots=True)
class IntentResult:
    """The classification of one message.

    Attributes
    ----------
    intent
        One of ``notification``, ``escalation``, ``result_report``, ``request``,
        ``collaboration``, ``question``.
    suggested_turns
        Ping-pong turns the intent asks for: ``-1`` = the configured maximum, ``0`` = none.
    confidence
        The reference's fixed confidence for the rule that matched.
    """

    intent: Intent
    suggested_turns: int
    confidence: float


#: One classifier rule: if ``pattern`` is found in the message, the result is ``result``.
IntentRule = PatternRule[IntentResult]


@dataclass(frozen=True, slots=True)
class IntentRules:
    """An ordered rule list (first match wins) and the result when nothing matches."""

    rules: tuple[IntentRule, ...]
    default: IntentResult


def _rule(source: str, intent: Intent, turns: int, confidence: float) -> IntentRule:
    """Compile one rule written as the reference regex.

    The reference patterns use ``.`` only in ``.*``, which becomes :data:`JS_DOT` ``*`` so
    that, as in JavaScript, it does not cross a CR, U+2028 or U+2029 either.
    """
    return PatternRule(
        re.compile(source.replace(".*", JS_DOT + "*"), JS_FLAGS_I),
        IntentResult(intent, turns, confidence),
    )


#: The reference classifier (identical at ``main`` and ``0b3325a28``). Patterns are the
#: reference's, with JavaScript's ``.`` and ``$`` spelled for Python (``\Z``: JavaScript's
#: ``$`` without the ``m`` flag matches only at the very end).
INTENT_RULES_V1: Final[IntentRules] = IntentRules(
    rules=(
        _rule(
            r"\[NO_REPLY_NEEDED\]|\[NOTIFICATION\]|전달합니다|공유합니다|알림:",
            "notification",
            0,
            1.0,
        ),
        _rule(r"\[URGENT\]|\[ESCALATION\]", "escalation", 0, 1.0),
        _rule(
            r"\[outcome\]|\[result\]|작업.*완료|결과.*보고|분석.*결과|completed|finished|done",
            "result_report",
            1,
            0.8,
        ),
        _rule(
            "해줘|해주세요|해줄래|봐줘|봐주세요|처리해|부탁해|부탁드|진행해줘|작성해줘|분석해줘"
            "|검토해줘|수정해줘|생성해줘|만들어줘|보내줘|알아봐줘",
            "request",
            3,
            0.75,
        ),
        _rule(
            "논의|토론|설계하자|같이|함께|의견.*줘|의견.*들려|의견.*말해|피드백|리뷰|검토|합의|조율"
            "|상의|브레인스토밍|let'?s discuss|review together|brainstorm|collaborate"
            "|work together|let'?s figure out|what do you think",
            "collaboration",
            -1,
            0.8,
        ),
        _rule(r"\?\Z|어떻게|어디에|뭐가|알려줘|can you|could you|please", "question", 1, 0.7),
    ),
    default=IntentResult("collaboration", -1, 0.5),
)


def classify_intent(message: str, rules: IntentRules = INTENT_RULES_V1) -> IntentResult:
    """Classify a message like the reference ``classifyMessageIntent``.

    Parameters
    ----------
    message
        The message text (the reference classifies the original ``sessions_send`` message).
    rules
        The rule set; :data:`INTENT_RULES_V1` is the reference's.

    Returns
    -------
    IntentResult
        The result of the first rule whose pattern occurs in the message (case-insensitive),
        else ``rules.default``.

    Examples
    --------
    >>> classify_intent("Task done [NO_REPLY_NEEDED]")
    IntentResult(intent='notification', suggested_turns=0, confidence=1.0)
    >>> classify_intent("이 코드 검토해줘").intent  # request is checked before collaboration
    'request'
    >>> classify_intent("Is this right?\\n").intent  # JavaScript's `?$` needs the very end
    'collaboration'
    """
    found = first_match(rules.rules, message)
    return rules.default if found is None else found


#: Payload type → intent (reference ``mapPayloadTypeToMessageIntent``).
PAYLOAD_INTENTS: Final[MappingProxyType[str, Intent]] = MappingProxyType(
    {
        "task_delegation": "collaboration",
        "status_report": "result_report",
        "question": "question",
        "answer": "notification",
    }
)

#: Suggested turns of each intent a payload maps to (runtime §3).
_INTENT_TURNS: Final = MappingProxyType(
    {"collaboration": -1, "result_report": 1, "question": 1, "notification": 0}
)


def payload_intent(
    payload_type: str | None, *, reference_caller: bool = False
) -> IntentResult | None:
    """The intent a structured payload's type stands for, replacing the classifier.

    Parameters
    ----------
    payload_type
        ``task_delegation``, ``status_report``, ``question`` or ``answer``.
    reference_caller
        False (default): the intent's own suggested turns, as runtime §3 states them
        (task_delegation -1, status_report 1, question 1, answer 0). True: what the
        ``0b3325a28`` caller actually does, ``suggestedTurns = -1`` for every payload, so an
        ``answer`` still runs the configured number of turns.

    Returns
    -------
    IntentResult or None
        With confidence 1.0 (the type is explicit); None for any other ``payload_type``.

    Examples
    --------
    >>> payload_intent("answer")
    IntentResult(intent='notification', suggested_turns=0, confidence=1.0)
    >>> payload_intent("answer", reference_caller=True).suggested_turns
    -1
    """
    intent = PAYLOAD_INTENTS.get(payload_type) if isinstance(payload_type, str) else None
    if intent is None:
        return None
    return IntentResult(intent, -1 if reference_caller else _INTENT_TURNS[intent], 1.0)


def resolve_intent(
    message: str | None,
    payload_type: str | None = None,
    *,
    rules: IntentRules = INTENT_RULES_V1,
    reference_caller: bool = False,
) -> IntentResult:
    """The intent of an exchange: a known payload type wins, else the message classifier.

    Examples
    --------
    >>> resolve_intent("분석해줘", "status_report").intent
    'result_report'
    >>> resolve_intent("분석해줘").intent
    'request'
    """
    from_payload = payload_intent(payload_type, reference_caller=reference_caller)
    return from_payload if from_payload is not None else classify_intent(message or "", rules)


def effective_turns(
    configured_max_turns: int, intent: IntentResult, *, skip_ping_pong: bool = False
) -> int:
    """The ping-pong turns to run (reference ``resolveEffectivePingPongTurns``).

    Parameters
    ----------
    configured_max_turns
        The configured maximum (see :func:`resolve_ping_pong_turns`).
    intent
        The exchange's intent.
    skip_ping_pong
        The caller's explicit ``skipPingPong``.

    Returns
    -------
    int
        0 when skipped or when the intent suggests 0; the configured maximum when it
        suggests -1; else ``min(suggested, configured maximum)``.

    Examples
    --------
    >>> effective_turns(5, IntentResult("question", 1, 0.7))
    1
    >>> effective_turns(7, IntentResult("collaboration", -1, 0.5))
    7
    """
    if skip_ping_pong or intent.suggested_turns == 0:
        return 0
    if intent.suggested_turns == -1:
        return configured_max_turns
    return min(intent.suggested_turns, configured_max_turns)


@dataclass(frozen=True, slots=True)
class PingPongLimits:
    """Default and hard maximum of ``maxPingPongTurns`` in one version of the reference."""

    default: int
    maximum: int


#: ``main`` (and the runtime spec): default 5, hard maximum 5.
PING_PONG_LIMITS_MAIN: Final = PingPongLimits(default=5, maximum=5)
#: Commit ``0b3325a28``: default 30, hard maximum 30.
PING_PONG_LIMITS_0B3325A28: Final = PingPongLimits(default=30, maximum=30)


def resolve_ping_pong_turns(raw: object, limits: PingPongLimits = PING_PONG_LIMITS_MAIN) -> int:
    """The configured ``maxPingPongTurns`` as the reference reads it (``resolvePingPongTurns``).

    Parameters
    ----------
    raw
        ``session.agentToAgent.maxPingPongTurns`` from the configuration (any JSON value).
    limits
        The version's default and hard maximum.

    Returns
    -------
    int
        ``limits.default`` unless ``raw`` is a finite number (not a bool); else
        ``floor(raw)`` clamped to ``[0, limits.maximum]``.

    Examples
    --------
    >>> resolve_ping_pong_turns(3.9), resolve_ping_pong_turns(99), resolve_ping_pong_turns(-2)
    (3, 5, 0)
    >>> resolve_ping_pong_turns("4"), resolve_ping_pong_turns(None), resolve_ping_pong_turns(True)
    (5, 5, 5)
    >>> resolve_ping_pong_turns(12, PING_PONG_LIMITS_0B3325A28)
    12
    """
    if not is_finite_js_number(raw):
        return limits.default
    return max(0, min(limits.maximum, math.floor(raw)))
