"""Safety and rate limits (runtime §5): the loop guard, the collaborate limit, Discord's rate limits.

Each limit is a configuration model in seconds, as the rest of the simulator's
configuration, wrapping the reference's own rule object: :class:`LoopGuardPolicy` and
:class:`CollaborateLimit` convert to a :class:`~a2a_lab.reference.runtime.LoopGuardConfig`
(milliseconds; :meth:`LoopGuardPolicy.runtime_config`, :meth:`LoopGuardPolicy.from_runtime`)
and :class:`SendGuards` decides with :class:`~a2a_lab.reference.runtime.LoopGuard` itself, so
the sliding-window rule exists once. :class:`RateLimitPolicy` queues the excess
(:class:`SlidingLimiter`, :class:`Delivery`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic import (
    BaseModel,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from a2a_lab.reference.runtime.loop_guard import (
    COLLABORATE_LIMIT,
    LIVE_LOOP_GUARD,
    LoopGuard,
    LoopGuardConfig,
    PairLimit,
    pair_key,
)
from a2a_lab.sim._strict import STRICT

__all__ = [
    "BLOCK_REASONS",
    "CollaborateLimit",
    "Delivery",
    "LoopGuardPolicy",
    "PairOverride",
    "RateLimitPolicy",
    "SendGuards",
    "SlidingLimiter",
]


#: Why a message was refused: a safety limit (the message never reaches the target) or a
#: full queue (``queue_capacity``).
BLOCK_REASONS: Final = ("relay_depth", "collaborate_limit", "loop_guard", "queue_capacity")
BlockedAs = Literal["dropped", "logged"]


class PairOverride(BaseModel):
    """A per-pair override (key ``"a::b"``), in seconds; unset fields keep the guard's."""

    model_config = STRICT

    max_messages_per_window: NonNegativeInt | None = None
    window_s: NonNegativeFloat | None = None


class LoopGuardPolicy(BaseModel):
    """The loop guard (runtime §5; :class:`~a2a_lab.reference.runtime.LoopGuard`) on the simulated messages.

    Attributes
    ----------
    max_messages_per_window, window_s
        At most this many messages per unordered agent pair in any sliding window (an
        entry exactly one window old still counts; a blocked message is not recorded);
        default: the live call site's 6 per 60 s.
    max_depth
        A send whose relay depth is above this is blocked.
    overrides
        Per-pair overrides keyed ``"a::b"`` (the two ids in order).
    count_turns
        Count the ping-pong replies too (as a replay of a recorded log does, runtime §5);
        a blocked reply ends the ping-pong (``aborted``). Sends always count; retries of
        the system bypass the guard.
    blocked_as
        What a blocked send becomes in the log: ``"dropped"`` (the reference drops it in
        its preflight: no event at all) or ``"logged"`` (``a2a.send``, then ``a2a.response
        {outcome: "blocked", reason}`` and ``a2a.complete``).
    """

    model_config = STRICT

    max_messages_per_window: NonNegativeInt = LIVE_LOOP_GUARD.max_messages_per_window
    window_s: NonNegativeFloat = LIVE_LOOP_GUARD.window_ms / 1000.0
    max_depth: NonNegativeInt = LIVE_LOOP_GUARD.max_depth
    overrides: dict[str, PairOverride] = Field(default_factory=dict)
    count_turns: bool = True
    blocked_as: BlockedAs = "dropped"

    @field_validator("overrides")
    @classmethod
    def _pair_keys(cls, value: dict[str, PairOverride]) -> dict[str, PairOverride]:
        # the runtime looks overrides up by its own pair key: any other spelling never applies
        for key in value:
            a, sep, b = key.partition("::")
            if not sep or not a or not b or pair_key(a, b) != key:
                raise ValueError(
                    f"override key {key!r} is not an unordered pair key 'a::b' (the two ids in order)"
                )
        return value

    def pairs(self) -> list[tuple[str, str]]:
        """The agent pairs the overrides name."""
        return [tuple(key.split("::", 1)) for key in self.overrides]  # type: ignore[misc]

    def runtime_config(self) -> LoopGuardConfig:
        """The runtime guard's configuration (milliseconds)."""
        return LoopGuardConfig(
            max_messages_per_window=self.max_messages_per_window,
            window_ms=self.window_s * 1000.0,
            max_depth=self.max_depth,
            overrides={
                k: PairLimit(
                    max_messages_per_window=o.max_messages_per_window,
                    window_ms=None if o.window_s is None else o.window_s * 1000.0,
                )
                for k, o in self.overrides.items()
            },
        )

    @classmethod
    def from_runtime(cls, config: LoopGuardConfig, **fields: Any) -> LoopGuardPolicy:
        """The policy of a runtime :class:`~a2a_lab.reference.runtime.LoopGuardConfig` (milliseconds → seconds).

        Examples
        --------
        >>> LoopGuardPolicy.from_runtime(LoopGuardConfig(window_ms=500)).window_s
        0.5
        """
        return cls(
            max_messages_per_window=config.max_messages_per_window,
            window_s=config.window_ms / 1000.0,
            max_depth=config.max_depth,
            overrides={
                k: PairOverride(
                    max_messages_per_window=o.max_messages_per_window,
                    window_s=None if o.window_ms is None else o.window_ms / 1000.0,
                )
                for k, o in config.overrides.items()
            },
            **fields,
        )


class CollaborateLimit(BaseModel):
    """The collaborate tool's limit: sends per unordered pair per sliding window (runtime §5).

    Default: 10 per 5 minutes (the 11th is blocked); ``blocked_as`` as for the loop guard.
    """

    model_config = STRICT

    max_calls: NonNegativeInt = COLLABORATE_LIMIT.max_messages_per_window
    window_s: NonNegativeFloat = COLLABORATE_LIMIT.window_ms / 1000.0
    blocked_as: BlockedAs = "dropped"

    def runtime_config(self) -> LoopGuardConfig:
        """The runtime guard's configuration (milliseconds)."""
        return LoopGuardConfig(
            max_messages_per_window=self.max_calls, window_ms=self.window_s * 1000.0
        )


class SendGuards:
    """The safety limits of one run, with explicit time: relay depth, collaborate limit, loop guard.

    Times are simulated seconds; the guards see them as the log will, in whole
    milliseconds, so a replay of the simulated log (:func:`a2a_lab.analysis.checks.replay_guard`)
    reaches the same verdicts.

    Examples
    --------
    >>> guards = SendGuards(LoopGuardPolicy(max_messages_per_window=2, window_s=1.0), None)
    >>> [guards.admit_send("a", "b", 0, t) for t in (0.0, 0.5, 0.9, 1.0, 1.5)]
    [-1, -1, 2, 2, -1]
    >>> BLOCK_REASONS[guards.admit_send("a", "b", 6, 5.0)]
    'relay_depth'
    """

    def __init__(self, loop: LoopGuardPolicy | None, collaborate: CollaborateLimit | None) -> None:
        self.loop_policy = loop
        self.loop = LoopGuard(loop.runtime_config()) if loop is not None else None
        self.collaborate = (
            LoopGuard(collaborate.runtime_config()) if collaborate is not None else None
        )

    @staticmethod
    def _ms(t_s: float) -> float:
        return math.floor(t_s * 1000.0)

    def depth_blocked(self, depth: float) -> bool:
        """Whether a relay depth is over the loop guard's cap (never without a guard)."""
        return self.loop is not None and self.loop.is_depth_blocked(depth)

    def admit_send(self, from_id: str, to_id: str, depth: float, t_s: float) -> int:
        """-1 if a send passes (and is recorded), else its index in :data:`BLOCK_REASONS`.

        Checked in the order a message meets them: relay depth, the collaborate tool's
        limit, the receiving side's loop guard.
        """
        if self.depth_blocked(depth):
            return 0
        now = self._ms(t_s)
        if self.collaborate is not None and self.collaborate.check(from_id, to_id, now):
            return 1
        if self.loop is not None and self.loop.check(from_id, to_id, now):
            return 2
        return -1

    def admit_reply(self, from_id: str, to_id: str, t_s: float) -> bool:
        """Whether a ping-pong reply passes the loop guard (always, unless it counts turns)."""
        if self.loop is None or self.loop_policy is None or not self.loop_policy.count_turns:
            return True
        return not self.loop.check(from_id, to_id, self._ms(t_s))


# ----------------------------------------------------------------------------------------
# rate limits
# ----------------------------------------------------------------------------------------


class RateLimitPolicy(BaseModel):
    """Discord-side rate limits (runtime §5): the excess waits and goes out in order.

    Attributes
    ----------
    messages_per_window, message_window_s
        Messages per channel per sliding window (5 per second).
    channel
        What a channel is: ``"directed_pair"`` (one collaboration thread per directed pair,
        the default), ``"pair"`` (unordered), ``"target"`` (the target agent's channel) or
        ``"global"`` (one for everything).
    threads_per_window, thread_window_s
        Thread creations per sliding window, over all channels (5 per minute).
    thread_reuse_s
        A directed pair's thread is reused when it was used within this long (6 hours),
        else the next message first creates a new one.
    """

    model_config = STRICT

    messages_per_window: PositiveInt = 5
    message_window_s: PositiveFloat = 1.0
    channel: Literal["directed_pair", "pair", "target", "global"] = "directed_pair"
    threads_per_window: PositiveInt = 5
    thread_window_s: PositiveFloat = 60.0
    thread_reuse_s: NonNegativeFloat = 6 * 3600.0


class SlidingLimiter:
    """At most ``limit`` events per key in any window of ``window_s``; the excess waits, in order.

    :meth:`slot` reserves the earliest time, not before the request nor before the key's
    previous reservation (first come, first served), at which the window holds fewer than
    ``limit`` reservations.

    Examples
    --------
    >>> limiter = SlidingLimiter(2, 1.0)
    >>> [limiter.slot("c", t) for t in (0.0, 0.1, 0.2, 0.3, 5.0)]
    [0.0, 0.1, 1.0, 1.1, 5.0]
    """

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._last: dict[Any, deque[float]] = {}

    def slot(self, key: Any, t: float) -> float:
        """Reserve and return the time the event at ``t`` may happen."""
        times = self._last.setdefault(key, deque(maxlen=self.limit))
        at = max(t, times[-1]) if times else t
        if len(times) == self.limit:
            at = max(at, times[0] + self.window_s)
        times.append(at)
        return at


@dataclass
class Delivery:
    """When a message reaches its target under a :class:`RateLimitPolicy` (explicit time).

    Examples
    --------
    >>> d = Delivery(RateLimitPolicy(threads_per_window=1, thread_window_s=60.0))
    >>> d.time(("a", "b"), 0.0), d.time(("a", "c"), 1.0), d.time(("a", "b"), 2.0)
    (0.0, 60.0, 2.0)
    """

    policy: RateLimitPolicy
    _messages: SlidingLimiter = field(init=False)
    _threads: SlidingLimiter = field(init=False)
    _ready: dict[tuple[str, str], float] = field(default_factory=dict, init=False)
    _used: dict[tuple[str, str], float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._messages = SlidingLimiter(
            self.policy.messages_per_window, self.policy.message_window_s
        )
        self._threads = SlidingLimiter(self.policy.threads_per_window, self.policy.thread_window_s)

    def _channel(self, pair: tuple[str, str]) -> Any:
        kind = self.policy.channel
        if kind == "directed_pair":
            return pair
        if kind == "pair":
            return tuple(sorted(pair))
        return pair[1] if kind == "target" else None

    def time(self, pair: tuple[str, str], t: float) -> float:
        """The delivery time of a message of the directed ``pair`` sent at ``t``."""
        used = self._used.get(pair)
        if used is None or used < t - self.policy.thread_reuse_s:
            ready = self._ready[pair] = self._threads.slot("threads", t)
        else:
            ready = max(t, self._ready[pair])
        at = self._messages.slot(self._channel(pair), ready)
        self._used[pair] = at
        return at
