"""The gateway model with its policies: failures, retries, safety limits, rate limits, the sync path.

:class:`PolicyModel` extends the core :class:`~a2a_lab.sim.model.Model`; :func:`build_model`
picks it only when a policy that changes the core's behaviour is on
(:func:`policies_active`), so the core's lean path stays exactly as fast as before.

**At the send** (:meth:`PolicyModel._arrive`), in the order a message meets them: the
relay-depth cap, the collaborate limit and the loop guard (:class:`~a2a_lab.sim.policies.SendGuards`;
a blocked message never reaches the target), then the session's ``queue_capacity`` (an
arrival that finds K runs in the system, counting those the rate limiter still holds, is
refused like a concurrency-gate refusal: M/M/1/K), then the rate limits decide when the
message reaches the target's session (:class:`~a2a_lab.sim.policies.Delivery`).

**The wait** (:meth:`PolicyModel._policy_wait`) is the reference loop of runtime §2 step 2:
``agent.wait`` calls in chunks, a chunk timeout is not an error, an error is classified by
the reference rules and retried per the retry policy (backoff, ``a2a.retry`` event; the
``elapsed`` counter adds the backoff and a chunk per error, as the reference does). A
run-level error ends the run early (the session is free sooner); a call-level one fails one
call at once. A retry of the reference policy polls the SAME run again; a re-sending policy
sends a new run (through the rate limits) unless idempotency joins it to the previous run
(sent within the key's lifetime and not failed). Work is never cancelled: a run nobody waits
for any more still runs to its end.

**The synchronous path** (:meth:`PolicyModel._sync_call`): the caller waits up to the
timeout; the flow (and its ``a2a.send``) starts only after it; a timeout under the known
bug leaves no event at all.

**Randomness**: every draw of the policies comes from their own streams
(``failures``, ``retries``, ``relays`` of :data:`~a2a_lab.sim.plan.PURPOSES`), drawn up
front per message and per attempt (:class:`PolicyPlan`, row ``k`` = attempt ``k``,
whatever the number of rows), so two configurations that differ in a policy see the same
failures, backoff draws and re-sent run times: common random numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
from simpy.events import Event, Timeout

from a2a_lab.sim._policy_events import PolicyTrace
from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.model import BLOCKED, GUARD_BLOCKED, NO_REPLY, Model, Trace, race
from a2a_lab.sim.plan import Plan, _by_agent, purpose_seeds, uniforms
from a2a_lab.sim.policies import (
    BLOCK_REASONS,
    CALL_KINDS,
    ERROR_KINDS,
    KIND_INDEX,
    REQUEST_TIMEOUT,
    RUN_KINDS,
    Delivery,
    RetryBudgetTracker,
    SendGuards,
)

__all__ = ["PolicyModel", "PolicyPlan", "build_model", "draw_policy_plan", "policies_active"]

_LLM_TIMEOUT: Final = KIND_INDEX["llm_timeout"]
_CAPACITY: Final = BLOCK_REASONS.index("queue_capacity")


def policies_active(config: SimConfig) -> bool:
    """Whether a policy that changes the core model's behaviour is on.

    The retry policy and idempotency only act on errors and re-sends, so they alone do not
    need the policy model, unless the retry policy has an attempt timeout (which makes
    errors of slow runs).

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


def _kinds(u: np.ndarray, target: np.ndarray, cumulative: np.ndarray, kinds: tuple[int, ...]) -> np.ndarray:
    """The error kind of each uniform by its target's cumulative chances (-1: none)."""
    position = (u[:, None] >= cumulative[target]).sum(axis=1)
    table = np.array([*kinds, -1], dtype=np.int8)
    return table[position]


def draw_policy_plan(config: SimConfig, plan: Plan, seed: int | np.random.SeedSequence = 0) -> PolicyPlan:
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
        run_service[k] = _by_agent(uniforms(seeds["failures"], n, 2, k), plan.target, [a.service for a in agents])
    run_kind = np.full((runs, n), -1, dtype=np.int8)
    call_kind = np.full((0, n), -1, dtype=np.int8)
    failures = config.failures
    if failures is not None:
        known = set(plan.agents)
        unknown = sorted(set(failures.agents) - known)
        if unknown:
            raise ValueError(f"failures.agents: unknown agent(s) {', '.join(unknown)}")
        tables = [failures.table(a) for a in plan.agents]
        run_cum = np.cumsum([[t.get(ERROR_KINDS[k].name, 0.0) for k in RUN_KINDS] for t in tables], axis=1)
        call_cum = np.cumsum([[t.get(ERROR_KINDS[k].name, 0.0) for k in CALL_KINDS] for t in tables], axis=1)
        for k in range(runs):
            kind = _kinds(uniforms(seeds["failures"], n, 0, k), plan.target, run_cum, RUN_KINDS)
            when = uniforms(seeds["failures"], n, 1, k)
            run_kind[k] = kind
            run_service[k] = np.where(
                kind == _LLM_TIMEOUT, failures.llm_timeout_s, np.where(kind >= 0, run_service[k] * when, run_service[k])
            )
        call_kind = np.stack(
            [_kinds(uniforms(seeds["failures"], n, 3, c), plan.target, call_cum, CALL_KINDS) for c in range(calls)]
        )
    jitter = np.stack([uniforms(seeds["retries"], n, r) for r in range(retries)]) if retries else np.empty((0, n))
    depth = None
    if config.relays is not None:
        q = config.relays.continue_probability
        u = 1.0 - uniforms(seeds["relays"], n)  # in (0, 1]
        depth = np.floor(np.log(u) / math.log(q)).astype(np.int64) if q > 0 else np.zeros(n, dtype=np.int64)
    return PolicyPlan(run_kind=run_kind, run_service=run_service, call_kind=call_kind, jitter=jitter, depth=depth)


class PolicyModel(Model):
    """The core model plus the policies (see the module docstring).

    Parameters
    ----------
    plan, config
        As for :class:`~a2a_lab.sim.model.Model`.
    policy_plan
        The policies' draws (:func:`draw_policy_plan`).
    full_flow
        Run every message through the flow process.
    """

    def __init__(self, plan: Plan, config: SimConfig, policy_plan: PolicyPlan, *, full_flow: bool = False) -> None:
        super().__init__(plan, config, full_flow=full_flow)
        n = plan.n
        self.pplan = policy_plan
        if config.failures is not None or config.sync is not None:
            self.lean = [False] * n
        guarded = config.loop_guard is not None or config.collaborate_limit is not None
        self.guards = SendGuards(config.loop_guard, config.collaborate_limit) if guarded else None
        self.delivery = Delivery(config.rate_limit) if config.rate_limit is not None else None
        budget = config.retry.budget_config if config.retry is not None else None
        self.budget = RetryBudgetTracker(budget) if budget is not None else None
        self.names = plan.agents
        self.sender: list[int] = plan.sender.tolist()
        self.target: list[int] = plan.target.tolist()
        self.depth: list[int] | None = policy_plan.depth.tolist() if policy_plan.depth is not None else None
        self.job_service = policy_plan.run_service[0].tolist()
        self.job_error: list[int] = policy_plan.run_kind[0].tolist()
        self.pending = [0] * len(self.sessions)
        # per message
        nan = float("nan")
        self.send_s: list[float] = plan.arrival_s.tolist()
        self.current_job: list[int] = list(range(n))
        self.current_done: dict[int, Event] = {}
        self.round_one = [False] * n
        self.retries = [0] * n
        self.runs = [1] * n
        self.error_kind = [-1] * n
        self.wait_status_text: list[str | None] = [None] * n
        self.wait_error_text: list[str | None] = [None] * n
        self.exceeded = [False] * n
        self.blocked_by = [-1] * n
        self.logged = [True] * n
        self.invisible = [False] * n
        self.retry_rows: list[tuple[int, int, float, int, int, float]] = []
        self._nan = nan

    # -- the send ------------------------------------------------------------------------

    def _arrive(self, event: Event) -> None:
        i = event._value
        j = i + 1
        if j < self.n:
            Timeout(self.env, self._interarrival[j], j).callbacks.append(self._arrive)
        now = self.env._now
        if self.guards is not None:
            depth = self.depth[i] if self.depth is not None else 0
            reason = self.guards.admit_send(self.names[self.sender[i]], self.names[self.target[i]], depth, now)
            if reason >= 0:
                self._refuse(i, reason, GUARD_BLOCKED)
                return
        session = self.job_session[i]
        capacity = self.config.queue_capacity
        if capacity is not None:
            s = self.sessions[session]
            if s.busy + len(s.queue) + self.pending[session] >= capacity:
                self._refuse(i, _CAPACITY, BLOCKED)
                return
        if not self.lean[i]:
            done = self.waiters[i] = self.current_done[i] = self.env.event()
            self.env.process(self._sync_call(i, done) if self.config.sync is not None else self._flow(i))
        self._deliver(i, session, i, now)

    def _refuse(self, i: int, reason: int, outcome: int) -> None:
        """Message ``i`` never reaches its target: a safety limit or a full queue."""
        now = self.env._now
        self.outcome[i] = outcome
        self.blocked_by[i] = reason
        self.runs[i] = 0
        self.gate_s[i] = self.complete_s[i] = now
        if outcome == GUARD_BLOCKED:
            policy = self.config.collaborate_limit if BLOCK_REASONS[reason] == "collaborate_limit" else self.config.loop_guard
            self.logged[i] = policy is not None and policy.blocked_as == "logged"

    def _deliver(self, job: int, session: int, message: int, now: float) -> None:
        """Queue a run on its session now, or when the rate limits let the message through."""
        at = now
        if self.delivery is not None:
            at = self.delivery.time((self.names[self.sender[message]], self.names[self.target[message]]), now)
        if at > now:
            self.pending[session] += 1
            Timeout(self.env, at - now, job).callbacks.append(self._delivered)
        else:
            self.sessions[session].submit(job)

    def _delivered(self, event: Event) -> None:
        job = event._value
        session = self.job_session[job]
        self.pending[session] -= 1
        self.sessions[session].submit(job)

    def submit(self, session: int, kind: int, message: int, service: float) -> Event:
        """Queue a turn or announce job (it never fails: failures are the runs')."""
        done = super().submit(session, kind, message, service)
        self.job_error.append(-1)
        return done

    def _turn_blocked(self, i: int, k: int) -> bool:
        """Whether the loop guard drops the reply of turn ``k + 1`` (odd turns: the requester's)."""
        if self.guards is None:
            return False
        a, b = (self.sender[i], self.target[i]) if k % 2 == 0 else (self.target[i], self.sender[i])
        return not self.guards.admit_reply(self.names[a], self.names[b], self.env._now)

    # -- the synchronous path and the flow ------------------------------------------------

    def _sync_call(self, i: int, done: Event):  # type: ignore[no-untyped-def]  # a SimPy process
        """``sessions_send`` with ``timeoutSeconds > 0``: wait, then start the flow (or not)."""
        sync = self.config.sync
        assert sync is not None
        env = self.env
        if not done.triggered:
            yield race(env, done, sync.timeout_s)
        if done.triggered:
            self.round_one[i] = self.job_error[i] < 0
        elif not sync.emit_on_timeout:
            # the known bug: the tool returns `timeout` and nothing is ever logged
            self.outcome[i] = NO_REPLY
            self.wait_status_text[i] = "timeout"
            self.complete_s[i] = env.now
            self.logged[i] = False
            self.invisible[i] = True
            return
        self.send_s[i] = env.now
        yield from self._flow(i)

    def _flow(self, i: int):  # type: ignore[no-untyped-def]  # a SimPy process
        """The A2A flow (runtime §2) with the policy wait; a synchronous reply skips the wait."""
        env = self.env
        target_agent = self.names[self.target[i]]
        if self.gate is not None:
            granted = yield from self.gate.acquire(target_agent, str(i))
            self.gate_s[i] = env.now
            if not granted:
                self.outcome[i] = BLOCKED
                self.complete_s[i] = env.now
                return
        replied = True if self.round_one[i] else (yield from self._policy_wait(i))
        if not replied:
            self.outcome[i] = NO_REPLY
        else:
            self.reply_s[i] = env.now
            if self.turns_to_run[i] > 0:
                yield from self._ping_pong(i)
            if self.plan.announce_runs[i]:
                yield from self._announce(i)
        self.complete_s[i] = env.now
        if self.gate is not None:
            self.gate.release(target_agent)

    def _policy_wait(self, i: int):  # type: ignore[no-untyped-def]
        """The reference wait loop with errors and the retry policy; True if a reply came."""
        env = self.env
        wait = self.config.wait
        policy = self.config.retry
        pp = self.pplan
        chunk = wait.chunk_s if wait is not None else math.inf
        limit = wait.max_wait_s if wait is not None else math.inf
        attempt_timeout = policy.attempt_timeout if policy is not None else None
        retry_after = self.config.failures.retry_after_s if self.config.failures is not None else 0.0
        drawn = pp.call_kind.shape[0]
        target = self.names[self.target[i]]
        if self.budget is not None:
            self.budget.request(target, env.now)
        elapsed, retries, calls = 0.0, 0, 0
        started = env.now
        status: str | None = None
        error: str | None = None
        while elapsed < limit:
            kind = int(pp.call_kind[calls, i]) if calls < drawn else -1
            calls += 1
            if kind < 0:
                done = self.current_done[i]
                span = chunk if attempt_timeout is None else min(chunk, started + attempt_timeout - env.now)
                if not done.triggered and span > 0:
                    yield done if span == math.inf else race(env, done, span)
                if done.triggered:
                    kind = self.job_error[self.current_job[i]]
                    if kind < 0:
                        self.retries[i] = retries
                        return True
                elif attempt_timeout is not None and env.now >= started + attempt_timeout:
                    kind = REQUEST_TIMEOUT
                else:
                    # a chunk that ends in `timeout` is not an error: the wait goes on
                    status = "timeout"
                    elapsed += chunk
                    continue
            result = ERROR_KINDS[kind].result
            if result.response is not None:
                status, error = result.wait_status, result.wait_error
            info = ERROR_KINDS[kind].info
            self.error_kind[i] = kind
            if policy is None or not policy.should_retry(info, retries):
                break
            if self.budget is not None and not self.budget.allow_retry(target, env.now):
                break
            delay_ms = policy.delay_ms(retries, float(pp.jitter[retries, i]), info, retry_after)
            retries += 1
            self.retry_rows.append((i, retries, env.now, kind, delay_ms, elapsed * 1000.0))
            yield Timeout(env, delay_ms / 1000.0)
            elapsed += delay_ms / 1000.0
            if policy.resend:
                self._resend(i, retries)
            started = env.now
            if wait is not None:
                elapsed += chunk  # the reference counts a chunk for every failed call too
        self.retries[i] = retries
        self.exceeded[i] = elapsed >= limit
        self.wait_status_text[i] = (status or "timeout") if self.exceeded[i] else status
        self.wait_error_text[i] = error
        return False

    def _resend(self, i: int, k: int) -> None:
        """Send message ``i`` again (run ``k``), unless idempotency joins the previous run."""
        now = self.env.now
        current = self.current_job[i]
        failed = not math.isnan(self.job_end[current]) and self.job_error[current] >= 0
        idem = self.config.idempotency
        if idem is not None and not failed and now - self.plan.arrival_s[i] <= idem.ttl_s:
            return
        job = len(self.job_session)
        session = self.job_session[i]
        self.job_session.append(session)
        self.job_kind.append(0)
        self.job_message.append(i)
        self.job_service.append(float(self.pplan.run_service[k, i]))
        self.job_enqueue.append(self._nan)
        self.job_start.append(self._nan)
        self.job_end.append(self._nan)
        self.job_error.append(int(self.pplan.run_kind[k, i]))
        self.waiters[job] = self.current_done[i] = self.env.event()
        self.current_job[i] = job
        self.runs[i] += 1
        self._deliver(job, session, i, now)

    # -- results ---------------------------------------------------------------------------

    def _trace(self) -> Trace:
        trace = super()._trace()
        n = self.n
        rows = self.retry_rows
        cols = list(zip(*rows, strict=True)) if rows else [(), (), (), (), (), ()]
        policy = PolicyTrace(
            send_s=np.asarray(self.send_s, dtype=float),
            retries=np.asarray(self.retries, dtype=np.int32),
            runs=np.asarray(self.runs, dtype=np.int32),
            error_kind=np.asarray(self.error_kind, dtype=np.int8),
            wait_status=self.wait_status_text,
            wait_error=self.wait_error_text,
            max_wait_exceeded=np.asarray(self.exceeded, dtype=bool),
            blocked_by=np.asarray(self.blocked_by, dtype=np.int8),
            logged=np.asarray(self.logged, dtype=bool),
            invisible=np.asarray(self.invisible, dtype=bool),
            ran=~np.isnan(trace.job_start[:n]),
            depth=self.pplan.depth,
            max_retries=self.config.retry.retries_allowed if self.config.retry is not None else 0,
            retry_message=np.asarray(cols[0], dtype=np.int64),
            retry_attempt=np.asarray(cols[1], dtype=np.int32),
            retry_s=np.asarray(cols[2], dtype=float),
            retry_kind=np.asarray(cols[3], dtype=np.int8),
            retry_backoff_ms=np.asarray(cols[4], dtype=np.int64),
            retry_elapsed_ms=np.asarray(cols[5], dtype=float),
        )
        return replace(trace, policy=policy)


def build_model(
    plan: Plan, config: SimConfig, seed: int | np.random.SeedSequence = 0, *, full_flow: bool = False
) -> Model:
    """The model for a configuration: the core one, or :class:`PolicyModel` when a policy is on.

    Examples
    --------
    >>> from a2a_lab.sim import draw_plan, presets
    >>> cfg = presets.mm1(0.8, 1.0, n_messages=10)
    >>> type(build_model(draw_plan(cfg), cfg)).__name__
    'Model'
    """
    if not policies_active(config):
        return Model(plan, config, full_flow=full_flow)
    return PolicyModel(plan, config, draw_policy_plan(config, plan, seed), full_flow=full_flow)
