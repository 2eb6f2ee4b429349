"""The slow, obvious reading of exchanges: the rules of :mod:`a2a_lab.exchanges`, event by
event in plain Python, the oracle the fast matcher is property-tested against.

Per conversation id and direction:

1. sends open exchanges 1, 2, … in time order; a retry joins the send with its ``runId``;
2. a refusal joins a send it fits: 30 s after it (the gate), or at once; one refusal per
   send: a refusal only one unclaimed send fits takes it (repeated), the rest the send they
   fit best;
3. a send logged with its reply in hand (``runId: "unknown"``) takes the nearest unclaimed
   reply within the gate's 30 s after it (sends in log order); the other first outcomes
   (replies, no-replies) join the sends left: EVERY injective pairing is tried and the
   consistent ones kept (each outcome after its send and after its exchange's last retry
   plus ``backoffMs``; a run-level retry means a no-reply with ``waitStatus: "error"``; of
   two run-ending outcomes, the earlier-sent exchange's comes first unless its retried wait
   resumed just then; an exchange left without one only after every run-ending outcome of
   a later one, unless its retried wait was away then: until its bound, 2 s of clock
   slack more), the best by the least squared lags past each bound;
4. turns and completes: EVERY way of giving each of them an exchange (or none) is tried,
   and the consistent ones (the rules below, checked on the whole assignment) with the
   fewest events left out are kept; the best is the one with the least sum of squared lags,
   and an event is ambiguous when the kept assignments give it more than one exchange. (The
   fast matcher also charges a step it says ended without an event; that only changes which
   of several consistent placements is kept, i.e. events that are ambiguous either way,
   which the property test checks through their flag alone.)

Consistent, per exchange: its turns, in time order, are numbered 1, 2, … each after the event
before it (within 121 s), while the loop goes on, with its intent, requester session type and
``maxTurns``; at most one complete, after every other event of it (and 120 s after the last on a
turn timeout), agreeing with its outcome (refusal, no-reply, replied with that many turns and
that reply-given termination), intent, session types and effective turns, no later than
the reference lets it come (at once after a no-reply or refusal; after the loop at once with
``announceSkipped: true``, within 72 s with ``false``); and across
exchanges, on the target's lane, the target's steps (even turns) queued earlier are logged no
later, announces (replied exchanges' completes) queued strictly earlier complete no later, and
a replied exchange whose loop ended before another's announce was queued is closed by then;
on the requester's main session (session type ``main``), its steps (odd turns) queued
earlier are logged no later.

Direction and the per-event outcome kind come from :mod:`a2a_lab.exchanges` (they are
property-tested against the reference functions on their own).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field

import polars as pl

from a2a_lab import exchanges as X
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, PAYLOAD_INTENTS, classify_intent

_GATE = X.GATE_TIMEOUT_MS
_SLACK = 1_000.0
_TURN = X.TURN_TIMEOUT_MS
_REPLY_REASONS = ("repetition_detected", "minimal_content", "conclusion_detected")
_ANNOUNCE = 72_000.0
_RUN_ERRORS = ("rate_limit", "server_overload", "error_unknown")


def _blank(v: object) -> object:
    if isinstance(v, str):
        return v.strip() or None
    return v


@dataclass
class _Exchange:
    number: int
    send_ms: float
    run_id: object
    intent: str
    suggested: int
    req_type: object
    to_type: object
    refused: bool = False
    first_ms: float | None = None
    first_kind: str | None = None
    turns: list[dict] = field(default_factory=list)


def _intent(data: dict) -> tuple[str, int]:
    ptype = _blank(data.get("payloadType"))
    if ptype is None and isinstance(data.get("payloadJson"), str):
        m = re.search(r'"type"\s*:\s*"([a-z_]+)"', data["payloadJson"])
        ptype = m.group(1) if m else None
    if ptype in PAYLOAD_INTENTS:
        return PAYLOAD_INTENTS[ptype], -1
    r = classify_intent(data.get("message") or "", INTENT_RULES_V1)
    return r.intent, r.suggested_turns


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _agree(a: object, b: object) -> bool:
    return a is None or b is None or a == b


def _consistent(exs: list[_Exchange], tails: list[dict], pick: tuple[int | None, ...]) -> bool:
    """Whether giving ``tails[i]`` to exchange ``pick[i]`` (None: left out) keeps every rule."""
    by_x: dict[int, list[dict]] = {}
    for ev, xn in zip(tails, pick, strict=True):
        if xn is not None:
            by_x.setdefault(xn, []).append(ev)
    announces = []  # (queued at the earliest, at the latest, complete time)
    lane_steps = []  # the target's steps (even turns): (queued, logged)
    main_steps = []  # the requester's steps (odd turns) on its main session
    loop_end = {}  # replied exchange -> when its loop ended with an event (announce queued)
    closed_at = {}
    for e in exs:
        evs = sorted(by_x.get(e.number, []), key=lambda r: (r["ms"], r["seq"]))
        if e.first_kind is None and any(not r["failed"] for r in evs if r["c"]):
            return False
        prev = e.first_ms if e.first_ms is not None else e.send_ms
        turns, lterm, lmax = 0, None, None
        completes = [r for r in evs if r["c"]]
        if len(completes) > 1 or (completes and evs[-1] is not completes[0]):
            return False
        for r in evs:
            if r["ms"] < prev:
                return False
            if not r["c"]:
                k = turns + 1
                if (
                    e.first_kind != "reply"
                    or r["turn"] != k
                    or lterm is not None
                    or (lmax is not None and k > lmax)
                    or (k == 1 and e.suggested == 0)
                    or r["ms"] > prev + _TURN + _SLACK
                    or not _agree(r["mi"], e.intent)
                    or not _agree(r["st"], e.req_type)
                    or (k > 1 and not _agree(r["max"], lmax))
                ):
                    return False
                if k % 2 == 0:
                    lane_steps.append((prev, r["ms"]))
                elif e.req_type == "main":
                    main_steps.append((prev, r["ms"]))
                turns, lterm, lmax, prev = k, r["term"], r["max"], r["ms"]
                continue
            kind, term = e.first_kind, r["term"]
            if r["conc"] and kind != "blocked":
                return False
            if r["wait"] and kind != "no_reply":
                return False
            if kind == "blocked" and not r["conc"] and (r["actual"] is not None or r["wait"]):
                return False
            if kind in ("no_reply", "blocked") and r["ms"] > prev + _SLACK:
                return False
            counted = turns if kind == "reply" else 0
            if r["actual"] is not None and kind is not None and r["actual"] != counted:
                return False
            if not (
                _agree(r["mi"], e.intent)
                and _agree(r["from"], e.req_type)
                and _agree(r["to"], e.to_type)
            ):
                return False
            if kind == "reply":
                if r["eff"] is not None:
                    if turns >= 1 and lmax is not None:
                        if r["eff"] != lmax:
                            return False
                    elif e.suggested is not None and r["cfg"] is not None:
                        allowed = (
                            0.0
                            if e.suggested == 0
                            else r["cfg"]
                            if e.suggested < 0
                            else min(float(e.suggested), r["cfg"])
                        )
                        if r["eff"] not in (allowed, 0.0):
                            return False
                if (term if term in _REPLY_REASONS else None) != lterm:
                    return False
                ended = (
                    lterm is not None
                    or (turns >= 1 and lmax is not None and turns >= lmax)
                    or (turns == 0 and e.suggested == 0)
                )
                extra = term is not None and term not in _REPLY_REASONS
                mu = _TURN if term == "turn_timeout" else 0.0
                if extra and (ended or r["ms"] < prev + mu - _SLACK):
                    return False
                if r["skip"] is not None:
                    # the loop ends at the last event, or a step without event later
                    end = prev + (_TURN if extra else 0.0)
                    if r["ms"] > end + (0.0 if r["skip"] else _ANNOUNCE) + _SLACK:
                        return False
                loose = extra or (term is None and r["eff"] is None)
                announces.append((prev + mu, r["ms"], r["ms"]) if loose else (prev, prev, r["ms"]))
            closed_at[e.number] = r["ms"]
        if e.first_kind == "reply":
            ended = (
                lterm is not None
                or (turns >= 1 and lmax is not None and turns >= lmax)
                or (turns == 0 and e.suggested == 0)
            )
            if ended:
                loop_end[e.number] = prev
    for steps in (lane_steps, main_steps):
        for a, b in itertools.permutations(steps, 2):
            if a[0] < b[0] and a[1] > b[1]:
                return False
    for a, b in itertools.permutations(announces, 2):
        if a[1] < b[0] and a[2] > b[2]:
            return False
    for xn, at in loop_end.items():
        end = closed_at.get(xn, float("inf"))
        if any(at < lo and end > c for lo, _hi, c in announces):
            return False
    return True


def _refusals(evs: list[dict], exs: list[_Exchange], first: dict[int, int]) -> None:
    """Pair each refusal with a send it fits (30 s after it, or at once), one per send."""
    cands: dict[int, tuple[dict, list[int]]] = {}
    for r in sorted(evs, key=lambda r: r["_seq"]):
        if r["_kind"] != "blocked":
            continue
        fits = []
        for e in exs:
            delay = r["event_ms"] - e.send_ms
            if _GATE - 1 <= delay <= _GATE + _SLACK or 0 <= delay <= _SLACK:
                fits.append((min(abs(delay - _GATE), abs(delay)), e.number))
        if fits:
            cands[r["_seq"]] = (r, [n for _m, n in sorted(fits)])
    got: dict[int, int] = {}
    taken: set[int] = set()
    forced = True
    while forced:
        forced = False
        for seq, (_r, ns) in cands.items():
            left = [n for n in ns if n not in taken]
            if seq not in got and len(left) == 1:
                got[seq], forced = left[0], True
                taken.add(left[0])
    for seq, (_r, ns) in cands.items():
        if seq not in got:
            got[seq] = ([n for n in ns if n not in taken] or ns)[0]
            taken.add(got[seq])
    for seq, n in got.items():
        e = exs[n - 1]
        e.refused, e.first_ms, e.first_kind = True, cands[seq][0]["event_ms"], "blocked"
        first[seq] = n


def _firsts(evs: list[dict], exs: list[_Exchange]) -> dict[int, int] | None:
    """The first outcomes (replies, no-replies): in-hand sends first, then every injective
    pairing of the rest with the sends left, the consistent ones kept, the best returned."""
    outcomes = [
        r
        for r in evs
        if r["_kind"] not in (None, "turn", "blocked") and exs and r["event_ms"] >= exs[0].send_ms
    ]
    got: dict[int, int] = {}
    left = []
    for e in exs:
        if e.refused:
            continue
        near = sorted(
            (r["event_ms"] - e.send_ms, r["_seq"])
            for r in outcomes
            if e.run_id == "unknown"
            and r["_kind"] == "reply"
            and r["_seq"] not in got
            and 0 <= r["event_ms"] - e.send_ms <= _GATE + _SLACK
        )
        if near:
            got[near[0][1]] = e.number
        else:
            left.append(e)
    rest = [r for r in outcomes if r["_seq"] not in got]
    if len(rest) > len(left) or math.perm(len(left), len(rest)) > 40_000:
        return None
    retries = [r for r in evs if r["type"] == "a2a.retry"]
    bound, run_error = {}, {}
    for e in left:
        mine = [
            r
            for r in retries
            if e.run_id is not None and _blank(r["data"].get("runId")) == e.run_id
        ]
        if mine:
            b = max(r["event_ms"] + (_num(r["data"].get("backoffMs")) or 0.0) for r in mine)
            bound[e.number] = max(e.send_ms, b - _SLACK)
        run_error[e.number] = any(r["data"].get("errorCode") in _RUN_ERRORS for r in mine)
    kept = []
    for pick in itertools.permutations(range(len(left)), len(rest)):
        ok, cost = _firsts_consistent(rest, left, pick, bound, run_error)
        if ok:
            kept.append((cost, pick))
    if not kept:
        return None
    best = min(kept)[1]
    got.update({r["_seq"]: left[i].number for r, i in zip(rest, best, strict=True)})
    return got


def _firsts_consistent(
    rest: list[dict],
    left: list[_Exchange],
    pick: tuple[int, ...],
    bound: dict[int, float],
    run_error: dict[int, bool],
) -> tuple[bool, float]:
    """Whether outcome ``rest[k]`` (log order) on send ``left[pick[k]]`` keeps the rules."""

    def run_bound(r: dict) -> bool:
        status = _blank(r["data"].get("waitStatus"))
        return r["_kind"] != "no_reply" or r["_reason"] == "timeout" or status == "error"

    held: dict[int, int] = {}
    cost = 0.0
    for k, (r, i) in enumerate(zip(rest, pick, strict=True)):
        e = left[i]
        b = bound.get(e.number, e.send_ms)
        status = _blank(r["data"].get("waitStatus"))
        if r["event_ms"] < b:
            return False, 0.0
        if run_error[e.number] and not (r["_kind"] == "no_reply" and status == "error"):
            return False, 0.0
        cost += ((r["event_ms"] - b) / 1000.0) ** 2
        held[i] = k
    for i, k in held.items():
        for j, k2 in held.items():
            if i < j and k2 < k and run_bound(rest[k]) and run_bound(rest[k2]):
                at_bound = left[i].number in bound and rest[k]["event_ms"] <= (
                    bound[left[i].number] + 2 * _SLACK
                )
                if not at_bound:
                    return False, 0.0
    # an exchange left without an outcome: only while its wait was away (retried, until
    # its bound) whenever a later exchange's run ended
    for j in range(len(left)):
        if j in held:
            continue
        away_until = bound.get(left[j].number)
        for i, k in held.items():
            ended = i > j and run_bound(rest[k])
            if ended and (away_until is None or rest[k]["event_ms"] > away_until + 2 * _SLACK):
                return False, 0.0
    return True, cost


def _cost(exs: list[_Exchange], tails: list[dict], pick: tuple[int | None, ...]) -> float:
    last = {e.number: e.first_ms if e.first_ms is not None else e.send_ms for e in exs}
    kind = {e.number: e.first_kind for e in exs}
    total = 0.0
    for ev, xn in sorted(zip(tails, pick, strict=True), key=lambda p: (p[0]["ms"], p[0]["seq"])):
        if xn is None:
            continue
        mu = _TURN if ev["c"] and kind[xn] == "reply" and ev["term"] == "turn_timeout" else 0.0
        total += ((ev["ms"] - last[xn] - mu) / 1000.0) ** 2
        last[xn] = ev["ms"]
    return total


@dataclass(frozen=True)
class Placement:
    """The oracle's reading of one direction's turns and completes."""

    best: dict[int, int]  #: ``_seq`` → exchange number, for the placed events
    ambiguous_events: set[int]  #: events some consistent placement gives another exchange
    size: int  #: turns and completes of the direction


def oracle(events: pl.DataFrame, max_tails: int = 8) -> dict[tuple, Placement]:
    """Per (conversation, requester, target): :class:`Placement` of its turns and completes
    (directions with more than ``max_tails`` of them are skipped: the search is exhaustive),
    and, under the key ``(..., "first")``, ``_seq`` → exchange of sends, retries, refusals
    and first outcomes."""
    ex = X.with_response_outcome(X._directed(events), "_kind", "_reason").collect()
    out: dict[tuple, Placement] = {}
    rows = ex.sort("event_ms", "_seq").to_dicts()
    by_dir: dict[tuple, list[dict]] = {}
    for r in rows:
        by_dir.setdefault((r["conversation_id"], r["requester"], r["target"]), []).append(r)
    for key, evs in by_dir.items():
        exs: list[_Exchange] = []
        first: dict[int, int] = {}
        for r in evs:
            if r["type"] == "a2a.send":
                d = r["data"]
                intent, suggested = _intent(d)
                exs.append(
                    _Exchange(
                        len(exs) + 1,
                        r["event_ms"],
                        _blank(d.get("runId")),
                        intent,
                        suggested,
                        _blank(d.get("fromSessionType")),
                        _blank(d.get("toSessionType")),
                    )
                )
                first[r["_seq"]] = len(exs)
        _refusals(evs, exs, first)
        firsts = _firsts(evs, exs)
        if firsts is None:
            # too many pairings to try, or more outcomes than sends: no oracle for them
            first = {}
        else:
            first.update(firsts)
        out[(*key, "first")] = Placement(first, set(), 0)
        tails = []
        for r in evs:
            d = r["data"]
            if r["type"] == "a2a.complete":
                tails.append(
                    {
                        "seq": r["_seq"],
                        "ms": r["event_ms"],
                        "c": True,
                        "conc": bool(d.get("concurrencyBlocked")),
                        "actual": _num(d.get("actualTurns")),
                        "eff": _num(d.get("effectiveTurns")),
                        "cfg": _num(d.get("configuredMaxTurns")),
                        "term": _blank(d.get("terminationReason")),
                        "mi": _blank(d.get("messageIntent")),
                        "from": _blank(d.get("fromSessionType")),
                        "to": _blank(d.get("toSessionType")),
                        "wait": _blank(d.get("waitStatus")) is not None
                        or _blank(d.get("waitError")) is not None,
                        "failed": _blank(d.get("outcome")) == "failed",
                        "skip": d.get("announceSkipped")
                        if isinstance(d.get("announceSkipped"), bool)
                        else None,
                    }
                )
            elif r["_kind"] == "turn":
                turn = _num(d.get("turn"))
                tails.append(
                    {
                        "seq": r["_seq"],
                        "ms": r["event_ms"],
                        "c": False,
                        "turn": turn,
                        "max": _num(d.get("maxTurns")),
                        "term": _blank(d.get("terminationReason")),
                        "mi": _blank(d.get("messageIntent")),
                        "st": _blank(
                            d.get("fromSessionType" if (turn or 0) % 2 == 1 else "toSessionType")
                        ),
                    }
                )
        if not tails or len(tails) > max_tails:
            continue
        choices = [[None, *[e.number for e in exs if e.send_ms <= ev["ms"]]] for ev in tails]
        kept: list[tuple[int, float, tuple[int | None, ...]]] = []
        for pick in itertools.product(*choices):
            if _consistent(exs, tails, pick):
                free = sum(p is None for p in pick)
                kept.append((free, _cost(exs, tails, pick), pick))
        if not kept:
            out[key] = Placement({}, {ev["seq"] for ev in tails}, len(tails))
            continue
        fewest = min(k[0] for k in kept)
        kept = [k for k in kept if k[0] == fewest]
        best = min(kept, key=lambda k: (k[1], k[2] and tuple(p or 0 for p in k[2])))[2]
        amb = {ev["seq"] for i, ev in enumerate(tails) if len({k[2][i] for k in kept}) > 1}
        out[key] = Placement(
            {ev["seq"]: p for ev, p in zip(tails, best, strict=True) if p is not None},
            amb,
            len(tails),
        )
    return out
