"""Injected failures (runtime §4): the errors an exchange can meet, and the policy that draws them.

Each injectable error is an :class:`ErrorKind`: a concrete ``agent.wait`` result that the
reference's :func:`~a2a_lab.reference.runtime.classify_error` classifies (category, code,
retriable), never a second copy of its rules. :class:`FailurePolicy` gives, per target
agent, the chance of each kind: per run for run-level kinds (the run ends in that error),
per ``agent.wait`` call for call-level ones (the call fails at once).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, Field, NonNegativeFloat, PositiveFloat, field_validator

from a2a_lab.reference.runtime.errors import ErrorInfo, classify_error
from a2a_lab.sim._strict import STRICT, Probability

__all__ = [
    "CALL_KINDS",
    "ERROR_CODES",
    "ERROR_KINDS",
    "KIND_INDEX",
    "REQUEST_TIMEOUT",
    "RUN_KINDS",
    "ErrorKind",
    "ErrorKindName",
    "FailurePolicy",
    "WaitResult",
]


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


def _run_error(name: str, error: str) -> ErrorKind:
    # a run that ends in {"status": "error", "error": error}
    return ErrorKind(name, "run", WaitResult(response={"status": "error", "error": error}))


def _call_error(name: str, exception: str) -> ErrorKind:
    # an agent.wait call that raises the exception
    return ErrorKind(name, "call", WaitResult(exception=exception))


#: Every injectable error, one per class of runtime §4 plus the LLM timeout (a run that
#: hangs for ``llm_timeout_s``, then fails: the reference classifies its message as
#: ``unknown/error_unknown``); the last entry, :data:`REQUEST_TIMEOUT`, is what an attempt
#: timeout of a custom policy raises.
ERROR_KINDS: Final[tuple[ErrorKind, ...]] = (
    _call_error("gateway_connection", "connect ECONNREFUSED 127.0.0.1:18789"),
    _call_error("auth_failure", "403 Forbidden"),
    _call_error("gateway_unknown", "gateway closed (1006): abnormal closure"),
    ErrorKind("run_not_found", "call", WaitResult(response={"status": "not_found"})),
    _run_error("rate_limit", "429 Too Many Requests"),
    _run_error("server_overload", "529 Overloaded"),
    _run_error("context_exceeded", "context_length_exceeded: maximum context window"),
    _run_error("request_rejected", "invalid_request_error"),
    _run_error("error_unknown", "agent run failed"),
    ErrorKind("unexpected_status", "run", WaitResult(response={"status": "cancelled"})),
    _run_error("llm_timeout", "LLM request timed out"),
    _call_error("request_timeout", "Request timeout"),
)
#: Index of each kind in :data:`ERROR_KINDS`.
KIND_INDEX: Final = {k.name: i for i, k in enumerate(ERROR_KINDS)}
#: The error of an attempt that outlived a custom policy's ``attempt_timeout_s``.
REQUEST_TIMEOUT: Final = KIND_INDEX["request_timeout"]
RUN_KINDS: Final = tuple(i for i, k in enumerate(ERROR_KINDS) if k.level == "run")
CALL_KINDS: Final = tuple(
    i for i, k in enumerate(ERROR_KINDS[:REQUEST_TIMEOUT]) if k.level == "call"
)
assert tuple(k.name for k in ERROR_KINDS[:REQUEST_TIMEOUT]) == get_args(
    ErrorKindName
)  #: The error codes of the reference classes the injectable errors fall in (runtime §4):
#: what a retry policy's ``retry_codes`` may name.
ERROR_CODES: Final = frozenset(k.info.code for k in ERROR_KINDS)


def _rates_table(value: dict[str, float]) -> dict[str, float]:
    for level in ("run", "call"):
        total = math.fsum(
            p for name, p in value.items() if ERROR_KINDS[KIND_INDEX[name]].level == level
        )
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

    model_config = STRICT

    rates: dict[ErrorKindName, Probability] = Field(default_factory=dict)
    agents: dict[str, dict[ErrorKindName, Probability]] = Field(default_factory=dict)
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
        # a copy keyed by plain strings: callers look kinds up by ErrorKind.name
        return {name: p for name, p in self.agents.get(agent, self.rates).items()}
