"""The slow, obvious search of one segment's turns and completes: the recursive depth-first
search the matcher ran before its iterative rewrite (commit 76c1e20), kept verbatim as the
reference :func:`a2a_lab._exchange_tails.solve_segment` is property-tested against
(tests/exchanges/test_segment_search.py).

It recurses once per event of the segment, so a segment of more events than Python's
recursion limit needs a raised limit (the tests raise it).
"""

from __future__ import annotations

from a2a_lab._exchange_firsts import _E, _MAX_PAIRINGS, _X
from a2a_lab._exchange_tails import (
    _ANNOUNCE_WINDOW_MS,
    _BENT,
    _MAX_PLACEMENTS,
    _REPLY_REASONS,
    _SEARCH_STEPS,
    _SILENT,
    _TURN_WINDOW_MS,
    SLACK_MS,
    TURN_TIMEOUT_MS,
)

_SLACK_MS = SLACK_MS
_FIRSTS_SEARCH_STEPS = 20_000
_XInfo = tuple[str | None, float, str | None, int | None, str | None, str | None]
_Event = tuple[object, ...]


def _square(x: float) -> float:
    return x * x


def _allowed_eff(suggested: int | None, cfg: float | None) -> float | None:
    if suggested is None or cfg is None:
        return None
    if suggested == 0:
        return 0.0
    return cfg if suggested < 0 else min(float(suggested), cfg)


def _in_time(kind: str | None, term: object, skip: object, prev: float, ms: float) -> bool:
    if kind in ("no_reply", "blocked"):
        return ms <= prev + _SLACK_MS
    if kind != "reply" or skip is None:
        return True
    loop_end = prev + (TURN_TIMEOUT_MS if term is not None and term not in _REPLY_REASONS else 0.0)
    return ms <= loop_end + (0.0 if skip else _ANNOUNCE_WINDOW_MS) + _SLACK_MS


def _agree(a: object, b: object) -> bool:
    return a is None or b is None or a == b


def _fifo(runs: list[tuple[float, float]], queued: float, logged: float) -> bool:
    return not any((q < queued and t > logged) or (q > queued and t < logged) for q, t in runs)


def solve_segment_recursive(
    xs: dict[int, _XInfo], evs: list[_Event], sent: dict[int, float] | None = None
) -> tuple[dict[int, int], set[int], set[int]]:
    """The most likely consistent placement of one segment's turns and completes, and what
    another consistent placement would change.

    ``xs``: the segment's exchanges (their first outcomes are placed already); ``evs``:
    its turns and completes in log order. Consistent means, for every exchange:

    - turn *k* follows turn *k - 1* (or the reply), within :data:`_TURN_WINDOW_MS`, while
      the loop goes on (no termination reason yet, *k* ≤ ``maxTurns``, an intent that
      allows turns), with the exchange's ``messageIntent``, requester session type and
      ``maxTurns``;
    - one complete, after its last reply or turn (120 s after it when the loop ended on a
      turn timeout: that step ran first), nothing after it; a concurrency-blocked complete
      closes a refusal, one with wait fields a no-reply, one counting turns a replied
      exchange with that many turns and the same reply-given termination, with the send's
      ``messageIntent`` and session types and ``effectiveTurns`` equal to the turns'
      ``maxTurns`` (or what the intent allows under ``configuredMaxTurns``); a complete
      with ``outcome: "failed"`` may close an exchange without an outcome;
    - first come first served on the target's lane (the direction's ``targetSessionKey``):
      the target's ping-pong steps (even turns) run there, each queued when the exchange's
      event before it was logged, so one queued earlier is logged no later; the announce
      step before a replied exchange's complete runs there too, so an announce queued
      strictly earlier is logged complete first, and an exchange whose loop ended (announce
      queued) before another's announce cannot still be open when that one closes. (The
      requester's steps, odd turns, run on the requester's own session, which the log does
      not name: ``fromSessionType`` "main" may be a send from the requester's conversation
      lane, so no order is assumed there.)

    As few events as possible stay unplaced. Most likely = the least sum of squared lags
    (each event after the exchange's previous one, less 120 s after a turn timeout): for
    interchangeable exchanges it pairs them first come first served. An event is
    ambiguous when some consistent placement gives it another exchange; the exchanges such
    a placement changes are flagged.

    A depth-first search in log order that collects every consistent placement (the lane
    order is a pairwise side constraint no assignment solver, scipy's or networkx's, takes;
    a segment has a few exchanges, so the placements are few); after :data:`_SEARCH_STEPS`
    steps or :data:`_MAX_PLACEMENTS` placements it stops deciding and flags the segment.
    """
    n = len(evs)
    xns = sorted(xs)
    sent_at = sent if sent is not None else {xn: xs[xn][1] for xn in xns}
    steps = [0]
    # the exchanges each event could take by its time and keys alone (the search only
    # looks at these, and an event with one has no alternative)
    static: dict[object, list[int]] = {}
    for ev in evs:
        ms = float(ev[2])  # type: ignore[arg-type]
        cands = []
        for xn in xns:
            kind, _first, intent, sugg, rtype, ttype = xs[xn]
            if sent_at[xn] > ms:
                continue
            if ev[0] == "t":
                if kind != "reply" or not (_agree(ev[4], intent) and _agree(ev[5], rtype)):
                    continue
                if ev[3] == 1 and sugg == 0:
                    continue
            else:
                conc, wait, failed = ev[3], ev[11], ev[12]
                if (kind is None and not failed) or (conc and kind != "blocked"):
                    continue
                if wait and kind != "no_reply":
                    continue
                if not (_agree(ev[8], intent) and _agree(ev[9], rtype) and _agree(ev[10], ttype)):
                    continue
            cands.append(xn)
        static[ev[1]] = cands
    # the last reading keeps causality only: any exchange sent before the event
    anywhere = {ev[1]: [xn for xn in xns if sent_at[xn] <= float(ev[2])] for ev in evs}  # type: ignore[arg-type]

    def search(
        max_free: int,
        sols: list[tuple[float, dict[int, int]]],
        lane_order: bool,
        after_outcome: bool = True,
        relaxed: bool = False,
    ) -> bool:
        """Every consistent placement with ``max_free`` events left out (with or without
        the lane order), into ``sols``; whether the search stopped at its step budget."""
        turns = dict.fromkeys(xns, 0)
        # without after_outcome, a turn or complete need only follow the send: the first
        # outcomes (placed first come first served) are then in question, not the turns
        last = {xn: xs[xn][1] if after_outcome else sent_at[xn] for xn in xns}
        lterm: dict[int, object] = dict.fromkeys(xns)
        lmax: dict[int, object] = dict.fromkeys(xns)
        closed: set[int] = set()
        lanes: list[tuple[float, float, float]] = []
        # the target's ping-pong steps (even turns) placed on its conversation lane:
        # (queued = the exchange's event before, logged)
        steps_on_lane: list[tuple[float, float]] = []
        # the requester's steps (odd turns) placed on its main session
        steps_on_main: list[tuple[float, float]] = []
        assign: dict[int, int] = {}
        capped = [False]

        def done(xn: int) -> bool:
            kind, _f, _i, sugg, _r, _t = xs[xn]
            if kind != "reply":
                return False
            k, mx = turns[xn], lmax[xn]
            return (
                lterm[xn] is not None
                or (k >= 1 and isinstance(mx, float) and k >= mx)
                or (k == 0 and sugg == 0)
            )

        def options(ev: _Event) -> list[tuple[float, int, tuple[float, float] | None]]:
            out: list[tuple[float, int, tuple[float, float] | None]] = []
            ms = float(ev[2])  # type: ignore[arg-type]
            if relaxed:
                # causality only: after the exchange's last event, none after its complete
                for xn in anywhere[ev[1]]:
                    if xn not in closed and ms >= last[xn]:
                        # what breaks a rule costs more than any lag: as few as possible
                        bent = xn not in static[ev[1]] or (ev[0] == "t" and ev[3] != turns[xn] + 1)
                        lag = _square((ms - last[xn]) / 1000.0)
                        out.append((lag + (_BENT if bent else 0.0), xn, None))
                out.sort(key=lambda o: (o[0], o[1]))
                return out
            for xn in static[ev[1]]:
                if xn in closed:
                    continue
                kind, _first, intent, sugg, rtype, ttype = xs[xn]
                k, lt, mx, prev = turns[xn], lterm[xn], lmax[xn], last[xn]
                if ms < prev:
                    continue
                if ev[0] == "t":
                    _t, _s, _m, level, mi, st, tmax, _term = ev
                    if (
                        kind != "reply"
                        or level != k + 1
                        or lt is not None
                        or (isinstance(mx, float) and k + 1 > mx)
                        or (k == 0 and sugg == 0)
                        or ms > prev + _TURN_WINDOW_MS
                        or not _agree(mi, intent)
                        or not _agree(st, rtype)
                        or (k >= 1 and not _agree(tmax, mx))
                    ):
                        continue
                    out.append((_square((ms - prev) / 1000.0), xn, None))
                    continue
                _c, _s, _m, conc, actual, eff, cfg, term, mi, cf, ct, wait, failed, skip = ev
                if kind is None and not failed:
                    continue
                if (conc and kind != "blocked") or (wait and kind != "no_reply"):
                    continue
                if kind == "blocked" and not conc and (actual is not None or wait):
                    continue
                if (
                    actual is not None
                    and kind is not None
                    and actual != (k if kind == "reply" else 0)
                ):
                    continue
                if not (_agree(mi, intent) and _agree(cf, rtype) and _agree(ct, ttype)):
                    continue
                if not _in_time(kind, term, skip, prev, ms):
                    continue
                lane: tuple[float, float] | None = None
                mu = 0.0
                if kind == "reply":
                    if eff is not None:
                        if k >= 1 and mx is not None:
                            if eff != mx:
                                continue
                        else:
                            allowed = _allowed_eff(sugg, cfg)  # type: ignore[arg-type]
                            if allowed is not None and eff not in (allowed, 0.0):
                                continue
                    reply_term = term if term in _REPLY_REASONS else None
                    if reply_term != lt:
                        continue
                    extra = term is not None and term not in _REPLY_REASONS
                    if extra:
                        if done(xn):
                            continue
                        mu = TURN_TIMEOUT_MS if term == "turn_timeout" else 0.0
                        if ms < prev + mu - _SLACK_MS:
                            continue
                    # a complete that logs neither termination nor effective turns (an
                    # older shape) does not say whether a step without event ran after the
                    # last one: its announce was queued somewhere between then and now
                    unknown = term is None and eff is None
                    lane = (prev + mu, ms) if extra or unknown else (prev, prev)
                out.append((_square((ms - prev - mu) / 1000.0), xn, lane))
            out.sort(key=lambda o: (o[0], o[1]))
            return out

        def silent() -> float:
            """The cost of the steps this placement says ended without an event: an
            exchange still waiting for a step (replied, loop on, not closed) whose session
            ran a step queued after its own (the lane is first come first served, so its
            step ran first and logged nothing). Less likely than any lag."""
            n_silent = 0
            for y in xns:
                if xs[y][0] != "reply" or y in closed or done(y):
                    continue
                odd = turns[y] % 2 == 0  # the next step is the requester's
                runs = steps_on_main if odd and xs[y][4] == "main" else steps_on_lane
                if (odd and xs[y][4] != "main") or not lane_order:
                    continue
                n_silent += any(q > last[y] for q, _t in runs)
            return n_silent * _SILENT

        def lane_ok(lo: float, hi: float, ms: float, xn: int) -> bool:
            if any(lo2 > hi and t2 < ms for lo2, _h, t2 in lanes):
                return False
            return not any(y != xn and y not in closed and done(y) and last[y] < lo for y in xns)

        def rec(i: int, cost: float, free: int) -> bool:
            steps[0] += 1
            if steps[0] > _SEARCH_STEPS:
                capped[0] = True
                return True
            if i == n:
                sols.append((cost + silent(), dict(assign)))
                if len(sols) > _MAX_PLACEMENTS:
                    capped[0] = True
                    return True
                return False
            ev = evs[i]
            seq, ms = int(ev[1]), float(ev[2])  # type: ignore[call-overload, arg-type]
            for c, xn, lane in options(ev):
                if lane_order and lane is not None and not lane_ok(lane[0], lane[1], ms, xn):
                    continue
                on_lane = lane_order and ev[0] == "t" and int(ev[3]) % 2 == 0  # type: ignore[call-overload]
                if on_lane and not _fifo(steps_on_lane, last[xn], ms):
                    continue
                # the requester's steps run on its session: one lane when that is its
                # main session (session type main: agent:<id>:main only)
                on_main = (
                    lane_order and ev[0] == "t" and int(ev[3]) % 2 == 1 and xs[xn][4] == "main"  # type: ignore[call-overload]
                )
                if on_main and not _fifo(steps_on_main, last[xn], ms):
                    continue
                if on_main:
                    steps_on_main.append((last[xn], ms))
                if on_lane:
                    steps_on_lane.append((last[xn], ms))
                saved = (turns[xn], last[xn], lterm[xn], lmax[xn])
                assign[seq] = xn
                last[xn] = ms
                if ev[0] == "t":
                    turns[xn] += 1
                    lterm[xn], lmax[xn] = ev[7], ev[6]
                else:
                    closed.add(xn)
                    if lane is not None:
                        lanes.append((lane[0], lane[1], ms))
                stop = rec(i + 1, cost + c, free)
                if ev[0] == "c":
                    closed.discard(xn)
                    if lane is not None:
                        lanes.pop()
                turns[xn], last[xn], lterm[xn], lmax[xn] = saved
                if on_lane:
                    steps_on_lane.pop()
                if on_main:
                    steps_on_main.pop()
                del assign[seq]
                if stop:
                    return True
            if free < max_free:
                return rec(i + 1, cost + 1e12, free + 1)
            return False

        rec(0, 0.0, 0)
        return capped[0]

    def placements(
        lane_order: bool, max_free: int, after_outcome: bool = True, relaxed: bool = False
    ) -> tuple[list[tuple[float, dict[int, int]]], bool]:
        sols: list[tuple[float, dict[int, int]]] = []
        steps[0] = 0
        capped = search(max_free, sols, lane_order, after_outcome, relaxed)
        return sols, capped

    # every event placed, in lane order; else every event placed without it (the log breaks
    # the lane order, a gateway that does not queue this way), else also with turns allowed
    # before the first outcome first come first served gave their exchange (that order is
    # broken too): the whole segment is then flagged, the log cannot decide between
    # readings; else as few left out as possible
    sols, capped = placements(True, 0)
    if not sols and not capped:
        sols, capped = placements(False, 0)
        if not sols and not capped:
            sols, capped = placements(False, 0, after_outcome=False)
        if not sols:
            # no reading of the rules places every event (an older gateway whose main
            # session runs several runs at once: its first outcomes are not first come
            # first served, so their kinds may sit on the wrong sends): causality only,
            # each event after its exchange's first outcome and last event, one complete
            # each, the least squared lags; the segment is flagged whole
            sols, capped = placements(False, 0, relaxed=True)
        capped = capped or bool(sols)
    for max_free in range(1, n + 1):
        if sols or capped:
            break
        sols, capped = placements(True, max_free)
    seqs = [int(ev[1]) for ev in evs]  # type: ignore[call-overload]
    if not sols:
        return {}, set(), set(seqs)
    # the most likely: least cost, ties to the earlier exchanges in log order
    # (the tie-break list is built only for the placements of least cost)
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
    """Every consistent pairing of one component's outcomes ``evs`` (in log order) with its
    exchanges ``xs`` (in send order); ``(seq, exchange, ambiguous)`` per outcome of the
    most likely one, and the exchanges another consistent pairing changes. When none is
    consistent, or the search hits its budget, the rank join's pairing stands, flagged
    whole."""
    plain = [not retried for _xn, _s, _b, retried, _r in xs]
    n = len(evs)
    held: dict[int, tuple[int, bool]] = {}  # exchange index -> (event index, run-bound)
    sols: list[tuple[float, tuple[int, ...]]] = []
    steps = [0]
    pick: list[int] = []

    def run_bound(e: _E) -> bool:
        kind, reason, status = e[2], e[3], e[4]
        return kind != "no_reply" or reason == "timeout" or status == "error"

    def fits(i: int, e: _E) -> bool:
        _xn, _sent, bound, _retried, run_error = xs[i]
        if e[1] < bound or (run_error and not (e[2] == "no_reply" and e[4] == "error")):
            return False
        if not run_bound(e):
            return True
        # the lane's order: no later-sent exchange holds an outcome that ended its run
        # earlier, unless this one's wait was away then (the outcome comes as the retried
        # wait resumes, at its bound: after it the wait is on again, as a plain one's)
        if not plain[i] and e[1] <= bound + 2 * SLACK_MS:
            return True
        return not any(j > i and rb for j, (_k, rb) in held.items())

    def complete() -> bool:
        # a plain exchange has an outcome once a later one's run has ended
        last_rb = max((j for j, (_k, rb) in held.items() if rb), default=-1)
        return all(held.get(j) is not None for j in range(last_rb) if plain[j])

    def rec(k: int, cost: float) -> bool:
        steps[0] += 1
        if steps[0] > _FIRSTS_SEARCH_STEPS:
            return True
        if k == n:
            if complete():
                sols.append((cost, tuple(pick)))
            return len(sols) > _MAX_PAIRINGS
        e = evs[k]
        for i in range(len(xs)):
            if i in held or not fits(i, e):
                continue
            held[i] = (k, run_bound(e))
            pick.append(i)
            lag = (e[1] - xs[i][2]) / 1000.0
            stop = rec(k + 1, cost + lag * lag)
            pick.pop()
            del held[i]
            if stop:
                return True
        return False

    capped = rec(0, 0.0)
    if capped or not sols:
        return [(e[0], e[5], True) for e in evs], {xn for xn, *_r in xs}
    best = min(sols, key=lambda s: (s[0], s[1]))[1]
    out = []
    flagged: set[int] = set()
    for k, e in enumerate(evs):
        taken = {s[1][k] for s in sols}
        out.append((e[0], xs[best[k]][0], len(taken) > 1))
        if len(taken) > 1:
            flagged.update(xs[i][0] for i in taken)
    return out, flagged
