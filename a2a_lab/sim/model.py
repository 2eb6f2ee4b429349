"""The SimPy model of the gateway: sessions, the concurrency gate and the A2A flow.

**Sessions** (runtime §1). Every session is a FIFO station with ``session_concurrency``
servers (:class:`Session`): a *job* (an agent run: a received message, a ping-pong turn or
the announce step) waits for a free server, holds it for its service time and leaves. A
session is driven by SimPy event callbacks rather than one process per job, which keeps a
message that needs no decisions down to two scheduled events (its arrival and its service
end): the textbook presets run at several times the speed of a minimal SimPy M/M/1.

**An exchange** (runtime §2, asynchronous path). At arrival the message's run is queued on
the target's session (the reference calls ``agent`` before starting the flow), then the
flow process (:meth:`Model._flow`):

1. asks the target's concurrency gate for a permit (:class:`GateDriver`, the reference gate
   :class:`~a2a_lab.reference.runtime.ConcurrencyGate` driven by SimPy); a flow not admitted within
   the permit timeout ends ``concurrency_blocked``;
2. waits for the run in chunks up to the wait limit (:meth:`Model._wait_for_run`); a run
   not finished by then ends the flow ``no_reply`` (reason ``timeout``);
3. runs the ping-pong turns, each a job queued on the alternate agent's session and
   awaited up to the turn timeout, judging each reply with the reference's early-termination
   rules (:meth:`Model._ping_pong`);
4. runs the announce step on the target's session when the reference would;
5. completes (and releases its permit).

A message whose flow has nothing to decide (no gate, no wait limit, no turns, no announce
step) takes a shortcut: its reply and completion are its run's end. That is the same
behaviour, and a test runs every message through the full flow to show it.

**Races and the work that goes on.** Every wait that races a timeout waits on an *event*
(the run's end, a permit hand-over) OR a :class:`Deadline`; nothing stays queued on the
requester's behalf when the deadline wins: a refused flow leaves the gate's queue
(:meth:`~a2a_lab.reference.runtime.ConcurrencyGate.expire`), so no later permit is handed to a flow
that is gone and no message is lost. What the requester stops waiting for is the agent's
work, which is NOT cancelled, as in the reference: a run (or a ping-pong turn or announce
step) whose requester gave up still runs to its end on its session, delaying the messages
queued behind it and counting in the session's utilisation; its reply is discarded (no
event is logged for it). A run that ends at the very instant a deadline expires counts as
finished: deadlines are scheduled at a priority below every other event of that instant.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import simpy
from simpy.events import Event, EventPriority, Timeout

from a2a_lab.reference.runtime.concurrency import ConcurrencyConfig, ConcurrencyError, ConcurrencyGate
from a2a_lab.reference.runtime.skip_tokens import is_reply_skip
from a2a_lab.reference.runtime.termination import TERMINATION_REASONS, should_terminate_ping_pong
from a2a_lab.sim import _texts as tx
from a2a_lab.sim.config import ENDINGS, SimConfig
from a2a_lab.sim.plan import CONCLUSION_OFFSET, MINIMAL_OFFSET, REPLY_TEXTS, SKIP_TEXT, TURN_OFFSET, Plan

if TYPE_CHECKING:
    from a2a_lab.sim._policy_events import PolicyTrace

__all__ = ["JOB_KINDS", "OUTCOMES", "WAIT_STATUSES", "Deadline", "GateDriver", "Model", "Session", "Trace", "race"]

#: Outcome codes of a message (runtime §3b); ``guard_blocked``: a safety limit of
#: :mod:`~a2a_lab.sim.policies` stopped the send.
OUTCOMES: Final = ("replied", "no_reply", "concurrency_blocked", "guard_blocked")
#: ``waitStatus`` codes of a flow that got no reply (0 = none).
WAIT_STATUSES: Final = (None, "timeout")
#: Job kinds on a session.
JOB_KINDS: Final = ("message", "turn", "announce")

REPLIED, NO_REPLY, BLOCKED, GUARD_BLOCKED = 0, 1, 2, 3
#: Below SimPy's NORMAL (1): everything else happening at a deadline's instant goes first.
LATE: Final = EventPriority(2)

_ENDING = {name: i for i, name in enumerate(ENDINGS)}
_REASON = {name: i for i, name in enumerate(TERMINATION_REASONS)}


class Deadline(Timeout):
    """A timeout processed after every other event of its instant ("completion wins").

    Examples
    --------
    >>> env = simpy.Environment()
    >>> order = []
    >>> Deadline(env, 5).callbacks.append(lambda event: order.append("deadline"))
    >>> env.timeout(5).callbacks.append(lambda event: order.append("completion"))
    >>> env.run()
    >>> order  # scheduled first, processed last
    ['completion', 'deadline']
    """

    def __init__(self, env: simpy.Environment, delay: float, value: Any = None) -> None:
        # Timeout.__init__ with another priority (SimPy inlines it the same way)
        self.env = env
        self.callbacks = []
        self._value = value
        self._delay = delay
        self._ok = True
        env.schedule(self, LATE, delay)


def race(env: simpy.Environment, event: Event, timeout: float) -> Event:
    """An event that fires when ``event`` fires or a :class:`Deadline` of ``timeout`` passes.

    Check ``event.triggered`` afterwards to know which came first; when both come at the
    same instant ``event`` wins. Cheaper than SimPy's ``event | timeout`` condition, which
    builds a value dictionary per wait.

    Examples
    --------
    >>> env = simpy.Environment()
    >>> done = env.event()
    >>> def worker():
    ...     yield env.timeout(10)
    ...     done.succeed()
    >>> def waiter():
    ...     yield race(env, done, 10)
    ...     return env.now, done.triggered
    >>> _ = env.process(worker())
    >>> env.run(env.process(waiter()))
    (10, True)
    """
    woken = env.event()

    def wake(_: Event) -> None:
        if not woken.triggered:
            woken.succeed()

    if event.callbacks is None:  # already processed
        woken.succeed()
    else:
        event.callbacks.append(wake)
        Deadline(env, timeout).callbacks.append(wake)
    return woken


class Session:
    """A session: a FIFO station with ``capacity`` servers, driven by event callbacks.

    Jobs are integers indexing the model's job arrays (service time, enqueue, start, end).
    """

    __slots__ = ("_env", "_model", "busy", "capacity", "index", "queue")

    def __init__(self, model: Model, index: int, capacity: int) -> None:
        self._model = model
        self._env = model.env
        self.index = index
        self.capacity = capacity
        self.busy = 0
        self.queue: deque[int] = deque()

    # The three methods below run once or twice per job: they read SimPy's `_now` and
    # `_value` slots directly (what `now` and `value` return, without the property calls).

    def submit(self, job: int) -> None:
        """A job arrives now: it starts at once if a server is free, else queues."""
        self._model.job_enqueue[job] = self._env._now
        if self.busy < self.capacity:
            self.busy += 1
            self._begin(job)
        else:
            self.queue.append(job)

    def _begin(self, job: int) -> None:
        m = self._model
        m.job_start[job] = self._env._now
        Timeout(self._env, m.job_service[job], job).callbacks.append(self._finish)

    def _finish(self, event: Event) -> None:
        job = event._value
        m = self._model
        now = m.job_end[job] = self._env._now
        if self.queue:
            self._begin(self.queue.popleft())
        else:
            self.busy -= 1
        if job < m.n and m.lean[job]:
            # the shortcut: the reply and the completion are the run's end
            m.reply_s[job] = m.complete_s[job] = now
        else:
            m.waiters.pop(job).succeed()


class GateDriver:
    """The reference concurrency gate (:class:`~a2a_lab.reference.runtime.ConcurrencyGate`) on SimPy time.

    :meth:`acquire` is a SimPy sub-process: granted at once, or queued until a release
    hands it a permit (True) or its permit timeout passes (False: refused, and removed from
    the gate's queue so that no later release wakes a flow that is gone). A release at the
    very instant of the timeout still admits the flow. Every refusal is kept in
    :attr:`refusals` as the gate's :class:`~a2a_lab.reference.runtime.ConcurrencyError`.

    Examples
    --------
    >>> env = simpy.Environment()
    >>> gate = GateDriver(env, ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=50_000))
    >>> log = []
    >>> def flow(name, hold):
    ...     ok = yield from gate.acquire("eden", name)
    ...     log.append((env.now, name, ok))
    ...     if ok:
    ...         yield env.timeout(hold)
    ...         gate.release("eden")
    >>> for name, hold in (("f1", 50.0), ("f2", 10.0), ("f3", 10.0)):
    ...     _ = env.process(flow(name, hold))
    >>> env.run()
    >>> log  # f2 gets f1's permit at the instant its timeout expires; f3 times out
    [(0, 'f1', True), (50.0, 'f2', True), (50.0, 'f3', False)]
    >>> [(e.agent_id, e.flow_id, e.at_ms) for e in gate.refusals]
    [('eden', 'f3', 50000.0)]
    """

    def __init__(self, env: simpy.Environment, config: ConcurrencyConfig, *, corrected_release: bool = False) -> None:
        self.env = env
        self.gate = ConcurrencyGate(config, corrected_release=corrected_release)
        self.refusals: list[ConcurrencyError] = []
        self._waiting: dict[tuple[str, str], Event] = {}

    def acquire(self, agent_id: str, flow_id: str):  # type: ignore[no-untyped-def]  # a SimPy generator
        """Ask for a permit; a generator to ``yield from``, returning whether it was granted."""
        now_ms = self.env.now * 1000.0
        if self.gate.acquire(agent_id, flow_id, now_ms) == "granted":
            return True
        woken = self.env.event()
        self._waiting[agent_id, flow_id] = woken
        timeout_ms = self.gate.config.queue_timeout_ms
        yield race(self.env, woken, timeout_ms / 1000.0)
        if woken.triggered:
            self.gate.resume(agent_id, flow_id)
            return True
        del self._waiting[agent_id, flow_id]
        # the gate's own deadline for this waiter (same arithmetic): expiring exactly it
        # removes the waiter even where env.now * 1000 rounds below it; waiters due at the
        # same instant are refused with it (their own deadlines find them gone)
        self.refusals += self.gate.expire(max(self.env.now * 1000.0, now_ms + timeout_ms))
        return False

    def release(self, agent_id: str) -> None:
        """Give a permit back; the oldest waiter, if any, is woken now."""
        woken = self.gate.release(agent_id)
        if woken is not None:
            self._waiting.pop((agent_id, woken)).succeed()

    @property
    def pending(self) -> int:
        """Flows waiting for a permit (0 once the simulation has drained)."""
        return len(self._waiting)


@lru_cache(maxsize=4096)
def _judge(text_id: int, previous_id: int) -> int:
    """Termination reason index of a ping-pong reply (-1 = the loop goes on), by the reference."""
    text = REPLY_TEXTS[text_id]
    if is_reply_skip(text):
        return _REASON["explicit_skip"]
    previous = (REPLY_TEXTS[previous_id],) if previous_id >= 0 else ()
    result = should_terminate_ping_pong(text, previous)
    return _REASON[result.reason] if result.terminate else -1


@dataclass(frozen=True, eq=False)
class Trace:
    """What a run produced, as arrays (the raw material of :class:`~a2a_lab.sim.run.SimResult`).

    Per job (``job_*``, messages are jobs ``0 … n-1``): session, kind (:data:`JOB_KINDS`),
    message, enqueue / start / end time and service time. Per message: gate decision time
    (NaN without a gate), reply time (NaN without a reply), completion time, outcome
    (:data:`OUTCOMES`), ``waitStatus`` (:data:`WAIT_STATUSES`), actual turns, termination
    reason (index in :data:`~a2a_lab.reference.runtime.TERMINATION_REASONS`, -1 = none), whether the
    announce step ran and whether something was announced. Per logged ping-pong reply
    (``turn_*``): message, turn number (odd: the requester speaks), time, text (index in
    :data:`~a2a_lab.sim.plan.REPLY_TEXTS`), termination reason. ``policy``: what the policies
    of :mod:`~a2a_lab.sim.policy_model` add (None for the core model).
    """

    job_session: np.ndarray
    job_kind: np.ndarray
    job_message: np.ndarray
    job_enqueue: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray
    job_service: np.ndarray
    gate_s: np.ndarray
    reply_s: np.ndarray
    complete_s: np.ndarray
    outcome: np.ndarray
    wait_status: np.ndarray
    turns: np.ndarray
    termination: np.ndarray
    announce_ran: np.ndarray
    announced: np.ndarray
    turn_message: np.ndarray
    turn_number: np.ndarray
    turn_s: np.ndarray
    turn_text: np.ndarray
    turn_reason: np.ndarray
    policy: PolicyTrace | None = None

    @property
    def end_s(self) -> float:
        """When the last exchange completed or the last run ended (0 without messages)."""
        ends = np.concatenate([self.complete_s, self.job_end])
        return float(np.nanmax(ends)) if ends.size else 0.0


class Model:
    """One run of the gateway model on a :class:`~a2a_lab.sim.plan.Plan`.

    Parameters
    ----------
    plan
        The pre-drawn inputs.
    config
        The configuration the plan was drawn from (its policies).
    full_flow
        Run every message through the flow process, even those that take the shortcut
        (for tests: the results are the same).
    """

    def __init__(self, plan: Plan, config: SimConfig, *, full_flow: bool = False) -> None:
        self.plan = plan
        self.config = config
        self.env = simpy.Environment()
        n = plan.n
        self.n = n
        self.sessions = [Session(self, s, int(c)) for s, c in enumerate(plan.session_capacity.tolist())]
        self.gate = (
            GateDriver(self.env, config.gate.concurrency_config(), corrected_release=config.gate.corrected_release)
            if config.gate is not None
            else None
        )
        same_session = plan.requester_session == plan.target_session
        self.turns_to_run = np.where(same_session, 0, plan.effective_turns)
        lean = (self.turns_to_run == 0) & ~plan.announce_runs
        if self.gate is not None or config.wait is not None or full_flow:
            lean[:] = False
        self.lean: list[bool] = lean.tolist()
        # job arrays: Python lists (scalar stores are cheaper than on numpy arrays)
        nan = float("nan")
        self.job_session: list[int] = plan.target_session.tolist()
        self.job_kind: list[int] = [0] * n
        self.job_message: list[int] = list(range(n))
        self.job_service: list[float] = plan.service_s.tolist()
        self.job_enqueue: list[float] = [nan] * n
        self.job_start: list[float] = [nan] * n
        self.job_end: list[float] = [nan] * n
        # message arrays
        self.gate_s: list[float] = [nan] * n
        self.reply_s: list[float] = [nan] * n
        self.complete_s: list[float] = [nan] * n
        self.outcome: list[int] = [REPLIED] * n
        self.wait_status: list[int] = [0] * n
        self.turns: list[int] = [0] * n
        self.termination: list[int] = [-1] * n
        self.announce_ran: list[bool] = [False] * n
        self.announced: list[bool] = [False] * n
        self.turn_rows: list[tuple[int, int, float, int, int]] = []
        #: the end event of every job someone waits for (the flows' jobs)
        self.waiters: dict[int, Event] = {}
        self._interarrival: list[float] = plan.interarrival_s.tolist()

    # -- arrivals ----------------------------------------------------------------------------

    def run(self) -> Trace:
        """Run until every exchange has ended and every session is idle."""
        if self.n:
            Timeout(self.env, self._interarrival[0], 0).callbacks.append(self._arrive)
        self.env.run()
        return self._trace()

    def _arrive(self, event: Event) -> None:
        i = event._value
        if not self.lean[i]:
            self.waiters[i] = self.env.event()
            self.env.process(self._flow(i))
        self.sessions[self.job_session[i]].submit(i)
        j = i + 1
        if j < self.n:
            Timeout(self.env, self._interarrival[j], j).callbacks.append(self._arrive)

    def submit(self, session: int, kind: int, message: int, service: float) -> Event:
        """Queue a new job (a turn or the announce step) and return the event of its end."""
        job = len(self.job_session)
        self.job_session.append(session)
        self.job_kind.append(kind)
        self.job_message.append(message)
        self.job_service.append(service)
        self.job_enqueue.append(float("nan"))
        self.job_start.append(float("nan"))
        self.job_end.append(float("nan"))
        done = self.waiters[job] = self.env.event()
        self.sessions[session].submit(job)
        return done

    # -- the flow ----------------------------------------------------------------------------

    def _flow(self, i: int):  # type: ignore[no-untyped-def]  # a SimPy process
        """One asynchronous ``sessions_send`` flow (runtime §2), from the send to the complete."""
        env = self.env
        plan = self.plan
        done = self.waiters[i]
        target_agent = plan.agents[plan.target[i]]
        if self.gate is not None:
            granted = yield from self.gate.acquire(target_agent, str(i))
            self.gate_s[i] = env.now
            if not granted:
                self.outcome[i] = BLOCKED
                self.complete_s[i] = env.now
                return
        replied = yield from self._wait_for_run(done)
        if not replied:
            self.outcome[i] = NO_REPLY
            self.wait_status[i] = WAIT_STATUSES.index("timeout")
        else:
            self.reply_s[i] = env.now
            if self.turns_to_run[i] > 0:
                yield from self._ping_pong(i)
            if plan.announce_runs[i]:
                yield from self._announce(i)
        self.complete_s[i] = env.now
        if self.gate is not None:
            self.gate.release(target_agent)

    def _wait_for_run(self, done: Event):  # type: ignore[no-untyped-def]
        """Wait for a run (its end event) in chunks up to the limit; True if it ended in time."""
        wait = self.config.wait
        if wait is None:
            yield done
            return True
        elapsed = 0.0
        while elapsed < wait.max_wait_s:
            if done.triggered:
                return True
            yield race(self.env, done, wait.chunk_s)
            if done.triggered:
                return True
            # a chunk that ends in `timeout` is not an error: the wait goes on
            elapsed += wait.chunk_s
        return False

    def _ping_pong(self, i: int):  # type: ignore[no-untyped-def]
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
            self.turn_rows.append((i, actual, env.now, text, verdict))
            if verdict >= 0:
                reason = verdict
                break
            previous = text
        self.turns[i] = actual
        self.termination[i] = reason

    def _turn_blocked(self, i: int, k: int) -> bool:
        """Whether a safety limit drops the reply of turn ``k + 1`` (never in the core model)."""
        return False

    @staticmethod
    def _turn_text(ending: int, u: float, previous: int) -> int:
        """The text of a ping-pong reply with the drawn ending (index in ``REPLY_TEXTS``)."""
        if ending == _ENDING["explicit_skip"]:
            return SKIP_TEXT
        if ending == _ENDING["conclusion"]:
            return CONCLUSION_OFFSET + min(int(u * len(tx.CONCLUSIONS)), len(tx.CONCLUSIONS) - 1)
        if ending == _ENDING["minimal"]:
            return MINIMAL_OFFSET + min(int(u * len(tx.MINIMAL)), len(tx.MINIMAL) - 1)
        if ending == _ENDING["repetition"] and previous >= 0:
            return previous
        choice = TURN_OFFSET + min(int(u * len(tx.TURNS)), len(tx.TURNS) - 1)
        if choice == previous:
            choice = TURN_OFFSET + (choice - TURN_OFFSET + 1) % len(tx.TURNS)
        return choice

    def _announce(self, i: int):  # type: ignore[no-untyped-def]
        """The announce step on the target's session (runtime §2 step 5)."""
        assert self.config.announce is not None
        plan = self.plan
        self.announce_ran[i] = True
        done = self.submit(int(plan.target_session[i]), 2, i, float(plan.announce_service_s[i]))
        yield race(self.env, done, self.config.announce.timeout_s)
        self.announced[i] = bool(done.triggered and not plan.announce_skip[i])

    # -- results -----------------------------------------------------------------------------

    def _trace(self) -> Trace:
        rows = self.turn_rows
        turn_cols = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
        return Trace(
            job_session=np.asarray(self.job_session, dtype=np.int32),
            job_kind=np.asarray(self.job_kind, dtype=np.int8),
            job_message=np.asarray(self.job_message, dtype=np.int64),
            job_enqueue=np.asarray(self.job_enqueue, dtype=float),
            job_start=np.asarray(self.job_start, dtype=float),
            job_end=np.asarray(self.job_end, dtype=float),
            job_service=np.asarray(self.job_service, dtype=float),
            gate_s=np.asarray(self.gate_s, dtype=float),
            reply_s=np.asarray(self.reply_s, dtype=float),
            complete_s=np.asarray(self.complete_s, dtype=float),
            outcome=np.asarray(self.outcome, dtype=np.int8),
            wait_status=np.asarray(self.wait_status, dtype=np.int8),
            turns=np.asarray(self.turns, dtype=np.int32),
            termination=np.asarray(self.termination, dtype=np.int8),
            announce_ran=np.asarray(self.announce_ran, dtype=bool),
            announced=np.asarray(self.announced, dtype=bool),
            turn_message=np.asarray(turn_cols[0], dtype=np.int64),
            turn_number=np.asarray(turn_cols[1], dtype=np.int32),
            turn_s=np.asarray(turn_cols[2], dtype=float),
            turn_text=np.asarray(turn_cols[3], dtype=np.int32),
            turn_reason=np.asarray(turn_cols[4], dtype=np.int8),
        )
