"""The send path's own policies: the idempotency key, the synchronous path, relay depths.

Each is a :class:`~a2a_lab.sim.config.SimConfig` field whose default is what today's
``sessions_send`` does (runtime §2): idempotency on, the asynchronous path, no relays.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, NonNegativeFloat, PositiveFloat

from a2a_lab.sim._strict import STRICT

__all__ = ["IdempotencyPolicy", "RelayPolicy", "SyncPath"]


class IdempotencyPolicy(BaseModel):
    """Idempotency keys (runtime §5): a re-send within ``ttl_s`` of the original send joins
    the original run unless that run has failed (a failure is not cached)."""

    model_config = STRICT

    ttl_s: NonNegativeFloat = 300.0


class SyncPath(BaseModel):
    """The synchronous ``sessions_send`` path (``timeoutSeconds > 0``, runtime §2).

    The caller waits up to ``timeout_s`` for the run. On success the flow starts with the
    reply (``a2a.send``, the reply, turns, announce, ``a2a.complete``); on an error it starts
    and waits as the asynchronous path does. On a timeout, with ``emit_on_timeout`` False
    (today's known bug) NOTHING is logged: the conversation is invisible although the run
    goes on; True (the fix of commit ``0b3325a28``) starts the flow at the timeout.
    """

    model_config = STRICT

    timeout_s: PositiveFloat = 30.0
    emit_on_timeout: bool = False


class RelayPolicy(BaseModel):
    """Relay depths: each message is one hop deeper than a relay with ``continue_probability``.

    A message's depth ``d`` has ``P(d ≥ k) = continue_probability^k`` (depth 0: sent
    directly); every event of its exchange carries ``depth``.
    """

    model_config = STRICT

    continue_probability: float = Field(0.2, ge=0, lt=1)
