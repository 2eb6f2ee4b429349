"""The iterative search of a segment's turns and completes equals the recursive one it
replaced (tests/support/exchange_search_reference.py, the slow obvious reference): the same
placement, the same flagged exchanges and events, on random dense segments (every reading:
lane order, without it, before the first outcome, causality only, events left out; and the
budgets that stop a search), and on a segment too deep for Python's recursion limit."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_lab._deep import deep_call
from a2a_lab._exchange_firsts import _solve
from a2a_lab._exchange_tails import _MAX_PLACEMENTS, _SEARCH_STEPS, solve_segment
from tests.support.exchange_search_reference import (
    solve_component_recursive,
    solve_segment_recursive,
)

KINDS = st.sampled_from(["reply", "reply", "reply", "no_reply", "blocked", None])
INTENTS = st.sampled_from([None, "request", "notify"])
TYPES = st.sampled_from([None, "main", "subagent"])
TERMS = st.sampled_from(
    [None, None, "repetition_detected", "conclusion_detected", "turn_timeout", "max_turns"]
)


@st.composite
def segments(draw: st.DrawFn) -> tuple[dict, list, dict]:
    """A segment: 2-6 exchanges sent within a minute, 1-14 turns and completes within a few
    minutes (dense: many fit several exchanges). Half of them log keys drawn from small
    sets, which agree and disagree often (most then need the causality-only reading); the
    other half log none (replied exchanges whose turns and completes the rules place, in
    many ways: ambiguity, the lane order, events left out)."""
    clean = draw(st.booleans())

    def pick(strategy: st.SearchStrategy, plain: object = None) -> object:
        return plain if clean else draw(strategy)

    n_x = draw(st.integers(2, 6))
    sends = sorted(draw(st.lists(st.integers(0, 60), min_size=n_x, max_size=n_x)))
    xs, sent = {}, {}
    for xn, s in enumerate(sends, start=1):
        first = (s + draw(st.integers(0, 30))) * 1000.0
        sugg = pick(st.sampled_from([None, 0, 1, 3, -1]))
        keys = (pick(INTENTS), sugg, draw(TYPES), pick(st.sampled_from([None, "a2a"])))
        xs[xn], sent[xn] = (pick(KINDS, "reply"), first, *keys), s * 1000.0
    n_ev = draw(st.integers(1, 14))
    times = sorted(
        draw(st.lists(st.integers(0, 200 if clean else 400), min_size=n_ev, max_size=n_ev))
    )
    evs = []
    # a clean segment's events are drawn from its exchanges: the next turn of an open one,
    # or its complete
    turns = dict.fromkeys(xs, 0)
    start = max(x[1] for x in xs.values()) if clean else 0.0
    for seq, t in enumerate(times, start=100):
        ms = start + t * 1000.0
        owner = draw(st.sampled_from(sorted(turns))) if clean and turns else None
        if owner is not None and draw(st.integers(0, 2)) == 0:
            del turns[owner]
            evs.append(("c", seq, ms, False, None, None, None, None, None, None, None))
            evs[-1] += (False, False, None)
            continue
        if owner is not None:
            turns[owner] += 1
            evs.append(("t", seq, ms, float(turns[owner]), None, None, None, None))
            continue
        if draw(st.booleans()):
            turn = float(draw(st.integers(1, 4)))
            mx = draw(st.sampled_from([None, 2.0, 3.0, 5.0]))
            evs.append(("t", seq, ms, turn, pick(INTENTS), draw(TYPES), mx, pick(TERMS)))
        else:
            actual = pick(st.sampled_from([None, 0.0, 1.0, 2.0]))
            eff = pick(st.sampled_from([None, 0.0, 2.0, 5.0]))
            cfg = draw(st.sampled_from([None, 5.0]))
            keys = (pick(INTENTS), draw(TYPES), pick(st.sampled_from([None, "a2a"])))
            wait, failed = pick(st.booleans(), False), pick(st.booleans(), False)
            skip = pick(st.sampled_from([None, True, False]))
            conc = pick(st.integers(0, 5), 1) == 0
            evs.append(("c", seq, ms, conc, actual, eff, cfg, pick(TERMS), *keys))
            evs[-1] += (wait, failed, skip)
    return xs, evs, sent


def _same(case: tuple[dict, list, dict]) -> None:
    xs, evs, sent = case
    fast = solve_segment(xs, evs, sent)
    slow = solve_segment_recursive(xs, evs, sent)
    assert fast == slow
    # the placement lists its events in log order, as the recursive one did
    assert list(fast[0].items()) == list(slow[0].items())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=segments())
def test_iterative_search_equals_the_recursive_one(case: tuple[dict, list, dict]) -> None:
    _same(case)


@pytest.mark.slow
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=segments())
def test_iterative_search_equals_the_recursive_one_at_length(
    case: tuple[dict, list, dict],
) -> None:
    _same(case)


def _dense(n_x: int, n_ev: int, step_ms: float) -> tuple[dict, list, dict]:
    """``n_x`` replied exchanges sent at 0 and ``n_ev`` turns ``step_ms`` apart that each
    of them could take (no keys logged): the placements multiply with every turn."""
    xs = {xn: ("reply", 0.0, None, None, None, None) for xn in range(1, n_x + 1)}
    evs = [
        ("t", 10 + i, (i + 1) * step_ms, float(i // n_x + 1), None, None, None, None)
        for i in range(n_ev)
    ]
    return xs, evs, dict.fromkeys(xs, 0.0)


def test_a_search_past_its_budgets_stops_as_the_recursive_one() -> None:
    """A segment with more placements than the search collects: both stop at the same
    step and keep the same best, and every event is flagged."""
    xs, evs, sent = _dense(4, 12, 5_000.0)
    fast = solve_segment(xs, evs, sent)
    assert fast == solve_segment_recursive(xs, evs, sent)
    assert fast[2] == {ev[1] for ev in evs}
    assert _MAX_PLACEMENTS < 4**12 and _SEARCH_STEPS < 4**12


def test_a_segment_deeper_than_the_recursion_limit() -> None:
    """A dense loaded frame: one exchange's ping-pong of thousands of turns beside a
    second exchange. The recursive search exceeds Python's recursion limit on it; the
    iterative one does not, and (given the room to recurse) both agree."""
    n_ev = sys.getrecursionlimit() + 500
    xs = {
        1: ("reply", 0.0, None, None, "main", None),
        2: ("no_reply", 0.0, None, None, "main", None),
    }
    evs: list = [
        ("t", 10 + i, (i + 1) * 1_000.0, float(i + 1), None, None, None, None) for i in range(n_ev)
    ]
    sent = {1: 0.0, 2: 0.0}
    with pytest.raises(RecursionError):
        solve_segment_recursive(xs, evs, sent)
    fast = solve_segment(xs, evs, sent)
    assert len(fast[0]) == n_ev and set(fast[0].values()) == {1}
    assert fast == deep_call(solve_segment_recursive, xs, evs, sent, depth=4 * n_ev)


@st.composite
def components(draw: st.DrawFn) -> tuple[list, list]:
    """A component of first outcomes (:mod:`a2a_lab._exchange_firsts`): 1-6 exchanges, some
    retried (a bound), some with a run-level error, and as many outcomes or fewer, of every
    kind, at times that fit several exchanges."""
    n_x = draw(st.integers(1, 6))
    sends = sorted(draw(st.lists(st.integers(0, 60), min_size=n_x, max_size=n_x)))
    xs = []
    for xn, s in enumerate(sends, start=1):
        retried = draw(st.booleans())
        bound = (s + draw(st.integers(0, 40))) * 1000.0 if retried else s * 1000.0
        xs.append((xn, s * 1000.0, bound, retried, retried and draw(st.booleans())))
    n_ev = draw(st.integers(1, n_x))
    times = sorted(draw(st.lists(st.integers(0, 120), min_size=n_ev, max_size=n_ev)))
    evs = []
    for seq, t in enumerate(times, start=100):
        kind = draw(st.sampled_from(["reply", "no_reply"]))
        reason = draw(st.sampled_from([None, "timeout", "error"])) if kind == "no_reply" else None
        status = draw(st.sampled_from([None, "error", "timeout"])) if kind == "no_reply" else None
        evs.append((seq, t * 1000.0, kind, reason, status, draw(st.integers(1, n_x))))
    return xs, evs


@settings(max_examples=200, deadline=None)
@given(case=components())
def test_iterative_pairing_of_first_outcomes_equals_the_recursive_one(
    case: tuple[list, list],
) -> None:
    xs, evs = case
    assert _solve(xs, evs) == solve_component_recursive(xs, evs)


def test_a_component_deeper_than_the_recursion_limit() -> None:
    """Thousands of overlapping exchanges, each answered in turn: the recursive pairing
    exceeds the recursion limit, the iterative one pairs them first come first served."""
    n = sys.getrecursionlimit() + 200
    xs = [(xn, xn * 1000.0, xn * 1000.0, False, False) for xn in range(1, n + 1)]
    evs = [(10 + xn, xn * 1000.0 + 500.0, "reply", None, None, xn) for xn in range(1, n + 1)]
    with pytest.raises(RecursionError):
        solve_component_recursive(xs, evs)
    pairs, flagged = _solve(xs, evs)
    assert [xn for _seq, xn, _amb in pairs] == list(range(1, n + 1))
    assert (pairs, flagged) == deep_call(solve_component_recursive, xs, evs, depth=4 * n)


def test_exchange_events_of_a_frame_past_the_recursion_limit() -> None:
    """Two overlapping sends and a ping-pong of more turns than Python's recursion limit
    (the recursive matcher raised RecursionError on it without ``deep_call``'s retry): the
    frame is matched in the caller's stack, every event placed."""
    from a2a_lab.exchanges import exchange_events
    from a2a_lab.io import from_records

    def e(t: int, type_: str, f: str, to: str, **d: object) -> dict:
        data = {"conversationId": "c", "fromAgent": f, "toAgent": to, **d}
        return {"type": type_, "ts": t, "data": data}

    n = sys.getrecursionlimit() + 500
    recs = [e(0, "a2a.send", "a", "b", runId="r1"), e(10, "a2a.send", "a", "b", runId="r2")]
    recs += [e(1000, "a2a.response", "b", "a"), e(2000, "a2a.response", "b", "a")]
    for i in range(n):
        odd = i % 2 == 0  # turn i + 1
        recs.append(e(3000 + i * 100, "a2a.response", *("ab" if odd else "ba"), turn=i + 1))
    end = 3000 + n * 100
    recs += [e(end + 50, "a2a.complete", "a", "b"), e(end + 60, "a2a.complete", "a", "b")]
    out = exchange_events(from_records(recs))
    assert out.height == n + 6
    assert set(out["exchange"].to_list()) == {1, 2}


# ---- the lane's order binds a retried flow once its wait is back on ------------------------
# exchange 1's wait failed and was retried (back on at 11 s: bound 10 s, less the clock
# slack); exchange 2 was sent at 5 s and queued behind it on the target's lane


def _retried_then_plain(reply_s: float) -> tuple[list, list]:
    xs = [(1, 0.0, 10_000.0, True, False), (2, 5_000.0, 5_000.0, False, False)]
    return xs, [(100, reply_s * 1000.0, "reply", None, None, 2)]


def test_a_retried_flow_back_on_takes_the_reply_a_later_send_cannot() -> None:
    """A reply 30 s in: had exchange 2's run ended, exchange 1's (before it on the lane) had
    too, and its wait, on again since 12 s, would have returned an outcome; it has none, so
    the reply is exchange 1's, and nothing else is consistent (not flagged)."""
    xs, evs = _retried_then_plain(30.0)
    assert _solve(xs, evs) == ([(100, 1, False)], set())


def test_a_retried_flow_still_away_may_lose_the_reply() -> None:
    """A reply 11.5 s in, while exchange 1's wait may still be away (within the slack of its
    bound): either exchange may hold it, both are flagged."""
    xs, evs = _retried_then_plain(11.5)
    pairs, flagged = _solve(xs, evs)
    assert flagged == {1, 2} and [amb for _s, _x, amb in pairs] == [True]


# ---- the causality-only reading keeps the send's keys ----------------------------------------
# two sends without a first outcome (the pairing of first outcomes went elsewhere): no reading
# of the rules places a turn or a replied complete, the causality-only one decides (flagged)


def _no_outcomes(turn_intent: str) -> tuple[dict, list]:
    xs = {
        1: (None, 0.0, "request", 3, None, None),
        2: (None, 1_000.0, "escalation", 0, None, None),
    }
    evs = [
        ("t", 10, 5_000.0, 1.0, turn_intent, None, 3.0, None),
        ("c", 11, 6_000.0, False, 1.0, 3.0, 5.0, None, turn_intent, None, None, False, False, True),
    ]
    return xs, evs


def test_the_causality_only_reading_keeps_the_intent() -> None:
    """The turn and the complete say messageIntent "request": exchange 1's, although
    exchange 2's send is nearer (least lags alone would give it both)."""
    xs, evs = _no_outcomes("request")
    best, flagged_x, flagged_seq = solve_segment(xs, evs)
    assert best == {10: 1, 11: 1}
    assert flagged_x == {1} and flagged_seq == {10, 11}
    assert (best, flagged_x, flagged_seq) == solve_segment_recursive(xs, evs)


def test_the_causality_only_reading_drops_keys_no_send_has() -> None:
    """An intent neither send has: the keys are dropped, the least lags decide."""
    xs, evs = _no_outcomes("question")
    best, _flagged_x, flagged_seq = solve_segment(xs, evs)
    assert best == {10: 2, 11: 2} and flagged_seq == {10, 11}
    assert solve_segment(xs, evs) == solve_segment_recursive(xs, evs)
