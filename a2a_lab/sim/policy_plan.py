"""The policies' random inputs, drawn up front per message and per attempt: common random numbers.

Every draw of the policies comes from their own streams (``failures``, ``retries``,
``relays`` of :data:`~a2a_lab.sim.plan.PURPOSES`), drawn per message and per attempt
(:class:`PolicyPlan`, row ``k`` = attempt ``k``, whatever the number of rows), so two
configurations that differ in a policy see the same failures, backoff draws and re-sent
run times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np

from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.failures import CALL_KINDS, ERROR_KINDS, KIND_INDEX, RUN_KINDS
from a2a_lab.sim.plan import Plan, _by_agent, purpose_seeds, uniforms

__all__ = ["PolicyPlan", "draw_policy_plan", "policies_active"]

_LLM_TIMEOUT: Final = KIND_INDEX["llm_timeout"]


def policies_active(config: SimConfig) -> bool:
    """Whether a policy that changes the core behaviour is on (the model then draws a :class:`PolicyPlan`).

    The retry policy and idempotency only act on errors and re-sends, so they alone change
    nothing, unless the retry policy has an attempt timeout (which makes errors of slow
    runs).

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> policies_active(mm1(0.8, 1.0, n_messages=10)), policies_active(mm1(0.8, 1.0, n_messages=10).model_copy(update={"queue_capacity": 5}))
    (False, True)
    """
    if config.retry is not None and config.retry.attempt_timeout is not None:
        return True
    return any(
        value is not None
        for value in (
            config.failures,
            config.loop_guard,
            config.collaborate_limit,
            config.queue_capacity,
            config.rate_limit,
            config.sync,
            config.relays,
        )
    )


@dataclass(frozen=True, eq=False)
class PolicyPlan:
    """The pre-drawn inputs of the policies.

    Attributes
    ----------
    run_kind
        Shape ``(K, n)``: the error (index in :data:`~a2a_lab.sim.policies.ERROR_KINDS`)
        run ``k`` of each message ends in, -1 = none; ``K`` is 1 plus the retries of a
        re-sending policy.
    run_service
        Shape ``(K, n)``: how long run ``k`` occupies its session (cut short by a
        run-level error, ``llm_timeout_s`` for an LLM timeout); row 0 is the plan's service
        time, later rows are fresh draws of the target's service time.
    call_kind
        Shape ``(C, n)``: the error ``agent.wait`` call ``c`` fails with (-1 = none).
    jitter
        Shape ``(R, n)``: the uniform of retry ``r``'s backoff.
    depth
        Relay depth per message (None without relays).
    """

    run_kind: np.ndarray
    run_service: np.ndarray
    call_kind: np.ndarray
    jitter: np.ndarray
    depth: np.ndarray | None


def _kinds(
    u: np.ndarray, target: np.ndarray, cumulative: np.ndarray, kinds: tuple[int, ...]
) -> np.ndarray:
    """The error kind of each uniform by its target's cumulative chances (-1: none)."""
    position = (u[:, None] >= cumulative[target]).sum(axis=1)
    table = np.array([*kinds, -1], dtype=np.int8)
    out: np.ndarray = table[position]
    return out


def draw_policy_plan(
    config: SimConfig, plan: Plan, seed: int | np.random.SeedSequence = 0
) -> PolicyPlan:
    """Draw every random input of the policies (the same seed as :func:`~a2a_lab.sim.plan.draw_plan`).

    Examples
    --------
    >>> from a2a_lab.sim import FailurePolicy, draw_plan, presets
    >>> cfg = presets.mm1(0.5, 1.0, n_messages=20_000).model_copy(
    ...     update={"failures": FailurePolicy(rates={"server_overload": 0.3})})
    >>> pp = draw_policy_plan(cfg, draw_plan(cfg, seed=1), seed=1)
    >>> round(float((pp.run_kind[0] >= 0).mean()), 2), pp.run_kind.shape, pp.call_kind.shape
    (0.3, (1, 20000), (4, 20000))
    """
    seeds = purpose_seeds(seed)
    n = plan.n
    policy = config.retry
    retries = policy.retries_allowed if policy is not None else 0
    runs = 1 + (retries if policy is not None and policy.resend else 0)
    wait = config.wait
    calls = math.ceil(wait.max_wait_s / wait.chunk_s) + 1 if wait is not None else 1 + retries
    agents = [config.agent(a) for a in plan.agents]
    run_service = np.empty((runs, n))
    run_service[0] = plan.service_s
    # one stream per run, call and retry (plan.uniforms): the k-th message's draws do not
    # depend on the number of messages
    for k in range(1, runs):
        run_service[k] = _by_agent(
            uniforms(seeds["failures"], n, 2, k), plan.target, [a.service for a in agents]
        )
    run_kind = np.full((runs, n), -1, dtype=np.int8)
    call_kind = np.full((0, n), -1, dtype=np.int8)
    failures = config.failures
    if failures is not None:
        known = set(plan.agents)
        unknown = sorted(set(failures.agents) - known)
        if unknown:
            raise ValueError(f"failures.agents: unknown agent(s) {', '.join(unknown)}")
        tables = [failures.table(a) for a in plan.agents]
        run_cum = np.cumsum(
            [[t.get(ERROR_KINDS[k].name, 0.0) for k in RUN_KINDS] for t in tables], axis=1
        )
        call_cum = np.cumsum(
            [[t.get(ERROR_KINDS[k].name, 0.0) for k in CALL_KINDS] for t in tables], axis=1
        )
        for k in range(runs):
            kind = _kinds(uniforms(seeds["failures"], n, 0, k), plan.target, run_cum, RUN_KINDS)
            when = uniforms(seeds["failures"], n, 1, k)
            run_kind[k] = kind
            run_service[k] = np.where(
                kind == _LLM_TIMEOUT,
                failures.llm_timeout_s,
                np.where(kind >= 0, run_service[k] * when, run_service[k]),
            )
        call_kind = np.stack(
            [
                _kinds(uniforms(seeds["failures"], n, 3, c), plan.target, call_cum, CALL_KINDS)
                for c in range(calls)
            ]
        )
    jitter = (
        np.stack([uniforms(seeds["retries"], n, r) for r in range(retries)])
        if retries
        else np.empty((0, n))
    )
    depth = None
    if config.relays is not None:
        q = config.relays.continue_probability
        u = 1.0 - uniforms(seeds["relays"], n)  # in (0, 1]
        depth = (
            np.floor(np.log(u) / math.log(q)).astype(np.int64)
            if q > 0
            else np.zeros(n, dtype=np.int64)
        )
    return PolicyPlan(
        run_kind=run_kind, run_service=run_service, call_kind=call_kind, jitter=jitter, depth=depth
    )
