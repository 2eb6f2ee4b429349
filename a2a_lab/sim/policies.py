"""The simulator's policies beyond the core: failures, retries, safety limits, rate limits.

Each policy is a :class:`~a2a_lab.sim.config.SimConfig` field (a pydantic model here) whose
default is what TODAY's ``sessions_send`` path does (runtime §2, §4, §5), and, next to it,
the plain object the model drives with explicit time. The decisions themselves are the
reference's pure rules of :mod:`a2a_lab.reference.runtime` (error classes, backoff, loop guard),
never a second copy of them.

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

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from a2a_lab.reference.runtime.errors import ErrorInfo, classify_error
from a2a_lab.reference.runtime.loop_guard import COLLABORATE_LIMIT, LIVE_LOOP_GUARD, LoopGuard, LoopGuardConfig, PairLimit
from a2a_lab.reference.runtime.retry import REFERENCE_RETRY, backoff_ms

__all__ = [
    "BLOCK_REASONS",
    "ERROR_KINDS",
    "KIND_INDEX",
    "REQUEST_TIMEOUT",
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

_CONFIG = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


# ----------------------------------------------------------------------------------------
# error kinds
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WaitResult:
    """What one ``agent.wait`` call gave: an exception's message, or a response mapping.

    :meth:`step` is the reference wait loop's branching on it (runtime §2 step 2): ``ok``
    ends the wait, ``timeout`` waits another chunk (not an error, not a retry), anything
    else is an error, classified by :func:`~a2a_lab.reference.runtime.classify_error`.

    Examples
    --------
    >>> WaitResult(response={"status": "timeout"}).step()
    'keep_waiting'
    >>> WaitResult(exception="socket hang up").step().code
    'gateway_connection'
    >>> WaitResult(response={"status": "error", "error": "boom"}).wait_status
    'error'
    """

    exception: str | None = None
    response: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.exception is None) == (self.response is None):
            raise ValueError("give exactly one of `exception` and `response`")

    def classify(self) -> ErrorInfo:
        """The reference's classification (``classifyA2AError``) of this result."""
        if self.exception is not None:
            return classify_error(RuntimeError(self.exception))
        assert self.response is not None
        return classify_error(self.response)

    def step(self) -> Literal["ok", "keep_waiting"] | ErrorInfo:
        """``"ok"``, ``"keep_waiting"`` (a chunk timeout) or the error to handle."""
        if self.response is not None:
            status = self.response.get("status")
            if status == "ok":
                return "ok"
            if status == "timeout":
                return "keep_waiting"
        return self.classify()

    @property
    def wait_status(self) -> str | None:
        """The ``waitStatus`` the reference keeps from it (an exception leaves it unchanged: None)."""
        status = self.response.get("status") if self.response is not None else None
        return status if isinstance(status, str) else None

    @property
    def wait_error(self) -> str | None:
        """The ``waitError`` the reference keeps from it."""
        error = self.response.get("error") if self.response is not None else None
        return error if isinstance(error, str) else None


@dataclass(frozen=True)
class ErrorKind:
    """A failure the simulator can inject, as the concrete wait result the requester sees.

    Attributes
    ----------
    name
        The configuration name (``FailurePolicy.rates`` key).
    level
        ``"run"``: the target's run ends in this error (the session is busy until then and
        every later poll of the run sees it again); ``"call"``: one ``agent.wait`` call
        fails at once, the run goes on.
    result
        The wait result.
    """

    name: str
    level: Literal["run", "call"]
    result: WaitResult

    @cached_property
    def info(self) -> ErrorInfo:
        """Its class by the reference rules (category, code, reason, retriable)."""
        return self.result.classify()


ErrorKindName = Literal[
    "gateway_connection",
    "auth_failure",
    "gateway_unknown",
    "run_not_found",
    "rate_limit",
    "server_overload",
    "context_exceeded",
    "request_rejected",
    "error_unknown",
    "unexpected_status",
    "llm_timeout",
]

#: Every injectable error, one per class of runtime §4 plus the LLM timeout (a run that
#: hangs for ``llm_timeout_s``, then fails: the reference classifies its message as
#: ``unknown/error_unknown``); the last entry, :data:`REQUEST_TIMEOUT`, is what an attempt
#: timeout of a custom policy raises.
ERROR_KINDS: Final[tuple[ErrorKind, ...]] = (
    ErrorKind("gateway_connection", "call", WaitResult(exception="connect ECONNREFUSED 127.0.0.1:18789")),
    ErrorKind("auth_failure", "call", WaitResult(exception="403 Forbidden")),
    ErrorKind("gateway_unknown", "call", WaitResult(exception="gateway closed (1006): abnormal closure")),
    ErrorKind("run_not_found", "call", WaitResult(response={"status": "not_found"})),
    ErrorKind("rate_limit", "run", WaitResult(response={"status": "error", "error": "429 Too Many Requests"})),
    ErrorKind("server_overload", "run", WaitResult(response={"status": "error", "error": "529 Overloaded"})),
    ErrorKind(
        "context_exceeded",
        "run",
        WaitResult(response={"status": "error", "error": "context_length_exceeded: maximum context window"}),
    ),
    ErrorKind("request_rejected", "run", WaitResult(response={"status": "error", "error": "invalid_request_error"})),
    ErrorKind("error_unknown", "run", WaitResult(response={"status": "error", "error": "agent run failed"})),
    ErrorKind("unexpected_status", "run", WaitResult(response={"status": "cancelled"})),
    ErrorKind("llm_timeout", "run", WaitResult(response={"status": "error", "error": "LLM request timed out"})),
    ErrorKind("request_timeout", "call", WaitResult(exception="Request timeout")),
)
#: Index of each kind in :data:`ERROR_KINDS`.
KIND_INDEX: Final = {k.name: i for i, k in enumerate(ERROR_KINDS)}
#: The error of an attempt that outlived a custom policy's ``attempt_timeout_s``.
REQUEST_TIMEOUT: Final = KIND_INDEX["request_timeout"]
RUN_KINDS: Final = tuple(i for i, k in enumerate(ERROR_KINDS) if k.level == "run")
CALL_KINDS: Final = tuple(i for i, k in enumerate(ERROR_KINDS[:REQUEST_TIMEOUT]) if k.level == "call")
assert tuple(k.name for k in ERROR_KINDS[:REQUEST_TIMEOUT]) == get_args(ErrorKindName)


def _false_is_none(value: Any) -> Any:
    """TOML has no null: ``false`` switches a policy off, ``true`` keeps its defaults."""
    if value is False:
        return None
    if value is True:
        return {}
    return value


def _rates_table(value: dict[str, float]) -> dict[str, float]:
    if any(not 0 <= p <= 1 for p in value.values()):
        raise ValueError("every probability must be in [0, 1]")
    for level in ("run", "call"):
        total = math.fsum(p for name, p in value.items() if ERROR_KINDS[KIND_INDEX[name]].level == level)
        if total > 1 + 1e-12:
            raise ValueError(f"the {level}-level probabilities must add up to at most 1")
    return value


class FailurePolicy(BaseModel):
    """Injected failures (runtime §4), per target agent.

    Attributes
    ----------
    rates
        Chance of each :data:`ERROR_KINDS` name: per RUN for run-level kinds (the run ends in
        that error at a uniformly drawn point of its service time; an ``llm_timeout`` hangs
        ``llm_timeout_s`` first) and per ``agent.wait`` CALL for call-level kinds (the call
        fails at once). Run-level chances add up to at most 1, call-level ones too.
    agents
        Tables for particular target agents, replacing ``rates`` for them.
    llm_timeout_s
        How long a run that hits an LLM timeout occupies its session before it fails.
    retry_after_s
        The ``Retry-After`` a ``429`` (``rate_limit``) carries.
    """

    model_config = _CONFIG

    rates: dict[ErrorKindName, float] = Field(default_factory=dict)
    agents: dict[str, dict[ErrorKindName, float]] = Field(default_factory=dict)
    llm_timeout_s: PositiveFloat = 600.0
    retry_after_s: NonNegativeFloat = 10.0

    @field_validator("rates")
    @classmethod
    def _check_rates(cls, value: dict[str, float]) -> dict[str, float]:
        return _rates_table(value)

    @field_validator("agents")
    @classmethod
    def _check_agents(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for table in value.values():
            _rates_table(table)
        return value

    def table(self, agent: str) -> dict[str, float]:
        """The rates in effect for a target agent."""
        return self.agents.get(agent, self.rates)


# ----------------------------------------------------------------------------------------
# retry policies
# ----------------------------------------------------------------------------------------


class RetryBudget(BaseModel):
    """A client-side retry budget per target agent (as Finagle's and gRPC's).

    A retry is allowed while the retries of the last ``window_s`` stay below
    ``max(min_retries, ratio × requests of the last window_s)``; a refused retry ends the
    wait like an exhausted one.
    """

    model_config = _CONFIG

    ratio: NonNegativeFloat = 0.2
    min_retries: NonNegativeInt = 3
    window_s: PositiveFloat = 60.0


class _Retry(BaseModel):
    model_config = _CONFIG

    @property
    def retries_allowed(self) -> int:
        """The most retries of one message (the ``maxAttempts`` of ``a2a.retry`` events)."""
        raise NotImplementedError

    @property
    def resend(self) -> bool:
        """Whether a retry sends the message again (a new run) or re-polls the same run."""
        raise NotImplementedError

    @property
    def attempt_timeout(self) -> float | None:
        """Seconds after which an attempt counts as a ``Request timeout`` (None: never)."""
        return None

    @property
    def budget_config(self) -> RetryBudget | None:
        """The retry budget, if any."""
        return None

    def retries(self, info: ErrorInfo) -> bool:
        """Whether an error of this class is retried at all."""
        return info.retriable

    def should_retry(self, info: ErrorInfo, done: int) -> bool:
        """Whether to retry after ``done`` retries already made."""
        return done < self.retries_allowed and self.retries(info)

    def delay_ms(self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0) -> int:
        """Milliseconds to wait before retry ``retry`` (0 for the first), ``rand`` uniform in [0, 1)."""
        raise NotImplementedError


class ReferenceRetry(_Retry):
    """Today's wait loop (runtime §2 step 2): retriable errors re-poll the same run.

    At most ``max_retries`` retries, each after ``floor(min(max_ms, base_ms · 2^k) ·
    U(0.5, 1))`` ms (:func:`~a2a_lab.reference.runtime.backoff_ms`), each logged as ``a2a.retry``;
    a chunk timeout is not an error. A retry polls the SAME run again: a run that ended in
    an error shows it again, so only call-level failures can be recovered from.

    Examples
    --------
    >>> ReferenceRetry().delay_ms(0, 0.5), ReferenceRetry().delay_ms(20, 0.9999999)
    (1500, 59999)
    """

    kind: Literal["reference"] = "reference"
    max_retries: NonNegativeInt = REFERENCE_RETRY.max_retries
    base_ms: PositiveInt = REFERENCE_RETRY.base_ms
    max_ms: PositiveInt = REFERENCE_RETRY.max_ms

    @property
    def retries_allowed(self) -> int:
        return self.max_retries

    @property
    def resend(self) -> bool:
        return False

    def delay_ms(self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0) -> int:
        return backoff_ms(retry, rand, self.base_ms, self.max_ms)


class ExponentialRetry(_Retry):
    """A custom exponential backoff with jitter, re-sending the message, with an optional budget.

    Attributes
    ----------
    max_retries
        Retries per message.
    base_s, max_s
        The delay before retry ``k`` is capped at ``min(max_s, base_s · 2^k)``, then
        jittered: ``equal`` (the reference's 50-100 %, through :func:`~a2a_lab.reference.runtime.backoff_ms`),
        ``full`` (0-100 %) or ``none``.
    resend_message
        True: a retry sends the message again (a new run of the target, unless
        idempotency joins it to the first); False: it re-polls the same run, as today.
    retry_codes
        Error codes retried (None: every retriable class of runtime §4).
    honor_retry_after
        Wait a ``429``'s Retry-After instead of the backoff.
    attempt_timeout_s
        An attempt without a result after this long fails as ``Request timeout`` (a
        retriable ``gateway_connection`` error), without cancelling the run; None: never.
    budget
        A :class:`RetryBudget` per target agent.

    Examples
    --------
    >>> ExponentialRetry(base_s=0.1, max_s=0.5).delay_ms(0, 0.5)  # the reference's jitter
    75
    >>> ExponentialRetry(jitter="full").delay_ms(2, 0.25), ExponentialRetry(jitter="none").delay_ms(9, 0.3)
    (2000, 60000)
    """

    kind: Literal["exponential"] = "exponential"
    max_retries: Annotated[int, Field(ge=0, le=10)] = 3
    base_s: PositiveFloat = REFERENCE_RETRY.base_ms / 1000.0
    max_s: PositiveFloat = REFERENCE_RETRY.max_ms / 1000.0
    jitter: Literal["equal", "full", "none"] = "equal"
    resend_message: bool = True
    retry_codes: tuple[str, ...] | None = None
    honor_retry_after: bool = False
    attempt_timeout_s: PositiveFloat | None = None
    budget: Annotated[RetryBudget | None, BeforeValidator(_false_is_none)] = None

    @property
    def retries_allowed(self) -> int:
        return self.max_retries

    @property
    def resend(self) -> bool:
        return self.resend_message

    @property
    def attempt_timeout(self) -> float | None:
        return self.attempt_timeout_s

    @property
    def budget_config(self) -> RetryBudget | None:
        return self.budget

    def retries(self, info: ErrorInfo) -> bool:
        return info.retriable if self.retry_codes is None else info.code in self.retry_codes

    def delay_ms(self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0) -> int:
        if self.honor_retry_after and info is not None and info.code == "rate_limit":
            return math.floor(retry_after_s * 1000.0)
        base_ms, max_ms = self.base_s * 1000.0, self.max_s * 1000.0
        if self.jitter == "equal":
            return backoff_ms(retry, rand, base_ms, max_ms)
        cap = max_ms if retry >= 64 else min(max_ms, base_ms * 2.0**retry)
        return math.floor(cap * rand) if self.jitter == "full" else math.floor(cap)


class CollaborationRetry(_Retry):
    """The design notes' proposal for collaboration calls (runtime §4, last paragraph).

    403/404 (and every other code outside ``retry_codes``) fail at once; a 429 waits for
    its Retry-After; 5xx and timeouts are retried after ``delays_s`` (1, 2, 4 s), each
    retry a new send. The proposal's 10 s request timeout bounds a Discord API call, which
    the simulator does not model apart from the agent's run; ``attempt_timeout_s`` applies
    one to the whole attempt when set.

    Examples
    --------
    >>> policy = CollaborationRetry()
    >>> policy.delay_ms(2, 0.9), policy.retries_allowed
    (4000, 3)
    >>> from a2a_lab.reference.runtime import classify_error
    >>> policy.should_retry(classify_error(RuntimeError("403 Forbidden")), 0)
    False
    >>> policy.delay_ms(0, 0.9, classify_error({"status": "error", "error": "429"}), retry_after_s=7.5)
    7500
    """

    kind: Literal["collaboration"] = "collaboration"
    delays_s: tuple[PositiveFloat, ...] = Field((1.0, 2.0, 4.0), max_length=10)
    retry_codes: tuple[str, ...] = ("gateway_connection", "rate_limit", "server_overload", "error_unknown")
    attempt_timeout_s: PositiveFloat | None = None

    @property
    def retries_allowed(self) -> int:
        return len(self.delays_s)

    @property
    def resend(self) -> bool:
        return True

    @property
    def attempt_timeout(self) -> float | None:
        return self.attempt_timeout_s

    def retries(self, info: ErrorInfo) -> bool:
        return info.code in self.retry_codes

    def delay_ms(self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0) -> int:
        if info is not None and info.code == "rate_limit":
            return math.floor(retry_after_s * 1000.0)
        return math.floor(self.delays_s[retry] * 1000.0)


def _retry_in(value: Any) -> Any:
    """``false`` → no retries; ``true`` or a table without ``kind`` → the reference policy."""
    if value is False:
        return None
    if value is True:
        return {"kind": "reference"}
    if isinstance(value, Mapping) and "kind" not in value:
        return {"kind": "reference", **value}
    return value


RetryPolicyConfig = Annotated[
    ReferenceRetry | ExponentialRetry | CollaborationRetry, Field(discriminator="kind")
]
#: A retry policy field: a :data:`RetryPolicyConfig` or None (no retries).
RetryField = Annotated[RetryPolicyConfig | None, BeforeValidator(_retry_in)]


class RetryBudgetTracker:
    """The sliding-window state of a :class:`RetryBudget`, one window per key (target agent).

    Examples
    --------
    >>> tracker = RetryBudgetTracker(RetryBudget(ratio=0.5, min_retries=1, window_s=10))
    >>> for t in (0, 1, 2, 3):
    ...     tracker.request("eden", t)
    >>> [tracker.allow_retry("eden", 4.0) for _ in range(3)]  # 50 % of 4 requests
    [True, True, False]
    >>> tracker.allow_retry("eden", 15.0)  # the window moved on: the minimum still holds
    True
    """

    def __init__(self, budget: RetryBudget) -> None:
        self.budget = budget
        self._requests: dict[str, deque[float]] = {}
        self._retries: dict[str, deque[float]] = {}

    def _trim(self, times: deque[float], now: float) -> deque[float]:
        cutoff = now - self.budget.window_s
        while times and times[0] < cutoff:
            times.popleft()
        return times

    def request(self, key: str, now: float) -> None:
        """Record a first attempt."""
        self._requests.setdefault(key, deque()).append(now)

    def allow_retry(self, key: str, now: float) -> bool:
        """Whether a retry fits the budget now (recorded if it does)."""
        requests = self._trim(self._requests.setdefault(key, deque()), now)
        retries = self._trim(self._retries.setdefault(key, deque()), now)
        if len(retries) >= max(self.budget.min_retries, self.budget.ratio * len(requests)):
            return False
        retries.append(now)
        return True


# ----------------------------------------------------------------------------------------
# safety limits
# ----------------------------------------------------------------------------------------

#: Why a message was refused: a safety limit (the message never reaches the target) or a
#: full queue (``queue_capacity``).
BLOCK_REASONS: Final = ("relay_depth", "collaborate_limit", "loop_guard", "queue_capacity")
BlockedAs = Literal["dropped", "logged"]


class PairOverride(BaseModel):
    """A per-pair override (key ``"a::b"``), in seconds; unset fields keep the guard's."""

    model_config = _CONFIG

    max_messages_per_window: NonNegativeInt | None = None
    window_s: NonNegativeFloat | None = None


class LoopGuardPolicy(BaseModel):
    """The loop guard (runtime §5; :class:`~a2a_lab.reference.runtime.LoopGuard`) on the simulated messages.

    Attributes
    ----------
    max_messages_per_window, window_s
        At most this many messages per unordered agent pair in any sliding window (an
        entry exactly one window old still counts; a blocked message is not recorded);
        default: the live call site's 6 per 60 s.
    max_depth
        A send whose relay depth is above this is blocked.
    overrides
        Per-pair overrides keyed ``"a::b"`` (the two ids in order).
    count_turns
        Count the ping-pong replies too (as a replay of a recorded log does, runtime §5);
        a blocked reply ends the ping-pong (``aborted``). Sends always count; retries of
        the system bypass the guard.
    blocked_as
        What a blocked send becomes in the log: ``"dropped"`` (the reference drops it in
        its preflight: no event at all) or ``"logged"`` (``a2a.send``, then ``a2a.response
        {outcome: "blocked", reason}`` and ``a2a.complete``).
    """

    model_config = _CONFIG

    max_messages_per_window: NonNegativeInt = LIVE_LOOP_GUARD.max_messages_per_window
    window_s: NonNegativeFloat = LIVE_LOOP_GUARD.window_ms / 1000.0
    max_depth: int = LIVE_LOOP_GUARD.max_depth
    overrides: dict[str, PairOverride] = Field(default_factory=dict)
    count_turns: bool = True
    blocked_as: BlockedAs = "dropped"

    def runtime_config(self) -> LoopGuardConfig:
        """The runtime guard's configuration (milliseconds)."""
        return LoopGuardConfig(
            max_messages_per_window=self.max_messages_per_window,
            window_ms=self.window_s * 1000.0,
            max_depth=self.max_depth,
            overrides={
                k: PairLimit(
                    max_messages_per_window=o.max_messages_per_window,
                    window_ms=None if o.window_s is None else o.window_s * 1000.0,
                )
                for k, o in self.overrides.items()
            },
        )

    @classmethod
    def from_runtime(cls, config: LoopGuardConfig, **fields: Any) -> LoopGuardPolicy:
        """The policy of a runtime :class:`~a2a_lab.reference.runtime.LoopGuardConfig` (milliseconds → seconds).

        Examples
        --------
        >>> LoopGuardPolicy.from_runtime(LoopGuardConfig(window_ms=500)).window_s
        0.5
        """
        return cls(
            max_messages_per_window=config.max_messages_per_window,
            window_s=config.window_ms / 1000.0,
            max_depth=config.max_depth,
            overrides={
                k: PairOverride(
                    max_messages_per_window=o.max_messages_per_window,
                    window_s=None if o.window_ms is None else o.window_ms / 1000.0,
                )
                for k, o in config.overrides.items()
            },
            **fields,
        )


class CollaborateLimit(BaseModel):
    """The collaborate tool's limit: sends per unordered pair per sliding window (runtime §5).

    Default: 10 per 5 minutes (the 11th is blocked); ``blocked_as`` as for the loop guard.
    """

    model_config = _CONFIG

    max_calls: NonNegativeInt = COLLABORATE_LIMIT.max_messages_per_window
    window_s: NonNegativeFloat = COLLABORATE_LIMIT.window_ms / 1000.0
    blocked_as: BlockedAs = "dropped"

    def runtime_config(self) -> LoopGuardConfig:
        """The runtime guard's configuration (milliseconds)."""
        return LoopGuardConfig(max_messages_per_window=self.max_calls, window_ms=self.window_s * 1000.0)


class SendGuards:
    """The safety limits of one run, with explicit time: relay depth, collaborate limit, loop guard.

    Times are simulated seconds; the guards see them as the log will, in whole
    milliseconds, so a replay of the simulated log (:func:`a2a_lab.analysis.checks.replay_guard`)
    reaches the same verdicts.

    Examples
    --------
    >>> guards = SendGuards(LoopGuardPolicy(max_messages_per_window=2, window_s=1.0), None)
    >>> [guards.admit_send("a", "b", 0, t) for t in (0.0, 0.5, 0.9, 1.0, 1.5)]
    [-1, -1, 2, 2, -1]
    >>> BLOCK_REASONS[guards.admit_send("a", "b", 6, 5.0)]
    'relay_depth'
    """

    def __init__(self, loop: LoopGuardPolicy | None, collaborate: CollaborateLimit | None) -> None:
        self.loop_policy = loop
        self.loop = LoopGuard(loop.runtime_config()) if loop is not None else None
        self.collaborate = LoopGuard(collaborate.runtime_config()) if collaborate is not None else None

    @staticmethod
    def _ms(t_s: float) -> float:
        return math.floor(t_s * 1000.0)

    def depth_blocked(self, depth: float) -> bool:
        """Whether a relay depth is over the loop guard's cap (never without a guard)."""
        return self.loop is not None and self.loop.is_depth_blocked(depth)

    def admit_send(self, from_id: str, to_id: str, depth: float, t_s: float) -> int:
        """-1 if a send passes (and is recorded), else its index in :data:`BLOCK_REASONS`.

        Checked in the order a message meets them: relay depth, the collaborate tool's
        limit, the receiving side's loop guard.
        """
        if self.depth_blocked(depth):
            return 0
        now = self._ms(t_s)
        if self.collaborate is not None and self.collaborate.check(from_id, to_id, now):
            return 1
        if self.loop is not None and self.loop.check(from_id, to_id, now):
            return 2
        return -1

    def admit_reply(self, from_id: str, to_id: str, t_s: float) -> bool:
        """Whether a ping-pong reply passes the loop guard (always, unless it counts turns)."""
        if self.loop is None or self.loop_policy is None or not self.loop_policy.count_turns:
            return True
        return not self.loop.check(from_id, to_id, self._ms(t_s))


# ----------------------------------------------------------------------------------------
# rate limits, idempotency, the synchronous path, relays
# ----------------------------------------------------------------------------------------


class RateLimitPolicy(BaseModel):
    """Discord-side rate limits (runtime §5): the excess waits and goes out in order.

    Attributes
    ----------
    messages_per_window, message_window_s
        Messages per channel per sliding window (5 per second).
    channel
        What a channel is: ``"directed_pair"`` (one collaboration thread per directed pair,
        the default), ``"pair"`` (unordered), ``"target"`` (the target agent's channel) or
        ``"global"`` (one for everything).
    threads_per_window, thread_window_s
        Thread creations per sliding window, over all channels (5 per minute).
    thread_reuse_s
        A directed pair's thread is reused when it was used within this long (6 hours),
        else the next message first creates a new one.
    """

    model_config = _CONFIG

    messages_per_window: PositiveInt = 5
    message_window_s: PositiveFloat = 1.0
    channel: Literal["directed_pair", "pair", "target", "global"] = "directed_pair"
    threads_per_window: PositiveInt = 5
    thread_window_s: PositiveFloat = 60.0
    thread_reuse_s: NonNegativeFloat = 6 * 3600.0


class SlidingLimiter:
    """At most ``limit`` events per key in any window of ``window_s``; the excess waits, in order.

    :meth:`slot` reserves the earliest time, not before the request nor before the key's
    previous reservation (first come, first served), at which the window holds fewer than
    ``limit`` reservations.

    Examples
    --------
    >>> limiter = SlidingLimiter(2, 1.0)
    >>> [limiter.slot("c", t) for t in (0.0, 0.1, 0.2, 0.3, 5.0)]
    [0.0, 0.1, 1.0, 1.1, 5.0]
    """

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._last: dict[Any, deque[float]] = {}

    def slot(self, key: Any, t: float) -> float:
        """Reserve and return the time the event at ``t`` may happen."""
        times = self._last.setdefault(key, deque(maxlen=self.limit))
        at = max(t, times[-1]) if times else t
        if len(times) == self.limit:
            at = max(at, times[0] + self.window_s)
        times.append(at)
        return at


@dataclass
class Delivery:
    """When a message reaches its target under a :class:`RateLimitPolicy` (explicit time).

    Examples
    --------
    >>> d = Delivery(RateLimitPolicy(threads_per_window=1, thread_window_s=60.0))
    >>> d.time(("a", "b"), 0.0), d.time(("a", "c"), 1.0), d.time(("a", "b"), 2.0)
    (0.0, 60.0, 2.0)
    """

    policy: RateLimitPolicy
    _messages: SlidingLimiter = field(init=False)
    _threads: SlidingLimiter = field(init=False)
    _ready: dict[tuple[str, str], float] = field(default_factory=dict, init=False)
    _used: dict[tuple[str, str], float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._messages = SlidingLimiter(self.policy.messages_per_window, self.policy.message_window_s)
        self._threads = SlidingLimiter(self.policy.threads_per_window, self.policy.thread_window_s)

    def _channel(self, pair: tuple[str, str]) -> Any:
        kind = self.policy.channel
        if kind == "directed_pair":
            return pair
        if kind == "pair":
            return tuple(sorted(pair))
        return pair[1] if kind == "target" else None

    def time(self, pair: tuple[str, str], t: float) -> float:
        """The delivery time of a message of the directed ``pair`` sent at ``t``."""
        used = self._used.get(pair)
        if used is None or used < t - self.policy.thread_reuse_s:
            ready = self._ready[pair] = self._threads.slot("threads", t)
        else:
            ready = max(t, self._ready[pair])
        at = self._messages.slot(self._channel(pair), ready)
        self._used[pair] = at
        return at


class IdempotencyPolicy(BaseModel):
    """Idempotency keys (runtime §5): a re-send within ``ttl_s`` of the original send joins
    the original run unless that run has failed (a failure is not cached)."""

    model_config = _CONFIG

    ttl_s: NonNegativeFloat = 300.0


class SyncPath(BaseModel):
    """The synchronous ``sessions_send`` path (``timeoutSeconds > 0``, runtime §2).

    The caller waits up to ``timeout_s`` for the run. On success the flow starts with the
    reply (``a2a.send``, the reply, turns, announce, ``a2a.complete``); on an error it starts
    and waits as the asynchronous path does. On a timeout, with ``emit_on_timeout`` False
    (today's known bug) NOTHING is logged: the conversation is invisible although the run
    goes on; True (the fix of commit ``0b3325a28``) starts the flow at the timeout.
    """

    model_config = _CONFIG

    timeout_s: PositiveFloat = 30.0
    emit_on_timeout: bool = False


class RelayPolicy(BaseModel):
    """Relay depths: each message is one hop deeper than a relay with ``continue_probability``.

    A message's depth ``d`` has ``P(d ≥ k) = continue_probability^k`` (depth 0: sent
    directly); every event of its exchange carries ``depth``.
    """

    model_config = _CONFIG

    continue_probability: float = Field(0.2, ge=0, lt=1)
