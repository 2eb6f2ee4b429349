"""The SimPy model of the gateway: ONE flow from the send to the complete, with policy hooks.

**Sessions** (runtime §1). Every session is a FIFO station with ``session_concurrency``
servers (:class:`~a2a_lab.sim.engine.stations.Session`): a *job* (an agent run: a received
message, a re-sent run, a ping-pong turn or the announce step) waits for a free server,
holds it for its service time and leaves. Under the ``lanes`` topology (the default, the
reference gateway today) the session is the run's session lane and, holding it, the job
then waits for a slot of the gateway-wide ``nested`` lane pool (:attr:`Model.pool`, a
:class:`simpy.Resource` of :attr:`~a2a_lab.sim.config.LanePools.nested` slots): every
run is queued twice, as the reference queues it. The concurrency gate stays in the flow
(step 1 below), after the run was queued, as the reference orders them (the ``agent`` call
queues the run, then the flow asks the gate); so the gate limits a target's flows, the
lanes its runs.

**An exchange** (runtime §2). At arrival (:meth:`Model._arrive`) the message meets the send
hooks, then its run is queued on the target's session (the reference calls ``agent``
before starting the flow) and the flow process (:meth:`Model._flow`) runs:

1. asks the target's concurrency gate for a permit
   (:class:`~a2a_lab.sim.engine.stations.GateDriver`); a flow not admitted within the permit
   timeout ends ``concurrency_blocked``;
2. waits for the run (:meth:`Model._wait`, the reference wait loop: ``agent.wait`` in
   chunks up to the wait limit, errors classified by the reference rules and retried per
   the retry policy); no reply ends the flow ``no_reply``;
3. runs the ping-pong turns, each a job queued on the alternate agent's session and
   awaited up to the turn timeout, judging each reply with the reference's
   early-termination rules (:meth:`Model._ping_pong`);
4. runs the announce step on the target's session when the reference would;
5. completes (and releases its permit).

**Policy hooks.** The flow calls the policies at fixed points, each a strategy object with
explicit time, so a policy plugs in without a second copy of the flow (as SimPy's resources
call ``_do_put`` / ``_do_get`` and Ciw's simulation takes its node classes):

- at the send, :class:`SendHook` (default: :class:`~a2a_lab.sim.policies.limits.SendGuards`, the relay
  depth, the collaborate limit and the loop guard) may refuse the message, then the
  session's ``queue_capacity`` (an arrival that finds K runs in the system, counting those
  the rate limiter still holds, is refused like a gate refusal: M/M/1/K);
- :class:`DeliveryHook` (default: :class:`~a2a_lab.sim.policies.limits.Delivery`, Discord's rate
  limits) decides when the run reaches the target's session;
- in the wait, the retry policy (:class:`~a2a_lab.sim.policies.retry.ReferenceRetry` and the other
  :data:`~a2a_lab.sim.policies.retry.RetryPolicyConfig`) and its budget
  (:class:`~a2a_lab.sim.policies.retry.RetryBudgetTracker`) decide whether and when to retry an
  error the failure policy injected (:class:`~a2a_lab.sim.workload.plan.PolicyPlan`); a
  retry of the reference policy polls the SAME run again, a re-sending policy sends a new
  run (through the rate limits) unless idempotency joins it to the previous run;
- before each ping-pong reply, the send hook may drop it (the loop guard counting turns);
- the synchronous path (:class:`~a2a_lab.sim.policies.SyncPath`) makes the caller wait up
  to its timeout before the flow (and its ``a2a.send``) starts; a timeout under the known
  bug leaves no event at all.

A hook that is off costs nothing but a test for None.

**The lean path.** A message whose flow has nothing to decide (no gate, no wait limit, no
turns, no announce step, no failure, no synchronous call) takes a shortcut: its reply and
completion are its run's end, two scheduled events per message. That is the same behaviour,
and ``full_flow=True`` runs every message through the flow to show it.

**Races and the work that goes on.** Every wait that races a timeout waits on an *event*
(the run's end, a permit hand-over) OR a deadline (:func:`~a2a_lab.sim.engine.stations.race`); nothing
stays queued on the requester's behalf when the deadline wins: a refused flow leaves the
gate's queue, so no later permit is handed to a flow that is gone and no message is lost.
What the requester stops waiting for is the agent's work, which is NOT cancelled, as in the
reference: a run whose requester gave up still runs to its end on its session, delaying the
messages queued behind it; its reply is discarded (no event is logged for it). A run that
ends at the very instant a deadline expires counts as finished.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Generator
from functools import lru_cache
from typing import Any, Final, Protocol, cast

import numpy as np
import simpy
from simpy.events import Event, Timeout

from a2a_lab.reference.runtime.skip_tokens import is_reply_skip
from a2a_lab.reference.runtime.termination import TERMINATION_REASONS, should_terminate_ping_pong
from a2a_lab.sim.budget import run_within
from a2a_lab.sim.config import ENDINGS, SimConfig
from a2a_lab.sim.engine.stations import GateDriver, Session, race
from a2a_lab.sim.engine.trace import (
    BLOCKED,
    GUARD_BLOCKED,
    NO_REPLY,
    REPLIED,
    Trace,
    as_numpy,
    column,
    filled,
)
from a2a_lab.sim.policies.failures import ERROR_KINDS, REQUEST_TIMEOUT
from a2a_lab.sim.policies.limits import BLOCK_REASONS, Delivery, SendGuards
from a2a_lab.sim.policies.retry import RetryBudgetTracker
from a2a_lab.sim.workload.plan import (
    CONCLUSION_OFFSET,
    MINIMAL_OFFSET,
    REPLY_TEXTS,
    SKIP_TEXT,
    TURN_OFFSET,
    Plan,
    PolicyPlan,
    draw_policy_plan,
    policies_active,
)
from a2a_lab.sim.workload.texts import CONCLUSIONS, MINIMAL, TURNS

__all__ = ["DeliveryHook", "Model", "SendHook", "build_model"]

_ENDING: Final = {name: i for i, name in enumerate(ENDINGS)}
_REASON: Final = {name: i for i, name in enumerate(TERMINATION_REASONS)}
_CAPACITY: Final = BLOCK_REASONS.index("queue_capacity")
_NAN: Final = float("nan")

#: A SimPy process body (what :meth:`simpy.Environment.process` takes) returning ``T``.
Process = Generator[Event, Any, Any]


class SendHook(Protocol):
    """Decides whether a send, and a ping-pong reply, may go (times in simulated seconds)."""

    def admit_send(self, from_id: str, to_id: str, depth: float, t_s: float) -> int:
        """-1 if the send passes (and is recorded), else its index in :data:`~a2a_lab.sim.policies.limits.BLOCK_REASONS`."""
        ...

    def admit_reply(self, from_id: str, to_id: str, t_s: float) -> bool:
        """Whether a ping-pong reply passes."""
        ...


class DeliveryHook(Protocol):
    """Decides when a message of a directed pair sent at ``t`` reaches its target."""

    def time(self, pair: tuple[str, str], t: float) -> float:
        """The delivery time (``>= t``)."""
        ...


@lru_cache(maxsize=4096)
def _judge(text_id: int, previous_id: int) -> int:
    """Termination reason index of a ping-pong reply (-1 = the loop goes on), by the reference."""
    text = REPLY_TEXTS[text_id]
    if is_reply_skip(text):
        return _REASON["explicit_skip"]
    previous = (REPLY_TEXTS[previous_id],) if previous_id >= 0 else ()
    result = should_terminate_ping_pong(text, previous)
    return _REASON[result.reason] if result.terminate else -1


def _filled(n: int, default: float, values: dict[int, Any], dtype: Any) -> np.ndarray:
    """An array of ``default`` with the entries of a sparse ``{index: value}`` set."""
    out = np.full(n, default, dtype=dtype)
    if values:
        out[np.fromiter(values.keys(), dtype=np.int64, count=len(values))] = list(values.values())
    return out


class Model:
    """One run of the gateway model on a :class:`~a2a_lab.sim.workload.plan.Plan`.

    Parameters
    ----------
    plan
        The pre-drawn inputs.
    config
        The configuration the plan was drawn from (its policies).
    policy_plan
        The policies' draws (:func:`~a2a_lab.sim.workload.plan.draw_policy_plan`); needed when
        :func:`~a2a_lab.sim.workload.plan.policies_active` (:func:`build_model` and
        :func:`~a2a_lab.sim.run.simulate` draw it; the model itself does not check).
    guards, delivery
        The send and delivery hooks; default: those of the configuration
        (:class:`~a2a_lab.sim.policies.limits.SendGuards` when a loop guard or a collaborate limit is
        on, :class:`~a2a_lab.sim.policies.limits.Delivery` when rate limits are).
    full_flow
        Run every message through the flow process, even those that take the shortcut
        (for tests: the results are the same).
    """

    # slots: the flow reads these attributes per event, and an instance dict of this many
    # keys loses CPython's fast attribute access (measured: ~10 % of the lean path)
    __slots__ = (
        "_admission",
        "_arrived",
        "_interarrival",
        "announce_ran",
        "announced",
        "blocked_by",
        "budget",
        "capacity",
        "complete_s",
        "config",
        "current_done",
        "current_job",
        "delivery",
        "depth",
        "env",
        "error_kind",
        "exceeded",
        "gate",
        "gate_s",
        "guards",
        "invisible",
        "job_end",
        "job_enqueue",
        "job_error",
        "job_kind",
        "job_lane",
        "job_message",
        "job_service",
        "job_session",
        "job_start",
        "lean",
        "n",
        "names",
        "outcome",
        "pending",
        "plan",
        "pool",
        "pplan",
        "replied_in_call",
        "reply_s",
        "retries",
        "retry_rows",
        "runs",
        "send_s",
        "sender",
        "sessions",
        "target",
        "termination",
        "turn_columns",
        "turns",
        "turns_to_run",
        "unlogged",
        "wait_error",
        "wait_status",
        "waiters",
    )

    def __init__(
        self,
        plan: Plan,
        config: SimConfig,
        policy_plan: PolicyPlan | None = None,
        *,
        guards: SendHook | None = None,
        delivery: DeliveryHook | None = None,
        full_flow: bool = False,
    ) -> None:
        self.plan = plan
        self.config = config
        self.pplan = policy_plan
        n = plan.n
        self.n = n
        same_session = plan.requester_session == plan.target_session
        self.turns_to_run = np.where(same_session, 0, plan.effective_turns)
        lean = (self.turns_to_run == 0) & ~plan.announce_runs
        if (
            config.gate is not None
            or config.wait is not None
            or config.failures is not None
            or config.sync is not None
        ):
            lean[:] = False
        if full_flow:
            lean[:] = False
        self.lean: list[bool] = lean.tolist()
        self.env = simpy.Environment()
        #: the gateway-wide ``nested`` lane (A2A sends, ping-pong and announce steps all
        #: run there); None under the ``agent_main`` topology (no gateway-wide limit)
        self.pool = (
            simpy.Resource(self.env, capacity=config.lanes.nested)
            if config.topology == "lanes"
            else None
        )
        self.sessions = [
            Session(self, s, int(c), self.pool)
            for s, c in enumerate(plan.session_capacity.tolist())
        ]
        self.gate = (
            GateDriver(
                self.env,
                config.gate.concurrency_config(),
                corrected_release=config.gate.corrected_release,
            )
            if config.gate is not None
            else None
        )
        # the hooks
        if guards is None and (
            config.loop_guard is not None or config.collaborate_limit is not None
        ):
            guards = SendGuards(config.loop_guard, config.collaborate_limit)
        self.guards = guards
        if delivery is None and config.rate_limit is not None:
            delivery = Delivery(config.rate_limit)
        self.delivery = delivery
        self.capacity = config.queue_capacity
        self._admission = guards is not None or self.capacity is not None
        budget = config.retry.budget_config if config.retry is not None else None
        self.budget = RetryBudgetTracker(budget) if budget is not None else None
        self.names = plan.agents
        self.sender: list[int] = plan.sender.tolist()
        self.target: list[int] = plan.target.tolist()
        self.depth: list[int] | None = (
            policy_plan.depth.tolist()
            if policy_plan is not None and policy_plan.depth is not None
            else None
        )
        self._init_records(plan, policy_plan)

    def _init_records(self, plan: Plan, policy_plan: PolicyPlan | None) -> None:
        """The arrays and sparse maps the run fills, one slot per job or message."""
        n = plan.n
        # job and message columns: typed arrays (trace.column; scalar stores are cheaper
        # than on numpy arrays, and a million messages hold no Python float objects)
        self.job_session: array[int] = column("i", plan.target_session)
        self.job_kind: array[int] = filled("b", 0, n)
        self.job_message: array[int] = column("q", np.arange(n))
        self.job_service: array[float] = column(
            "d", policy_plan.run_service[0] if policy_plan is not None else plan.service_s
        )
        self.job_enqueue: array[float] = filled("d", _NAN, n)
        self.job_lane: array[float] = filled("d", _NAN, n)
        self.job_start: array[float] = filled("d", _NAN, n)
        self.job_end: array[float] = filled("d", _NAN, n)
        #: the error a job's run ends in (only failing jobs are listed)
        self.job_error: dict[int, int] = {}
        if policy_plan is not None:
            self.job_error = {
                int(i): int(k) for i, k in enumerate(policy_plan.run_kind[0].tolist()) if k >= 0
            }
        # message arrays; the policies' state is sparse: only the messages they touch
        self.gate_s: array[float] = filled("d", _NAN, n)
        self.reply_s: array[float] = filled("d", _NAN, n)
        self.complete_s: array[float] = filled("d", _NAN, n)
        self.outcome: array[int] = filled("b", REPLIED, n)
        self.turns: array[int] = filled("i", 0, n)
        self.termination: array[int] = filled("b", -1, n)
        self.announce_ran: array[int] = filled("B", False, n)
        self.announced: array[int] = filled("B", False, n)
        self.send_s: dict[int, float] = {}
        self.retries: dict[int, int] = {}
        self.runs: dict[int, int] = {}
        self.error_kind: dict[int, int] = {}
        self.wait_status: dict[int, str] = {}
        self.wait_error: dict[int, str] = {}
        self.exceeded: set[int] = set()
        self.blocked_by: dict[int, int] = {}
        self.unlogged: set[int] = set()
        self.invisible: set[int] = set()
        self.replied_in_call: set[int] = set()
        self.pending = [0] * len(self.sessions)
        #: per logged ping-pong reply: message, turn number, time, text, reason
        self.turn_columns = (array("q"), array("i"), array("d"), array("i"), array("b"))
        self.retry_rows: list[tuple[int, int, float, int, int, float]] = []
        #: the end event of every job someone waits for (the flows' jobs)
        self.waiters: dict[int, Event] = {}
        #: per message in a flow: the job of its current run and the event of its end (a
        #: re-send makes new ones; until then the message's own job)
        self.current_job: dict[int, int] = {}
        self.current_done: dict[int, Event] = {}
        self._interarrival: array[float] = column("d", plan.interarrival_s)
        self._arrived = 0

    # -- the send ------------------------------------------------------------------------

    def run(self) -> Trace:
        """Run until every exchange has ended and every session is idle.

        Raises
        ------
        BudgetExceeded
            The run took more SimPy steps or wall time than ``config.budget`` allows.
        """
        if self.n:
            Timeout(self.env, self._interarrival[0]).callbacks.append(self._arrive)
        run_within(self.env, self.config.budget)
        return self._trace()

    def _arrive(self, _: Event) -> None:
        # arrivals come one after another (each schedules the next): a counter numbers them
        i = self._arrived
        j = self._arrived = i + 1
        if j < self.n:
            Timeout(self.env, self._interarrival[j]).callbacks.append(self._arrive)
        if self._admission and not self._admit(i):
            return
        if not self.lean[i]:
            done = self.waiters[i] = self.current_done[i] = self.env.event()
            self.env.process(
                self._sync_call(i, done) if self.config.sync is not None else self._flow(i)
            )
        if self.delivery is None:
            self.sessions[self.job_session[i]].submit(i)
        else:
            self._deliver(i, i)

    def _admit(self, i: int) -> bool:
        """The send hook, then the queue capacity: whether message ``i`` reaches its target."""
        now = self.env.now
        if self.guards is not None:
            depth = self.depth[i] if self.depth is not None else 0
            reason = self.guards.admit_send(
                self.names[self.sender[i]], self.names[self.target[i]], depth, now
            )
            if reason >= 0:
                self._refuse(i, reason, GUARD_BLOCKED)
                return False
        if self.capacity is not None:
            session = self.job_session[i]
            s = self.sessions[session]
            waiting = len(s.queue) if s.queue is not None else 0
            if s.busy + waiting + self.pending[session] >= self.capacity:
                self._refuse(i, _CAPACITY, BLOCKED)
                return False
        return True

    def _refuse(self, i: int, reason: int, outcome: int) -> None:
        """Message ``i`` never reaches its target: a safety limit or a full queue."""
        now = self.env.now
        self.outcome[i] = outcome
        self.blocked_by[i] = reason
        self.runs[i] = 0
        self.gate_s[i] = self.complete_s[i] = now
        if outcome == GUARD_BLOCKED:
            policy = (
                self.config.collaborate_limit
                if BLOCK_REASONS[reason] == "collaborate_limit"
                else self.config.loop_guard
            )
            if policy is None or policy.blocked_as != "logged":
                self.unlogged.add(i)

    def _deliver(self, job: int, message: int) -> None:
        """Queue a run on its session now, or when the delivery hook lets the message through."""
        now = self.env.now
        session = self.job_session[job]
        at = now
        if self.delivery is not None:
            at = self.delivery.time(
                (self.names[self.sender[message]], self.names[self.target[message]]), now
            )
        if at > now:
            self.pending[session] += 1
            Timeout(self.env, at - now, job).callbacks.append(self._delivered)
        else:
            self.sessions[session].submit(job)

    def _delivered(self, event: Event) -> None:
        job = cast(int, event.value)  # SimPy types an event's value as Optional[Any]
        session = self.job_session[job]
        self.pending[session] -= 1
        self.sessions[session].submit(job)

    def _add_job(self, session: int, kind: int, message: int, service: float) -> int:
        job = len(self.job_session)
        self.job_session.append(session)
        self.job_kind.append(kind)
        self.job_message.append(message)
        self.job_service.append(service)
        self.job_enqueue.append(_NAN)
        self.job_lane.append(_NAN)
        self.job_start.append(_NAN)
        self.job_end.append(_NAN)
        return job

    def submit(self, session: int, kind: int, message: int, service: float) -> Event:
        """Queue a new job (a turn or the announce step) and return the event of its end."""
        job = self._add_job(session, kind, message, service)
        done = self.waiters[job] = self.env.event()
        self.sessions[session].submit(job)
        return done

    # -- the flow ----------------------------------------------------------------------------

    def _sync_call(self, i: int, done: Event) -> Process:
        """``sessions_send`` with ``timeoutSeconds > 0``: wait, then start the flow (or not)."""
        sync = self.config.sync
        assert sync is not None
        env = self.env
        if not done.triggered:
            yield race(env, done, sync.timeout_s)
        if done.triggered:
            if i not in self.job_error:
                self.replied_in_call.add(i)
        elif not sync.emit_on_timeout:
            # the known bug: the tool returns `timeout` and nothing is ever logged
            self.outcome[i] = NO_REPLY
            self.wait_status[i] = "timeout"
            self.complete_s[i] = env.now
            self.unlogged.add(i)
            self.invisible.add(i)
            return
        self.send_s[i] = env.now
        yield from self._flow(i)

    def _flow(self, i: int) -> Process:
        """One ``sessions_send`` flow (runtime §2), from the send to the complete."""
        env = self.env
        target_agent = self.names[self.target[i]]
        if self.gate is not None:
            granted = yield from self.gate.acquire(target_agent, str(i))
            self.gate_s[i] = env.now
            if not granted:
                self.outcome[i] = BLOCKED
                self.complete_s[i] = env.now
                del self.current_done[i]
                return
        replied = True if i in self.replied_in_call else (yield from self._wait(i))
        # the wait is over: drop its events (a run of thousands keeps no dead events alive)
        del self.current_done[i]
        self.current_job.pop(i, None)
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

    def _wait(self, i: int) -> Generator[Event, Any, bool]:
        """The reference wait loop with errors and the retry policy; True if a reply came.

        ``agent.wait`` calls in chunks; a chunk that ends in ``timeout`` is not an error and
        the wait goes on. An error is classified by the reference rules and retried per the
        retry policy (backoff, ``a2a.retry``; ``elapsed`` adds the backoff and a chunk per
        error, as the reference does). A run-level error ends the run early (the session is
        free sooner); a call-level one fails one call at once.
        """
        env = self.env
        wait = self.config.wait
        policy = self.config.retry
        pp = self.pplan
        chunk = wait.chunk_s if wait is not None else math.inf
        limit = wait.max_wait_s if wait is not None else math.inf
        attempt_timeout = policy.attempt_timeout if policy is not None else None
        drawn = pp.call_kind.shape[0] if pp is not None else 0
        target = self.names[self.target[i]]
        if self.budget is not None:
            self.budget.request(target, env.now)
        elapsed, retries, calls = 0.0, 0, 0
        started = env.now
        status: str | None = None
        error: str | None = None
        while elapsed < limit:
            kind = int(pp.call_kind[calls, i]) if pp is not None and calls < drawn else -1
            calls += 1
            if kind < 0:
                done = self.current_done[i]
                span = (
                    chunk
                    if attempt_timeout is None
                    else min(chunk, started + attempt_timeout - env.now)
                )
                if not done.triggered and span > 0:
                    yield done if span == math.inf else race(env, done, span)
                if done.triggered:
                    kind = self.job_error.get(self.current_job.get(i, i), -1)
                    if kind < 0:
                        if retries:
                            self.retries[i] = retries
                        return True
                elif attempt_timeout is not None and env.now >= started + attempt_timeout:
                    kind = REQUEST_TIMEOUT
                else:
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
            assert pp is not None  # an error was drawn
            retry_after = (
                self.config.failures.retry_after_s if self.config.failures is not None else 0.0
            )
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
        if retries:
            self.retries[i] = retries
        exceeded = elapsed >= limit
        if exceeded:
            self.exceeded.add(i)
        status = (status or "timeout") if exceeded else status
        if status is not None:
            self.wait_status[i] = status
        if error is not None:
            self.wait_error[i] = error
        return False

    def _resend(self, i: int, k: int) -> None:
        """Send message ``i`` again (run ``k``), unless idempotency joins the previous run."""
        assert self.pplan is not None
        now = self.env.now
        current = self.current_job.get(i, i)
        failed = not math.isnan(self.job_end[current]) and current in self.job_error
        idem = self.config.idempotency
        if idem is not None and not failed and now - self.plan.arrival_s[i] <= idem.ttl_s:
            return
        job = self._add_job(self.job_session[i], 0, i, float(self.pplan.run_service[k, i]))
        error = int(self.pplan.run_kind[k, i])
        if error >= 0:
            self.job_error[job] = error
        self.waiters[job] = self.current_done[i] = self.env.event()
        self.current_job[i] = job
        self.runs[i] = self.runs.get(i, 1) + 1
        self._deliver(job, i)

    def _ping_pong(self, i: int) -> Process:
        """Ping-pong turns (runtime §3) on the alternate sessions; records the logged replies."""
        env = self.env
        plan = self.plan
        policy = self.config.ping_pong
        sessions = (int(plan.requester_session[i]), int(plan.target_session[i]))
        previous = -1
        reason = -1
        actual = 0
        for k in range(int(self.turns_to_run[i])):
            done = self.submit(sessions[k % 2], 1, i, float(plan.turn_service_s[k, i]))
            yield race(env, done, policy.turn_timeout_s)
            if not done.triggered:
                reason = _REASON["turn_timeout"]
                break
            ending = int(plan.turn_ending[k, i])
            if ending == _ENDING["agent_error"]:
                reason = _REASON["agent_error"]
                break
            if ending == _ENDING["empty_reply"]:
                reason = _REASON["empty_reply"]
                break
            text = self._turn_text(ending, float(plan.turn_choice[k, i]), previous)
            verdict = _judge(text, previous)
            if verdict == _REASON["explicit_skip"]:
                reason = verdict
                break
            if self._turn_blocked(i, k):
                reason = _REASON["aborted"]
                break
            actual = k + 1
            message, number, at, texts, reasons = self.turn_columns
            message.append(i)
            number.append(actual)
            at.append(env.now)
            texts.append(text)
            reasons.append(verdict)
            if verdict >= 0:
                reason = verdict
                break
            previous = text
        self.turns[i] = actual
        self.termination[i] = reason

    def _turn_blocked(self, i: int, k: int) -> bool:
        """Whether the send hook drops the reply of turn ``k + 1`` (odd turns: the requester's)."""
        if self.guards is None:
            return False
        a, b = (self.sender[i], self.target[i]) if k % 2 == 0 else (self.target[i], self.sender[i])
        return not self.guards.admit_reply(self.names[a], self.names[b], self.env.now)

    @staticmethod
    def _turn_text(ending: int, u: float, previous: int) -> int:
        """The text of a ping-pong reply with the drawn ending (index in ``REPLY_TEXTS``)."""
        if ending == _ENDING["explicit_skip"]:
            return SKIP_TEXT
        if ending == _ENDING["conclusion"]:
            return CONCLUSION_OFFSET + min(int(u * len(CONCLUSIONS)), len(CONCLUSIONS) - 1)
        if ending == _ENDING["minimal"]:
            return MINIMAL_OFFSET + min(int(u * len(MINIMAL)), len(MINIMAL) - 1)
        if ending == _ENDING["repetition"] and previous >= 0:
            return previous
        choice = TURN_OFFSET + min(int(u * len(TURNS)), len(TURNS) - 1)
        if choice == previous:
            choice = TURN_OFFSET + (choice - TURN_OFFSET + 1) % len(TURNS)
        return choice

    def _announce(self, i: int) -> Process:
        """The announce step on the target's session (runtime §2 step 5)."""
        assert self.config.announce is not None
        plan = self.plan
        self.announce_ran[i] = True
        done = self.submit(int(plan.target_session[i]), 2, i, float(plan.announce_service_s[i]))
        yield race(self.env, done, self.config.announce.timeout_s)
        self.announced[i] = bool(done.triggered and not plan.announce_skip[i])

    # -- results -----------------------------------------------------------------------------

    def _trace(self) -> Trace:
        n = self.n
        turns = [as_numpy(values) for values in self.turn_columns]
        retries = list(zip(*self.retry_rows, strict=True)) if self.retry_rows else [()] * 6
        wait_status: list[str | None] = [None] * n
        for i, status in self.wait_status.items():
            wait_status[i] = status
        wait_error: list[str | None] = [None] * n
        for i, error in self.wait_error.items():
            wait_error[i] = error
        send_s = self.plan.arrival_s.astype(float)
        for i, t in self.send_s.items():
            send_s[i] = t
        depth = self.pplan.depth if self.pplan is not None else None
        policy = self.config.retry
        return Trace(
            # the columns' own memory (no copy)
            job_session=as_numpy(self.job_session),
            job_kind=as_numpy(self.job_kind),
            job_message=as_numpy(self.job_message),
            job_enqueue=as_numpy(self.job_enqueue),
            job_lane=as_numpy(self.job_lane),
            job_start=as_numpy(self.job_start),
            job_end=as_numpy(self.job_end),
            job_service=as_numpy(self.job_service),
            gate_s=as_numpy(self.gate_s),
            reply_s=as_numpy(self.reply_s),
            complete_s=as_numpy(self.complete_s),
            outcome=as_numpy(self.outcome),
            turns=as_numpy(self.turns),
            termination=as_numpy(self.termination),
            announce_ran=as_numpy(self.announce_ran, bool),
            announced=as_numpy(self.announced, bool),
            send_s=send_s,
            retries=_filled(n, 0, self.retries, np.int32),
            runs=_filled(n, 1, self.runs, np.int32),
            error_kind=_filled(n, -1, self.error_kind, np.int8),
            wait_status=wait_status,
            wait_error=wait_error,
            max_wait_exceeded=_filled(n, False, dict.fromkeys(self.exceeded, True), bool),
            blocked_by=_filled(n, -1, self.blocked_by, np.int8),
            logged=_filled(n, True, dict.fromkeys(self.unlogged, False), bool),
            invisible=_filled(n, False, dict.fromkeys(self.invisible, True), bool),
            depth=depth.astype(float) if depth is not None else np.full(n, _NAN),
            max_retries=policy.retries_allowed if policy is not None else 0,
            turn_message=turns[0],
            turn_number=turns[1],
            turn_s=turns[2],
            turn_text=turns[3],
            turn_reason=turns[4],
            retry_message=np.asarray(retries[0], dtype=np.int64),
            retry_attempt=np.asarray(retries[1], dtype=np.int32),
            retry_s=np.asarray(retries[2], dtype=float),
            retry_kind=np.asarray(retries[3], dtype=np.int8),
            retry_backoff_ms=np.asarray(retries[4], dtype=np.int64),
            retry_elapsed_ms=np.asarray(retries[5], dtype=float),
        )


def build_model(
    plan: Plan,
    config: SimConfig,
    seed: int | np.random.SeedSequence = 0,
    *,
    full_flow: bool = False,
) -> Model:
    """The model of a configuration, with the policies' draws when a policy is on.

    Examples
    --------
    >>> from a2a_lab.sim import draw_plan, presets
    >>> cfg = presets.mm1(0.8, 1.0, n_messages=10)
    >>> build_model(draw_plan(cfg), cfg).pplan is None
    True
    """
    if policies_active(config):
        return Model(plan, config, draw_policy_plan(config, plan, seed), full_flow=full_flow)
    return Model(plan, config, None, full_flow=full_flow)
