"""Loop guard and collaborate limit (runtime §5; reference ``src/discord/loop-guard.ts``).

The loop guard stops two agents from messaging each other in a loop:

* a sliding-window rate limit per UNORDERED agent pair (key ``"a::b"``, the two ids in
  UTF-16 order, so A→B and B→A share one bucket): a message is blocked when the window
  already holds ``max_messages_per_window`` entries; a blocked message is not recorded;
  entries are dropped only when ``ts < now - window_ms`` (an entry exactly one window old
  still counts); per-pair overrides (keyed ``"a::b"``) take precedence, field by field, over
  the top-level values; on ``main`` a system retry bypasses the check;
* a relay-depth cap: ``depth > max_depth`` is blocked.

Defaults: the library's own 10 messages / 60 s (:data:`LIBRARY_LOOP_GUARD`); TODAY's live
call site passes 6 / 60 s (:data:`LIVE_LOOP_GUARD`, the simulator's default). The collaborate
tool has its own limit, 10 calls per pair per 5 minutes (:data:`COLLABORATE_LIMIT`; the 11th
is blocked), applied with the same sliding-window mechanics.

The guard is an object with explicit time (``now_ms`` arguments), not module state, so a
simulation or a replay of a recorded log owns its guard.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from a2a_lab.reference.jsstr import utf16_key

_CONFIG = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True, extra="forbid")


class PairLimit(BaseModel):
    """A per-pair override; an unset field falls back to the guard's top-level value."""

    model_config = _CONFIG

    max_messages_per_window: int | None = None
    window_ms: float | None = None


class LoopGuardConfig(BaseModel):
    """Loop-guard parameters (reference ``LoopGuardConfig``; camelCase keys are accepted).

    Examples
    --------
    >>> cfg = LoopGuardConfig.model_validate(
    ...     {"maxMessagesPerWindow": 5, "overrides": {"a::b": {"windowMs": 500}}}
    ... )
    >>> cfg.max_messages_per_window, cfg.window_ms, cfg.overrides["a::b"].window_ms
    (5, 60000.0, 500.0)
    """

    model_config = _CONFIG

    max_messages_per_window: int = Field(10, ge=0)
    window_ms: float = Field(60_000.0, ge=0)
    max_depth: int = 5
    overrides: Mapping[str, PairLimit] = Field(default_factory=dict)


#: The library's defaults: 10 messages per pair per 60 s, relay depth 5.
LIBRARY_LOOP_GUARD: Final = LoopGuardConfig()
#: What the live call site passes today: 6 messages per pair per 60 s (simulator default).
LIVE_LOOP_GUARD: Final = LoopGuardConfig(max_messages_per_window=6)
#: The collaborate tool's limit (``main``): 10 calls per pair per 5 minutes.
COLLABORATE_LIMIT: Final = LoopGuardConfig(max_messages_per_window=10, window_ms=300_000.0)


def pair_key(a: str, b: str) -> str:
    """The unordered pair key ``"x::y"`` with ``x`` before ``y`` in UTF-16 order.

    Examples
    --------
    >>> pair_key("ruda", "eden"), pair_key("eden", "ruda")
    ('eden::ruda', 'eden::ruda')
    """
    return f"{a}::{b}" if utf16_key(a) < utf16_key(b) else f"{b}::{a}"


def is_depth_blocked(depth: float, config: LoopGuardConfig = LIBRARY_LOOP_GUARD) -> bool:
    """Whether a relay depth is over the cap (reference ``checkA2ADepthLimit``).

    Examples
    --------
    >>> is_depth_blocked(5), is_depth_blocked(6)
    (False, True)
    """
    return depth > config.max_depth


def is_self_message(author_application_id: str | None, our_application_id: str | None) -> bool:
    """Whether a Discord message was sent by ourselves (reference ``isSelfMessage``).

    Examples
    --------
    >>> is_self_message("app-1", "app-1"), is_self_message(None, None), is_self_message("", "")
    (True, False, False)
    """
    if not author_application_id or not our_application_id:
        return False
    return author_application_id == our_application_id


class LoopGuard:
    """Sliding-window rate limiter per unordered agent pair, with explicit time.

    Parameters
    ----------
    config
        The limits; :data:`LIBRARY_LOOP_GUARD` by default (use :data:`LIVE_LOOP_GUARD` for
        today's behaviour, :data:`COLLABORATE_LIMIT` for the collaborate tool).

    Examples
    --------
    >>> guard = LoopGuard(LoopGuardConfig(max_messages_per_window=2, window_ms=1000))
    >>> [guard.check("a", "b", t) for t in (0, 10, 20)]  # True = blocked
    [False, False, True]
    >>> guard.check("b", "a", 1000)  # same pair; the entry at t=0 is exactly one window old
    True
    >>> guard.check("b", "a", 1001)
    False
    """

    def __init__(self, config: LoopGuardConfig = LIBRARY_LOOP_GUARD) -> None:
        self.config = config
        self._windows: dict[str, deque[float]] = {}

    def limits(self, a: str, b: str) -> tuple[int, float]:
        """``(max_messages_per_window, window_ms)`` for a pair, overrides applied."""
        override = self.config.overrides.get(pair_key(a, b))
        max_messages = self.config.max_messages_per_window
        window_ms = self.config.window_ms
        if override is not None:
            if override.max_messages_per_window is not None:
                max_messages = override.max_messages_per_window
            if override.window_ms is not None:
                window_ms = override.window_ms
        return max_messages, window_ms

    def check(self, from_id: str, to_id: str, now_ms: float, *, system_retry: bool = False) -> bool:
        """Record a message from ``from_id`` to ``to_id`` unless it is blocked.

        Parameters
        ----------
        from_id, to_id
            The two agents (order does not matter).
        now_ms
            The current time in milliseconds (non-decreasing across calls, as a clock).
        system_retry
            A retry by the system itself, which ``main`` lets through unchecked and
            unrecorded.

        Returns
        -------
        bool
            True when the message is BLOCKED (the reference's return value).
        """
        if system_retry:
            return False
        key = pair_key(from_id, to_id)
        max_messages, window_ms = self.limits(from_id, to_id)
        window = self._windows.setdefault(key, deque())
        cutoff = now_ms - window_ms
        while window and window[0] < cutoff:
            window.popleft()
        if len(window) >= max_messages:
            return True
        window.append(now_ms)
        return False

    def count(self, a: str, b: str, now_ms: float) -> int:
        """How many recorded messages of the pair are in the window at ``now_ms`` (no side effect)."""
        _, window_ms = self.limits(a, b)
        cutoff = now_ms - window_ms
        return sum(1 for ts in self._windows.get(pair_key(a, b), ()) if ts >= cutoff)

    def is_depth_blocked(self, depth: float) -> bool:
        """Whether ``depth`` is over this guard's ``max_depth``."""
        return is_depth_blocked(depth, self.config)
