"""Loop guard, depth cap and collaborate limit (runtime §5; reference loop-guard.ts)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_lab.reference.runtime.loop_guard import (
    COLLABORATE_LIMIT,
    LIBRARY_LOOP_GUARD,
    LIVE_LOOP_GUARD,
    LoopGuard,
    LoopGuardConfig,
    is_depth_blocked,
    is_self_message,
    pair_key,
)
from tests.support.runtime_cases import cases, load_doc

T0 = 1_700_000_000_000  # the frozen fake-timer start; the cases give times relative to it


def _cases(function: str) -> list[Any]:
    return cases("loop-guard", function)


def test_fixture_has_every_case() -> None:
    doc = load_doc("loop-guard")
    assert len(doc["cases"]) == 22 and doc["skipped"] == []


@pytest.mark.parametrize("case", _cases("isSelfMessage"))
def test_is_self_message_cases(case: dict[str, Any]) -> None:
    given_ = case["input"]
    assert (
        is_self_message(given_["authorApplicationId"], given_["ourApplicationId"])
        is case["expect"]["result"]
    )


@pytest.mark.parametrize("case", _cases("checkA2ARateLimit"))
def test_check_a2a_rate_limit_cases(case: dict[str, Any]) -> None:
    guard = LoopGuard(
        LoopGuardConfig.model_validate(case["input"]["config"])
    )  # fresh state per case
    blocked = [guard.check(c["from"], c["to"], T0 + c["t"]) for c in case["input"]["calls"]]
    # every call, the asserted ones and the setup calls whose value the fixture read off the
    # implementation
    assert blocked == case["expect"]["blocked"]


@pytest.mark.parametrize("case", _cases("checkA2ADepthLimit"))
def test_check_a2a_depth_limit_cases(case: dict[str, Any]) -> None:
    config = case["input"]["config"]
    cfg = LIBRARY_LOOP_GUARD if config is None else LoopGuardConfig.model_validate(config)
    assert is_depth_blocked(case["input"]["currentDepth"], cfg) is case["expect"]["blocked"]
    assert (
        LoopGuard(cfg).is_depth_blocked(case["input"]["currentDepth"]) is case["expect"]["blocked"]
    )


def test_defaults() -> None:
    assert (LIBRARY_LOOP_GUARD.max_messages_per_window, LIBRARY_LOOP_GUARD.window_ms) == (
        10,
        60_000,
    )
    assert (LIVE_LOOP_GUARD.max_messages_per_window, LIVE_LOOP_GUARD.window_ms) == (6, 60_000)
    assert LIVE_LOOP_GUARD.max_depth == 5
    live = LoopGuard(LIVE_LOOP_GUARD)
    assert [live.check("ruda", "eden", T0 + i) for i in range(7)] == [False] * 6 + [True]
    library = LoopGuard()
    assert [library.check("ruda", "eden", T0 + i) for i in range(11)] == [False] * 10 + [True]


def test_collaborate_limit_blocks_the_eleventh_call_in_five_minutes() -> None:
    guard = LoopGuard(COLLABORATE_LIMIT)
    calls = [
        guard.check("ruda" if i % 2 else "eden", "eden" if i % 2 else "ruda", T0 + i * 1000)
        for i in range(11)
    ]
    assert calls == [False] * 10 + [True]
    assert guard.check("ruda", "eden", T0 + 300_000) is True  # the first call is exactly 5 min old
    assert guard.check("ruda", "eden", T0 + 300_001) is False


def test_window_edges_and_blocked_calls() -> None:
    guard = LoopGuard(LoopGuardConfig(max_messages_per_window=1, window_ms=100))
    assert guard.check("a", "b", 0) is False
    assert guard.check("a", "b", 50) is True  # blocked, and not recorded ...
    assert guard.check("a", "b", 100) is True  # ... the entry at 0 is exactly one window old
    assert guard.check("a", "b", 101) is False  # 50 was never recorded
    assert guard.count("b", "a", 101) == 1 and guard.count("a", "b", 202) == 0
    assert guard.check("a", "b", 102, system_retry=True) is False
    assert guard.count("a", "b", 102) == 1  # a system retry is not recorded either


def test_pair_key_uses_utf16_order() -> None:
    assert pair_key("b", "a") == "a::b" == pair_key("a", "b")
    # U+FF01 sorts after U+1F600 by code point but before it by UTF-16 code unit
    assert pair_key("\uff01", "\U0001f600") == "\U0001f600::\uff01"
    config = LoopGuardConfig.model_validate(
        {"overrides": {"\U0001f600::\uff01": {"maxMessagesPerWindow": 1}}}
    )
    assert LoopGuard(config).limits("\uff01", "\U0001f600") == (1, 60_000)


_agents = st.sampled_from(["a", "b", "c"])
_calls = st.lists(
    st.tuples(_agents, _agents, st.integers(min_value=0, max_value=40)), min_size=1, max_size=80
)


@given(
    calls=_calls,
    max_messages=st.integers(min_value=1, max_value=6),
    window_ms=st.integers(min_value=1, max_value=120),
)
def test_never_more_than_n_messages_per_window_for_any_pair(
    calls: list[tuple[str, str, int]], max_messages: int, window_ms: int
) -> None:
    guard = LoopGuard(LoopGuardConfig(max_messages_per_window=max_messages, window_ms=window_ms))
    now = 0
    allowed: dict[str, list[int]] = {}
    for sender, receiver, step in calls:
        now += step
        key = pair_key(sender, receiver)
        recent = [t for t in allowed.get(key, []) if t >= now - window_ms]
        blocked = guard.check(sender, receiver, now)
        # oracle: blocked exactly when the closed window [now - W, now] is full
        assert blocked == (len(recent) >= max_messages)
        if not blocked:
            allowed.setdefault(key, []).append(now)
    for times in allowed.values():
        for i in range(len(times) - max_messages):
            assert times[i + max_messages] - times[i] > window_ms
