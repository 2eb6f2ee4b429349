"""Conversation analytics: how each A2A exchange went (runtime §2-§3b, §8).

An *exchange* is one ``sessions_send``: an ``a2a.send``, the target's reply and the
ping-pong turns (``a2a.response``), retries (``a2a.retry``) and the closing ``a2a.complete``.
The reference reuses one ``conversationId`` for every exchange of a work session and agent
pair (runtime §6), so the exchanges of a conversation id overlap; which event belongs to which
send is decided in one place, :func:`a2a_lab.exchanges.exchange_events` (run ids, refusal
timing, first come first served, turn chains, completes), and so is what an event says about
its outcome (:func:`a2a_lab.exchanges.with_response_outcome`). Events before the first send of
their conversation form exchange 0 (orphans: a reply whose send is not in the log); an
exchange the log cannot tell from another is marked ``ambiguous`` and counted by
:func:`exchange_summary`.

Everything here is vectorised Polars; the pure reference rules in :mod:`a2a_lab.reference.runtime`
(``classify_intent``, ``parse_outcome_text``) are the slow, obvious oracles the tests compare
the expressions against.
"""

from __future__ import annotations

import polars as pl

from a2a_lab.exchanges import (
    EXCHANGE_FIELDS,
    EXCHANGE_TYPES,
    exchange_events,
    intent_expr,
    outcome_text_expr,
    payload_intent_expr,
    wait_reason_expr,
    with_agents,
    with_response_outcome,
)
from a2a_lab.reference.jsstr import js_string_expr
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules

__all__ = [
    "EXCHANGE_TYPES",
    "OUTCOMES",
    "conversations",
    "delegation_reports",
    "exchange_events",
    "exchange_summary",
    "intent_expr",
    "outcome_text_expr",
    "pair_stats",
    "payload_events",
    "question_answers",
    "status_timeline",
    "target_stats",
]

#: Outcomes of an exchange as an analyst reads them (runtime §3b).
OUTCOMES: tuple[str, ...] = ("replied", "no_reply", "concurrency_blocked", "incomplete")

_D = pl.col("data")


def _text(field: str) -> pl.Expr:
    """A string field of ``data``, JS-trimmed, blank → null (rules §1)."""
    return js_string_expr(_D.struct.field(field))


def _num(field: str) -> pl.Expr:
    return _D.struct.field(field)


def conversations(events: pl.DataFrame | pl.LazyFrame, *, intent_rules: IntentRules = INTENT_RULES_V1) -> pl.DataFrame:
    """One row per exchange: who asked whom, how fast, how it ended.

    Parameters
    ----------
    events
        An event frame (loaded, or enriched: resolved ``fromAgent``/``toAgent`` are reused).
    intent_rules
        The classifier used when an exchange logs no ``messageIntent`` and no payload.

    Returns
    -------
    pl.DataFrame
        Columns: ``conversationId, exchange, runId`` (the send's), ``fromAgent`` (requester),
        ``toAgent`` (target),
        ``workSessionId, taskId, start`` (ms; the send, else the first event),
        ``startTime`` (UTC datetime), ``firstReplyMs`` (send → first reply without an
        outcome), ``end`` (ms of ``a2a.complete``), ``durationMs``, ``responses``,
        ``configuredMaxTurns, effectiveTurns, actualTurns`` (as logged), ``turns`` (actual
        when logged, else the number of ping-pong turn responses), ``outcome`` (replied,
        no_reply, concurrency_blocked, incomplete — runtime §3b), ``outcomeReason``,
        ``retries`` (``a2a.retry`` events), ``announced``, ``terminationReason``,
        ``earlyTermination``, ``intent`` (payload type, else logged ``messageIntent``, else
        the reference classifier on the sent message), ``intentSource``, ``payloadType``
        (the send's), ``depth``, ``parentConversationId``, ``hasSend``, ``hasComplete``,
        ``ambiguous`` (the log cannot tell this exchange's events from another's:
        :func:`a2a_lab.exchanges.exchange_events`), ``events`` and ``lines`` (file/line provenance of the first event: ``file``,
        ``line``). Sorted by start time.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...   {"type": "a2a.send", "ts": 1000, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b", "message": "배포 해줘"}},
    ...   {"type": "a2a.response", "ts": 4000, "data": {"conversationId": "c", "fromAgent": "b", "toAgent": "a", "replyPreview": "ok"}},
    ...   {"type": "a2a.complete", "ts": 5000, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b", "announced": True}},
    ... ])
    >>> conversations(ev).select("fromAgent", "toAgent", "firstReplyMs", "outcome", "intent").row(0)
    ('a', 'b', 3000.0, 'replied', 'request')
    """
    return _conversations_of(exchange_events(events), intent_rules)


def _conversations_of(ex: pl.LazyFrame, intent_rules: IntentRules = INTENT_RULES_V1) -> pl.DataFrame:
    """:func:`conversations` from already computed :func:`exchange_events`."""
    t = pl.col("type")
    is_send, is_resp, is_retry, is_complete = (t == x for x in EXCHANGE_TYPES)
    ex = with_response_outcome(ex, "_kind", "_said_reason")
    kind = pl.col("_kind")
    replied = kind.is_in(["reply", "turn"])
    no_reply_resp = kind.is_in(["no_reply", "blocked"])
    field_reason = wait_reason_expr()
    # every "first/last value where <condition>" is a masked column aggregated with
    # first/last(ignore_nulls=True): Polars' fast group-by kernels, no per-group filter
    masked = {
        "_send_ms": (pl.col("event_ms"), is_send),
        "_reply_ms": (pl.col("event_ms"), replied),
        "end": (pl.col("event_ms"), is_complete),
        "configuredMaxTurns": (_num("configuredMaxTurns"), is_complete),
        "effectiveTurns": (_num("effectiveTurns"), is_complete),
        "actualTurns": (_num("actualTurns"), is_complete),
        "announced": (_num("announced"), is_complete),
        "earlyTermination": (_num("earlyTermination"), is_complete),
        "_complete_termination": (_text("terminationReason"), is_complete),
        "_any_termination": (_text("terminationReason"), pl.lit(True)),
        "_no_reply_reason": (pl.col("_said_reason"), no_reply_resp),
        "_complete_reason": (field_reason, is_complete),
        "_complete_intent": (_text("messageIntent"), is_complete),
        "_any_intent": (_text("messageIntent"), pl.lit(True)),
        "_send_message": (_D.struct.field("message"), is_send),
        "payloadType": (_text("payloadType"), is_send),
        "runId": (_text("runId"), is_send),
        "_payload_json": (_D.struct.field("payloadJson"), is_send),
        "depth": (_num("depth"), is_send),
        "parentConversationId": (_text("parentConversationId"), is_send),
        "workSessionId": (_text("workSessionId"), pl.lit(True)),
        "taskId": (_text("taskId"), pl.lit(True)),
    }
    last_of = {"end", "configuredMaxTurns", "effectiveTurns", "actualTurns", "announced", "earlyTermination",
               "_complete_termination", "_any_termination", "_complete_reason", "_complete_intent"}
    ex = ex.with_columns(
        *[pl.when(cond).then(value).alias("_m" + name) for name, (value, cond) in masked.items()],
        is_send.alias("_is_send"), is_resp.alias("_is_resp"), is_retry.alias("_is_retry"),
        is_complete.alias("_is_complete"), replied.alias("_replied_row"), no_reply_resp.alias("_no_reply_row"),
        (is_resp & _num("turn").is_not_null()).alias("_turn_row"),
        (is_complete & _num("concurrencyBlocked").fill_null(False)).alias("_conc_row"),
    )
    agg = ex.group_by("conversationId", "_requester", "_target", "exchange").agg(
        *[
            (pl.col("_m" + name).last(ignore_nulls=True) if name in last_of else pl.col("_m" + name).first(ignore_nulls=True)).alias(name)
            for name in masked
        ],
        pl.col("event_ms").first().alias("_first_ms"),
        pl.col("_is_resp").sum().cast(pl.Int64).alias("responses"),
        pl.col("_turn_row").sum().cast(pl.Int64).alias("_turn_responses"),
        pl.col("_is_retry").sum().cast(pl.Int64).alias("retries"),
        pl.col("_conc_row").any().alias("_conc_blocked"),
        pl.col("_no_reply_row").any().alias("_no_reply"),
        pl.col("_replied_row").any().alias("_replied"),
        pl.col("_is_send").any().alias("hasSend"),
        pl.col("_is_complete").any().alias("hasComplete"),
        pl.len().cast(pl.Int64).alias("events"),
        pl.col("ambiguous").any().alias("ambiguous"),
        pl.col("file").first().alias("file"),
        pl.col("line").first().alias("line"),
    ).with_columns(
        pl.coalesce("_complete_termination", "_any_termination").alias("terminationReason"),
        pl.coalesce("_complete_intent", "_any_intent").alias("_logged_intent"),
    )
    payload_intent = payload_intent_expr(pl.col("payloadType"), pl.col("_payload_json"))
    classified = intent_expr(pl.col("_send_message"), intent_rules)
    start = pl.coalesce("_send_ms", "_first_ms")
    outcome = (
        pl.when(pl.col("_conc_blocked")).then(pl.lit("concurrency_blocked"))
        .when(pl.col("_no_reply")).then(pl.lit("no_reply"))
        .when(~pl.col("hasComplete")).then(pl.lit("incomplete"))
        .when(pl.col("_replied")).then(pl.lit("replied"))
        .otherwise(pl.lit("incomplete"))
    )
    reason = (
        pl.when(pl.col("_conc_blocked")).then(pl.lit("concurrency_gate"))
        .when(pl.col("_no_reply")).then(
            pl.coalesce("_no_reply_reason", "_complete_reason", pl.lit("unknown"))
        )
        .when(~pl.col("hasComplete")).then(
            pl.when(pl.col("hasSend")).then(pl.lit("no_complete")).otherwise(pl.lit("no_send"))
        )
        .when(~pl.col("_replied")).then(pl.lit("no_response"))
    )
    out = agg.with_columns(
        pl.col("_requester").alias("fromAgent"),
        pl.col("_target").alias("toAgent"),
        start.alias("start"),
        (pl.col("_reply_ms") - start).alias("firstReplyMs"),
        (pl.col("end") - start).clip(lower_bound=0).alias("durationMs"),
        pl.coalesce(pl.col("actualTurns"), pl.col("_turn_responses").cast(pl.Float64)).alias("turns"),
        outcome.alias("outcome"),
        reason.alias("outcomeReason"),
        pl.coalesce(payload_intent, pl.col("_logged_intent"), classified).alias("intent"),
        pl.when(payload_intent.is_not_null()).then(pl.lit("payload"))
        .when(pl.col("_logged_intent").is_not_null()).then(pl.lit("logged"))
        .when(pl.col("_send_message").is_not_null()).then(pl.lit("classifier"))
        .alias("intentSource"),
    ).with_columns(
        pl.col("start").cast(pl.Int64).cast(pl.Datetime("ms")).dt.replace_time_zone("UTC").alias("startTime"),
    )
    cols = [
        "conversationId", "exchange", "runId", "fromAgent", "toAgent", "workSessionId", "taskId", "start", "startTime",
        "firstReplyMs", "end", "durationMs", "responses", "configuredMaxTurns", "effectiveTurns", "actualTurns",
        "turns", "outcome", "outcomeReason", "retries", "announced", "terminationReason", "earlyTermination",
        "intent", "intentSource", "payloadType", "depth", "parentConversationId", "hasSend", "hasComplete",
        "ambiguous", "events", "file", "line",
    ]
    return out.select(cols).sort(["start", "conversationId", "fromAgent", "toAgent", "exchange"], nulls_last=True).collect()


# ---------------------------------------------------------------------------------------
# per pair / per target
# ---------------------------------------------------------------------------------------


def _latency_aggs() -> list[pl.Expr]:
    lat = pl.col("firstReplyMs")
    return [
        pl.len().cast(pl.Int64).alias("exchanges"),
        (pl.col("outcome") == "replied").sum().cast(pl.Int64).alias("replied"),
        (pl.col("outcome") == "no_reply").sum().cast(pl.Int64).alias("no_reply"),
        (pl.col("outcome") == "concurrency_blocked").sum().cast(pl.Int64).alias("concurrency_blocked"),
        (pl.col("outcome") == "incomplete").sum().cast(pl.Int64).alias("incomplete"),
        lat.quantile(0.5, "linear").alias("p50_first_reply_ms"),
        lat.quantile(0.95, "linear").alias("p95_first_reply_ms"),
        lat.quantile(0.99, "linear").alias("p99_first_reply_ms"),
        lat.mean().alias("mean_first_reply_ms"),
        pl.col("turns").mean().alias("mean_turns"),
        pl.col("retries").sum().cast(pl.Int64).alias("retries"),
    ]


def _rates(lf: pl.DataFrame) -> pl.DataFrame:
    finished = pl.col("replied") + pl.col("no_reply")
    return lf.with_columns(
        (pl.col("no_reply") / pl.when(finished > 0).then(finished)).alias("no_reply_rate"),
        (pl.col("concurrency_blocked") / pl.col("exchanges")).alias("blocked_rate"),
    )


def exchange_summary(conv: pl.DataFrame) -> pl.DataFrame:
    """How far the conversation table can be trusted, for a report: one row with
    ``exchanges``, ``ambiguous`` (exchanges whose events the log cannot tell from another's,
    :func:`a2a_lab.exchanges.exchange_events`), ``ambiguous_share``, ``orphans`` (exchange 0:
    events before the first send of their conversation and direction) and the count of each
    outcome of :data:`OUTCOMES`.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...   {"type": "a2a.send", "ts": 1000, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b", "message": "hi"}},
    ...   {"type": "a2a.response", "ts": 4000, "data": {"conversationId": "c", "fromAgent": "b", "toAgent": "a"}}])
    >>> exchange_summary(conversations(ev)).row(0, named=True)["incomplete"]
    1
    """
    n = pl.len().cast(pl.Int64)
    return conv.select(
        n.alias("exchanges"),
        pl.col("ambiguous").sum().cast(pl.Int64).alias("ambiguous"),
        (pl.col("ambiguous").sum() / pl.when(n > 0).then(n)).alias("ambiguous_share"),
        (pl.col("exchange") == 0).sum().cast(pl.Int64).alias("orphans"),
        *[(pl.col("outcome") == o).sum().cast(pl.Int64).alias(o) for o in OUTCOMES],
    )


def pair_stats(conv: pl.DataFrame, *, by_hour: bool = False) -> pl.DataFrame:
    """Per directed pair (requester → target): counts, first-reply latency p50/p95/p99 (ms),
    no-reply rate (among exchanges that finished with or without a reply), mean turns.

    With ``by_hour=True`` also per UTC hour of day of the exchange start.
    """
    keys = ["fromAgent", "toAgent"] + (["hour"] if by_hour else [])
    frame = conv.with_columns(pl.col("startTime").dt.hour().alias("hour")) if by_hour else conv
    return _rates(frame.group_by(keys).agg(_latency_aggs())).sort(
        ["exchanges", *keys], descending=[True] + [False] * len(keys), nulls_last=True
    )


def target_stats(conv: pl.DataFrame, *, by_hour: bool = False) -> pl.DataFrame:
    """Per target agent: the same figures as :func:`pair_stats` over all its requesters."""
    keys = ["toAgent"] + (["hour"] if by_hour else [])
    frame = conv.with_columns(pl.col("startTime").dt.hour().alias("hour")) if by_hour else conv
    return _rates(frame.group_by(keys).agg(_latency_aggs())).sort(
        ["exchanges", *keys], descending=[True] + [False] * len(keys), nulls_last=True
    )




# ---------------------------------------------------------------------------------------
# structured payloads (runtime §8)
# ---------------------------------------------------------------------------------------


def payload_events(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Every event that carries a ``payloadJson``, with its parse result and errors.

    Columns: ``file, line, type, event_ms, event_time, fromAgent, toAgent, conversationId``
    and the columns of :data:`a2a_lab.schema.payloads.PAYLOAD_FRAME_SCHEMA` (kind, validity,
    errors, type mismatch, questionId / taskId / status / progress / blockers of a valid
    payload).
    """
    from a2a_lab.schema.payloads import parse_payloads

    lf = with_agents(events)
    parsed = parse_payloads(lf)
    base = (
        lf.filter(_D.struct.field("payloadJson").is_not_null())
        .select(
            "file", "line", "type", "event_ms", "event_time", "fromAgent", "toAgent",
            _text("conversationId").alias("conversationId"),
        )
        .collect()
    )
    return base.join(parsed, on=["file", "line"], how="left", maintain_order="left")


def _per_link(valid: pl.DataFrame, kind: str, key: str, *aggs: pl.Expr) -> pl.DataFrame:
    """Payloads of one kind aggregated per linking id, in time order (first = earliest)."""
    return (
        valid.filter(pl.col("payload_kind") == kind)
        .sort("event_ms", "line")
        .group_by(key, maintain_order=True)
        .agg(*aggs)
    )


def question_answers(payloads: pl.DataFrame) -> pl.DataFrame:
    """Questions linked to their answers by ``questionId`` (valid payloads only).

    One row per question (its first asking): ``questionId, askedBy, askedTo, askedAt``
    (ms), ``asked`` (times asked), ``answers``, ``answeredBy``, ``answeredAt`` (first
    answer), ``answerLatencyMs``, ``answered``; answers whose question is not in the log
    are rows with ``askedAt`` null.
    """
    valid = payloads.filter(pl.col("payload_valid") & pl.col("payload_question_id").is_not_null())
    questions = _per_link(
        valid, "question", "payload_question_id",
        pl.col("fromAgent").first().alias("askedBy"), pl.col("toAgent").first().alias("askedTo"),
        pl.col("event_ms").first().alias("askedAt"), pl.len().cast(pl.Int64).alias("asked"),
    )
    answers = _per_link(
        valid, "answer", "payload_question_id",
        pl.col("fromAgent").first().alias("answeredBy"), pl.col("event_ms").first().alias("answeredAt"),
        pl.len().cast(pl.Int64).alias("answers"),
    )
    return (
        questions.join(answers, on="payload_question_id", how="full", coalesce=True)
        .rename({"payload_question_id": "questionId"})
        .with_columns(
            pl.col("answers").fill_null(0),
            (pl.col("answeredAt") - pl.col("askedAt")).alias("answerLatencyMs"),
            pl.col("answeredAt").is_not_null().alias("answered"),
        )
        .select("questionId", "askedBy", "askedTo", "askedAt", "asked", "answers", "answeredBy", "answeredAt",
                "answerLatencyMs", "answered")
        .sort("askedAt", "questionId", nulls_last=True)
    )


def delegation_reports(payloads: pl.DataFrame) -> pl.DataFrame:
    """Delegations (``task_delegation``) linked to status reports by ``taskId``.

    One row per delegated task: ``taskId, delegatedBy, delegatedTo, delegatedAt``,
    ``delegations`` (times sent: more than one is a duplicate delegation, the taskId being
    the dedupe key), ``reports``, ``lastStatus``, ``lastProgress``, ``lastReportAt``,
    ``blockers`` (distinct, from all reports), ``duplicate``. Reports for a task that was
    never delegated in the log appear with ``delegatedAt`` null.
    """
    valid = payloads.filter(pl.col("payload_valid") & pl.col("payload_task_id").is_not_null())
    delegations = _per_link(
        valid, "task_delegation", "payload_task_id",
        pl.col("fromAgent").first().alias("delegatedBy"), pl.col("toAgent").first().alias("delegatedTo"),
        pl.col("event_ms").first().alias("delegatedAt"), pl.len().cast(pl.Int64).alias("delegations"),
    )
    reports = _per_link(
        valid, "status_report", "payload_task_id",
        pl.len().cast(pl.Int64).alias("reports"),
        pl.col("payload_status").last().alias("lastStatus"),
        pl.col("payload_progress_percent").drop_nulls().last().alias("lastProgress"),
        pl.col("event_ms").last().alias("lastReportAt"),
        pl.col("payload_blockers").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls()
        .unique(maintain_order=True).alias("blockers"),
    )
    return (
        delegations.join(reports, on="payload_task_id", how="full", coalesce=True)
        .rename({"payload_task_id": "taskId"})
        .with_columns(
            pl.col("delegations").fill_null(0),
            pl.col("reports").fill_null(0),
            (pl.col("delegations") > 1).alias("duplicate"),
        )
        .sort("delegatedAt", "taskId", nulls_last=True)
    )


def status_timeline(payloads: pl.DataFrame) -> pl.DataFrame:
    """Every valid status report in time order: ``taskId, at, time, reporter, status,
    progress, blockers`` — progress over time for a chart."""
    return (
        payloads.filter(pl.col("payload_valid") & (pl.col("payload_kind") == "status_report"))
        .sort("event_ms", "line")
        .select(
            pl.col("payload_task_id").alias("taskId"),
            pl.col("event_ms").alias("at"),
            pl.col("event_time").alias("time"),
            pl.col("fromAgent").alias("reporter"),
            pl.col("payload_status").alias("status"),
            pl.col("payload_progress_percent").alias("progress"),
            pl.col("payload_blockers").alias("blockers"),
        )
    )
