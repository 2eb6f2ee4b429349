"""What the reference rules say about an event: its agents, its exchange, its outcome.

The one place the analytics read an A2A event the way the reference wrote it:

- its agents (rules §3), the intent of a sent message (runtime §3) and its outcome kind and
  reason (runtime §3b): :mod:`a2a_lab.event_rules`, re-exported here
  (:func:`from_agent_expr`, :func:`to_agent_expr`, :func:`with_agents`, :func:`intent_expr`,
  :func:`outcome_text_expr`, :func:`wait_reason_expr`, :func:`with_response_outcome`);
- its exchange (runtime §1-§2, §6): :func:`exchange_events`.

Exchanges
---------
The reference reuses one ``conversationId`` for every exchange of a work session and
unordered agent pair (runtime §6), in both directions, so the exchanges of one conversation
id and direction overlap. Each event is matched to its send with what the reference writes,
and only that:

1. ``a2a.send`` opens exchange *n* (the *n*-th send of its conversation and direction);
2. ``a2a.retry`` carries the send's ``runId``;
3. a refusal (``a2a.response {outcome: "blocked"}`` without wait fields) comes when the
   concurrency gate gives up, :data:`GATE_TIMEOUT_MS` after its send, or at once when a
   safety limit refuses it (one refusal per send);
4. every other first outcome (the reply, or a no-reply) ends the target's run or the
   requester's wait; the target's session (``targetSessionKey``, the conversation's lane)
   runs one message at a time, first come first served (runtime §1), so they come in the
   order of their sends (a rank join in Polars); except a send logged with the reply in
   hand (``runId: "unknown"``, the synchronous path: :func:`_in_hand`), and the flows whose
   wait was retried or failed, whose retries bound their outcome
   (:mod:`a2a_lab._exchange_firsts`, an exact search per overlapping component);
5. ping-pong turns and completes are placed together, per *segment* of a direction (a
   segment starts at a send once every earlier send has had its complete, so segments are
   independent): a segment with one send is settled in Polars, one with overlapping flows
   by an exact search over every placement consistent with the rules (turn *k* after turn
   *k - 1* of its exchange within the turn timeout, with its intent, requester session type
   and ``maxTurns``; one complete after the exchange's last reply or turn, agreeing with its
   outcome, ``actualTurns``, termination, ``messageIntent``, session types and effective
   turns, and no later than the reference lets it come: at once after a no-reply or
   refusal, at once after the loop with ``announceSkipped: true``, within the announce
   step's 72 s with ``false``; first come first served on the target's lane for its
   ping-pong steps and announce steps, and on the requester's main session for its steps).
   The most likely placement (least squared lags, and fewest steps said to end without an
   event while a later-queued one was logged) is kept.

Causality holds by construction: a reply is never placed before its send, a complete never
before its exchange's last reply or turn, turns are numbered in time order. An exchange is
``ambiguous`` only when another placement is consistent with everything above (a log of one
exchange never is): two sends a refusal fits, an outcome that another pairing consistent
with the retries and the lane order gives another exchange, a turn or complete
that some consistent placement gives another exchange, or an event no rule places (it falls
back to the latest send before it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import polars as pl

from a2a_lab import event_rules as _event_rules
from a2a_lab._exchange_firsts import untangle
from a2a_lab._exchange_tails import DIRECTION as _DIR
from a2a_lab._exchange_tails import SLACK_MS as _SLACK_MS
from a2a_lab._exchange_tails import TURN_TIMEOUT_MS as TURN_TIMEOUT_MS
from a2a_lab._exchange_tails import tails
from a2a_lab._frames import data_text as _text
from a2a_lab._frames import narrow, same_kind

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

#: The event's ``data`` struct.
_D = pl.col("data")

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
    "announceSkipped",
    "earlyTermination",
    "terminationReason",
    "concurrencyBlocked",
    "messageIntent",
    "payloadType",
    "payloadJson",
    "depth",
    "hop",
    "attempt",
    "backoffMs",
    "errorCode",
    "errorCategory",
    "runId",
    "fromSessionType",
    "toSessionType",
)

# ---------------------------------------------------------------------------------------
# exchanges
# ---------------------------------------------------------------------------------------

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
    "_skip",
    "_backoff",
    "_code",
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
    a2a = (
        lf.filter(conv.is_not_null())
        .with_columns(conv.alias("conversation_id"))
        .with_row_index("_idx")
    )
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
    # a refusal (blocked, no wait fields) is written either way round (the held-out model
    # target -> requester, the simulator requester -> target): where sends went both ways it
    # belongs to the direction with a send the gate timeout before it, if only one has one
    refusal = (
        (pl.col("type") == "a2a.response")
        & (_text("outcome") == "blocked")
        & _text("waitStatus").is_null()
        & _text("waitError").is_null()
        & turn.is_null()
    )
    sends_at = a2a.filter(pl.col("type") == "a2a.send").select(
        "conversation_id", frm.alias("_r"), to.alias("_t"), pl.col("event_ms").alias("_sms")
    )
    refusals = a2a.filter(refusal).select(
        "_idx", "conversation_id", FROM_AGENT, TO_AGENT, "event_ms"
    )

    def gate_fit(a: str, b: str, name: str) -> pl.LazyFrame:
        return (
            refusals.join(sends_at, left_on=["conversation_id", a, b], right_on=keys)
            .filter((pl.col("event_ms") - pl.col("_sms") - GATE_TIMEOUT_MS).abs() <= _SLACK_MS)
            .select("_idx", pl.lit(True).alias(name))
            .unique("_idx")
        )

    flagged = flagged.join(gate_fit(FROM_AGENT, TO_AGENT, "_gf"), on="_idx", how="left").join(
        gate_fit(TO_AGENT, FROM_AGENT, "_gr"), on="_idx", how="left"
    )
    gf, gr = pl.col("_gf").fill_null(False), pl.col("_gr").fill_null(False)
    forward_by_type = (pl.col("type") != "a2a.response") | (turn.is_not_null() & (turn % 2 == 1))
    fwd, rev = pl.col("_fwd").is_not_null(), pl.col("_rev").is_not_null()
    reversed_ = (
        pl.when(pl.col("type") == "a2a.send")
        .then(False)
        .when(gf & ~gr)
        .then(False)
        .when(gr & ~gf)
        .then(True)
        .when(forward_by_type)
        .then(~fwd & rev)
        .otherwise(rev | ~fwd)
    )
    return (
        flagged.with_columns(
            pl.when(reversed_).then(to).otherwise(frm).alias("requester"),
            pl.when(reversed_).then(frm).otherwise(to).alias("target"),
        )
        .drop("_fwd", "_rev", "_gf", "_gr", "_idx")
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


def _refusals(ex: pl.DataFrame, x: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pair each refusal (``_kind`` blocked) with its send: the gate refuses exactly
    :data:`GATE_TIMEOUT_MS` after the send, a safety limit at once (the log may only be
    late, by :data:`_SLACK_MS`).

    One refusal per exchange: a refusal only one unclaimed send fits takes it, which may
    leave another refusal only one (repeated until none is forced); a refusal several
    sends still fit goes to the one it fits best (ties to the earlier send) and is
    ambiguous, with every send it fits; two refusals left with one send are both
    ambiguous. Returns ``_seq, exchange, _amb, event_ms`` and the direction per refusal,
    and the ambiguous exchanges.
    """
    refusals = ex.filter(pl.col("_kind") == "blocked")
    fits = refusals.select(*_DIR, "_seq", "event_ms").join(
        x.select(*_DIR, "exchange", "_send_ms"), on=_DIR, how="inner", nulls_equal=True
    )
    delay = pl.col("event_ms") - pl.col("_send_ms")
    gate = (delay >= GATE_TIMEOUT_MS - 1) & (delay <= GATE_TIMEOUT_MS + _SLACK_MS)
    fits = fits.filter(gate | ((delay >= 0) & (delay <= _SLACK_MS)))
    miss = pl.min_horizontal((delay - GATE_TIMEOUT_MS).abs(), delay.abs())
    fits = fits.sort(pl.col("_seq"), miss, pl.col("exchange"))
    cands: dict[int, list[int]] = {}
    info: dict[int, tuple[object, ...]] = {}
    for row in fits.iter_rows(named=True):
        key = tuple(row[c] for c in _DIR)
        cands.setdefault(row["_seq"], []).append(row["exchange"])
        info[row["_seq"]] = (*key, row["event_ms"])
    taken: dict[tuple[object, ...], int] = {}
    got: dict[int, tuple[int, bool]] = {}
    forced = True
    while forced:
        forced = False
        for seq, xs in cands.items():
            left = [xn for xn in xs if (*info[seq][:3], xn) not in taken]
            if seq not in got and len(left) == 1:
                got[seq] = (left[0], False)
                taken[(*info[seq][:3], left[0])] = seq
                forced = True
    amb: list[tuple[object, ...]] = []
    for seq, xs in cands.items():
        if seq in got:
            continue
        left = [xn for xn in xs if (*info[seq][:3], xn) not in taken] or xs
        got[seq] = (left[0], True)
        taken.setdefault((*info[seq][:3], left[0]), seq)
        amb += [(*info[seq][:3], xn) for xn in left]
    rows = [(seq, xn, a, info[seq][3], *info[seq][:3]) for seq, (xn, a) in got.items()]
    schema = {
        "_seq": pl.UInt32,
        "exchange": pl.Int64,
        "_amb": pl.Boolean,
        "event_ms": pl.Float64,
        **dict.fromkeys(_DIR, pl.String),
    }
    amb_schema = {**dict.fromkeys(_DIR, pl.String), "exchange": pl.Int64}
    return (
        pl.DataFrame(rows, schema=schema, orient="row"),
        pl.DataFrame(amb, schema=amb_schema, orient="row"),
    )


#: The ``runId`` a send logs when its flow starts with the reply in hand: the synchronous
#: path passes no ``waitRunId`` (``runId: params.waitRunId ?? "unknown"``, 298c5ad5f).
IN_HAND_RUN_ID: Final = "unknown"


def _in_hand(first: pl.DataFrame, open_: pl.DataFrame) -> pl.DataFrame:
    """The replies of sends made with the reply in hand (``runId`` :data:`IN_HAND_RUN_ID`).

    The synchronous path waits for the target's run inside the requester's call, then
    starts the flow with the reply: the send is logged once the run is over, and its reply
    right after it, as soon as the concurrency gate lets the flow go (at most
    :data:`GATE_TIMEOUT_MS`; then a refusal is logged instead); no ``agent.wait``, so no
    no-reply and no retry. Such a run left the lane's first come first served order
    before its send was logged, so it is paired apart: each such send (in log order) with
    the nearest unclaimed reply of its direction in that window. Ambiguous when the reply
    was not at once (the gate held it) and another reply falls in the window, or when
    two replies came at once.

    Returns ``conversation_id, requester, target, _seq, exchange, _amb, event_ms, _kind``
    per paired reply.
    """
    schema = {
        **dict.fromkeys(_DIR, pl.String),
        "_seq": pl.UInt32,
        "exchange": pl.Int64,
        "_amb": pl.Boolean,
        "event_ms": pl.Float64,
        "_kind": pl.String,
    }
    sends = open_.filter(pl.col("_run") == IN_HAND_RUN_ID)
    if sends.height == 0:
        return pl.DataFrame(schema=schema)
    lag = pl.col("event_ms") - pl.col("_send_ms")
    cands = (
        first.filter(pl.col("_kind") == "reply")
        .select(*_DIR, "_seq", "event_ms")
        .join(sends.select(*_DIR, "exchange", "_send_ms"), on=_DIR, nulls_equal=True)
        .filter((lag >= 0) & (lag <= GATE_TIMEOUT_MS + _SLACK_MS))
        .with_columns(lag.alias("_lag"))
        .sort("_send_ms", "exchange", "_lag", "_seq")
    )
    taken: set[int] = set()
    rows: list[tuple[object, ...]] = []
    by_send = cands.partition_by(*_DIR, "exchange", maintain_order=True)
    for part in by_send:
        free = [r for r in part.iter_rows(named=True) if r["_seq"] not in taken]
        if not free:
            continue
        best = free[0]
        taken.add(best["_seq"])
        other = free[1]["_lag"] if len(free) > 1 else None
        amb = other is not None and (best["_lag"] > _SLACK_MS or other <= _SLACK_MS)
        key = tuple(best[c] for c in _DIR)
        rows.append((*key, best["_seq"], best["exchange"], amb, best["event_ms"], "reply"))
    return pl.DataFrame(rows, schema=schema, orient="row")


def _read_fields(ex: pl.DataFrame) -> pl.DataFrame:
    """Every field the matching reads, read once into helper columns (:data:`_HELPERS`):
    the matching itself runs without ``data``."""
    turn = _D.struct.field("turn")
    return (
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
            _D.struct.field("announceSkipped").alias("_skip"),
            _D.struct.field("backoffMs").cast(pl.Float64, strict=False).alias("_backoff"),
            _text("errorCode").alias("_code"),
        )
        .collect()
    )


def _sends(full: pl.DataFrame, intent_rules: IntentRules) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The sends, numbered per direction in log order (``exchange``), with their intent and
    suggested turns; and their keys the matching reads (``x``)."""
    t = pl.col("type")
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
        *_DIR,
        "exchange",
        "_send_ms",
        "_run",
        "_intent",
        "_suggested",
        "_req_type",
        "_to_type",
        pl.col("_seq").alias("_send_seq"),
    )
    return sends, x


@same_kind()
def exchange_events(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    intent_rules: IntentRules = INTENT_RULES_V1,
    outcome: tuple[str, str] | None = None,
) -> pl.LazyFrame:
    """The events of A2A exchanges, each with the exchange it belongs to.

    Returns the ``a2a.send/response/retry/complete`` events that carry a conversation id,
    with ``conversation_id`` (JS-trimmed), the exchange's direction ``requester`` →
    ``target``, ``exchange`` (1-based: the number of the send within its conversation and
    direction; 0 for an event before the first send, an orphan), ``ambiguous`` (the log
    cannot tell this exchange's events from another's, see the module notes) and ``seq``
    (frame order); sorted by conversation, direction, exchange, time and frame order.
    ``outcome`` names two more columns: each event's outcome kind and reason
    (:func:`with_response_outcome`), which the matching reads anyway (a caller that reads
    them too, :func:`a2a_lab.conversations`, is spared parsing the texts again).

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
    full = _read_fields(ex)
    ex = full.drop("data", "event_time", "file", "line", strict=False)
    sends, x = _sends(full, intent_rules)
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
    refused, amb_refused = _refusals(ex, x)
    amb_ex.append(amb_refused)
    placed.append(refused.select("_seq", "exchange", "_amb"))

    # first outcomes: in the order of their sends (the target's session is FIFO)
    fifo, in_hand, amb_first = _first_outcomes(ex, x, refused, by_run)
    amb_ex.append(amb_first)
    placed.append(fifo.select("_seq", "exchange", "_amb"))
    placed.append(in_hand.select("_seq", "exchange", "_amb"))
    outcome_of = pl.concat(
        [
            fifo.select("_seq", "exchange", "event_ms", "_kind"),
            in_hand.select("_seq", "exchange", "event_ms", "_kind"),
            refused.select("_seq", "exchange", "event_ms", pl.lit("blocked").alias("_kind")),
        ]
    ).join(ex.select("_seq", *_DIR), on="_seq")

    # ping-pong turns and completes: per segment of a direction (see _exchange_tails)
    tails_placed, amb_tails = tails(ex, x, outcome_of)
    placed.append(tails_placed)
    amb_ex.append(amb_tails)

    kept = {} if outcome is None else dict(zip(("_kind", "_reason"), outcome, strict=True))
    return _place(full, x, placed, amb_ex, kept)


def _first_outcomes(
    ex: pl.DataFrame, x: pl.DataFrame, refused: pl.DataFrame, by_run: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Pair the first outcomes (replies, no-replies) with the sends not refused.

    In the order of their sends (the target's session is FIFO: a rank join), but a send
    made with the reply in hand first (:func:`_in_hand`), and the retried flows and failed
    wait calls re-paired exactly (:func:`a2a_lab._exchange_firsts.untangle`). Returns the
    rank join's pairs (``_seq, exchange, _amb, event_ms, _kind`` ...), the in-hand pairs and
    the exchanges another consistent pairing changes.
    """
    # first outcomes: in the order of their sends (the target's session is FIFO)
    first = ex.filter(pl.col("_kind").is_not_null() & ~pl.col("_kind").is_in(["turn", "blocked"]))
    first_send = x.group_by(_DIR).agg(pl.col("_send_ms").min().alias("_first_send"))
    first = first.join(first_send, on=_DIR, how="inner", nulls_equal=True).filter(
        pl.col("event_ms") >= pl.col("_first_send")
    )
    open_ = x.join(
        refused.select(*_DIR, "exchange"), on=[*_DIR, "exchange"], how="anti", nulls_equal=True
    )
    # a send made with the reply in hand comes just before its reply, out of the lane's order
    in_hand = _in_hand(first, open_)
    first = first.join(in_hand.select("_seq"), on="_seq", how="anti")
    open_ = open_.join(
        in_hand.select(*_DIR, "exchange"), on=[*_DIR, "exchange"], how="anti", nulls_equal=True
    )
    fifo = _rank_match(first, open_, _Pairing(_DIR, ["exchange"], "_send_ms"))
    # the wait limit: a reply within it (plus the gate's wait), a timed-out no-reply after it
    fifo = fifo.join(
        first.select("_seq", *_DIR, "event_ms", "_kind", "_reason", "_status"), on="_seq"
    )
    # a retried flow or a failed wait call may break that order: its retries bound it
    fifo, amb_first = untangle(
        fifo, by_run.select(*_DIR, "exchange", "event_ms", "_backoff", "_code"), open_
    )
    fifo = fifo.join(
        x.select(*_DIR, "exchange", "_send_ms"),
        on=[*_DIR, "exchange"],
        how="left",
        nulls_equal=True,
    )
    # (a question only where another send of the direction could have had the event)
    delay = pl.col("event_ms") - pl.col("_send_ms")
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
    return fifo, in_hand, amb_first


def _place(
    ex: pl.DataFrame,
    x: pl.DataFrame,
    placed: list[pl.DataFrame],
    amb_ex: list[pl.DataFrame],
    kept: dict[str, str],
) -> pl.LazyFrame:
    """Join the placements to the events; place the rest by the latest send before them.

    ``amb_ex`` lists exchanges (direction and ``exchange``) a rule found ambiguous without
    placing one of their events; ``kept``: the helper columns kept, by their new names.
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
                # an orphan before the first send is plain, and so is an event only the
                # first send could have had; after later sends it is a guess
                (pl.col("exchange") > 1).fill_null(False).alias("_amb"),
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
    events = ex.drop(*[h for h in _HELPERS if h not in kept], strict=False)
    events = events.select(pl.all().gather(order["_pos"])).rename({"_seq": "seq", **kept})
    return events.with_columns(
        order["exchange"].cast(pl.Int64), order["ambiguous"].cast(pl.Boolean)
    ).lazy()
