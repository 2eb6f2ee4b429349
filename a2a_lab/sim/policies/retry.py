"""Retry policies of the wait loop (runtime §2 step 2, §4): the reference's and two alternatives.

:class:`ReferenceRetry` is today's loop (at most 3 retries of retriable errors, re-polling
the same run, the reference backoff); :class:`ExponentialRetry` is a custom one (jitter,
re-send, a :class:`RetryBudget`, an attempt timeout); :class:`CollaborationRetry` is the
design notes' proposal for collaboration calls. :data:`RetryField` is the configuration
field (None: no retries). The backoff arithmetic is the reference's
(:func:`~a2a_lab.reference.runtime.backoff_ms`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

from a2a_lab.reference.runtime.errors import ErrorInfo
from a2a_lab.reference.runtime.retry import REFERENCE_RETRY, backoff_ms
from a2a_lab.sim._strict import STRICT, Off, Tuple
from a2a_lab.sim.policies.failures import ERROR_CODES

__all__ = [
    "MAX_RETRIES",
    "CollaborationRetry",
    "ExponentialRetry",
    "ReferenceRetry",
    "RetryBudget",
    "RetryBudgetTracker",
    "RetryField",
    "RetryPolicyConfig",
]

#: The most retries a policy may make per message (each retry is drawn up front per message).
MAX_RETRIES = 10
_Retries = Annotated[int, Field(ge=0, le=MAX_RETRIES)]


def _known_codes(value: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Every code must be one an injectable error has: a typo would silently never retry."""
    unknown = sorted(set(value or ()) - ERROR_CODES)
    if unknown:
        raise ValueError(
            f"unknown error code(s) {', '.join(unknown)}; known: {', '.join(sorted(ERROR_CODES))}"
        )
    return value


#: Error codes a policy retries, each one an injectable error has (checked once, here).
_Codes = Annotated[tuple[str, ...], Tuple, AfterValidator(_known_codes)]


def _retry_after_ms(info: ErrorInfo | None, retry_after_s: float) -> int | None:
    """A ``429``'s Retry-After in ms, or None for any other error."""
    if info is not None and info.code == "rate_limit":
        return math.floor(retry_after_s * 1000.0)
    return None


class RetryBudget(BaseModel):
    """A client-side retry budget per target agent (as Finagle's and gRPC's).

    A retry is allowed while the retries of the last ``window_s`` stay below
    ``max(min_retries, ratio × requests of the last window_s)``; a refused retry ends the
    wait like an exhausted one.
    """

    model_config = STRICT

    ratio: NonNegativeFloat = 0.2
    min_retries: NonNegativeInt = 3
    window_s: PositiveFloat = 60.0


class _Retry(BaseModel):
    model_config = STRICT

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

    def delay_ms(
        self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0
    ) -> int:
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
    max_retries: _Retries = REFERENCE_RETRY.max_retries
    base_ms: PositiveInt = REFERENCE_RETRY.base_ms
    max_ms: PositiveInt = REFERENCE_RETRY.max_ms

    @property
    def retries_allowed(self) -> int:
        return self.max_retries

    @property
    def resend(self) -> bool:
        return False

    def delay_ms(
        self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0
    ) -> int:
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
    max_retries: _Retries = 3
    base_s: PositiveFloat = REFERENCE_RETRY.base_ms / 1000.0
    max_s: PositiveFloat = REFERENCE_RETRY.max_ms / 1000.0
    jitter: Literal["equal", "full", "none"] = "equal"
    resend_message: bool = True
    retry_codes: _Codes | None = None
    honor_retry_after: bool = False
    attempt_timeout_s: PositiveFloat | None = None
    budget: Annotated[RetryBudget | None, Off] = None

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

    def delay_ms(
        self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0
    ) -> int:
        if self.honor_retry_after and (after := _retry_after_ms(info, retry_after_s)) is not None:
            return after
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
    delays_s: Annotated[tuple[PositiveFloat, ...], Tuple] = Field(
        (1.0, 2.0, 4.0), max_length=MAX_RETRIES
    )
    retry_codes: _Codes = (
        "gateway_connection",
        "rate_limit",
        "server_overload",
        "error_unknown",
    )
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

    def delay_ms(
        self, retry: int, rand: float, info: ErrorInfo | None = None, retry_after_s: float = 0.0
    ) -> int:
        after = _retry_after_ms(info, retry_after_s)
        return after if after is not None else math.floor(self.delays_s[retry] * 1000.0)


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
