"""What one run of the model produced: the :class:`Trace` arrays and their codes.

The model (:mod:`~a2a_lab.sim.engine.model`) records facts as arrays; :mod:`~a2a_lab.sim.run`
turns them into frames and :mod:`~a2a_lab.sim.output.events` into the log. Every field is present
whatever the configuration: a policy that is off leaves its neutral value (no retries, one
run, logged, nothing refused).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

__all__ = [
    "BLOCKED",
    "GUARD_BLOCKED",
    "JOB_KINDS",
    "NO_REPLY",
    "OUTCOMES",
    "REPLIED",
    "Trace",
    "as_numpy",
    "column",
    "filled",
]

#: Outcome codes of a message (runtime §3b); ``guard_blocked``: a safety limit of
#: :mod:`~a2a_lab.sim.policies.limits` stopped the send.
OUTCOMES: Final = ("replied", "no_reply", "concurrency_blocked", "guard_blocked")
REPLIED, NO_REPLY, BLOCKED, GUARD_BLOCKED = 0, 1, 2, 3
#: Job kinds on a session.
JOB_KINDS: Final = ("message", "turn", "announce")


# The model records into typed :class:`array.array` columns, not Python lists: a list of n
# floats holds n pointers and n float objects (32 bytes an entry, and the freed objects
# leave the allocator's arenas fragmented), a ``"d"`` column 8 bytes; appending stays
# amortised O(1), and the trace reads the columns without a copy (:func:`as_numpy`).


def filled(typecode: str, value: Any, n: int) -> array[Any]:
    """A column of ``n`` times ``value`` (``typecode`` as :mod:`array`'s)."""
    return array(typecode, [value]) * n


def column(typecode: str, values: np.ndarray) -> array[Any]:
    """A column holding ``values`` (converted to ``typecode``)."""
    out = array(typecode)
    out.frombytes(np.ascontiguousarray(values, dtype=typecode).data.cast("B"))
    return out


def as_numpy(values: array[Any], dtype: Any = None) -> np.ndarray:
    """The column as a numpy array sharing its memory (the column can no longer grow).

    ``dtype`` reinterprets the items (e.g. ``bool`` for a ``"B"`` column of 0 and 1).
    """
    return np.frombuffer(values, dtype=dtype or values.typecode)


@dataclass(frozen=True, eq=False)
class Trace:
    """The arrays of one run (the raw material of :class:`~a2a_lab.sim.run.SimResult`).

    Attributes
    ----------
    job_session, job_kind, job_message, job_enqueue, job_start, job_end, job_service
        Per job (an agent run on a session; messages are jobs ``0 … n-1``, re-sent runs,
        ping-pong turns and announce steps follow): session, kind (:data:`JOB_KINDS`),
        message, enqueue / start / end time (NaN: never queued or never ran), service time.
    job_lane
        Per job, when it got its session lane (under the ``lanes`` topology it then waits
        for a pool slot until ``job_start``; else equal to ``job_start``).
    gate_s, reply_s, complete_s
        Per message: when the gate admitted or refused it (or a limit refused it; NaN
        without either), the reply (NaN without one), ``a2a.complete``.
    outcome
        Per message, index in :data:`OUTCOMES`.
    turns, termination
        Ping-pong replies logged, and the termination reason (index in
        :data:`~a2a_lab.reference.runtime.TERMINATION_REASONS`, -1 = none).
    announce_ran, announced
        Whether the announce step ran, and whether something was announced.
    send_s
        When the ``a2a.send`` was logged (the arrival; the synchronous path logs it after
        its wait).
    retries, runs
        Retries made, and runs of the target (re-sends that idempotency joined to a run do
        not run again; a refused message has none).
    error_kind
        The last error met (index in :data:`~a2a_lab.sim.policies.failures.ERROR_KINDS`, -1 none).
    wait_status, wait_error, max_wait_exceeded
        What the reference's no-reply events carry (``waitStatus``, ``waitError``, and
        whether the wait limit was exceeded).
    blocked_by
        Index in :data:`~a2a_lab.sim.policies.limits.BLOCK_REASONS` (-1: not refused).
    logged
        Whether the exchange shows in the log.
    invisible
        The exchange took place (the target ran it) but the log shows nothing of it.
    depth
        Relay depth per message (NaN when relay depths are off).
    max_retries
        The retry policy's ``maxAttempts``.
    turn_message, turn_number, turn_s, turn_text, turn_reason
        One row per logged ping-pong reply: message, turn number (odd: the requester
        speaks), time, text (index in :data:`~a2a_lab.sim.workload.plan.REPLY_TEXTS`), termination
        reason.
    retry_message, retry_attempt, retry_s, retry_kind, retry_backoff_ms, retry_elapsed_ms
        One row per retry.
    """

    job_session: np.ndarray
    job_kind: np.ndarray
    job_message: np.ndarray
    job_enqueue: np.ndarray
    job_lane: np.ndarray
    job_start: np.ndarray
    job_end: np.ndarray
    job_service: np.ndarray
    gate_s: np.ndarray
    reply_s: np.ndarray
    complete_s: np.ndarray
    outcome: np.ndarray
    turns: np.ndarray
    termination: np.ndarray
    announce_ran: np.ndarray
    announced: np.ndarray
    send_s: np.ndarray
    retries: np.ndarray
    runs: np.ndarray
    error_kind: np.ndarray
    wait_status: list[str | None]
    wait_error: list[str | None]
    max_wait_exceeded: np.ndarray
    blocked_by: np.ndarray
    logged: np.ndarray
    invisible: np.ndarray
    depth: np.ndarray
    max_retries: int
    turn_message: np.ndarray
    turn_number: np.ndarray
    turn_s: np.ndarray
    turn_text: np.ndarray
    turn_reason: np.ndarray
    retry_message: np.ndarray
    retry_attempt: np.ndarray
    retry_s: np.ndarray
    retry_kind: np.ndarray
    retry_backoff_ms: np.ndarray
    retry_elapsed_ms: np.ndarray

    @property
    def n(self) -> int:
        """Messages."""
        return int(self.outcome.shape[0])

    @property
    def end_s(self) -> float:
        """When the last exchange completed or the last run ended (0 without messages)."""
        ends = np.concatenate([self.complete_s, self.job_end])
        return float(np.nanmax(ends)) if ends.size and not np.isnan(ends).all() else 0.0

    @property
    def ran(self) -> np.ndarray:
        """Per message, whether its first run ran at all (a refused message's did not)."""
        out: np.ndarray = ~np.isnan(self.job_start[: self.n])
        return out

    @property
    def attempts(self) -> np.ndarray:
        """Attempts per message: the first and every retry."""
        return 1 + self.retries
