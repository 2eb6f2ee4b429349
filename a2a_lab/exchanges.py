"""What the reference rules say about an event: its agents, its exchange, its outcome.

The one place the analytics read an A2A event the way the reference wrote it:

- its agents (rules §3), the intent of a sent message (runtime §3) and its outcome kind and
  reason (runtime §3b): :mod:`a2a_lab.event_rules`, re-exported here
  (:func:`from_agent_expr`, :func:`to_agent_expr`, :func:`with_agents`, :func:`intent_expr`,
  :func:`outcome_text_expr`, :func:`wait_reason_expr`, :func:`with_response_outcome`);
- its exchange (runtime §1-§2, §6): :func:`exchange_events`.

Exchanges
---------
The reference reuses one ``conversationId`` for every exchange of a work session and agent
pair (runtime §6), so the exchanges of one conversation id and direction overlap. Each
event is matched to its send with what the reference writes, and only that:

1. ``a2a.send`` opens exchange *n* (the *n*-th send of its conversation and direction);
2. ``a2a.retry`` carries the send's ``runId``;
3. a refusal (``a2a.response {outcome: "blocked"}`` without wait fields) comes when the
   concurrency gate gives up, :data:`GATE_TIMEOUT_MS` after its send, or at once when a
   safety limit refuses it;
4. every other first outcome (the reply, or a no-reply) ends the target's run or the
   requester's wait, and the target's session runs one message at a time, first come first
   served (runtime §1), so they come in the order of their sends; a reply comes within the
   :data:`MAX_WAIT_MS` wait (plus the gate's wait), a timed-out no-reply after it;
5. ping-pong turn *k* follows turn *k - 1* of its exchange on the same sessions (again first
   come first served), with the exchange's ``messageIntent``, ``maxTurns`` and requester
   session type; a turn with a ``terminationReason``, or the last allowed one, ends the loop;
6. ``a2a.complete`` closes it: ``concurrencyBlocked`` completes close refusals, completes
   with ``actualTurns`` close replied exchanges with that many turns, the others close the
   rest, each in the order their exchanges became ready.

Steps 3-6 are rank joins (the *r*-th event of a group with the *r*-th candidate) in Polars.
Where the log cannot tell two exchanges apart (a group whose events and candidates do not
pair up, an event earlier than its candidate, a retry without ``runId`` among open sends,
two sends a refusal fits), the exchange is marked ``ambiguous``; an event no rule places
falls back to the latest send before it, and marks its exchange ambiguous too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import polars as pl

from a2a_lab import event_rules as _event_rules
from a2a_lab._frames import data_text as _text
from a2a_lab._frames import narrow, number, same_kind
from a2a_lab.event_rules import _D

# the per-event readers, re-exported (``name as name``)
from a2a_lab.event_rules import FROM_AGENT as FROM_AGENT
from a2a_lab.event_rules import TO_AGENT as TO_AGENT
from a2a_lab.event_rules import from_agent_expr as from_agent_expr
from a2a_lab.event_rules import intent_expr as intent_expr
from a2a_lab.event_rules import outcome_text_expr as outcome_text_expr
from a2a_lab.event_rules import payload_intent_expr as payload_intent_expr
from a2a_lab.event_rules import suggested_turns_expr as suggested_turns_expr
from a2a_lab.event_rules import to_agent_expr as to_agent_expr
from a2a_lab.event_rules import wait_reason_expr as wait_reason_expr
from a2a_lab.event_rules import with_agents as with_agents
from a2a_lab.event_rules import with_response_outcome as with_response_outcome
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules
from a2a_lab.reference.runtime.termination import TERMINATION_REASONS

__all__ = [
    "EXCHANGE_FIELDS",
    "EXCHANGE_TYPES",
    "GATE_TIMEOUT_MS",
    "MAX_WAIT_MS",
    "TURN_TIMEOUT_MS",
    "exchange_events",
]
__all__ += _event_rules.__all__

#: Event types that belong to an exchange.
EXCHANGE_TYPES: Final[tuple[str, ...]] = ("a2a.send", "a2a.response", "a2a.retry", "a2a.complete")
#: The concurrency gate refuses a flow that waited this long for a permit (runtime §1).
GATE_TIMEOUT_MS: Final = 30_000.0
#: The requester waits this long for the target's run (runtime §2).
MAX_WAIT_MS: Final = 300_000.0
#: A ping-pong turn that takes longer times out and ends the loop (runtime §2.4).
TURN_TIMEOUT_MS: Final = 120_000.0
#: Reasons a ping-pong turn's own reply gives (the three checks of runtime §3); the others
#: end the loop without a turn event, on the complete only.
_REPLY_REASONS: Final = TERMINATION_REASONS[:3]
#: Clock slack of the log: a refusal or a timeout may be logged this much late.
_SLACK_MS: Final = 1_000.0

#: The ``data`` fields :func:`exchange_events` keeps.
EXCHANGE_FIELDS: Final[tuple[str, ...]] = (
    "conversationId",
    "parentConversationId",
    "workSessionId",
    "taskId",
    "turn",
    "maxTurns",
    "outcome",
    "message",
    "replyPreview",
    "waitStatus",
    "waitError",
    "configuredMaxTurns",
    "effectiveTurns",
    "actualTurns",
    "announced",
    "earlyTermination",
    "terminationReason",
    "concurrencyBlocked",
    "messageIntent",
    "payloadType",
    "payloadJson",
    "depth",
    "hop",
    "attempt",
    "errorCode",
    "errorCategory",
    "runId",
    "fromSessionType",
    "toSessionType",
)

# ---------------------------------------------------------------------------------------
# exchanges
# ---------------------------------------------------------------------------------------

_DIR: Final = ["conversation_id", "requester", "target"]
#: Columns :func:`exchange_events` computes for the matching and drops.
_HELPERS: Final = (
    "_kind",
    "_reason",
    "_run",
    "_turn",
    "_max",
    "_term",
    "_mi",
    "_st",
    "_req_type",
    "_conc",
    "_actual",
    "_eff",
    "_status",
    "_to_type",
    "_cfg",
    "_wait",
    "_failed",
)


def _directed(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The exchange events with a conversation id, their direction ``requester → target``.

    An event is placed in the direction written if a send went that way, else in the
    opposite one if a send went that way, else by its type: a send, retry, complete or odd
    ping-pong turn is written requester → target, the reply and even turns the other way.
    The direction is part of the key because a relay (A → B, then B → C) reuses one id for
    both hops, and a sub-agent may ask its parent a question (B → A) in the middle of A → B.
    """
    # a LazyFrame is narrowed lazily (only these columns and fields are read, then the
    # exchange rows kept), a DataFrame eagerly: the whole frame is never collected here
    frame = (
        events
        if isinstance(events, pl.DataFrame) and FROM_AGENT in events.columns
        else with_agents(events)
    )
    lf = narrow(
        frame,
        pl.col("type").is_in(EXCHANGE_TYPES),
        EXCHANGE_FIELDS,
        ("file", "line", "type", "event_ms", "event_time", FROM_AGENT, TO_AGENT),
    ).lazy()
    conv = _text("conversationId")
    frm, to = pl.col(FROM_AGENT), pl.col(TO_AGENT)
    turn = _D.struct.field("turn")
    a2a = lf.filter(conv.is_not_null()).with_columns(conv.alias("conversation_id"))
    sent = (
        a2a.filter(pl.col("type") == "a2a.send")
        .select("conversation_id", frm.alias("_r"), to.alias("_t"))
        .unique()
    )
    keys = ["conversation_id", "_r", "_t"]
    flagged = a2a.join(
        sent.with_columns(pl.lit(True).alias("_fwd")),
        left_on=["conversation_id", FROM_AGENT, TO_AGENT],
        right_on=keys,
        how="left",
        nulls_equal=True,
    ).join(
        sent.with_columns(pl.lit(True).alias("_rev")),
        left_on=["conversation_id", TO_AGENT, FROM_AGENT],
        right_on=keys,
        how="left",
        nulls_equal=True,
    )
    forward_by_type = (pl.col("type") != "a2a.response") | (turn.is_not_null() & (turn % 2 == 1))
    fwd, rev = pl.col("_fwd").is_not_null(), pl.col("_rev").is_not_null()
    reversed_ = (
        pl.when(pl.col("type") == "a2a.send")
        .then(False)
        .when(forward_by_type)
        .then(~fwd & rev)
        .otherwise(rev | ~fwd)
    )
    return (
        flagged.with_columns(
            pl.when(reversed_).then(to).otherwise(frm).alias("requester"),
            pl.when(reversed_).then(frm).otherwise(to).alias("target"),
        )
        .drop("_fwd", "_rev")
        .collect()
    )


def _rank(frame: pl.DataFrame, group: list[str], order: list[str]) -> pl.DataFrame:
    """``_r``: 0-based position within ``group`` in ``order``; ``_n``: the group's size."""
    return frame.sort([*group, *order], nulls_last=True).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).over(group).alias("_r"),
        pl.len().over(group).cast(pl.Int64).alias("_n"),
    )


#: Events are paired in the order they were logged: by time, ties in file order.
_EV_ORDER = ["event_ms", "_seq"]
#: Candidates in the order they became ready; ties by exchange number.
_READY_ORDER = ["_ready", "exchange"]


@dataclass(frozen=True)
class _Pairing:
    """How events pair with candidate exchanges: within ``group``, the *r*-th event (in
    :data:`_EV_ORDER`) with the *r*-th candidate in ``cand_order``; ``ready`` names the
    candidate's column holding the time before which its event cannot come."""

    group: list[str]
    cand_order: list[str]
    ready: str = "_ready"


def _rank_match(events: pl.DataFrame, cands: pl.DataFrame, by: _Pairing) -> pl.DataFrame:
    """Pair the *r*-th event of each group with its *r*-th candidate exchange (``by``).

    ``events`` has ``_seq`` and ``event_ms``; ``cands`` has ``exchange`` and ``by.ready``
    (the time before which its event cannot come). Returns ``_seq, exchange, _amb`` for the
    events that found a candidate. A pair is ambiguous when the event is earlier than its
    candidate's ``ready``; when the group has more events than candidates (which events
    are the strangers?); or when it has fewer and the next candidate was ready too (the
    paired one may have got no event, the event being the next one's).
    """
    if events.height == 0 or cands.height == 0:
        return pl.DataFrame(schema={"_seq": pl.UInt32, "exchange": pl.Int64, "_amb": pl.Boolean})
    group, ready = by.group, by.ready
    ev = _rank(events, group, _EV_ORDER)
    ca = (
        _rank(cands, group, by.cand_order)
        .rename({"_n": "_cn"})
        .with_columns(pl.col(ready).shift(-1).over(group).alias("_next_ready"))
    )
    n, cn = pl.col("_n"), pl.col("_cn")
    return ev.join(
        ca.select(*group, "_r", "_cn", "exchange", pl.col(ready).alias("_ready"), "_next_ready"),
        on=[*group, "_r"],
        how="inner",
        nulls_equal=True,
    ).select(
        "_seq",
        "exchange",
        (
            (pl.col("event_ms") < pl.col("_ready"))
            | ((n > cn) & (cn > 1))
            | ((n < cn) & (pl.col("_next_ready") <= pl.col("event_ms")).fill_null(False))
        ).alias("_amb"),
    )


def _rank_match_within(
    events: pl.DataFrame, cands: pl.DataFrame, by: _Pairing, window_ms: float, rounds: int = 64
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`_rank_match` where a candidate's event must come within ``window_ms`` of its
    ``ready``: a candidate whose paired event comes later got none (it timed out), so it
    is dropped and the group paired again, first such candidate of each group first.

    Returns the pairs and the dropped candidates (their columns and ``_amb``: a paired
    event of the group came within the dropped candidate's window, so it may have been its
    own; the pair is then ambiguous too).
    """
    group, ready = by.group, by.ready
    dropped: list[pl.DataFrame] = []
    # groups are independent: a group without a late pair is settled, only the rest go on
    settled_ev: list[pl.DataFrame] = []
    settled_ca: list[pl.DataFrame] = []
    ev_left, keep = events, cands
    for _ in range(rounds):
        if ev_left.height == 0 or keep.height == 0:
            break
        ev = _rank(ev_left, group, _EV_ORDER).select(*group, "_r", "event_ms")
        ca = _rank(keep, group, by.cand_order)
        pair = ca.join(ev, on=[*group, "_r"], how="inner", nulls_equal=True)
        late = pair.filter(pl.col("event_ms") > pl.col(ready) + window_ms)
        if late.height == 0:
            break
        first_late = (
            late.sort("_r").group_by(group, maintain_order=True).agg(pl.col("exchange").first())
        )
        busy = first_late.select(group)
        settled_ev.append(ev_left.join(busy, on=group, how="anti", nulls_equal=True))
        settled_ca.append(keep.join(busy, on=group, how="anti", nulls_equal=True))
        ev_left = ev_left.join(busy, on=group, how="semi", nulls_equal=True)
        keep = keep.join(busy, on=group, how="semi", nulls_equal=True)
        dropped.append(keep.join(first_late, on=[*group, "exchange"], how="semi", nulls_equal=True))
        keep = keep.join(first_late, on=[*group, "exchange"], how="anti", nulls_equal=True)
    gone_all = pl.concat(dropped) if dropped else cands.clear()
    all_ev = pl.concat([*settled_ev, ev_left])
    all_ca = pl.concat([*settled_ca, keep])
    pairs = _rank_match(all_ev, all_ca, by)
    if gone_all.height == 0 or pairs.height == 0:
        return pairs, gone_all.with_columns(pl.lit(False).alias("_amb"))
    # a dropped candidate was judged to have got no event; if a paired event of its group
    # came within its window, that event may have been its own (the paired candidate then
    # got none): the log cannot tell the two apart, so both are ambiguous
    timed = pairs.join(all_ev.select("_seq", *group, "event_ms"), on="_seq", how="left")
    could = timed.join(
        gone_all.select(*group, pl.col("exchange").alias("_d"), pl.col(ready).alias("_d_ready")),
        on=group,
        how="inner",
        nulls_equal=True,
    ).filter(
        (pl.col("event_ms") >= pl.col("_d_ready"))
        & (pl.col("event_ms") <= pl.col("_d_ready") + window_ms)
    )
    hit_seq = could.select("_seq").unique()
    pairs = pairs.join(
        hit_seq.with_columns(pl.lit(True).alias("_hit")), on="_seq", how="left"
    ).select("_seq", "exchange", (pl.col("_amb") | pl.col("_hit").fill_null(False)).alias("_amb"))
    hit_d = could.select(*group, pl.col("_d").alias("exchange")).unique()
    gone_all = gone_all.join(
        hit_d.with_columns(pl.lit(True).alias("_amb")),
        on=[*group, "exchange"],
        how="left",
        nulls_equal=True,
    ).with_columns(pl.col("_amb").fill_null(False))
    return pairs, gone_all


def _out_of_order(fifo: pl.DataFrame, by_run: pl.DataFrame, ex: pl.DataFrame) -> pl.DataFrame:
    """The exchanges whose first outcome may break first come first served, and those in
    flight with them: a retried flow (a retried run queues again, behind later ones) and a
    no-reply that a failed ``agent.wait`` call ended (``not_found``, an exception: not the
    run's end, nor the wait limit) come whenever they come, so the log cannot tell which of
    the overlapping exchanges they belong to. Returns ``_seq, exchange, _amb`` (all true)
    for the first outcomes of those exchanges.
    """
    retried = by_run.select(*_DIR, "exchange").unique()
    spans = fifo.select(
        *_DIR, "exchange", "_send_ms", pl.col("event_ms").alias("_end"), "_kind", "_reason"
    )
    status = ex.select("_seq", "_status")
    spans = spans.join(
        fifo.select("exchange", *_DIR, "_seq"), on=[*_DIR, "exchange"], nulls_equal=True
    ).join(status, on="_seq", how="left")
    call_ended = (
        (pl.col("_kind") == "no_reply")
        & ~pl.col("_reason").is_in(["timeout"]).fill_null(False)
        & (pl.col("_status").fill_null("") != "error")
    )
    loose = spans.filter(call_ended).select(*_DIR, "exchange").vstack(retried).unique()
    loose = loose.join(
        spans.select(*_DIR, "exchange", "_send_ms", "_end"),
        on=[*_DIR, "exchange"],
        how="left",
        nulls_equal=True,
    )
    pairs = (
        loose.rename({"exchange": "_u", "_send_ms": "_us", "_end": "_ue"})
        .join(
            spans.select(*_DIR, "exchange", "_send_ms", "_end"),
            on=_DIR,
            how="inner",
            nulls_equal=True,
        )
        .filter(
            (pl.col("exchange") != pl.col("_u"))
            & (pl.col("_send_ms") <= pl.col("_ue").fill_null(float("inf")))
            & (pl.col("_end") >= pl.col("_us"))
        )
    )
    hit = pl.concat(
        [pairs.select(*_DIR, "exchange"), pairs.select(*_DIR, pl.col("_u").alias("exchange"))]
    ).unique()
    firsts = fifo.select(*_DIR, "exchange", "_seq")
    return firsts.join(hit, on=[*_DIR, "exchange"], how="semi", nulls_equal=True).select(
        "_seq", "exchange", pl.lit(True).alias("_amb")
    )


@same_kind()
def exchange_events(
    events: pl.DataFrame | pl.LazyFrame, *, intent_rules: IntentRules = INTENT_RULES_V1
) -> pl.LazyFrame:
    """The events of A2A exchanges, each with the exchange it belongs to.

    Returns the ``a2a.send/response/retry/complete`` events that carry a conversation id,
    with ``conversation_id`` (JS-trimmed), the exchange's direction ``requester`` →
    ``target``, ``exchange`` (1-based: the number of the send within its conversation and
    direction; 0 for an event before the first send, an orphan), ``ambiguous`` (the log
    cannot tell this exchange's events from another's, see the module notes) and ``seq``
    (frame order); sorted by conversation, direction, exchange, time and frame order.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> def e(t, type_, f, to, **d):
    ...     return {"type": type_, "ts": t * 1000, "data": {"conversationId": "c", "fromAgent": f, "toAgent": to, **d}}
    >>> ev = from_records([e(0, "a2a.send", "a", "b", runId="r1"), e(1, "a2a.send", "a", "b", runId="r2"),
    ...     e(5, "a2a.response", "b", "a"), e(6, "a2a.complete", "a", "b"), e(9, "a2a.response", "b", "a"),
    ...     e(9, "a2a.complete", "a", "b")])
    >>> exchange_events(ev).select("type", "event_ms", "exchange").rows()[:3]
    [('a2a.send', 0.0, 1), ('a2a.response', 5000.0, 1), ('a2a.complete', 6000.0, 1)]
    """
    ex = _directed(events)
    t = pl.col("type")
    turn = _D.struct.field("turn")
    # every field the matching reads, read once; the matching itself runs without ``data``
    full = (
        with_response_outcome(ex, "_kind", "_reason")
        .with_columns(
            _text("runId").alias("_run"),
            turn.alias("_turn"),
            _D.struct.field("maxTurns").alias("_max"),
            _text("terminationReason").alias("_term"),
            _text("messageIntent").alias("_mi"),
            pl.when(turn % 2 == 1)
            .then(_text("fromSessionType"))
            .otherwise(_text("toSessionType"))
            .alias("_st"),
            _text("fromSessionType").alias("_req_type"),
            _D.struct.field("concurrencyBlocked").fill_null(False).alias("_conc"),
            _D.struct.field("actualTurns").alias("_actual"),
            _D.struct.field("effectiveTurns").alias("_eff"),
            _text("waitStatus").alias("_status"),
            _text("toSessionType").alias("_to_type"),
            _D.struct.field("configuredMaxTurns").alias("_cfg"),
            (_text("waitStatus").is_not_null() | _text("waitError").is_not_null()).alias("_wait"),
            (_text("outcome") == "failed").fill_null(False).alias("_failed"),
        )
        .collect()
    )
    ex = full.drop("data", "event_time", "file", "line", strict=False)
    sends = (
        full.filter(t == "a2a.send")
        .sort([*_DIR, "event_ms", "_seq"], nulls_last=True)
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(_DIR).alias("exchange"))
    )
    sends = sends.with_columns(
        payload_intent_expr(_text("payloadType"), _D.struct.field("payloadJson")).alias(
            "_payload_intent"
        ),
        intent_expr(pl.coalesce(_D.struct.field("message"), pl.lit("")), intent_rules).alias(
            "_class_intent"
        ),
    )
    sends = sends.with_columns(
        pl.col("event_ms").alias("_send_ms"),
        pl.coalesce("_payload_intent", "_class_intent").alias("_intent"),
        # the reference's caller suggests -1 turns for every structured payload (0b3325a28)
        pl.when(pl.col("_payload_intent").is_not_null())
        .then(pl.lit(-1, pl.Int64))
        .otherwise(suggested_turns_expr(pl.col("_class_intent"), intent_rules))
        .alias("_suggested"),
    ).drop("data")
    x = sends.select(
        *_DIR, "exchange", "_send_ms", "_run", "_intent", "_suggested", "_req_type", "_to_type"
    )
    placed: list[pl.DataFrame] = [sends.select("_seq", "exchange", pl.lit(False).alias("_amb"))]

    # retries carry the send's runId
    retries = ex.filter(t == "a2a.retry")
    by_run = (
        retries.join(
            x.filter(pl.col("_run").is_not_null()).select(*_DIR, "_run", "exchange"),
            on=[*_DIR, "_run"],
            how="inner",
            nulls_equal=True,
        )
        # a runId two sends carry: the first send, and both are ambiguous
        .sort("_seq", "exchange")
        .with_columns((pl.len().over("_seq") > 1).alias("_amb"))
    )
    run_twice = by_run.filter("_amb").select(*_DIR, "exchange")
    by_run = by_run.group_by("_seq", maintain_order=True).agg(pl.all().first())
    placed.append(by_run.select("_seq", "exchange", "_amb"))
    amb_ex: list[pl.DataFrame] = [run_twice]

    # refusals: the gate's after GATE_TIMEOUT_MS, a safety limit's at once
    refusals = ex.filter(pl.col("_kind") == "blocked")
    fits = refusals.select(*_DIR, "_seq", "event_ms").join(
        x.select(*_DIR, "exchange", "_send_ms"), on=_DIR, how="inner", nulls_equal=True
    )
    delay = pl.col("event_ms") - pl.col("_send_ms")
    gate = (delay >= GATE_TIMEOUT_MS - 1) & (delay <= GATE_TIMEOUT_MS + _SLACK_MS)
    fits = fits.filter(gate | ((delay >= 0) & (delay <= _SLACK_MS)))
    # a refusal several sends fit goes to the one it fits best (the gate refuses exactly
    # GATE_TIMEOUT_MS after the send, a safety limit at once; the log may only be late),
    # ties to the earlier send; two refusals that fit one send are both ambiguous
    miss = pl.min_horizontal((delay - GATE_TIMEOUT_MS).abs(), delay.abs())
    fits = fits.sort(pl.col("_seq"), miss, pl.col("exchange")).with_columns(
        pl.len().over("_seq").alias("_k")
    )
    first_fit = fits.group_by("_seq", maintain_order=True).agg(pl.all().first())
    amb_ex.append(fits.filter(pl.col("_k") > 1).select(*_DIR, "exchange"))
    first_fit = first_fit.with_columns(pl.len().over(*_DIR, "exchange").alias("_claims"))
    refused = first_fit.select(
        "_seq",
        "exchange",
        ((pl.col("_k") > 1) | (pl.col("_claims") > 1)).alias("_amb"),
        "event_ms",
        *_DIR,
    )
    placed.append(refused.select("_seq", "exchange", "_amb"))

    # first outcomes: in the order of their sends (the target's session is FIFO)
    first = ex.filter(pl.col("_kind").is_not_null() & ~pl.col("_kind").is_in(["turn", "blocked"]))
    first_send = x.group_by(_DIR).agg(pl.col("_send_ms").min().alias("_first_send"))
    first = first.join(first_send, on=_DIR, how="inner", nulls_equal=True).filter(
        pl.col("event_ms") >= pl.col("_first_send")
    )
    open_ = x.join(
        refused.select(*_DIR, "exchange"), on=[*_DIR, "exchange"], how="anti", nulls_equal=True
    )
    fifo = _rank_match(first, open_, _Pairing(_DIR, ["exchange"], "_send_ms"))
    # the wait limit: a reply within it (plus the gate's wait), a timed-out no-reply after it
    fifo = fifo.join(first.select("_seq", *_DIR, "event_ms", "_kind", "_reason"), on="_seq").join(
        x.select(*_DIR, "exchange", "_send_ms"),
        on=[*_DIR, "exchange"],
        how="left",
        nulls_equal=True,
    )
    # (a question only where another send of the direction could have had the event)
    late = (pl.col("_kind") == "reply") & (delay > MAX_WAIT_MS + GATE_TIMEOUT_MS + _SLACK_MS)
    early = (
        (pl.col("_kind") == "no_reply")
        & (pl.col("_reason") == "timeout")
        & (delay < MAX_WAIT_MS - 1)
    )
    fifo = fifo.join(
        open_.group_by(_DIR).len("_open"), on=_DIR, how="left", nulls_equal=True
    ).with_columns(
        (pl.col("_amb") | ((late | early).fill_null(False) & (pl.col("_open") > 1))).alias("_amb")
    )
    placed.append(fifo.select("_seq", "exchange", "_amb"))
    placed.append(_out_of_order(fifo, by_run, ex))
    outcome_of = pl.concat(
        [
            fifo.select("_seq", "exchange", "event_ms", "_kind"),
            refused.select("_seq", "exchange", "event_ms", pl.lit("blocked").alias("_kind")),
        ]
    ).join(ex.select("_seq", *_DIR), on="_seq")

    # ping-pong turns, level by level
    turns = ex.filter(pl.col("_kind") == "turn")
    replied = outcome_of.filter(pl.col("_kind") == "reply").join(
        x, on=[*_DIR, "exchange"], nulls_equal=True
    )
    cand = replied.filter(pl.col("_suggested") != 0).select(
        *_DIR,
        "exchange",
        pl.col("event_ms").alias("_ready"),
        "_intent",
        "_req_type",
        pl.lit(None, pl.Float64).alias("_max"),
    )
    turn_rows: list[pl.DataFrame] = []
    level = 1
    max_level = int(number(turns["_turn"].max() or 0)) if turns.height else 0
    while level <= max_level and cand.height:
        at = turns.filter(pl.col("_turn") == level)
        # a key is used only in the directions where every turn of this level carries it
        at = at.with_columns(
            pl.when(pl.col("_mi").is_not_null().all().over(_DIR))
            .then(pl.col("_mi"))
            .alias("_k_intent"),
            pl.when(pl.col("_st").is_not_null().all().over(_DIR))
            .then(pl.col("_st"))
            .alias("_k_type"),
            pl.when(pl.col("_max").is_not_null().all().over(_DIR) & pl.lit(level > 1))
            .then(pl.col("_max"))
            .alias("_k_max"),
        )
        use = at.group_by(_DIR).agg(
            pl.col("_k_intent").is_not_null().any().alias("_u_intent"),
            pl.col("_k_type").is_not_null().any().alias("_u_type"),
            pl.col("_k_max").is_not_null().any().alias("_u_max"),
        )
        c = cand.join(use, on=_DIR, how="inner", nulls_equal=True).with_columns(
            pl.when("_u_intent").then(pl.col("_intent")).alias("_k_intent"),
            pl.when("_u_type").then(pl.col("_req_type")).alias("_k_type"),
            pl.when("_u_max").then(pl.col("_max")).alias("_k_max"),
        )
        keys = [*_DIR, "_k_intent", "_k_type", "_k_max"]
        matched, gone = _rank_match_within(
            at, c, _Pairing(keys, _READY_ORDER), TURN_TIMEOUT_MS + _SLACK_MS
        )
        turn_rows.append(matched)
        amb_ex.append(gone.filter("_amb").select(*_DIR, "exchange"))
        nxt = matched.join(at.select("_seq", "event_ms", "_max", "_term", *_DIR), on="_seq").join(
            x, on=[*_DIR, "exchange"], nulls_equal=True
        )
        cand = nxt.filter(
            pl.col("_term").is_null() & (pl.col("_max").is_null() | (pl.col("_max") > level))
        ).select(
            *_DIR,
            "exchange",
            pl.col("event_ms").alias("_ready"),
            "_intent",
            "_req_type",
            "_max",
        )
        level += 1
    turn_match = (
        pl.concat(turn_rows)
        if turn_rows
        else pl.DataFrame(schema={"_seq": pl.UInt32, "exchange": pl.Int64, "_amb": pl.Boolean})
    )
    placed.append(turn_match)

    # completes: every complete with the exchanges it may close (hard constraints), then
    # the most likely consistent assignment per direction (:func:`_match_completes`)
    completes = ex.filter(t == "a2a.complete")
    last_turn = (
        turn_match.join(turns.select("_seq", *_DIR, "event_ms", "_term", "_max"), on="_seq")
        .sort("event_ms", "_seq")
        .group_by(*_DIR, "exchange")
        .agg(
            pl.col("event_ms").last().alias("_last_turn"),
            pl.len().cast(pl.Float64).alias("_turns"),
            pl.col("_term").last().alias("_last_term"),
            pl.col("_max").last().alias("_last_max"),
        )
    )
    ready = (
        outcome_of.join(last_turn, on=[*_DIR, "exchange"], how="left", nulls_equal=True)
        .join(
            x.select(*_DIR, "exchange", "_intent", "_suggested", "_req_type", "_to_type"),
            on=[*_DIR, "exchange"],
            how="left",
            nulls_equal=True,
        )
        .with_columns(
            pl.max_horizontal("event_ms", "_last_turn").alias("_ready"),
            pl.col("_turns").fill_null(0.0),
        )
    )
    m_done, amb_done = _match_completes(completes, ready, x)
    placed.append(m_done)
    amb_ex.append(amb_done)

    return _place(full, x, placed, amb_ex)


#: How many search steps one direction's completes may take before the matcher stops
#: deciding and flags the undecided completes (a guard against pathological logs).
_SEARCH_STEPS: Final = 20_000


def _done_by_event() -> pl.Expr:
    """A replied exchange whose ping-pong loop ended with its last logged event (a turn
    giving a termination reason, the last allowed turn, or no loop at all): its announce
    step was queued then, whatever complete closes it."""
    turns = pl.col("_turns")
    return (pl.col("_kind") == "reply") & (
        pl.col("_last_term").is_not_null()
        | ((turns >= 1) & (turns >= pl.col("_last_max")).fill_null(False))
        | ((turns == 0) & (pl.col("_suggested") == 0).fill_null(False))
    )


def _tight_ends(ready: pl.DataFrame) -> pl.DataFrame:
    """The replied exchanges of ``ready`` ended by an event: direction, ``exchange``,
    ``_at`` (when their announce was queued)."""
    return ready.filter(_done_by_event()).select(
        *_DIR, "exchange", pl.col("_ready").cast(pl.Float64).alias("_at")
    )


#: One allowed pair in the search: (cost, exchange, on the lane, queued at the earliest,
#: queued at the latest).
_Edge = tuple[float, int, bool, float, float]


def _solve_direction(
    comps: dict[int, list[_Edge]], times: dict[int, float], tights: dict[int, float]
) -> tuple[dict[int, int], set[int], set[int]]:
    """The cheapest consistent assignment of one direction's completes, and what another
    consistent one would change.

    ``comps`` maps each complete (``_seq``) to its allowed pairs, cheapest first;
    ``times`` its time; ``tights`` the exchanges whose announce was queued at a known
    time. An assignment is consistent when every complete closes a different exchange
    and the lane order holds: of two announces, the one queued strictly earlier (latest
    queue time before the other's earliest) has the earlier complete; and an exchange
    left open was queued no earlier than any closed one. As few completes as possible stay
    unplaced. Returns the assignment, the ambiguous exchanges and completes.

    A depth-first search in time order, cheapest pair first, with branch and bound; the
    lane order prunes it to a few steps per complete. After :data:`_SEARCH_STEPS` steps
    it stops deciding: what it has not proven is flagged.
    """
    order = sorted(comps, key=lambda q: (times[q], q))
    n = len(order)
    steps = [0]

    def search(
        forbid: tuple[int, int] | None, max_free: int, first_only: bool
    ) -> tuple[float, dict[int, int] | None, bool]:
        best_cost, best = float("inf"), None
        assign: dict[int, int] = {}
        lanes: list[tuple[float, float, float]] = []  # (lo, hi, complete time)
        used: set[int] = set()
        capped = False

        def ok_lane(lo: float, hi: float, t: float) -> bool:
            # an earlier complete's announce queued strictly after this one's: out of order
            if any(lo2 > hi and t2 < t for lo2, _hi2, t2 in lanes):
                return False
            # an exchange still open was queued before this announce: it can no longer close
            return not any(at < lo and xn not in used for xn, at in tights.items())

        def rec(i: int, cost: float, free: int) -> bool:
            nonlocal best_cost, best, capped
            steps[0] += 1
            if steps[0] > _SEARCH_STEPS:
                capped = True
                return True
            if cost >= best_cost:
                return False
            if i == n:
                best_cost, best = cost, dict(assign)
                return first_only
            q = order[i]
            t = times[q]
            for c, xn, lane, lo, hi in comps[q]:
                if xn in used or (forbid is not None and forbid == (q, xn)):
                    continue
                if lane and not ok_lane(lo, hi, t):
                    continue
                used.add(xn)
                assign[q] = xn
                if lane:
                    lanes.append((lo, hi, t))
                stop = rec(i + 1, cost + c, free)
                if lane:
                    lanes.pop()
                used.discard(xn)
                del assign[q]
                if stop:
                    return True
            if free < max_free:
                return rec(i + 1, cost + 1e18, free + 1)
            return False

        rec(0, 0.0, 0)
        return best_cost, best, capped

    best: dict[int, int] | None = None
    capped = False
    for max_free in range(n + 1):
        steps[0] = 0
        _cost, best, capped = search(None, max_free, False)
        if best is not None or capped:
            break
        # no assignment places every complete: allow one more unplaced
    amb_x: set[int] = set()
    amb_seq: set[int] = set()
    if best is None:
        return {}, amb_x, set(order)
    free_n = sum(1 for q in order if q not in best)
    if capped:
        amb_seq = set(order)
        amb_x = set(best.values())
    for q in order:
        if q not in best or len(comps[q]) < 2 or capped:
            continue
        steps[0] = 0
        _c, alt, alt_capped = search((q, best[q]), free_n, True)
        if alt_capped or alt is not None:
            amb_seq.add(q)
            amb_x.add(best[q])
        if alt is not None:
            for q2 in order:
                if alt.get(q2) != best.get(q2):
                    amb_seq.add(q2)
                    amb_x.update(v for v in (alt.get(q2), best.get(q2)) if v is not None)
    return best, amb_x, amb_seq


def _complete_edges(completes: pl.DataFrame, ready: pl.DataFrame, x: pl.DataFrame) -> pl.DataFrame:
    """Every (complete, exchange) pair of one direction that the log allows (runtime §2-§3).

    A complete closes an exchange only if it comes after the exchange's last reply or turn
    (120 s after it when the loop ended on a turn timeout: that step ran first); a
    concurrency-blocked complete closes a refusal, one with wait fields a no-reply, one
    counting turns a replied exchange with that many turns and the same reply-given
    termination; its ``messageIntent`` and session types are the send's, its
    ``effectiveTurns`` the turns' ``maxTurns`` (or what the intent allows under
    ``configuredMaxTurns``); a complete with ``outcome: "failed"`` (the flow died) may
    close an exchange with no outcome. Columns: ``_seq, exchange``, the direction,
    ``_c_ms``, ``_cost`` (squared lag in s², the likelihood: sorting completes and
    exchanges in time order minimises it), ``_lane`` (the announce ran on the target's
    lane: first come first served applies), ``_lo``/``_hi`` (when that announce was
    queued, at the earliest / latest) and ``_tight`` (the exchange's announce was queued
    at its last event, whatever closes it).
    """
    unanswered = x.join(
        ready.select(*_DIR, "exchange"), on=[*_DIR, "exchange"], how="anti", nulls_equal=True
    ).select(
        *_DIR,
        "exchange",
        pl.lit(None, pl.String).alias("_kind"),
        pl.col("_send_ms").alias("_ready"),
        pl.lit(0.0).alias("_turns"),
        pl.lit(None, pl.String).alias("_last_term"),
        pl.lit(None, pl.Float64).alias("_last_max"),
        "_intent",
        "_suggested",
        "_req_type",
        "_to_type",
    )
    cands = pl.concat(
        [
            ready.select(
                *_DIR,
                "exchange",
                "_kind",
                pl.col("_ready").cast(pl.Float64),
                pl.col("_turns").cast(pl.Float64),
                "_last_term",
                pl.col("_last_max").cast(pl.Float64),
                "_intent",
                "_suggested",
                "_req_type",
                "_to_type",
            ),
            unanswered,
        ],
        how="vertical_relaxed",
    )
    c = completes.select(
        "_seq",
        *_DIR,
        pl.col("event_ms").alias("_c_ms"),
        "_conc",
        pl.col("_actual").cast(pl.Float64, strict=False),
        pl.col("_eff").cast(pl.Float64, strict=False),
        pl.col("_cfg").cast(pl.Float64, strict=False),
        "_term",
        pl.col("_mi").alias("_c_intent"),
        pl.col("_req_type").alias("_c_from"),
        pl.col("_to_type").alias("_c_to"),
        "_wait",
        "_failed",
    )
    kind, term = pl.col("_kind"), pl.col("_term")
    replied = kind == "reply"
    reply_term = pl.when(term.is_in(list(_REPLY_REASONS))).then(term)
    extra = term.is_not_null() & ~term.is_in(list(_REPLY_REASONS))
    mu = pl.when(term == "turn_timeout").then(TURN_TIMEOUT_MS).otherwise(0.0)
    sugg, cfg = pl.col("_suggested").cast(pl.Float64), pl.col("_cfg")
    allowed_eff = (
        pl.when(sugg == 0)
        .then(0.0)
        .when(sugg < 0)
        .then(cfg)
        .otherwise(pl.min_horizontal(sugg, cfg))
    )
    turns = pl.col("_turns")
    done_by_event = _done_by_event()

    def agree(a: str, b: str) -> pl.Expr:
        return (pl.col(a) == pl.col(b)).fill_null(True)

    ok = (
        (pl.col("_c_ms") >= pl.col("_ready"))
        & (kind.is_not_null() | pl.col("_failed"))
        & (~pl.col("_conc") | (kind == "blocked"))
        & (
            (kind != "blocked") | pl.col("_conc") | (pl.col("_actual").is_null() & ~pl.col("_wait"))
        ).fill_null(True)
        & (~pl.col("_wait") | (kind == "no_reply")).fill_null(False)
        & pl.when(pl.col("_actual").is_null() | kind.is_null())
        .then(True)
        .when(replied)
        .then(pl.col("_actual") == turns)
        .otherwise(pl.col("_actual") == 0)
        & agree("_c_intent", "_intent")
        & agree("_c_from", "_req_type")
        & agree("_c_to", "_to_type")
        & pl.when(~replied.fill_null(False) | pl.col("_eff").is_null())
        .then(True)
        .when((turns >= 1) & pl.col("_last_max").is_not_null())
        .then(pl.col("_eff") == pl.col("_last_max"))
        .otherwise(((pl.col("_eff") == allowed_eff) | (pl.col("_eff") == 0)).fill_null(True))
        & pl.when(replied.fill_null(False))
        .then(
            reply_term.eq_missing(pl.col("_last_term"))
            & ~(extra & done_by_event)
            & (~extra | (pl.col("_c_ms") >= pl.col("_ready") + mu - _SLACK_MS))
        )
        .otherwise(True)
    )
    lane = replied.fill_null(False)
    return (
        c.join(cands, on=_DIR, how="inner", nulls_equal=True)
        .filter(ok)
        .select(
            "_seq",
            *_DIR,
            "exchange",
            "_c_ms",
            (
                (
                    (
                        pl.col("_c_ms")
                        - pl.col("_ready")
                        - pl.when(lane & extra).then(mu).otherwise(0.0)
                    )
                    / 1000.0
                ).pow(2)
            ).alias("_cost"),
            lane.alias("_lane"),
            (pl.col("_ready") + pl.when(extra).then(mu).otherwise(0.0)).alias("_lo"),
            pl.when(extra).then(pl.col("_c_ms")).otherwise(pl.col("_ready")).alias("_hi"),
            pl.when(done_by_event.fill_null(False)).then(pl.col("_ready")).alias("_tight"),
        )
    )


def _match_completes(
    completes: pl.DataFrame, ready: pl.DataFrame, x: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Close exchanges with their completes: the most likely assignment consistent with
    everything the log records, and the exchanges another consistent assignment would
    change (ambiguous).

    Hard constraints are the allowed pairs (:func:`_complete_edges`) and first come first
    served on the target's lane: the announce step that precedes a replied exchange's
    complete runs on the conversation's session, so an announce queued strictly earlier
    ends (and its complete is logged) first, and an exchange whose announce was queued
    before another's cannot still be waiting when that one has closed. A direction whose
    completes each allow one exchange, all different, is settled in Polars; the rest
    (overlapping exchanges) by :func:`_solve_direction`, an exact search: the pairwise
    lane order is a side constraint no assignment solver (scipy's, networkx's) takes.

    Returns the placed completes (``_seq, exchange, _amb``) and the ambiguous exchanges
    (direction, ``exchange``).
    """
    empty_amb = pl.DataFrame(schema={**{k: pl.String for k in _DIR}, "exchange": pl.Int64})
    if completes.height == 0:
        return pl.DataFrame(
            schema={"_seq": pl.UInt32, "exchange": pl.Int64, "_amb": pl.Boolean}
        ), empty_amb
    edges = _complete_edges(completes, ready, x)
    deg = edges.group_by("_seq").len("_deg")
    e = edges.join(deg, on="_seq").with_columns(pl.len().over(*_DIR, "exchange").alias("_xdeg"))
    # a direction is settled when each of its completes allows one exchange, no exchange
    # is allowed by two, and no exchange is left open that the lane order would need closed
    hard = e.group_by(_DIR).agg(((pl.col("_deg") > 1) | (pl.col("_xdeg") > 1)).any().alias("_hard"))
    open_tight = (
        ready.filter(pl.col("_kind") == "reply")
        .join(e.select(*_DIR, "exchange"), on=[*_DIR, "exchange"], how="anti", nulls_equal=True)
        .select(_DIR)
        .unique()
    )
    hard = hard.join(
        open_tight.with_columns(pl.lit(True).alias("_open")), on=_DIR, how="left", nulls_equal=True
    ).with_columns((pl.col("_hard") | pl.col("_open").fill_null(False)).alias("_hard"))
    e = e.join(hard.select(*_DIR, "_hard"), on=_DIR, how="left", nulls_equal=True)
    easy = e.filter(~pl.col("_hard")).select("_seq", "exchange", pl.lit(False).alias("_amb"))
    rest = e.filter(pl.col("_hard"))
    if rest.height == 0:
        return easy, empty_amb
    # replied exchanges ended by an event (their announce was queued then), per direction:
    # even one no complete may close stays bound by the lane order
    hard_dirs = rest.select(_DIR).unique()
    rt = _tight_ends(
        ready.filter(pl.col("_kind") == "reply").join(
            hard_dirs, on=_DIR, how="semi", nulls_equal=True
        )
    )
    tights: dict[tuple[object, ...], dict[int, float]] = {}
    for *key, xn, at in rt.select(*_DIR, "exchange", "_at").iter_rows():
        tights.setdefault(tuple(key), {})[xn] = at
    placed_rows: list[tuple[int, int, bool]] = []
    amb_rows: list[tuple[object, ...]] = []
    groups = rest.sort(*_DIR, "_c_ms", "_seq", "_cost", "exchange").partition_by(
        _DIR, as_dict=True, maintain_order=True
    )
    for key, g in groups.items():
        comps: dict[int, list[_Edge]] = {}
        times: dict[int, float] = {}
        for seq, xn, cms, cost, lane, lo, hi in g.select(
            "_seq", "exchange", "_c_ms", "_cost", "_lane", "_lo", "_hi"
        ).iter_rows():
            comps.setdefault(seq, []).append((cost, xn, lane, lo, hi))
            times[seq] = cms
        best, amb_x, amb_seq = _solve_direction(comps, times, tights.get(tuple(key), {}))
        for seq, xn in best.items():
            placed_rows.append((seq, xn, seq in amb_seq))
        amb_rows += [(*key, xn) for xn in amb_x]
    solved = pl.DataFrame(
        placed_rows,
        schema={"_seq": pl.UInt32, "exchange": pl.Int64, "_amb": pl.Boolean},
        orient="row",
    )
    amb = pl.DataFrame(
        amb_rows, schema={**{k: pl.String for k in _DIR}, "exchange": pl.Int64}, orient="row"
    )
    return pl.concat([easy.cast({"_seq": pl.UInt32, "exchange": pl.Int64}), solved]), amb


def _place(
    ex: pl.DataFrame, x: pl.DataFrame, placed: list[pl.DataFrame], amb_ex: list[pl.DataFrame]
) -> pl.LazyFrame:
    """Join the placements to the events; place the rest by the latest send before them.

    ``amb_ex`` lists exchanges (direction and ``exchange``) a rule found ambiguous without
    placing one of their events.
    """
    got = pl.concat(
        [
            p.select(pl.col("_seq").cast(pl.UInt32), pl.col("exchange").cast(pl.Int64), "_amb")
            for p in placed
        ]
    )
    # a rule that only flags (``_out_of_order``) repeats an event another rule placed
    got = got.group_by("_seq", maintain_order=True).agg(
        pl.col("exchange").first(), pl.col("_amb").any()
    )
    # the placement runs on the keys alone; the events (``data`` and its texts: most of the
    # memory) are gathered once, in the output order, at the end
    keys = ex.select("_seq", *_DIR, "event_ms").with_row_index("_pos")
    out = keys.join(got, on="_seq", how="left")
    missing = out.filter(pl.col("exchange").is_null()).drop("exchange", "_amb").sort("event_ms")
    if missing.height:
        # no rule placed it: the latest send before it (ties: the send is logged first)
        fallback = (
            missing.sort(*_DIR, "event_ms")
            .join_asof(
                x.select(*_DIR, "exchange", "_send_ms").sort(*_DIR, "_send_ms"),
                left_on="event_ms",
                right_on="_send_ms",
                by=_DIR,
                strategy="backward",
                check_sortedness=False,
            )
            .with_columns(
                pl.col("exchange").fill_null(0),
                # an orphan before the first send is plain; anything else is a guess
                pl.col("exchange").is_not_null().alias("_amb"),
            )
            .drop("_send_ms")
        )
        out = pl.concat(
            [out.filter(pl.col("exchange").is_not_null()), fallback], how="diagonal_relaxed"
        )
    flagged = pl.concat(
        [a.select(*_DIR, pl.col("exchange").cast(pl.Int64)) for a in amb_ex]
    ).unique(maintain_order=True)
    order = (
        out.join(
            flagged.with_columns(pl.lit(True).alias("_flag")),
            on=[*_DIR, "exchange"],
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        .with_columns((pl.col("_amb") | pl.col("_flag").fill_null(False)).alias("_amb"))
        .with_columns(pl.col("_amb").any().over(*_DIR, "exchange").alias("ambiguous"))
        .with_columns(
            pl.when(pl.col("exchange") == 0)
            .then(False)
            .otherwise(pl.col("ambiguous"))
            .alias("ambiguous")
        )
        .sort([*_DIR, "exchange", "event_ms", "_seq"], nulls_last=True)
    )
    events = ex.drop(*_HELPERS, strict=False)
    events = events.select(pl.all().gather(order["_pos"])).rename({"_seq": "seq"})
    return events.with_columns(
        order["exchange"].cast(pl.Int64), order["ambiguous"].cast(pl.Boolean)
    ).lazy()
