"""The slow, obvious searches of the exchange matcher: recursive depth-first searches that
keep every placement found, as the matcher ran them before its iterative rewrite (commit
76c1e20), the reference the iterative ones are property-tested against
(tests/exchanges/test_segment_search.py).

They share the matcher's rules (which options an event has, the lane checks, the cost of
steps that ended without an event: :class:`a2a_lab._exchange_tails._Search`'s methods, and
:class:`a2a_lab._exchange_firsts._Pairs`), ported unchanged from the recursive code and
checked equal to it on the 29,195 segments of the 860,000-event benchmark log when the
rewrite was made. What the reference keeps apart is what the rewrite changed: the walk
(recursion, one frame per event, against an explicit stack), the placements kept whole and
reduced at the end (against folded in as found), and one generic search for every reading
(against a loop of its own for the causality-only one).

They recurse once per event, so a segment of more events than Python's recursion limit
needs a raised limit (the tests give it one, through :func:`a2a_lab._deep.deep_call`).
"""

from __future__ import annotations

from a2a_lab._exchange_firsts import _E, _MAX_PAIRINGS, _X, _Pairs, pairing_answer
from a2a_lab._exchange_firsts import _SEARCH_STEPS as _PAIRING_STEPS
from a2a_lab._exchange_tails import (
    _MAX_PLACEMENTS,
    _SEARCH_STEPS,
    _Event,
    _Reading,
    _Search,
    _Segment,
    _XInfo,
)

#: A placement: its cost and ``{seq: exchange}`` (an event left out is not in it).
_Placement = tuple[float, dict[int, int]]


def _placements(seg: _Segment, reading: _Reading) -> tuple[list[_Placement], bool]:
    """Every placement of ``seg`` under ``reading``, recursively, and whether a budget
    (:data:`_SEARCH_STEPS` steps, more than :data:`_MAX_PLACEMENTS` placements) stopped
    the search."""
    rules = _Search(seg, reading)
    sols: list[_Placement] = []
    steps = [0]
    capped = [False]

    def rec(i: int, cost: float, free: int) -> bool:
        steps[0] += 1
        if steps[0] > _SEARCH_STEPS:
            capped[0] = True
            return True
        if i == seg.n:
            assign = {q: xn for q, xn in zip(seg.seqs, rules.pick, strict=True) if xn}
            sols.append((cost + rules.silent(), assign))
            if len(sols) > _MAX_PLACEMENTS:
                capped[0] = True
                return True
            return False
        for c, xn, lane in rules.options(i):
            undo = rules.place(i, xn, lane)
            if undo is None:
                continue
            stop = rec(i + 1, cost + c, free)
            rules.unplace(undo)
            if stop:
                return True
        if free < reading.max_free:
            rules.pick[i] = 0
            return rec(i + 1, cost + 1e12, free + 1)
        return False

    rec(0, 0.0, 0)
    return sols, capped[0]


def solve_segment_recursive(
    xs: dict[int, _XInfo], evs: list[_Event], sent: dict[int, float] | None = None
) -> tuple[dict[int, int], set[int], set[int]]:
    """:func:`a2a_lab._exchange_tails.solve_segment`, recursively, every placement kept."""
    seg = _Segment(xs, evs, sent)
    sols, capped = _placements(seg, _Reading(True, 0))
    if not sols and not capped:
        sols, capped = _placements(seg, _Reading(False, 0))
        if not sols and not capped:
            sols, capped = _placements(seg, _Reading(False, 0, after_outcome=False))
        if not sols:
            sols, capped = _placements(seg, _Reading(False, 0, relaxed=True, keys=True))
        if not sols:
            sols, capped = _placements(seg, _Reading(False, 0, relaxed=True))
        capped = capped or bool(sols)
    for max_free in range(1, seg.n + 1):
        if sols or capped:
            break
        sols, capped = _placements(seg, _Reading(True, max_free))
    seqs = seg.seqs
    if not sols:
        return {}, set(), set(seqs)
    least = min(c for c, _sol in sols)
    best = min(
        (sol for c, sol in sols if c == least), key=lambda sol: [sol.get(q, 0) for q in seqs]
    )
    if capped:
        return best, set(best.values()), set(seqs)
    amb_x: set[int] = set()
    amb_seq: set[int] = set()
    for q in seqs:
        taken = {sol.get(q) for _c, sol in sols}
        if len(taken) > 1:
            amb_seq.add(q)
            amb_x.update(xn for xn in taken if xn is not None)
    return best, amb_x, amb_seq


def solve_component_recursive(
    xs: list[_X], evs: list[_E]
) -> tuple[list[tuple[int, int, bool]], set[int]]:
    """:func:`a2a_lab._exchange_firsts._solve`, recursively."""
    state = _Pairs(xs, evs)
    sols: list[tuple[float, tuple[int, ...]]] = []
    steps = [0]
    pick: list[int] = []

    def rec(k: int, cost: float) -> bool:
        steps[0] += 1
        if steps[0] > _PAIRING_STEPS:
            return True
        if k == len(evs):
            if state.complete():
                sols.append((cost, tuple(pick)))
            return len(sols) > _MAX_PAIRINGS
        e = evs[k]
        for i in range(len(xs)):
            if i in state.held or not state.fits(i, e):
                continue
            state.held[i] = (k, state.run_bound(e))
            pick.append(i)
            lag = (e[1] - xs[i][2]) / 1000.0
            stop = rec(k + 1, cost + lag * lag)
            pick.pop()
            del state.held[i]
            if stop:
                return True
        return False

    return pairing_answer(xs, evs, sols, rec(0, 0.0))
