"""Ping-pong turns and completes of A2A exchanges, placed per segment of a direction
(:func:`tails`, the last step of :func:`a2a_lab.exchanges.exchange_events`).

Split from :mod:`a2a_lab.exchanges` (which re-exports :data:`TURN_TIMEOUT_MS`): the exact
search of overlapping flows (:func:`solve_segment`, iterative) and the Polars frame around
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from a2a_lab.reference.runtime.termination import TERMINATION_REASONS

__all__ = ["DIRECTION", "SLACK_MS", "TURN_TIMEOUT_MS", "solve_segment", "tails"]

#: A ping-pong turn that takes longer times out and ends the loop (runtime §2.4).
TURN_TIMEOUT_MS: Final = 120_000.0
#: Reasons a ping-pong turn's own reply gives (the three checks of runtime §3); the others
#: end the loop without a turn event, on the complete only.
_REPLY_REASONS: Final = TERMINATION_REASONS[:3]
#: Clock slack of the log: a refusal or a timeout may be logged this much late.
SLACK_MS: Final = 1_000.0
#: An exchange's direction: the key every rule of the matcher is per.
DIRECTION: Final = ["conversation_id", "requester", "target"]


#: How many search steps one segment may take before the matcher stops deciding and flags
#: what it has not proven (a guard against pathological logs; a segment of the reference's
#: traffic takes a few steps per event).
_SEARCH_STEPS: Final = 20_000
#: A ping-pong turn comes at most this long after the event before it in its exchange.
_TURN_WINDOW_MS: Final = TURN_TIMEOUT_MS + SLACK_MS
#: How many consistent placements of one segment the search collects before it stops
#: deciding (then every event of the segment is flagged).
_MAX_PLACEMENTS: Final = 1_000

#: The longest an announce step keeps a replied exchange's complete waiting: the step's
#: wait (at most 60 s, its call 2 s more) and the delivery call's 10 s timeout.
_ANNOUNCE_WINDOW_MS: Final = 72_000.0

#: The cost of a step a placement says ended without an event while a step queued after
#: it on its session was logged (the squared lag of a turn at its 120 s timeout).
_SILENT: Final = (TURN_TIMEOUT_MS / 1000.0) ** 2

#: The cost of an event placed against a rule in the causality-only reading (more than
#: any squared lag of a day, less than an event left out).
_BENT: Final = 1e10

#: What the search reads of an exchange: (kind of first outcome, its time, intent,
#: suggested turns, the send's fromSessionType and toSessionType).
_XInfo = tuple[str | None, float, str | None, int | None, str | None, str | None]
#: What the search reads of a turn: ("t", seq, time, turn, messageIntent, requester's session
#: type, maxTurns, terminationReason) and of a complete: ("c", seq, time, concurrencyBlocked,
#: actualTurns, effectiveTurns, configuredMaxTurns, terminationReason, messageIntent,
#: fromSessionType, toSessionType, wait fields, outcome failed, announceSkipped).
_Event = tuple[object, ...]
_AMB_SCHEMA: Final = {**dict.fromkeys(DIRECTION, pl.String), "exchange": pl.Int64}


def _square(x: float) -> float:
    """``x * x``: a lag of a far-future time squares to inf, where ``x ** 2`` raises
    OverflowError (Python's float power checks its range; multiplication does not)."""
    return x * x


def tails(
    ex: pl.DataFrame, x: pl.DataFrame, outcome_of: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Place the ping-pong turns and completes (runtime §2.4-§3).

    A direction's events are cut into segments: a segment starts at a send when every
    earlier send of the direction has had its complete (counting sends and completes in
    log order). Every complete closes one exchange sent before it, so no exchange of one
    segment is open in the next and the segments are independent. A segment with one send
    is settled in Polars (its turns and complete are that exchange's); a segment with
    several (overlapping flows) is solved exactly by :func:`solve_segment`.

    Returns the placed events (``_seq, exchange, _amb``) and the ambiguous exchanges
    (direction, ``exchange``).
    """
    segs, seg_x = _segments(ex, x)
    sizes = seg_x.group_by(*DIRECTION, "_segment").agg(
        pl.len().alias("_sends"), pl.col("exchange").min().alias("_only")
    )
    events = segs.filter(pl.col("type") != "a2a.send").join(
        sizes, on=[*DIRECTION, "_segment"], how="inner", nulls_equal=True
    )
    easy = events.filter(pl.col("_sends") == 1).select(
        pl.col("_seq").cast(pl.UInt32),
        pl.col("_only").cast(pl.Int64).alias("exchange"),
        pl.lit(False).alias("_amb"),
    )
    hard = events.filter(pl.col("_sends") > 1)
    if hard.height == 0:
        return easy, pl.DataFrame(schema=_AMB_SCHEMA)
    ids, hard_x, hard_ev = _hard_frames(ex, x, outcome_of, seg_x, hard)
    solved, amb = _solve_all(hard_x, hard_ev)
    amb = amb.join(ids, on="_sid").select(*DIRECTION, "exchange")
    return pl.concat([easy, solved]), amb


def _segments(ex: pl.DataFrame, x: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The sends, turns and completes of each direction with their ``_segment`` (see
    :func:`tails`), and the exchanges of each segment."""
    t = pl.col("type")
    step = pl.when(t == "a2a.send").then(1).when(t == "a2a.complete").then(-1).otherwise(0)
    segs = (
        ex.filter(t.is_in(["a2a.send", "a2a.complete"]) | (pl.col("_kind") == "turn"))
        .select("_seq", *DIRECTION, "event_ms", "type")
        .sort([*DIRECTION, "event_ms", "_seq"], nulls_last=True)
        .with_columns(step.cast(pl.Int64).alias("_step"))
        .with_columns((pl.col("_step").cum_sum().over(DIRECTION) - pl.col("_step")).alias("_open"))
        .with_columns(
            ((t == "a2a.send") & (pl.col("_open") <= 0)).cum_sum().over(DIRECTION).alias("_segment")
        )
    )
    seg_x = segs.join(x.select(pl.col("_send_seq").alias("_seq"), "exchange"), on="_seq").select(
        *DIRECTION, "_segment", "exchange"
    )
    return segs, seg_x


def _hard_frames(
    ex: pl.DataFrame,
    x: pl.DataFrame,
    outcome_of: pl.DataFrame,
    seg_x: pl.DataFrame,
    hard: pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The segments with several sends (direction, ``_segment`` and their number ``_sid``,
    dense in direction and segment order), and their exchanges and events, each row with
    its ``_sid``, sorted by it."""
    key = [*DIRECTION, "_segment"]
    ids = (
        hard.select(key)
        .unique()
        .sort(key, nulls_last=True)
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_sid"))
    )
    hard_x = (
        seg_x.join(ids, on=key, nulls_equal=True)
        .join(
            outcome_of.select(
                *DIRECTION, "exchange", "_kind", pl.col("event_ms").alias("_first_ms")
            ),
            on=[*DIRECTION, "exchange"],
            how="left",
            nulls_equal=True,
        )
        .join(x, on=[*DIRECTION, "exchange"], how="left", nulls_equal=True)
        .select(
            "_sid",
            "exchange",
            "_kind",
            pl.coalesce("_first_ms", "_send_ms").cast(pl.Float64),
            pl.col("_send_ms").cast(pl.Float64),
            "_intent",
            pl.col("_suggested").cast(pl.Int64),
            "_req_type",
            "_to_type",
        )
        .sort("_sid", "exchange")
    )
    cols = ex.select(
        "_seq",
        pl.col("_turn").cast(pl.Float64, strict=False),
        "_mi",
        "_st",
        pl.col("_max").cast(pl.Float64, strict=False),
        "_term",
        "_conc",
        pl.col("_actual").cast(pl.Float64, strict=False),
        pl.col("_eff").cast(pl.Float64, strict=False),
        pl.col("_cfg").cast(pl.Float64, strict=False),
        "_req_type",
        "_to_type",
        "_wait",
        "_failed",
        "_skip",
    )
    hard_ev = (
        hard.join(ids, on=key, nulls_equal=True)
        .select("_sid", "_seq", "event_ms", "type")
        .join(cols, on="_seq", how="left")
        .sort(["_sid", "event_ms", "_seq"], nulls_last=True)
    )
    return ids, hard_x, hard_ev


def _runs(sids: list[int]) -> list[tuple[int, int, int]]:
    """(segment, start, end) of each run of equal values of the sorted ``sids``."""
    out: list[tuple[int, int, int]] = []
    start = 0
    for pos in range(1, len(sids) + 1):
        if pos == len(sids) or sids[pos] != sids[start]:
            out.append((sids[start], start, pos))
            start = pos
    return out


def _solve_all(hard_x: pl.DataFrame, hard_ev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`solve_segment` of every segment of ``hard_x``/``hard_ev``
    (:func:`_hard_frames`): the placed events and the ambiguous exchanges."""
    xrows = hard_x.drop("_sid").rows()
    xs_of: dict[int, dict[int, _XInfo]] = {}
    sent_of: dict[int, dict[int, float]] = {}
    for sid, lo, hi in _runs(hard_x["_sid"].to_list()):
        xs_of[sid] = {r[0]: (r[1], r[2], r[4], r[5], r[6], r[7]) for r in xrows[lo:hi]}
        sent_of[sid] = {r[0]: r[3] for r in xrows[lo:hi]}
    evs = [_event(row) for row in hard_ev.drop("_sid").rows()]
    placed_rows: list[tuple[int, int, bool]] = []
    amb_rows: list[tuple[int, int]] = []
    for sid, lo, hi in _runs(hard_ev["_sid"].to_list()):
        best, amb_x, amb_seq = solve_segment(xs_of.get(sid, {}), evs[lo:hi], sent_of.get(sid, {}))
        placed_rows += [(seq, xn, seq in amb_seq) for seq, xn in best.items()]
        amb_rows += [(sid, xn) for xn in amb_x]
    solved = pl.DataFrame(
        placed_rows,
        schema={"_seq": pl.UInt32, "exchange": pl.Int64, "_amb": pl.Boolean},
        orient="row",
    )
    amb = pl.DataFrame(amb_rows, schema={"_sid": pl.Int64, "exchange": pl.Int64}, orient="row")
    return solved, amb


def _event(row: tuple[Any, ...]) -> _Event:
    """A turn or complete as the search reads it (see :data:`_Event`), from a row of
    ``_seq, event_ms, type`` and the helper columns of :func:`_hard_frames`."""
    seq, ms, typ, turn, mi, st, mx, term, conc, actual, eff, cfg, frm, to, wait, failed, skip = row
    if typ == "a2a.complete":
        return ("c", seq, ms, bool(conc), actual, eff, cfg, term, mi, frm, to, wait, failed, skip)
    return ("t", seq, ms, turn, mi, st, mx, term)


def _allowed_eff(suggested: int | None, cfg: float | None) -> float | None:
    """The effective turns the intent allows under ``configuredMaxTurns`` (runtime §3)."""
    if suggested is None or cfg is None:
        return None
    if suggested == 0:
        return 0.0
    return cfg if suggested < 0 else min(float(suggested), cfg)


def _in_time(kind: str | None, term: object, skip: object, prev: float, ms: float) -> bool:
    """Whether a complete logged at ``ms`` can close an exchange whose last event (reply,
    turn or first outcome) was at ``prev``: no later than the reference lets it come.

    A no-reply's or refusal's complete is written right after it (one ``emit`` after the
    other: ``sessions-send-tool.a2a.ts``). A replied exchange's loop ends at its last turn,
    or up to one turn timeout later when a step without a turn event ended it (a
    termination reason the reply does not give); then, with ``announceSkipped: true``
    (``!shouldRunAnnounce``: no announce step) the complete follows at once, with
    ``false`` after the announce step, which ``runAgentStep`` waits for at most 60 s
    (``Math.min(timeoutMs, 60_000)``, the wait call 2 s more) and whose delivery call
    times out after 10 s. A complete that logs neither (an older shape) has no bound.
    """
    if kind in ("no_reply", "blocked"):
        return ms <= prev + SLACK_MS
    if kind != "reply" or skip is None:
        return True
    loop_end = prev + (TURN_TIMEOUT_MS if term is not None and term not in _REPLY_REASONS else 0.0)
    return ms <= loop_end + (0.0 if skip else _ANNOUNCE_WINDOW_MS) + SLACK_MS


def _agree(a: object, b: object) -> bool:
    """Two logged keys agree, or one of them is not logged."""
    return a is None or b is None or a == b


def _fifo(runs: list[tuple[float, float]], queued: float, logged: float) -> bool:
    """A run queued at ``queued`` and logged at ``logged`` keeps first come first served
    with the ``runs`` (queued, logged) of its session lane: none queued earlier is logged
    later, none queued later is logged earlier."""
    return not any((q < queued and t > logged) or (q > queued and t < logged) for q, t in runs)


def _keys_agree(ev: _Event, x: _XInfo) -> bool:
    """Whether event ``ev`` agrees with what exchange ``x``'s send says of itself: its
    intent (``messageIntent``; a turn 1 needs an intent that allows turns) and its session
    types, where both are logged. Facts of the send alone, whoever took its first outcome."""
    _kind, _first, intent, sugg, rtype, ttype = x
    if ev[0] == "t":
        return _agree(ev[4], intent) and _agree(ev[5], rtype) and not (ev[3] == 1 and sugg == 0)
    return _agree(ev[8], intent) and _agree(ev[9], rtype) and _agree(ev[10], ttype)


def _fits(ev: _Event, x: _XInfo) -> bool:
    """Whether event ``ev`` could belong to the exchange ``x`` by its keys alone: its
    send's (:func:`_keys_agree`) and its first outcome's kind."""
    kind = x[0]
    if ev[0] == "t":
        return kind == "reply" and _keys_agree(ev, x)
    conc, wait, failed = ev[3], ev[11], ev[12]
    if (kind is None and not failed) or (conc and kind != "blocked"):
        return False
    if wait and kind != "no_reply":
        return False
    return _keys_agree(ev, x)


def _closes(ev: _Event, x: _XInfo) -> bool:
    """The state-free rules of a complete ``ev`` closing the exchange ``x`` (beyond
    :func:`_fits`): a refusal's complete logs no turns and no wait fields."""
    kind = x[0]
    conc, actual, wait = ev[3], ev[4], ev[11]
    return not (kind == "blocked" and not conc and (actual is not None or wait))


class _Segment:
    """One segment as the search reads it: its exchanges ``xs`` (first outcomes placed),
    its turns and completes ``evs`` in log order, each exchange's send time, and per event
    the exchanges it could take by its time and keys alone (the search only looks at
    these: an event with one has no alternative) and, for the causality-only reading, any
    exchange sent before it."""

    def __init__(
        self, xs: dict[int, _XInfo], evs: list[_Event], sent: dict[int, float] | None
    ) -> None:
        self.xs, self.evs, self.n = xs, evs, len(evs)
        self.xns = sorted(xs)
        self.sent_at = sent if sent is not None else {xn: xs[xn][1] for xn in self.xns}
        self.ms = [float(ev[2]) for ev in evs]  # type: ignore[arg-type]
        self.seqs = [int(ev[1]) for ev in evs]  # type: ignore[call-overload]
        self.anywhere = [[xn for xn in self.xns if self.sent_at[xn] <= ms] for ms in self.ms]
        self.static = [
            [xn for xn in near if _fits(ev, xs[xn])]
            for ev, near in zip(evs, self.anywhere, strict=True)
        ]
        # the rule readings' candidates: the state-free rules checked once here
        self.rule_cands = [
            [xn for xn in s if ev[0] == "t" or _closes(ev, xs[xn])]
            for ev, s in zip(evs, self.static, strict=True)
        ]

    def keyed(self, i: int) -> list[int]:
        """The exchanges sent before event ``i`` whose send's keys it agrees with."""
        ev, xs = self.evs[i], self.xs
        return [xn for xn in self.anywhere[i] if _keys_agree(ev, xs[xn])]


@dataclass(frozen=True)
class _Reading:
    """One reading of the rules a search applies: with or without the lane order, how
    many events may stay unplaced, whether turns and completes come after the first
    outcome, and whether only causality holds (``relaxed``), with or without the keys the
    send logged (``keys``)."""

    lane_order: bool
    max_free: int
    after_outcome: bool = True
    relaxed: bool = False
    #: the causality-only reading keeps the send's keys (:func:`_keys_agree`)
    keys: bool = False


#: A search option: (cost, exchange, the announce's (queued, logged) on the lane or None).
_Option = tuple[float, int, tuple[float, float] | None]
#: The cost of an event left out (more than any placement of it).
_FREE: Final = 1e12
#: A node of the search: [event index, cost so far, events left out, its options, the next
#: option's index, what the node changed for its child (None, or the undo record), the
#: placements found before that child, whether the left-out branch was taken].
_Node = list[Any]


class _Search:
    """Every consistent placement of a segment under one :class:`_Reading`, searched
    depth first in log order without recursion (an explicit stack of nodes: a segment of
    thousands of events runs as one of ten).

    The placements are not kept: what the answer needs is folded in as each is found:
    their number, the least cost with the placement it has (ties to the earlier exchanges
    in log order) and, per event, the exchanges the placements give it (``taken``)."""

    def __init__(self, seg: _Segment, reading: _Reading) -> None:
        self.seg, self.reading = seg, reading
        xs, xns = seg.xs, seg.xns
        self.turns = dict.fromkeys(xns, 0)
        # without after_outcome, a turn or complete need only follow the send: the first
        # outcomes (placed first come first served) are then in question, not the turns
        self.last = {xn: xs[xn][1] if reading.after_outcome else seg.sent_at[xn] for xn in xns}
        self.lterm: dict[int, object] = dict.fromkeys(xns)
        self.lmax: dict[int, object] = dict.fromkeys(xns)
        self.closed: set[int] = set()
        self.lanes: list[tuple[float, float, float]] = []
        # the target's ping-pong steps (even turns) placed on its conversation lane:
        # (queued = the exchange's event before, logged); the requester's steps (odd
        # turns) placed on its main session
        self.steps_on_lane: list[tuple[float, float]] = []
        self.steps_on_main: list[tuple[float, float]] = []
        self.pick = [0] * seg.n
        self.steps = 0
        self.capped = False
        self.count = 0
        self.least = 0.0
        self.best: list[int] | None = None
        self.taken: list[set[int | None]] = [set() for _ in range(seg.n)]

    # ---- the rules ------------------------------------------------------------------

    def done(self, xn: int) -> bool:
        """Whether exchange ``xn``'s ping-pong loop has ended."""
        if self.seg.xs[xn][0] != "reply":
            return False
        k, mx = self.turns[xn], self.lmax[xn]
        return (
            self.lterm[xn] is not None
            or (k >= 1 and isinstance(mx, float) and k >= mx)
            or (k == 0 and self.seg.xs[xn][3] == 0)
        )

    def relaxed_options(self, i: int) -> list[_Option]:
        """Causality only: after the exchange's last event, none after its complete; what
        breaks a rule costs more than any lag (as few as possible)."""
        seg, ev, ms = self.seg, self.seg.evs[i], self.seg.ms[i]
        closed, last, static = self.closed, self.last, seg.rule_cands[i]
        near = seg.keyed(i) if self.reading.keys else seg.anywhere[i]
        out: list[_Option] = []
        for xn in near:
            if xn not in closed and ms >= last[xn]:
                bent = xn not in static or (ev[0] == "t" and ev[3] != self.turns[xn] + 1)
                lag = _square((ms - last[xn]) / 1000.0)
                out.append((lag + (_BENT if bent else 0.0), xn, None))
        out.sort()  # by cost, ties to the lower exchange (one option per exchange)
        return out

    def turn_option(self, ev: _Event, ms: float, xn: int) -> _Option | None:
        """Turn ``ev`` as the next turn of exchange ``xn``, if the loop allows it."""
        _kind, _first, intent, sugg, rtype, _ttype = self.seg.xs[xn]
        k, mx, prev = self.turns[xn], self.lmax[xn], self.last[xn]
        _t, _s, _m, level, mi, st, tmax, _term = ev
        if (
            level != k + 1
            or self.lterm[xn] is not None
            or (isinstance(mx, float) and k + 1 > mx)
            or (k == 0 and sugg == 0)
            or ms > prev + _TURN_WINDOW_MS
            or not _agree(mi, intent)
            or not _agree(st, rtype)
            or (k >= 1 and not _agree(tmax, mx))
        ):
            return None
        return (_square((ms - prev) / 1000.0), xn, None)

    def complete_option(self, ev: _Event, ms: float, xn: int) -> _Option | None:
        """Complete ``ev`` closing exchange ``xn``, if its outcome, turns, termination,
        timing and effective turns agree (see :func:`solve_segment`)."""
        kind, _first, _intent, sugg, _rtype, _ttype = self.seg.xs[xn]
        k, lt, mx, prev = self.turns[xn], self.lterm[xn], self.lmax[xn], self.last[xn]
        actual, eff, cfg, term, skip = ev[4], ev[5], ev[6], ev[7], ev[13]
        if actual is not None and kind is not None and actual != (k if kind == "reply" else 0):
            return None
        if not _in_time(kind, term, skip, prev, ms):
            return None
        lane: tuple[float, float] | None = None
        mu = 0.0
        if kind == "reply":
            if eff is not None:
                if k >= 1 and mx is not None:
                    if eff != mx:
                        return None
                else:
                    allowed = _allowed_eff(sugg, cfg)  # type: ignore[arg-type]
                    if allowed is not None and eff not in (allowed, 0.0):
                        return None
            if (term if term in _REPLY_REASONS else None) != lt:
                return None
            extra = term is not None and term not in _REPLY_REASONS
            if extra:
                if self.done(xn):
                    return None
                mu = TURN_TIMEOUT_MS if term == "turn_timeout" else 0.0
                if ms < prev + mu - SLACK_MS:
                    return None
            # a complete that logs neither termination nor effective turns (an older
            # shape) does not say whether a step without event ran after the last one:
            # its announce was queued somewhere between then and now
            unknown = term is None and eff is None
            lane = (prev + mu, ms) if extra or unknown else (prev, prev)
        return (_square((ms - prev - mu) / 1000.0), xn, lane)

    def options(self, i: int) -> list[_Option]:
        """The exchanges event ``i`` can take now, least cost first (ties: lower number)."""
        if self.reading.relaxed:
            return self.relaxed_options(i)
        seg = self.seg
        ev, ms = seg.evs[i], seg.ms[i]
        closed, last = self.closed, self.last
        make = self.turn_option if ev[0] == "t" else self.complete_option
        out: list[_Option] = []
        for xn in seg.rule_cands[i]:
            if xn in closed or ms < last[xn]:
                continue
            option = make(ev, ms, xn)
            if option is not None:
                out.append(option)
        out.sort()  # by cost, ties to the lower exchange (one option per exchange)
        return out

    def lane_ok(self, lo: float, hi: float, ms: float, xn: int) -> bool:
        """An announce queued between ``lo`` and ``hi`` and logged at ``ms`` keeps the
        target lane's order with the announces placed and the loops already ended."""
        if any(lo2 > hi and t2 < ms for lo2, _h, t2 in self.lanes):
            return False
        closed, last = self.closed, self.last
        return not any(
            y != xn and y not in closed and self.done(y) and last[y] < lo for y in self.seg.xns
        )

    def silent(self) -> float:
        """The cost of the steps this placement says ended without an event: an exchange
        still waiting for a step (replied, loop on, not closed) whose session ran a step
        queued after its own (the lane is first come first served, so its step ran first
        and logged nothing). Less likely than any lag."""
        if not self.reading.lane_order:
            return 0.0
        n_silent = 0
        xs = self.seg.xs
        for y in self.seg.xns:
            if xs[y][0] != "reply" or y in self.closed or self.done(y):
                continue
            odd = self.turns[y] % 2 == 0  # the next step is the requester's
            if odd and xs[y][4] != "main":
                continue
            runs = self.steps_on_main if odd else self.steps_on_lane
            n_silent += any(q > self.last[y] for q, _t in runs)
        return n_silent * _SILENT

    # ---- one step ---------------------------------------------------------------------

    def place(self, i: int, xn: int, lane: tuple[float, float] | None) -> tuple[Any, ...] | None:
        """Give event ``i`` to exchange ``xn`` if the session lanes allow it; returns
        what to undo, or None (not allowed)."""
        seg, lane_order = self.seg, self.reading.lane_order
        ev, ms = seg.evs[i], seg.ms[i]
        if lane_order and lane is not None and not self.lane_ok(lane[0], lane[1], ms, xn):
            return None
        is_turn = ev[0] == "t"
        on_lane = on_main = False
        if lane_order and is_turn:
            even = int(ev[3]) % 2 == 0  # type: ignore[call-overload]
            # the target's steps run on its lane; the requester's on its session: one
            # lane when that is its main session (session type main: agent:<id>:main only)
            on_lane = even
            on_main = not even and seg.xs[xn][4] == "main"
        if on_lane and not _fifo(self.steps_on_lane, self.last[xn], ms):
            return None
        if on_main and not _fifo(self.steps_on_main, self.last[xn], ms):
            return None
        if on_main:
            self.steps_on_main.append((self.last[xn], ms))
        if on_lane:
            self.steps_on_lane.append((self.last[xn], ms))
        undo = (xn, self.turns[xn], self.last[xn], self.lterm[xn], self.lmax[xn], on_lane, on_main)
        self.pick[i] = xn
        self.last[xn] = ms
        if is_turn:
            self.turns[xn] += 1
            self.lterm[xn], self.lmax[xn] = ev[7], ev[6]
        else:
            self.closed.add(xn)
            if lane is not None:
                self.lanes.append((lane[0], lane[1], ms))
        return (*undo, lane is not None and not is_turn)

    def unplace(self, undo: tuple[Any, ...]) -> None:
        """Undo :meth:`place`."""
        xn, turns, last, lterm, lmax, on_lane, on_main, laned = undo
        if xn in self.closed:
            self.closed.discard(xn)
            if laned:
                self.lanes.pop()
        self.turns[xn], self.last[xn], self.lterm[xn], self.lmax[xn] = turns, last, lterm, lmax
        if on_lane:
            self.steps_on_lane.pop()
        if on_main:
            self.steps_on_main.pop()

    def found(self, cost: float) -> None:
        """Fold in the placement just completed (``pick``, 0 = left out)."""
        total = cost + self.silent()
        self.count += 1
        if self.best is None or total < self.least:
            self.least, self.best = total, list(self.pick)
        elif total == self.least and self.pick < self.best:
            self.best = list(self.pick)

    def enter(self, stack: list[_Node], i: int, cost: float, free: int) -> bool:
        """Visit a node (one search step); whether the search must stop (its budgets)."""
        self.steps += 1
        if self.steps > _SEARCH_STEPS:
            self.capped = True
            return True
        if i == self.seg.n:
            self.found(cost)
            if self.count > _MAX_PLACEMENTS:
                self.capped = True
                return True
            return False
        stack.append([i, cost, free, self.options(i), 0, None, 0, False])
        return False

    def run(self) -> _Search:
        """Search every placement (depth first, options least cost first, then the event
        left out when the reading allows); stops at :data:`_SEARCH_STEPS` steps or past
        :data:`_MAX_PLACEMENTS` placements (``capped``)."""
        stack: list[_Node] = []
        if self.enter(stack, 0, 0.0, 0):
            return self
        while stack:
            node = stack[-1]
            i, cost, free, opts, k, undo, before, free_tried = node
            if undo is not None:
                if undo != "free":
                    self.unplace(undo)
                if self.count > before:
                    self.taken[i].add(None if undo == "free" else undo[0])
                node[5] = None
            while k < len(opts):
                c, xn, lane = opts[k]
                k += 1
                undo = self.place(i, xn, lane)
                if undo is not None:
                    node[4], node[5], node[6] = k, undo, self.count
                    break
            else:
                node[4] = k
                if not free_tried and free < self.reading.max_free:
                    self.pick[i] = 0
                    node[5], node[6], node[7] = "free", self.count, True
                    if self.enter(stack, i + 1, cost + _FREE, free + 1):
                        return self
                    continue
                stack.pop()
                continue
            if self.enter(stack, i + 1, cost + c, free):
                return self
        return self


@dataclass
class _Found:
    """What a search found (see :class:`_Search`): how many placements, the least cost
    and the placement with it (``best``: the exchange per event, 0 = left out), whether a
    budget stopped it, and per event the exchanges the placements give it."""

    count: int = 0
    least: float = 0.0
    best: list[int] | None = None
    capped: bool = False
    taken: list[set[int | None]] = field(default_factory=list)

    def fold(self, total: float, pick: list[int]) -> None:
        """Count one placement ``pick`` of cost ``total``; keep it if it is the best so far
        (least cost, ties to the earlier exchanges in log order)."""
        self.count += 1
        if self.best is None or total < self.least:
            self.least, self.best = total, list(pick)
        elif total == self.least and pick < self.best:
            self.best = list(pick)


def _relaxed_search(seg: _Segment, keys: bool) -> _Found:
    """:class:`_Search` of the causality-only reading (``_Reading(False, 0, relaxed=True,
    keys=keys)``), the same steps in the same order, written for speed: it is the reading
    of the segments whose events no rule places, whose placements are many (the old
    gateways' logs).

    Every event is placed (none left out), on an exchange sent before it, not closed, whose
    last event is not later; with no lane order every option is taken, so a node's children
    are its options, and the last event's are the placements (no state to change)."""
    n, xns = seg.n, seg.xns
    index = {xn: p for p, xn in enumerate(xns)}
    last = [seg.xs[xn][1] for xn in xns]
    turns = [0] * len(xns)
    is_turn = [ev[0] == "t" for ev in seg.evs]
    level = [ev[3] for ev in seg.evs]
    near = [seg.keyed(i) if keys else seg.anywhere[i] for i in range(n)]
    cands = [[(index[xn], xn, xn in seg.rule_cands[i]) for xn in near[i]] for i in range(n)]
    ms_of = seg.ms
    found = _Found()
    pick = [0] * n
    # the exchanges closed and those with an event placed, as bit masks
    state = [0, 0]

    def options(i: int) -> list[tuple[float, int, int]]:
        ms, turn, lv, closed = ms_of[i], is_turn[i], level[i], state[0]
        out = []
        for p, xn, static in cands[i]:
            if not closed >> p & 1 and ms >= last[p]:
                bent = not static or (turn and lv != turns[p] + 1)
                lag = _square((ms - last[p]) / 1000.0)
                out.append((lag + (_BENT if bent else 0.0), xn, p))
        out.sort()  # by cost, ties to the lower exchange (one option per exchange)
        return out

    steps = 1
    if n == 0:
        found.fold(0.0, pick)
        return found
    # a node: [event index, cost so far, options, next option, what its child changed:
    # (exchange position, its last time, the masks) or None]
    stack: list[list[Any]] = [[0, 0.0, options(0), 0, None]]
    while stack:
        node = stack[-1]
        i, cost, opts, k, undo = node
        if undo is not None:
            p, last[p], state[0], state[1] = undo
            if is_turn[i]:
                turns[p] -= 1
            node[4] = None
        if k == len(opts):
            stack.pop()
            continue
        c, xn, p = opts[k]
        node[3] = k + 1
        steps += 1
        if steps > _SEARCH_STEPS:
            found.capped = True
            return found
        pick[i] = xn
        if i + 1 == n:
            found.fold(cost + c, pick)
            if found.count > _MAX_PLACEMENTS:
                found.capped = True
                return found
            continue
        node[4] = (p, last[p], state[0], state[1])
        last[p] = ms_of[i]
        state[1] |= 1 << p
        if is_turn[i]:
            turns[p] += 1
        else:
            state[0] |= 1 << p
        child = [i + 1, cost + c, options(i + 1), 0, None]
        if i + 2 == n and _fold_leaves(found, child, pick, _SEARCH_STEPS - steps):
            steps += len(child[2])
            continue
        stack.append(child)
    return found


def _fold_leaves(found: _Found, node: list[Any], pick: list[int], room: int) -> bool:
    """Fold the placements of a node of the last event at once (its options are
    placements that differ in that event alone), when the budgets leave room for all of
    them; whether it did (else the search takes them one by one)."""
    i, cost, opts = node[0], node[1], node[2]
    if len(opts) > room or found.count + len(opts) > _MAX_PLACEMENTS or not opts:
        return not opts
    totals = [(cost + c, xn) for c, xn, _p in opts]
    if any(t != t for t, _xn in totals):
        return False  # a NaN cost: the order of the folds would matter
    top = min(totals)
    found.count += len(opts) - 1
    pick[i] = top[1]
    found.fold(top[0], pick)
    return True


def solve_segment(
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

    A depth-first search in log order (:class:`_Search`, iterative) that visits every
    consistent placement (the lane order is a pairwise side constraint no assignment
    solver, scipy's or networkx's, takes; a segment has a few exchanges, so the
    placements are few); after :data:`_SEARCH_STEPS` steps or :data:`_MAX_PLACEMENTS`
    placements it stops deciding and flags the segment.
    """
    seg = _Segment(xs, evs, sent)
    found: _Search | _Found
    # every event placed, in lane order; else every event placed without it (the log breaks
    # the lane order, a gateway that does not queue this way), else also with turns allowed
    # before the first outcome first come first served gave their exchange (that order is
    # broken too): the whole segment is then flagged, the log cannot decide between
    # readings; else as few left out as possible
    found = _Search(seg, _Reading(True, 0)).run()
    capped = found.capped
    if not found.count and not capped:
        found = _Search(seg, _Reading(False, 0)).run()
        if not found.count and not found.capped:
            found = _Search(seg, _Reading(False, 0, after_outcome=False)).run()
        if not found.count:
            # no reading of the rules places every event (an older gateway whose main
            # session runs several runs at once: its first outcomes are not first come
            # first served, so their kinds may sit on the wrong sends): causality only,
            # each event after its exchange's first outcome and last event, one complete
            # each, the least squared lags; the segment is flagged whole. What the first
            # outcomes say (kinds, turn counts) is relaxed, the send's own keys (intent,
            # session types) are kept while some placement keeps them all
            found = _relaxed_search(seg, keys=True)
            if not found.count:
                found = _relaxed_search(seg, keys=False)
        capped = found.capped or bool(found.count)
    for max_free in range(1, seg.n + 1):
        if found.count or capped:
            break
        found = _Search(seg, _Reading(True, max_free)).run()
        capped = found.capped
    return _answer(seg, found, capped)


def _answer(
    seg: _Segment, found: _Search | _Found, capped: bool
) -> tuple[dict[int, int], set[int], set[int]]:
    """The best placement as ``{seq: exchange}``, the flagged exchanges and events."""
    if found.best is None:
        return {}, set(), set(seg.seqs)
    best = {q: xn for q, xn in zip(seg.seqs, found.best, strict=True) if xn}
    if capped:
        return best, set(best.values()), set(seg.seqs)
    amb_x: set[int] = set()
    amb_seq: set[int] = set()
    for q, taken in zip(seg.seqs, found.taken, strict=True):
        if len(taken) > 1:
            amb_seq.add(q)
            amb_x.update(xn for xn in taken if xn is not None)
    return best, amb_x, amb_seq
