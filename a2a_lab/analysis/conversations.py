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

import tempfile
from pathlib import Path

import polars as pl

from a2a_lab._frames import data_text, ms_to_seconds, ms_to_time, same_kind
from a2a_lab.exchanges import (
    EXCHANGE_TYPES,
    exchange_events,
    intent_expr,
    outcome_text_expr,
    payload_intent_expr,
    wait_reason_expr,
    with_agents,
    with_response_outcome,
)
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules
from a2a_lab.time import Instant, in_window

__all__ = [
    "EXCHANGE_TYPES",
    "OUTCOMES",
    "conversations",
    "delegation_reports",
    "exchange_events",
    "exchange_summary",
    "exchanges_and_conversations",
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


def _num(field: str) -> pl.Expr:
    return _D.struct.field(field)


@same_kind()
def conversations(
    events: pl.DataFrame | pl.LazyFrame,
    *,
    intent_rules: IntentRules = INTENT_RULES_V1,
    since: Instant | None = None,
    until: Instant | None = None,
) -> pl.DataFrame:
    """One row per exchange: who asked whom, how fast, how it ended.

    Parameters
    ----------
    events
        An event frame (loaded, or enriched: resolved ``from_agent``/``to_agent`` are reused).
    intent_rules
        The classifier used when an exchange logs no ``messageIntent`` and no payload.
    since, until
        Optional time window, both inclusive, on ``event_ms`` (ISO string, datetime or
        epoch ms; naive = UTC): only the events inside it are read, as by
        :func:`a2a_lab.interaction_graph` and ``check``.

    Returns
    -------
    pl.DataFrame
        Columns: ``conversation_id, exchange, run_id`` (the send's), ``from_agent``
        (requester), ``to_agent`` (target), ``work_session_id, task_id, start_time`` (UTC;
        the send, else the first event), ``first_reply_s`` (send → first reply without an
        outcome, seconds), ``end_time`` (``a2a.complete``), ``duration_s``, ``responses``,
        ``configured_max_turns, effective_turns, actual_turns`` (as logged), ``turns``
        (integer: actual when logged, else the number of ping-pong turn responses),
        ``outcome`` (replied, no_reply, concurrency_blocked, incomplete — runtime §3b),
        ``outcome_reason``, ``retries`` (``a2a.retry`` events), ``announced``,
        ``termination_reason``, ``early_termination``, ``intent`` (payload type, else logged
        ``messageIntent``, else the reference classifier on the sent message),
        ``intent_source``, ``payload_type`` (the send's), ``depth``,
        ``parent_conversation_id``, ``has_send``, ``has_complete``, ``ambiguous`` (the log
        cannot tell this exchange's events from another's:
        :func:`a2a_lab.exchanges.exchange_events`), ``events`` and the file/line provenance
        of the first event (``file``, ``line``). Sorted by start time.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([
    ...   {"type": "a2a.send", "ts": 1000, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b", "message": "배포 해줘"}},
    ...   {"type": "a2a.response", "ts": 4000, "data": {"conversationId": "c", "fromAgent": "b", "toAgent": "a", "replyPreview": "ok"}},
    ...   {"type": "a2a.complete", "ts": 5000, "data": {"conversationId": "c", "fromAgent": "a", "toAgent": "b", "announced": True}},
    ... ])
    >>> conversations(ev).select("from_agent", "to_agent", "first_reply_s", "outcome", "intent").row(0)
    ('a', 'b', 3.0, 'replied', 'request')
    """
    lazy = in_window(events.lazy(), since, until)
    parts = _part_count(lazy) if isinstance(events, pl.LazyFrame) else 1
    if parts == 1:
        return _conversations_of(exchange_events(lazy, outcome=_OUTCOME), intent_rules)
    # exchanges never span conversation ids (every match is keyed by one), so a lazy source
    # is matched part by part, each part a hash class of conversation ids: the peak is one
    # part's (issue 12); ``seq`` is renumbered within a part, which keeps its order
    return _sorted_by_start(_conversations_by_part(lazy, parts, intent_rules))


def exchanges_and_conversations(
    frame: pl.DataFrame, intent_rules: IntentRules = INTENT_RULES_V1
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`a2a_lab.exchange_events` and :func:`conversations` of ``frame`` from one matching.

    ``frame`` holds whole conversations (every event of each conversation id it has), in
    the load's order. The rows carry ``_start_ms``, ``_end_ms`` and ``_first_reply_ms``
    (the exact times, which order them as :func:`conversations` does). A history store (``a2a_lab.materialize``) keeps both the
    conversations and the A2A sequence findings of ``check``, which read the same matching.
    """
    # (the matcher's searches are iterative: a dense frame needs no room to recurse)
    ex = exchange_events(frame.lazy(), intent_rules=intent_rules).collect()
    return ex, _conversations_of(ex.lazy(), intent_rules, with_ms=True)


def _conversations_by_part(
    lazy: pl.LazyFrame, parts: int, intent_rules: IntentRules
) -> list[pl.DataFrame]:
    """:func:`_conversations_of` of each hash class of conversation ids, with the ms columns.

    The source is read once, :data:`SPLIT_ROWS` rows at a time: each slice's exchange events
    go to one temporary Parquet file per class, and each class is then matched from its
    files, in source order. (Filtering the source once per class would read it ``parts``
    times, which grows as the square of the log; Polars' partitioned sink held several GB
    of an 8.8 M-event store in memory.)
    """
    conv = data_text("conversationId")
    rows = int(lazy.select(pl.len()).collect().item())
    with tempfile.TemporaryDirectory(prefix="a2a_lab_conversations_") as tmp:
        files: list[list[Path]] = [[] for _ in range(parts)]
        for n, offset in enumerate(range(0, rows, SPLIT_ROWS)):
            chunk = (
                lazy.slice(offset, SPLIT_ROWS)
                .filter(pl.col("type").is_in(EXCHANGE_TYPES) & conv.is_not_null())
                .drop("raw", strict=False)
                .with_columns((conv.hash(seed=0) % parts).alias("_part"))
                .collect()
            )
            for (i,), frame in chunk.partition_by("_part", as_dict=True, include_key=False).items():
                path = Path(tmp) / f"{i}-{n:06d}.parquet"
                frame.write_parquet(path)
                files[int(i)].append(path)
            del chunk
        return [
            _conversations_of(exchange_events(pl.scan_parquet(paths)), intent_rules, with_ms=True)
            for paths in files
            if paths
        ]


def _sorted_by_start(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The parts' rows in one frame sorted as :func:`_conversations_of` sorts one part.

    Built a column at a time (each gathered in the sorted order, then the unsorted column
    dropped): ``DataFrame.sort`` would hold the whole result twice, and the result is
    about one row per four events. ``frames`` is emptied: pass the only reference.
    """
    order = ["_start_ms", "conversation_id", "from_agent", "to_agent", "exchange"]
    out = pl.concat(frames, rechunk=False)
    frames.clear()
    index = out.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).sort_by(order, nulls_last=True, maintain_order=True)
    ).to_series()
    out = out.drop("_start_ms", "_end_ms", "_first_reply_ms")
    names = out.columns
    return pl.DataFrame([out.drop_in_place(name).gather(index) for name in names])


#: Exchange events per part when :func:`conversations` matches a LazyFrame part by part.
PART_EVENTS = 250_000
#: Source rows :func:`conversations` reads at a time to split a LazyFrame into its parts.
SPLIT_ROWS = 400_000


def _part_count(lazy: pl.LazyFrame) -> int:
    """How many parts a lazy source is matched in: about :data:`PART_EVENTS` events each."""
    n = lazy.filter(pl.col("type").is_in(EXCHANGE_TYPES)).select(pl.len()).collect().item()
    return max(1, -(-int(n) // PART_EVENTS))


def conversation_rows(
    ex: pl.LazyFrame, intent_rules: IntentRules = INTENT_RULES_V1, *, with_ms: bool = False
) -> pl.DataFrame:
    """:func:`conversations` from already computed :func:`exchange_events` (the OpenTelemetry
    export matches once and reads both).

    ``with_ms`` adds ``_start_ms``, ``_end_ms`` and ``_first_reply_ms``: the times as the
    log's float epoch ms, exact where a ``Datetime`` cuts fractions of a millisecond.
    """
    out = _row_columns(_per_exchange(ex), intent_rules)
    cols = list(_CONVERSATION_COLUMNS)
    if with_ms:
        out = out.with_columns(
            pl.col("start").alias("_start_ms"),
            pl.col("end").alias("_end_ms"),
            (pl.col("_reply_ms") - pl.col("start")).alias("_first_reply_ms"),
        )
        cols += ["_start_ms", "_end_ms", "_first_reply_ms"]
    return (
        out.sort(
            ["start", "conversation_id", "from_agent", "to_agent", "exchange"], nulls_last=True
        )
        .select(cols)
        .collect()
    )


#: The analysis modules' name for :func:`conversation_rows`.
_conversations_of = conversation_rows

#: The columns of :func:`conversations`, in order.
_CONVERSATION_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "exchange",
    "run_id",
    "from_agent",
    "to_agent",
    "work_session_id",
    "task_id",
    "start_time",
    "first_reply_s",
    "end_time",
    "duration_s",
    "responses",
    "configured_max_turns",
    "effective_turns",
    "actual_turns",
    "turns",
    "outcome",
    "outcome_reason",
    "retries",
    "announced",
    "termination_reason",
    "early_termination",
    "intent",
    "intent_source",
    "payload_type",
    "depth",
    "parent_conversation_id",
    "has_send",
    "has_complete",
    "ambiguous",
    "events",
    "file",
    "line",
)

#: The masked columns of :func:`_per_exchange` aggregated with their last value (the others
#: with their first).
_LAST_OF: frozenset[str] = frozenset(
    {
        "end",
        "configured_max_turns",
        "effective_turns",
        "actual_turns",
        "announced",
        "earlyTermination",
        "_complete_termination",
        "_any_termination",
        "_complete_reason",
        "_complete_intent",
    }
)


def _masked(is_send: pl.Expr, is_complete: pl.Expr) -> dict[str, tuple[pl.Expr, pl.Expr]]:
    """Per column of :func:`_per_exchange`: (value, the rows it is read from)."""
    replied = pl.col("_kind").is_in(["reply", "turn"])
    no_reply_resp = pl.col("_kind").is_in(["no_reply", "blocked"])
    return {
        "_send_ms": (pl.col("event_ms"), is_send),
        "_reply_ms": (pl.col("event_ms"), replied),
        "end": (pl.col("event_ms"), is_complete),
        "configured_max_turns": (_num("configuredMaxTurns"), is_complete),
        "effective_turns": (_num("effectiveTurns"), is_complete),
        "actual_turns": (_num("actualTurns"), is_complete),
        "announced": (_num("announced"), is_complete),
        "early_termination": (_num("earlyTermination"), is_complete),
        "_complete_termination": (data_text("terminationReason"), is_complete),
        "_any_termination": (data_text("terminationReason"), pl.lit(True)),
        "_no_reply_reason": (pl.col("_said_reason"), no_reply_resp),
        "_complete_reason": (wait_reason_expr(), is_complete),
        "_complete_intent": (data_text("messageIntent"), is_complete),
        "_any_intent": (data_text("messageIntent"), pl.lit(True)),
        "_send_message": (_D.struct.field("message"), is_send),
        "payload_type": (data_text("payloadType"), is_send),
        "run_id": (data_text("runId"), is_send),
        "_payload_json": (_D.struct.field("payloadJson"), is_send),
        "depth": (_num("depth"), is_send),
        "parent_conversation_id": (data_text("parentConversationId"), is_send),
        "work_session_id": (data_text("workSessionId"), pl.lit(True)),
        "task_id": (data_text("taskId"), pl.lit(True)),
    }


#: The outcome columns :func:`_per_exchange` reads (:func:`a2a_lab.exchanges.with_response_outcome`;
#: ``exchange_events(..., outcome=_OUTCOME)`` keeps the matching's).
_OUTCOME: tuple[str, str] = ("_kind", "_said_reason")


def _per_exchange(ex: pl.LazyFrame) -> pl.LazyFrame:
    """One row per exchange of the matched events ``ex``: the fields the rows read.

    Every "first/last value where <condition>" is a masked column aggregated with
    first/last(ignore_nulls=True): Polars' fast group-by kernels, no per-group filter.
    """
    t = pl.col("type")
    is_send, is_resp, is_retry, is_complete = (t == x for x in EXCHANGE_TYPES)
    if not set(_OUTCOME) <= set(ex.collect_schema().names()):
        ex = with_response_outcome(ex, *_OUTCOME)
    kind = pl.col("_kind")
    masked = _masked(is_send, is_complete)
    ex = ex.with_columns(
        *[pl.when(cond).then(value).alias("_m" + name) for name, (value, cond) in masked.items()],
        is_send.alias("_is_send"),
        is_resp.alias("_is_resp"),
        is_retry.alias("_is_retry"),
        is_complete.alias("_is_complete"),
        kind.is_in(["reply", "turn"]).alias("_replied_row"),
        kind.is_in(["no_reply", "blocked"]).alias("_no_reply_row"),
        (is_resp & _num("turn").is_not_null()).alias("_turn_row"),
        (is_complete & _num("concurrencyBlocked").fill_null(False)).alias("_conc_row"),
    )
    return (
        ex.group_by("conversation_id", "requester", "target", "exchange")
        .agg(
            *[
                (
                    pl.col("_m" + name).last(ignore_nulls=True)
                    if name in _LAST_OF
                    else pl.col("_m" + name).first(ignore_nulls=True)
                ).alias(name)
                for name in masked
            ],
            pl.col("event_ms").first().alias("_first_ms"),
            pl.col("_is_resp").sum().cast(pl.Int64).alias("responses"),
            pl.col("_turn_row").sum().cast(pl.Int64).alias("_turn_responses"),
            pl.col("_is_retry").sum().cast(pl.Int64).alias("retries"),
            pl.col("_conc_row").any().alias("_conc_blocked"),
            pl.col("_no_reply_row").any().alias("_no_reply"),
            pl.col("_replied_row").any().alias("_replied"),
            pl.col("_is_send").any().alias("has_send"),
            pl.col("_is_complete").any().alias("has_complete"),
            pl.len().cast(pl.Int64).alias("events"),
            pl.col("ambiguous").any().alias("ambiguous"),
            pl.col("file").first().alias("file"),
            pl.col("line").first().alias("line"),
        )
        .with_columns(
            pl.coalesce("_complete_termination", "_any_termination").alias("termination_reason"),
            pl.coalesce("_complete_intent", "_any_intent").alias("_logged_intent"),
        )
    )


def _outcome_exprs() -> tuple[pl.Expr, pl.Expr]:
    """The exchange's outcome and its reason (runtime §3b) from :func:`_per_exchange`."""
    outcome = (
        pl.when(pl.col("_conc_blocked"))
        .then(pl.lit("concurrency_blocked"))
        .when(pl.col("_no_reply"))
        .then(pl.lit("no_reply"))
        .when(~pl.col("has_complete"))
        .then(pl.lit("incomplete"))
        .when(pl.col("_replied"))
        .then(pl.lit("replied"))
        .otherwise(pl.lit("incomplete"))
    )
    reason = (
        pl.when(pl.col("_conc_blocked"))
        .then(pl.lit("concurrency_gate"))
        .when(pl.col("_no_reply"))
        .then(pl.coalesce("_no_reply_reason", "_complete_reason", pl.lit("unknown")))
        .when(~pl.col("has_complete"))
        .then(pl.when(pl.col("has_send")).then(pl.lit("no_complete")).otherwise(pl.lit("no_send")))
        .when(~pl.col("_replied"))
        .then(pl.lit("no_response"))
    )
    return outcome, reason


def _row_columns(agg: pl.LazyFrame, intent_rules: IntentRules) -> pl.LazyFrame:
    """The columns of :func:`conversations` computed from :func:`_per_exchange`."""
    payload_intent = payload_intent_expr(pl.col("payload_type"), pl.col("_payload_json"))
    classified = intent_expr(pl.col("_send_message"), intent_rules)
    start = pl.coalesce("_send_ms", "_first_ms")
    outcome, reason = _outcome_exprs()
    out = agg.with_columns(
        pl.col("requester").alias("from_agent"),
        pl.col("target").alias("to_agent"),
        start.alias("start"),
        ms_to_seconds(pl.col("_reply_ms") - start).alias("first_reply_s"),
        ms_to_seconds((pl.col("end") - start).clip(lower_bound=0)).alias("duration_s"),
        # a logged count that is not a whole number stays null rather than being rounded
        pl.coalesce(
            pl.when(pl.col("actual_turns") == pl.col("actual_turns").floor())
            .then(pl.col("actual_turns"))
            .cast(pl.Int64, strict=False),
            pl.col("_turn_responses"),
        ).alias("turns"),
        outcome.alias("outcome"),
        reason.alias("outcome_reason"),
        pl.coalesce(payload_intent, pl.col("_logged_intent"), classified).alias("intent"),
        pl.when(payload_intent.is_not_null())
        .then(pl.lit("payload"))
        .when(pl.col("_logged_intent").is_not_null())
        .then(pl.lit("logged"))
        .when(pl.col("_send_message").is_not_null())
        .then(pl.lit("classifier"))
        .alias("intent_source"),
    ).with_columns(
        ms_to_time(pl.col("start")).alias("start_time"),
        ms_to_time(pl.col("end")).alias("end_time"),
    )
    return out


# ---------------------------------------------------------------------------------------
# per pair / per target
# ---------------------------------------------------------------------------------------


def _latency_aggs() -> list[pl.Expr]:
    lat = pl.col("first_reply_s")
    return [
        pl.len().cast(pl.Int64).alias("exchanges"),
        (pl.col("outcome") == "replied").sum().cast(pl.Int64).alias("replied"),
        (pl.col("outcome") == "no_reply").sum().cast(pl.Int64).alias("no_reply"),
        (pl.col("outcome") == "concurrency_blocked")
        .sum()
        .cast(pl.Int64)
        .alias("concurrency_blocked"),
        (pl.col("outcome") == "incomplete").sum().cast(pl.Int64).alias("incomplete"),
        lat.quantile(0.5, "linear").alias("p50_first_reply_s"),
        lat.quantile(0.95, "linear").alias("p95_first_reply_s"),
        lat.quantile(0.99, "linear").alias("p99_first_reply_s"),
        lat.mean().alias("mean_first_reply_s"),
        pl.col("turns").mean().alias("mean_turns"),
        pl.col("retries").sum().cast(pl.Int64).alias("retries"),
    ]


def _rates(lf: pl.DataFrame) -> pl.DataFrame:
    finished = pl.col("replied") + pl.col("no_reply")
    return lf.with_columns(
        (pl.col("no_reply") / pl.when(finished > 0).then(finished)).alias("no_reply_rate"),
        (pl.col("concurrency_blocked") / pl.col("exchanges")).alias("blocked_rate"),
    )


@same_kind()
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
    """Per directed pair (requester → target): counts, first-reply latency p50/p95/p99 (s),
    no-reply rate (among exchanges that finished with or without a reply), mean turns.

    With ``by_hour=True`` also per UTC hour of day of the exchange start.
    """
    keys = ["from_agent", "to_agent"] + (["hour"] if by_hour else [])
    frame = conv.with_columns(pl.col("start_time").dt.hour().alias("hour")) if by_hour else conv
    return _rates(frame.group_by(keys).agg(_latency_aggs())).sort(
        ["exchanges", *keys], descending=[True] + [False] * len(keys), nulls_last=True
    )


def target_stats(conv: pl.DataFrame, *, by_hour: bool = False) -> pl.DataFrame:
    """Per target agent: the same figures as :func:`pair_stats` over all its requesters."""
    keys = ["to_agent"] + (["hour"] if by_hour else [])
    frame = conv.with_columns(pl.col("start_time").dt.hour().alias("hour")) if by_hour else conv
    return _rates(frame.group_by(keys).agg(_latency_aggs())).sort(
        ["exchanges", *keys], descending=[True] + [False] * len(keys), nulls_last=True
    )


# ---------------------------------------------------------------------------------------
# structured payloads (runtime §8)
# ---------------------------------------------------------------------------------------


@same_kind()
def payload_events(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Every event that carries a ``payloadJson``, with its parse result and errors.

    Columns: ``file, line, type, event_ms, event_time, from_agent, to_agent, conversation_id``
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
            "file",
            "line",
            "type",
            "event_ms",
            "event_time",
            "from_agent",
            "to_agent",
            data_text("conversationId").alias("conversation_id"),
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

    One row per question (its first asking): ``question_id, asked_by, asked_to,
    asked_time``, ``asked`` (times asked), ``answers``, ``answered_by``, ``answered_time``
    (first answer), ``answer_latency_s``, ``answered``; answers whose question is not in the
    log are rows with ``asked_time`` null.
    """
    valid = payloads.filter(pl.col("payload_valid") & pl.col("payload_question_id").is_not_null())
    questions = _per_link(
        valid,
        "question",
        "payload_question_id",
        pl.col("from_agent").first().alias("asked_by"),
        pl.col("to_agent").first().alias("asked_to"),
        pl.col("event_time").first().alias("asked_time"),
        pl.col("event_ms").first().alias("_asked_ms"),
        pl.len().cast(pl.Int64).alias("asked"),
    )
    answers = _per_link(
        valid,
        "answer",
        "payload_question_id",
        pl.col("from_agent").first().alias("answered_by"),
        pl.col("event_time").first().alias("answered_time"),
        pl.col("event_ms").first().alias("_answered_ms"),
        pl.len().cast(pl.Int64).alias("answers"),
    )
    return (
        questions.join(answers, on="payload_question_id", how="full", coalesce=True)
        .rename({"payload_question_id": "question_id"})
        .with_columns(
            pl.col("answers").fill_null(0),
            ms_to_seconds(pl.col("_answered_ms") - pl.col("_asked_ms")).alias("answer_latency_s"),
            pl.col("answered_time").is_not_null().alias("answered"),
        )
        .select(
            "question_id",
            "asked_by",
            "asked_to",
            "asked_time",
            "asked",
            "answers",
            "answered_by",
            "answered_time",
            "answer_latency_s",
            "answered",
        )
        .sort("asked_time", "question_id", nulls_last=True)
    )


def delegation_reports(payloads: pl.DataFrame) -> pl.DataFrame:
    """Delegations (``task_delegation``) linked to status reports by ``taskId``.

    One row per delegated task: ``task_id, delegated_by, delegated_to, delegated_time``,
    ``delegations`` (times sent: more than one is a duplicate delegation, the taskId being
    the dedupe key), ``reports``, ``last_status``, ``last_progress``, ``last_report_time``,
    ``blockers`` (distinct, from all reports), ``duplicate``. Reports for a task that was
    never delegated in the log appear with ``delegated_time`` null.
    """
    valid = payloads.filter(pl.col("payload_valid") & pl.col("payload_task_id").is_not_null())
    delegations = _per_link(
        valid,
        "task_delegation",
        "payload_task_id",
        pl.col("from_agent").first().alias("delegated_by"),
        pl.col("to_agent").first().alias("delegated_to"),
        pl.col("event_time").first().alias("delegated_time"),
        pl.len().cast(pl.Int64).alias("delegations"),
    )
    reports = _per_link(
        valid,
        "status_report",
        "payload_task_id",
        pl.len().cast(pl.Int64).alias("reports"),
        pl.col("payload_status").last().alias("last_status"),
        pl.col("payload_progress_percent").drop_nulls().last().alias("last_progress"),
        pl.col("event_time").last().alias("last_report_time"),
        pl.col("payload_blockers")
        .list.explode(keep_nulls=False, empty_as_null=False)
        .drop_nulls()
        .unique(maintain_order=True)
        .alias("blockers"),
    )
    return (
        delegations.join(reports, on="payload_task_id", how="full", coalesce=True)
        .rename({"payload_task_id": "task_id"})
        .with_columns(
            pl.col("delegations").fill_null(0),
            pl.col("reports").fill_null(0),
            (pl.col("delegations") > 1).alias("duplicate"),
        )
        .sort("delegated_time", "task_id", nulls_last=True)
    )


def status_timeline(payloads: pl.DataFrame) -> pl.DataFrame:
    """Every valid status report in time order: ``task_id, report_time, reporter, status,
    progress, blockers`` — progress over time for a chart."""
    return (
        payloads.filter(pl.col("payload_valid") & (pl.col("payload_kind") == "status_report"))
        .sort("event_ms", "line")
        .select(
            pl.col("payload_task_id").alias("task_id"),
            pl.col("event_time").alias("report_time"),
            pl.col("from_agent").alias("reporter"),
            pl.col("payload_status").alias("status"),
            pl.col("payload_progress_percent").alias("progress"),
            pl.col("payload_blockers").alias("blockers"),
        )
    )
