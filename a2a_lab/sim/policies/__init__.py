"""The simulator's policies: the package owns what the gateway does beyond the core path.

Failures, retries, safety limits, rate limits and the send path (idempotency, the synchronous
path, relays): each policy is a :class:`~a2a_lab.sim.config.SimConfig` field (a pydantic model) whose
default is what TODAY's ``sessions_send`` path does (runtime §2, §4, §5), and, next to it,
the plain object the model drives with explicit time. The decisions themselves are the
reference's pure rules of :mod:`a2a_lab.reference.runtime` (error classes, backoff, loop guard),
never a second copy of them. This module gathers them in one namespace; they live by
concept in :mod:`~a2a_lab.sim.policies.failures`, :mod:`~a2a_lab.sim.policies.retry` and
:mod:`~a2a_lab.sim.policies.limits`, the idempotency key, the synchronous path and relay depths in
:mod:`~a2a_lab.sim.policies.send`.

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

from a2a_lab.sim.policies.failures import (
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
from a2a_lab.sim.policies.limits import (
    BLOCK_REASONS,
    CollaborateLimit,
    Delivery,
    LoopGuardPolicy,
    PairOverride,
    RateLimitPolicy,
    SendGuards,
    SlidingLimiter,
)
from a2a_lab.sim.policies.retry import (
    CollaborationRetry,
    ExponentialRetry,
    ReferenceRetry,
    RetryBudget,
    RetryBudgetTracker,
    RetryField,
    RetryPolicyConfig,
)
from a2a_lab.sim.policies.send import IdempotencyPolicy, RelayPolicy, SyncPath

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
