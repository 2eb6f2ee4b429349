"""The slow, obvious reading of exchanges: the rules of :mod:`a2a_lab.exchanges`, event by
event in plain Python, the oracle the vectorised matcher is property-tested against.

Per conversation id and direction, in passes (a later rule needs what an earlier one found):

1. sends open exchanges 1, 2, … in time order; a retry joins the send with its ``runId``;
2. a refusal joins the earliest open send it fits: 30 s after it (the gate), or at once;
3. the other first outcomes (replies, no-replies) join the sends left, first come first served;
4. a turn *k* joins, among the exchanges waiting for turn *k* with its keys (intent, the
   requester's session type, ``maxTurns``) and ready at most 120 s before it, the one ready
   first;
5. a complete joins, among the exchanges without one whose keys it has (refusal; turns,
   reply-given termination and whether a turn was still expected; or the rest), the one
   ready first.

Direction and the per-event outcome kind come from :mod:`a2a_lab.exchanges` (they are
property-tested against the reference functions on their own).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from a2a_lab import exchanges as X
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, PAYLOAD_INTENTS, classify_intent

_GATE = X.GATE_TIMEOUT_MS
_SLACK = 1_000.0
_TURN_WINDOW = X.TURN_TIMEOUT_MS + _SLACK
_COMPLETE_WINDOW = X.TURN_TIMEOUT_MS + X.GATE_TIMEOUT_MS + _SLACK
_REPLY_REASONS = ("repetition_detected", "minimal_content", "conclusion_detected")


def _blank(v: object) -> object:
    return (
        None if isinstance(v, str) and not v.strip() else (v.strip() if isinstance(v, str) else v)
    )


@dataclass
class _Exchange:
    number: int
    send_ms: float
    run_id: str | None
    intent: str
    suggested: int
    req_type: str | None
    refused: bool = False
    first_ms: float | None = None
    first_kind: str | None = None
    turns: list[dict] = field(default_factory=list)
    complete: bool = False

    @property
    def ready(self) -> float:
        return self.turns[-1]["ms"] if self.turns else (self.first_ms or self.send_ms)

    @property
    def waiting_for_turn(self) -> bool:
        if self.first_kind != "reply":
            return False
        if not self.turns:
            return self.suggested != 0
        last = self.turns[-1]
        return last["term"] is None and (last["max"] is None or len(self.turns) < last["max"])


def _intent(data: dict) -> tuple[str, int]:
    ptype = _blank(data.get("payloadType"))
    if ptype is None and isinstance(data.get("payloadJson"), str):
        import re

        m = re.search(r'"type"\s*:\s*"([a-z_]+)"', data["payloadJson"])
        ptype = m.group(1) if m else None
    if ptype in PAYLOAD_INTENTS:
        return PAYLOAD_INTENTS[ptype], -1
    r = classify_intent(data.get("message") or "", INTENT_RULES_V1)
    return r.intent, r.suggested_turns


def oracle(events: pl.DataFrame) -> dict[int, tuple[tuple, int]]:
    """``_seq`` → ((conversation, requester, target), exchange number) for every event the
    rules place (0: before the first send)."""
    ex = X.with_response_outcome(X._directed(events), "_kind", "_reason").collect()
    out: dict[int, tuple[tuple, int]] = {}
    rows = ex.sort("event_ms", "_seq").to_dicts()
    by_dir: dict[tuple, list[dict]] = {}
    for r in rows:
        by_dir.setdefault((r["conversation_id"], r["requester"], r["target"]), []).append(r)
    for key, evs in by_dir.items():
        exs: list[_Exchange] = []
        for r in evs:
            if r["type"] == "a2a.send":
                intent, suggested = _intent(r["data"])
                exs.append(
                    _Exchange(
                        len(exs) + 1,
                        r["event_ms"],
                        _blank(r["data"].get("runId")),
                        intent,
                        suggested,
                        _blank(r["data"].get("fromSessionType")),
                    )
                )
                out[r["_seq"]] = (key, len(exs))
        for r in evs:  # 1. retries
            if r["type"] == "a2a.retry":
                hit = [
                    e
                    for e in exs
                    if e.run_id is not None and e.run_id == _blank(r["data"].get("runId"))
                ]
                if hit:
                    out[r["_seq"]] = (key, hit[0].number)
        for r in evs:  # 2. refusals
            if r["_kind"] == "blocked":
                for e in exs:
                    delay = r["event_ms"] - e.send_ms
                    if not e.refused and (
                        _GATE - 1 <= delay <= _GATE + _SLACK or 0 <= delay <= _SLACK
                    ):
                        e.refused, e.first_ms, e.first_kind = True, r["event_ms"], "blocked"
                        out[r["_seq"]] = (key, e.number)
                        break
        queue = [e for e in exs if not e.refused]
        for r in evs:  # 3. first outcomes, first come first served
            if r["_kind"] in (None, "turn", "blocked") or not exs or r["event_ms"] < exs[0].send_ms:
                continue
            if queue:
                e = queue.pop(0)
                e.first_ms, e.first_kind = r["event_ms"], r["_kind"]
                out[r["_seq"]] = (key, e.number)
        levels = sorted({int(r["data"]["turn"]) for r in evs if r["_kind"] == "turn"})
        for k in levels:  # 4. turns, level by level
            at = [r for r in evs if r["_kind"] == "turn" and r["data"]["turn"] == k]

            def st(r: dict, k: int = k) -> object:
                return _blank(r["data"].get("fromSessionType" if k % 2 == 1 else "toSessionType"))

            use_intent = all(_blank(r["data"].get("messageIntent")) is not None for r in at)
            use_type = all(st(r) is not None for r in at)
            use_max = k > 1 and all(r["data"].get("maxTurns") is not None for r in at)
            waiting = [e for e in exs if e.waiting_for_turn and len(e.turns) == k - 1]
            for r in at:
                fits = [
                    e
                    for e in waiting
                    if (not use_intent or e.intent == _blank(r["data"]["messageIntent"]))
                    and (not use_type or e.req_type == st(r))
                    and (not use_max or (e.turns and e.turns[-1]["max"] == r["data"]["maxTurns"]))
                    and e.ready <= r["event_ms"] + 0
                    and r["event_ms"] <= e.ready + _TURN_WINDOW
                ]
                if not fits:
                    continue
                e = min(fits, key=lambda e: (e.ready, e.number))
                waiting.remove(e)
                e.turns.append(
                    {
                        "ms": r["event_ms"],
                        "term": _blank(r["data"].get("terminationReason")),
                        "max": r["data"].get("maxTurns"),
                    }
                )
                out[r["_seq"]] = (key, e.number)
        counting = any(
            r["type"] == "a2a.complete"
            and r["data"].get("actualTurns") is not None
            and not r["data"].get("concurrencyBlocked")
            for r in evs
        )
        for r in evs:  # 5. completes
            if r["type"] != "a2a.complete":
                continue
            d = r["data"]
            term = _blank(d.get("terminationReason"))
            if d.get("concurrencyBlocked"):
                fits = [e for e in exs if e.refused and not e.complete]
            elif d.get("actualTurns") is not None:
                eff = d.get("effectiveTurns")
                pending = term not in _REPLY_REASONS and (
                    d["actualTurns"] < eff if eff is not None else term is not None
                )
                last_term = term if term in _REPLY_REASONS else None
                fits = [
                    e
                    for e in exs
                    if not e.complete
                    and e.first_kind == "reply"
                    and len(e.turns) == d["actualTurns"]
                    and (e.turns[-1]["term"] if e.turns else None) == last_term
                    and e.waiting_for_turn == pending
                    and r["event_ms"] <= e.ready + _COMPLETE_WINDOW
                ]
            else:
                fits = [
                    e
                    for e in exs
                    if not e.complete
                    and e.first_kind is not None
                    and (e.first_kind != "reply" or not counting)
                ]
            fits = [e for e in fits if e.ready <= r["event_ms"]]
            if fits:
                e = min(fits, key=lambda e: (e.ready, e.number))
                e.complete = True
                out[r["_seq"]] = (key, e.number)
    return out
