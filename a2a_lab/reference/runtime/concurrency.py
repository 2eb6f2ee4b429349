"""The per-agent A2A concurrency gate (runtime §1; reference ``src/agents/a2a-concurrency.ts``).

Each agent id (the reference keys the gate by the TARGET agent) has a counter of active A2A
flows and a FIFO queue: a flow gets a permit at once while fewer than
``max_concurrent_flows`` are active, otherwise it waits; a flow that waits longer than
``queue_timeout_ms`` is refused with :class:`ConcurrencyError` (in the log:
``a2a.response {outcome: "blocked"}`` then ``a2a.complete {concurrencyBlocked: true}``).

:class:`ConcurrencyGate` is the same gate as a pure state machine with explicit time, so a
SimPy model (or a test) drives it: :meth:`~ConcurrencyGate.acquire` grants or queues,
:meth:`~ConcurrencyGate.release` frees a permit and wakes the oldest waiter,
:meth:`~ConcurrencyGate.resume` is the woken waiter taking its permit,
:meth:`~ConcurrencyGate.expire` refuses the waiters whose deadline has come.

The release quirk (runtime/README.md §8). In the reference, ``release()`` decrements the
counter and resolves the oldest waiter's promise; the waiter increments the counter only when
its continuation runs, a microtask later. Anything that runs in between, e.g. a synchronous
``acquire()`` by another flow, sees the lowered counter and takes the slot, and the woken
waiter's increment then pushes the active count above the maximum. With
``corrected_release=False`` (the default, the reference behaviour) the woken waiter is
counted only when the caller reports, with :meth:`~ConcurrencyGate.resume`, that it runs
again, and an ``acquire`` before that may take the slot. With ``corrected_release=True`` the
permit is handed straight to the woken waiter (the counter stays the same), so the active
count never exceeds the maximum; ``resume`` is then only a confirmation.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from a2a_lab.reference.runtime.js import js_number_str


class ConcurrencyConfig(BaseModel):
    """Gate parameters (reference ``A2AConcurrencyConfig``; camelCase keys are accepted).

    A partial mapping is merged over the defaults, like ``initA2AConcurrencyGate``.

    Examples
    --------
    >>> ConcurrencyConfig.model_validate({"maxConcurrentFlows": 5})
    ConcurrencyConfig(max_concurrent_flows=5, queue_timeout_ms=30000.0)
    """

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    max_concurrent_flows: int = Field(3, ge=1)
    queue_timeout_ms: float = Field(30_000.0, ge=0)


#: The reference's production values (``DEFAULT_A2A_CONCURRENCY_CONFIG``): 3 flows, 30 s.
DEFAULT_CONCURRENCY: Final = ConcurrencyConfig()
#: The ``a2a.response`` text of a flow the gate refused (``outcome: "blocked"``); ``{agent}``
#: is the target agent id.
GATE_BLOCKED_TEXT: Final = "[outcome] blocked: 동시 처리 한도 초과 (agent: {agent})"


class ConcurrencyError(Exception):
    """A flow waited longer than the queue timeout (reference ``A2AConcurrencyError``).

    Attributes
    ----------
    agent_id, flow_id
        The gated agent and the refused flow.
    active_count
        Active flows of that agent when the timeout fired.
    queue_timeout_ms
        The timeout that expired.
    at_ms
        When it fired.
    """

    def __init__(
        self, agent_id: str, flow_id: str, active_count: int, queue_timeout_ms: float, at_ms: float
    ) -> None:
        super().__init__(
            f"A2A concurrency limit exceeded for agent {agent_id}: "
            f"{active_count} active flows, timed out after {js_number_str(queue_timeout_ms)}ms"
        )
        self.agent_id = agent_id
        self.flow_id = flow_id
        self.active_count = active_count
        self.queue_timeout_ms = queue_timeout_ms
        self.at_ms = at_ms


@dataclass(slots=True)
class _Waiter:
    flow_id: str
    deadline_ms: float


class ConcurrencyGate:
    """Per-agent semaphore with a FIFO queue and a queue timeout, driven with explicit time.

    Parameters
    ----------
    config
        Limits; :data:`DEFAULT_CONCURRENCY` (3 flows, 30 s) by default.
    corrected_release
        False (default): the reference's release (see the module docstring). True: the
        permit passes directly to the woken waiter.

    Examples
    --------
    >>> gate = ConcurrencyGate(ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=50))
    >>> gate.acquire("eden", "f1", now_ms=0), gate.acquire("eden", "f2", now_ms=0)
    ('granted', 'queued')
    >>> gate.release("eden")  # wakes f2 ...
    'f2'
    >>> gate.active_count("eden")  # ... which is counted once it runs again
    0
    >>> gate.resume("eden", "f2"); gate.active_count("eden")
    1
    >>> gate.acquire("eden", "f3", now_ms=20), gate.next_deadline_ms()
    ('queued', 70.0)
    >>> [e.flow_id for e in gate.expire(now_ms=70)]
    ['f3']
    """

    def __init__(
        self, config: ConcurrencyConfig = DEFAULT_CONCURRENCY, *, corrected_release: bool = False
    ) -> None:
        self.config = config
        self.corrected_release = corrected_release
        self._active: dict[str, int] = {}
        self._queues: dict[str, deque[_Waiter]] = {}
        # woken flows that have not resumed yet: (flow id, permit already handed over)
        self._woken: dict[str, list[tuple[str, bool]]] = {}

    def active_count(self, agent_id: str) -> int:
        """Flows of ``agent_id`` holding a permit."""
        return self._active.get(agent_id, 0)

    def queued_count(self, agent_id: str) -> int:
        """Flows of ``agent_id`` waiting for a permit."""
        queue = self._queues.get(agent_id)
        return len(queue) if queue else 0

    def acquire(self, agent_id: str, flow_id: str, now_ms: float) -> Literal["granted", "queued"]:
        """Ask for a permit at ``now_ms``.

        Returns
        -------
        str
            ``"granted"`` (the flow holds a permit now) or ``"queued"`` (it waits until a
            :meth:`release` wakes it or :meth:`expire` refuses it at
            ``now_ms + queue_timeout_ms``).
        """
        current = self.active_count(agent_id)
        if current < self.config.max_concurrent_flows:
            self._active[agent_id] = current + 1
            return "granted"
        deadline = now_ms + self.config.queue_timeout_ms
        self._queues.setdefault(agent_id, deque()).append(_Waiter(flow_id, deadline))
        return "queued"

    def release(self, agent_id: str) -> str | None:
        """Give back one permit of ``agent_id`` and wake the oldest waiter, if any.

        Releasing when nothing is held does not go below zero (it still wakes a waiter, as
        the reference does). A release does not depend on time.

        Returns
        -------
        str or None
            The flow id that was woken (it must then :meth:`resume`), or None.
        """
        queue = self._queues.get(agent_id)
        woken = queue.popleft() if queue else None
        if queue is not None and not queue:
            del self._queues[agent_id]
        current = self.active_count(agent_id)
        handed_over = woken is not None and self.corrected_release
        if handed_over:
            # the permit passes to the waiter: the count stays (at least the waiter's one)
            self._active[agent_id] = max(current, 1)
        elif current > 0:
            self._set_active(agent_id, current - 1)
        if woken is None:
            return None
        self._woken.setdefault(agent_id, []).append((woken.flow_id, handed_over))
        return woken.flow_id

    def resume(self, agent_id: str, flow_id: str) -> None:
        """The woken ``flow_id`` runs again and takes its permit (the reference's continuation).

        Raises
        ------
        ValueError
            If ``flow_id`` was not woken by a :meth:`release` (or has resumed already).
        """
        woken = self._woken.get(agent_id, [])
        index = next((i for i, (flow, _) in enumerate(woken) if flow == flow_id), None)
        if index is None:
            raise ValueError(f"flow {flow_id!r} of agent {agent_id!r} was not woken")
        _, handed_over = woken.pop(index)
        if not woken:
            del self._woken[agent_id]
        if not handed_over:
            self._active[agent_id] = self.active_count(agent_id) + 1

    def expire(self, now_ms: float) -> list[ConcurrencyError]:
        """Refuse every waiter whose deadline is at or before ``now_ms`` (the queue timeout).

        Returns
        -------
        list of ConcurrencyError
            One per refused flow, in deadline order (ties: agent, then queue order); each
            refused flow leaves its queue.
        """
        refused: list[tuple[float, ConcurrencyError]] = []
        for agent_id in list(self._queues):
            queue = self._queues[agent_id]
            kept = deque(w for w in queue if w.deadline_ms > now_ms)
            for waiter in queue:
                if waiter.deadline_ms <= now_ms:
                    error = ConcurrencyError(
                        agent_id,
                        waiter.flow_id,
                        self.active_count(agent_id),
                        self.config.queue_timeout_ms,
                        now_ms,
                    )
                    refused.append((waiter.deadline_ms, error))
            if kept:
                self._queues[agent_id] = kept
            else:
                del self._queues[agent_id]
        refused.sort(key=lambda item: item[0])
        return [error for _, error in refused]

    def next_deadline_ms(self) -> float | None:
        """The earliest queue deadline, for scheduling the next :meth:`expire` (None if none)."""
        deadlines = [w.deadline_ms for queue in self._queues.values() for w in queue]
        return min(deadlines) if deadlines else None

    def _set_active(self, agent_id: str, count: int) -> None:
        if count:
            self._active[agent_id] = count
        else:
            self._active.pop(agent_id, None)
