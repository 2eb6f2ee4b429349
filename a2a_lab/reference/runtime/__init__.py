"""Pure rules of the reference A2A runtime (spec: a2a-runtime.md; tests: conformance/runtime).

One module per concept, each a port of the reference function it names, with its rule set
as module-level frozen data an analyst can copy and change:

- :mod:`~a2a_lab.reference.runtime.intent`: message intent, payload intents, effective ping-pong turns;
- :mod:`~a2a_lab.reference.runtime.termination`: early termination of the ping-pong;
- :mod:`~a2a_lab.reference.runtime.announce`: whether the announce step runs;
- :mod:`~a2a_lab.reference.runtime.skip_tokens`: ``REPLY_SKIP`` / ``ANNOUNCE_SKIP``;
- :mod:`~a2a_lab.reference.runtime.errors`: error classes of a wait;
- :mod:`~a2a_lab.reference.runtime.retry`: the wait-and-retry policy and its backoff;
- :mod:`~a2a_lab.reference.runtime.loop_guard`: loop guard, depth cap, collaborate limit;
- :mod:`~a2a_lab.reference.runtime.concurrency`: the per-agent concurrency gate (explicit time);
- :mod:`~a2a_lab.reference.runtime.outcome`: no-reply outcome texts and their reasons;
- :mod:`~a2a_lab.reference.runtime.limits`: the lengths event texts are cut to;
- :mod:`~a2a_lab.reference.runtime.message_context`: session key → agent id, the A2A context block.

Nothing here keeps global state: guards and gates are objects, time is an argument and
randomness is a drawn number passed in.
"""

from a2a_lab.reference.runtime.announce import (
    AnnounceTarget,
    is_agent_session_key,
    should_run_announce,
)
from a2a_lab.reference.runtime.concurrency import (
    DEFAULT_CONCURRENCY,
    GATE_BLOCKED_TEXT,
    ConcurrencyConfig,
    ConcurrencyError,
    ConcurrencyGate,
)
from a2a_lab.reference.runtime.errors import ErrorCategory, ErrorInfo, classify_error
from a2a_lab.reference.runtime.intent import (
    INTENT_RULES_V1,
    PAYLOAD_INTENTS,
    PING_PONG_LIMITS_0B3325A28,
    PING_PONG_LIMITS_MAIN,
    IntentResult,
    IntentRules,
    PingPongLimits,
    classify_intent,
    effective_turns,
    payload_intent,
    resolve_intent,
    resolve_ping_pong_turns,
)
from a2a_lab.reference.runtime.limits import MESSAGE_LIMIT, PREVIEW_LIMIT
from a2a_lab.reference.runtime.loop_guard import (
    COLLABORATE_LIMIT,
    LIBRARY_LOOP_GUARD,
    LIVE_LOOP_GUARD,
    LoopGuard,
    LoopGuardConfig,
    PairLimit,
    is_depth_blocked,
    is_self_message,
    pair_key,
)
from a2a_lab.reference.runtime.message_context import (
    agent_id_from_session_key,
    build_agent_to_agent_message_context,
)
from a2a_lab.reference.runtime.outcome import (
    OutcomeText,
    build_no_reply_outcome_message,
    no_reply_reason,
    parse_outcome_text,
)
from a2a_lab.reference.runtime.retry import REFERENCE_RETRY, RetryPolicy, backoff_ms
from a2a_lab.reference.runtime.skip_tokens import is_announce_skip, is_reply_skip
from a2a_lab.reference.runtime.termination import (
    TERMINATION_REASONS,
    TERMINATION_RULES_V1,
    TerminationResult,
    TerminationRules,
    calculate_similarity,
    should_terminate_ping_pong,
)

__all__ = [
    "COLLABORATE_LIMIT",
    "DEFAULT_CONCURRENCY",
    "GATE_BLOCKED_TEXT",
    "INTENT_RULES_V1",
    "LIBRARY_LOOP_GUARD",
    "LIVE_LOOP_GUARD",
    "MESSAGE_LIMIT",
    "PAYLOAD_INTENTS",
    "PING_PONG_LIMITS_0B3325A28",
    "PING_PONG_LIMITS_MAIN",
    "PREVIEW_LIMIT",
    "REFERENCE_RETRY",
    "TERMINATION_REASONS",
    "TERMINATION_RULES_V1",
    "AnnounceTarget",
    "ConcurrencyConfig",
    "ConcurrencyError",
    "ConcurrencyGate",
    "ErrorCategory",
    "ErrorInfo",
    "IntentResult",
    "IntentRules",
    "LoopGuard",
    "LoopGuardConfig",
    "OutcomeText",
    "PairLimit",
    "PingPongLimits",
    "RetryPolicy",
    "TerminationResult",
    "TerminationRules",
    "agent_id_from_session_key",
    "backoff_ms",
    "build_agent_to_agent_message_context",
    "build_no_reply_outcome_message",
    "calculate_similarity",
    "classify_error",
    "classify_intent",
    "effective_turns",
    "is_agent_session_key",
    "is_announce_skip",
    "is_depth_blocked",
    "is_reply_skip",
    "is_self_message",
    "no_reply_reason",
    "pair_key",
    "parse_outcome_text",
    "payload_intent",
    "resolve_intent",
    "resolve_ping_pong_turns",
    "should_run_announce",
    "should_terminate_ping_pong",
]
