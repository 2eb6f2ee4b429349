"""The simulator's policies beyond the core: failures, retries, safety limits, rate limits.

Each policy is a :class:`~a2a_lab.sim.config.SimConfig` field (a pydantic model) whose
default is what TODAY's ``sessions_send`` path does (runtime §2, §4, §5), and, next to it,
the plain object the model drives with explicit time. The decisions themselves are the
reference's pure rules of :mod:`a2a_lab.reference.runtime` (error classes, backoff, loop guard),
never a second copy of them. This module gathers them in one namespace; they live by
concept in :mod:`~a2a_lab.sim.failures`, :mod:`~a2a_lab.sim.retry` and
:mod:`~a2a_lab.sim.limits`, the idempotency key, the synchronous path and relay depths here.

- ``failures`` (:class:`FailurePolicy`, default off): per target agent, the chance that a
  run ends in an error of each class of runtime §4, or that an ``agent.wait`` call fails;
  LLM timeouts (a run that hangs, then errors). Each error is an :class:`ErrorKind`: a
  concrete wait result that :func:`~a2a_lab.reference.runtime.classify_error` classifies.
- ``retry``: :class:`ReferenceRetry` (today: at most 3 retries of retriable errors, re-polling
  the same run, reference backoff), :class:`ExponentialRetry` (custom: jitter, re-send, a
  :class:`RetryBudget`, an attempt timeout), :class:`CollaborationRetry` (the design notes'
  proposal: 403/404 fail at once, 429 waits for Retry-After, 5xx and timeouts after 1, 2,
  4 s), or None (no retry).
- ``loop_guard`` (:class:`LoopGuardPolicy`, default off: today it guards Discord messages
  between sibling bots, not ``sessions_send``; switched on it has the live call site's 6
  messages per 60 s per unordered pair and relay depth 5), ``collaborate_limit``
  (:class:`CollaborateLimit`, 10 per 5 min per pair) and what a blocked message becomes in
  the log (``blocked_as``: dropped without a trace, as the reference's preflight does, or
  logged as an ``[outcome] blocked`` exchange).
- ``rate_limit`` (:class:`RateLimitPolicy`, default off): messages per channel (5 per
  second; one channel per directed pair unless configured) and thread creations (5 per
  minute), the excess queued in order (:class:`SlidingLimiter`).
- ``idempotency`` (:class:`IdempotencyPolicy`, on): a re-send within 5 minutes of the
  original, while its run has not failed, joins that run instead of running again.
- ``sync`` (:class:`SyncPath`, default off = the asynchronous path): ``timeoutSeconds > 0``,
  with the known bug that a timeout emits no event at all.
- ``relays`` (:class:`RelayPolicy`, default off): relay depths of the messages.

Examples
--------
>>> from a2a_lab.sim import SimConfig
>>> cfg = SimConfig.from_toml('''
... n_messages = 100
... loop_guard = true
... failures = {rates = {server_overload = 0.05, gateway_connection = 0.01}}
... retry = {kind = "exponential", max_retries = 2, budget = {ratio = 0.1}}
... ''')
>>> cfg.loop_guard.max_messages_per_window, cfg.loop_guard.window_s, cfg.retry.budget.ratio
(6, 60.0, 0.1)
>>> ERROR_KINDS[KIND_INDEX["server_overload"]].info.code, cfg.idempotency.ttl_s
('server_overload', 300.0)
"""

from __future__ import annotations

from pydantic import BaseModel, Field, NonNegativeFloat, PositiveFloat

from a2a_lab.sim._strict import STRICT
from a2a_lab.sim.failures import (
    CALL_KINDS,
    ERROR_KINDS,
    KIND_INDEX,
    REQUEST_TIMEOUT,
    RUN_KINDS,
    ErrorKind,
    ErrorKindName,
    FailurePolicy,
    WaitResult,
)
from a2a_lab.sim.limits import (
    BLOCK_REASONS,
    CollaborateLimit,
    Delivery,
    LoopGuardPolicy,
    PairOverride,
    RateLimitPolicy,
    SendGuards,
    SlidingLimiter,
)
from a2a_lab.sim.retry import (
    CollaborationRetry,
    ExponentialRetry,
    ReferenceRetry,
    RetryBudget,
    RetryBudgetTracker,
    RetryField,
    RetryPolicyConfig,
)

__all__ = [
    "BLOCK_REASONS",
    "CALL_KINDS",
    "ERROR_KINDS",
    "KIND_INDEX",
    "REQUEST_TIMEOUT",
    "RUN_KINDS",
    "CollaborateLimit",
    "CollaborationRetry",
    "Delivery",
    "ErrorKind",
    "ErrorKindName",
    "ExponentialRetry",
    "FailurePolicy",
    "IdempotencyPolicy",
    "LoopGuardPolicy",
    "PairOverride",
    "RateLimitPolicy",
    "ReferenceRetry",
    "RelayPolicy",
    "RetryBudget",
    "RetryBudgetTracker",
    "RetryField",
    "RetryPolicyConfig",
    "SendGuards",
    "SlidingLimiter",
    "SyncPath",
    "WaitResult",
]


class IdempotencyPolicy(BaseModel):
    """Idempotency keys (runtime §5): a re-send within ``ttl_s`` of the original send joins
    the original run unless that run has failed (a failure is not cached)."""

    model_config = STRICT

    ttl_s: NonNegativeFloat = 300.0


class SyncPath(BaseModel):
    """The synchronous ``sessions_send`` path (``timeoutSeconds > 0``, runtime §2).

    The caller waits up to ``timeout_s`` for the run. On success the flow starts with the
    reply (``a2a.send``, the reply, turns, announce, ``a2a.complete``); on an error it starts
    and waits as the asynchronous path does. On a timeout, with ``emit_on_timeout`` False
    (today's known bug) NOTHING is logged: the conversation is invisible although the run
    goes on; True (the fix of commit ``0b3325a28``) starts the flow at the timeout.
    """

    model_config = STRICT

    timeout_s: PositiveFloat = 30.0
    emit_on_timeout: bool = False


class RelayPolicy(BaseModel):
    """Relay depths: each message is one hop deeper than a relay with ``continue_probability``.

    A message's depth ``d`` has ``P(d ≥ k) = continue_probability^k`` (depth 0: sent
    directly); every event of its exchange carries ``depth``.
    """

    model_config = STRICT

    continue_probability: float = Field(0.2, ge=0, lt=1)
