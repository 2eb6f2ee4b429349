"""The SimPy building blocks of the model: sessions, the concurrency gate, deadlines.

- :class:`Session`: a FIFO station with ``capacity`` servers, driven by SimPy event
  callbacks rather than one process per job, which keeps a message that needs no decisions
  down to two scheduled events (its arrival and its service end). Under the ``lanes``
  topology a job that holds its session lane then queues for a slot of a gateway-wide lane
  pool (a :class:`simpy.Resource`, FIFO like the reference's command lane), still holding
  the session lane, as the reference's ``enqueueSession(() => enqueueGlobal(run))`` does.
- :class:`GateDriver`: the reference concurrency gate
  (:class:`~a2a_lab.reference.runtime.ConcurrencyGate`) on SimPy time.
- :func:`race`: a wait that races a timeout, where a completion at the deadline's very
  instant wins, on SimPy's public API only: the deadline is a plain
  :class:`~simpy.events.Timeout` that, when it comes due, steps aside once (it re-arms its
  callbacks and schedules itself again at the same instant at :data:`LATE` priority, below
  every other event of that instant).
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import simpy
from simpy.events import Event, EventPriority, Timeout

from a2a_lab.reference.runtime.concurrency import (
    ConcurrencyConfig,
    ConcurrencyError,
    ConcurrencyGate,
)

if TYPE_CHECKING:
    from collections.abc import Generator

__all__ = ["LATE", "GateDriver", "JobTable", "Session", "race"]

#: Below SimPy's NORMAL (1): everything else happening at a deadline's instant goes first.
LATE: Final = EventPriority(2)


class JobTable(Protocol):
    """What a :class:`Session` reads and writes of its model: the job and message arrays."""

    env: simpy.Environment
    n: int
    lean: list[bool]
    job_service: array[float]
    job_enqueue: array[float]
    job_lane: array[float]
    job_start: array[float]
    job_end: array[float]
    reply_s: array[float]
    complete_s: array[float]
    waiters: dict[int, Event]


def race(env: simpy.Environment, event: Event, timeout: float) -> Event:
    """An event that fires when ``event`` fires or ``timeout`` passes, the event winning a tie.

    Check ``event.triggered`` afterwards to know which came first. When both come at the
    same instant ``event`` wins, also when it is triggered later within that instant (a
    chain of zero-delay events: a run ends, its flow releases a permit, a waiter gets it):
    when other events are still due at the deadline's instant, the deadline steps aside
    once, to :data:`LATE` priority, so that all of them go first. Cheaper than SimPy's ``event | timeout`` condition, which
    builds a value dictionary per wait.

    Examples
    --------
    >>> env = simpy.Environment()
    >>> done = env.event()
    >>> seen = []
    >>> def waiter():
    ...     yield race(env, done, 10)
    ...     seen.append((env.now, done.triggered))
    >>> def worker():  # ends at 10 s, and only then triggers `done`
    ...     yield env.timeout(10)
    ...     done.succeed()
    >>> _ = env.process(waiter())  # its deadline is scheduled before the worker's timeout
    >>> _ = env.process(worker())
    >>> env.run()
    >>> seen  # the run that ended at the deadline's instant counts
    [(10, True)]
    >>> race(env, env.event(), -1)
    Traceback (most recent call last):
    ...
    ValueError: Negative delay -1
    """
    woken = env.event()

    def wake(_: Event) -> None:
        if not woken.triggered:
            woken.succeed()

    def step_aside(deadline: Event) -> None:
        if woken.triggered:  # the event came first (most waits): nothing left to decide
            return
        if env.peek() > env.now:  # nothing else is due at this instant: the deadline wins
            woken.succeed()
            return
        # let every other event of this instant go first, then wake
        deadline.callbacks = [wake]
        env.schedule(deadline, LATE)

    if event.processed:
        woken.succeed()
    else:
        event.callbacks.append(wake)
        Timeout(env, timeout).callbacks.append(step_aside)
    return woken


class Session:
    """A session: a FIFO station with ``capacity`` servers, driven by event callbacks.

    Jobs are integers indexing the model's job arrays (service time, enqueue, start, end).
    A job of a message that takes the model's shortcut (``lean``) records the reply and the
    completion at its end; any other job's end wakes the event its flow waits on.

    With a ``pool`` (the ``lanes`` topology) a job that gets a server of the session (its
    session lane: ``job_lane``) asks the pool for a slot and runs when granted
    (``job_start``); it gives the slot back, then the session lane, at its end.
    """

    __slots__ = ("_env", "_model", "busy", "capacity", "index", "pool", "queue")

    def __init__(
        self, model: JobTable, index: int, capacity: int, pool: simpy.Resource | None = None
    ) -> None:
        self._model = model
        self._env = model.env
        self.index = index
        self.capacity = capacity
        self.pool = pool
        self.busy = 0
        # made on the first job that has to wait: under the lanes topology most
        # conversation lanes never queue, and an empty deque costs ~600 bytes
        self.queue: deque[int] | None = None

    def submit(self, job: int) -> None:
        """A job arrives now: it starts at once if a server is free, else queues."""
        now = self._model.job_enqueue[job] = self._env.now
        if self.busy < self.capacity:
            self.busy += 1
            self._begin(job, now)
        else:
            if self.queue is None:
                self.queue = deque()
            self.queue.append(job)

    def _begin(self, job: int, now: float) -> None:
        m = self._model
        m.job_lane[job] = now
        if self.pool is None:
            m.job_start[job] = now
            Timeout(self._env, m.job_service[job], job).callbacks.append(self._finish)
            return
        slot = self.pool.request()
        slot.callbacks.append(lambda granted: self._run(job, granted))

    def _run(self, job: int, slot: Event) -> None:
        """The pool granted ``slot``: the job runs now."""
        m = self._model
        m.job_start[job] = self._env.now
        Timeout(self._env, m.job_service[job], (job, slot)).callbacks.append(self._finish)

    def _finish(self, event: Event) -> None:
        # SimPy types an event's value as Optional[Any]: a job, or (job, its pool slot)
        value = cast("int | tuple[int, simpy.resources.resource.Request]", event.value)
        if isinstance(value, tuple):
            job, slot = value
            assert self.pool is not None
            # the slot first: a job waiting in the pool was queued before any this session
            # lane's next run can ask (FIFO over the whole gateway)
            self.pool.release(slot)
        else:
            job = value
        m = self._model
        now = m.job_end[job] = self._env.now
        if self.queue:  # None or empty: nobody waits
            self._begin(self.queue.popleft(), now)
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

    def __init__(
        self, env: simpy.Environment, config: ConcurrencyConfig, *, corrected_release: bool = False
    ) -> None:
        self.env = env
        self.gate = ConcurrencyGate(config, corrected_release=corrected_release)
        self.refusals: list[ConcurrencyError] = []
        self._waiting: dict[tuple[str, str], Event] = {}

    def acquire(self, agent_id: str, flow_id: str) -> Generator[Event, Any, bool]:
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
