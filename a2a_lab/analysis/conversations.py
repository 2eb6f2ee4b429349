"""Conversation analytics: how each A2A exchange went (runtime §2-§3b, §8).

An *exchange* is one ``sessions_send``: an ``a2a.send``, the target's reply and the
ping-pong turns (``a2a.response``), retries (``a2a.retry``) and the closing ``a2a.complete``.
The reference reuses one ``conversationId`` for every exchange of a work session and agent
pair (runtime §6), so a conversation id can hold several exchanges: events are cut into
exchanges at each ``a2a.send`` (in time order, ties in file order); events before the first
send of their conversation form exchange 0 (orphans: a reply whose send is not in the log).

Everything here is vectorised Polars; the pure reference rules in :mod:`a2a_lab.reference.runtime`
(``classify_intent``, ``parse_outcome_text``) are the slow, obvious oracles the tests compare
these expressions against.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from a2a_lab._frames import ms_to_seconds, ms_to_time, narrow, same_kind
from a2a_lab.reference.jsstr import js_trim_expr
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, PAYLOAD_INTENTS, IntentRules
from a2a_lab.reference.runtime.outcome import LEGACY_NO_REPLY_TEXT, NO_REPLY_TEXT, REASON_TEXTS

__all__ = [
    "EXCHANGE_TYPES",
    "OUTCOMES",
    "conversations",
    "delegation_reports",
    "exchange_events",
    "intent_expr",
    "outcome_text_expr",
    "pair_stats",
    "payload_events",
    "question_answers",
    "status_timeline",
    "target_stats",
]

#: Event types that belong to an exchange.
EXCHANGE_TYPES: tuple[str, ...] = ("a2a.send", "a2a.response", "a2a.retry", "a2a.complete")
#: Outcomes of an exchange as an analyst reads them (runtime §3b).
OUTCOMES: tuple[str, ...] = ("replied", "no_reply", "concurrency_blocked", "incomplete")

_D = pl.col("data")


def _text(field: str) -> pl.Expr:
    """A string field of ``data``, JS-trimmed, blank → null (rules §1)."""
    v = js_trim_expr(_D.struct.field(field))
    return pl.when(v.str.len_bytes() > 0).then(v)


def _num(field: str) -> pl.Expr:
    return _D.struct.field(field)


# ---------------------------------------------------------------------------------------
# vectorised reference rules
# ---------------------------------------------------------------------------------------


def _ascii_case_insensitive(pattern: str) -> str:
    """Python regex → Rust regex with JavaScript's non-Unicode ``i`` flag.

    Each ASCII letter outside escapes and classes becomes ``[xX]`` (ASCII-only folding: the
    ``i`` flag without ``u`` never folds e.g. U+212A KELVIN SIGN onto ``k``, Rust's ``(?i)``
    would); ``\\Z`` (end of text) becomes Rust's ``\\z``.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1]
            out.append("\\z" if nxt == "Z" else ch + nxt)
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif not in_class and ch.isascii() and ch.isalpha():
            ch = f"[{ch.lower()}{ch.upper()}]"
        out.append(ch)
        i += 1
    return "".join(out)


@cache
def _intent_patterns(rules: IntentRules) -> tuple[tuple[str, str, int], ...]:
    return tuple(
        (_ascii_case_insensitive(r.pattern.pattern), r.result.intent, r.result.suggested_turns) for r in rules.rules
    )


def intent_expr(message: pl.Expr, rules: IntentRules = INTENT_RULES_V1) -> pl.Expr:
    """The reference intent classifier (runtime §3) as one Polars expression.

    Equal to :func:`a2a_lab.reference.runtime.intent.classify_intent` on every string (property-tested);
    null for a null message.

    Examples
    --------
    >>> df = pl.DataFrame({"m": ["이 코드 검토해줘", "Task done [NO_REPLY_NEEDED]", "Is it?", None]})
    >>> df.select(intent_expr(pl.col("m"))).to_series().to_list()
    ['request', 'notification', 'question', None]
    """
    expr = pl.when(message.is_null()).then(pl.lit(None, pl.String))
    for pattern, intent, _ in _intent_patterns(rules):
        expr = expr.when(message.str.contains(pattern)).then(pl.lit(intent))
    return expr.otherwise(pl.lit(rules.default.intent))


_NO_REPLY_SENTENCES = [t.removeprefix("[outcome] ") for t in (NO_REPLY_TEXT, LEGACY_NO_REPLY_TEXT)]


def outcome_text_expr(text: pl.Expr) -> pl.Expr:
    """Parse ``[outcome] …`` texts (runtime §3b) into a struct ``{kind, reason}``.

    The vectorised twin of :func:`a2a_lab.reference.runtime.outcome.parse_outcome_text` (property-
    tested against it): null when the JS-trimmed text does not start with ``[outcome]``;
    both no-reply wordings give kind ``no_reply`` with reason ``timeout``, ``not_found``,
    ``error``, the wait error text, or null.

    Examples
    --------
    >>> df = pl.DataFrame({"t": ["[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 300초 초과)", "hi"]})
    >>> df.select(outcome_text_expr(pl.col("t"))).to_series().to_list()
    [{'kind': 'no_reply', 'reason': 'timeout'}, {'kind': None, 'reason': None}]
    """
    t = js_trim_expr(text)
    m = t.str.extract_groups(r"(?s)^\[outcome\][ \t]*([^\s:]+)[ \t]*(?::[ \t]*(.*))?")
    kind = m.struct.field("1")
    rest = m.struct.field("2").fill_null("")
    hits = []
    for sentence in _NO_REPLY_SENTENCES:
        sk, body = sentence.split(": ", 1)
        hits.append(((kind == sk) & rest.str.starts_with(body), rest.str.slice(len(body))))
    is_no_reply = pl.any_horizontal([h for h, _ in hits]).fill_null(False)
    suffix = pl.when(hits[0][0]).then(hits[0][1])
    for hit, tail in hits[1:]:
        suffix = suffix.when(hit).then(tail)
    inner = js_trim_expr(js_trim_expr(suffix).str.extract(r"(?s)^\((.*?)\)?$", 1))
    reason_code = (
        pl.when(inner.str.contains(r"^대기 시간 \d+초 초과$")).then(pl.lit("timeout"))
    )
    for code, txt in REASON_TEXTS.items():
        reason_code = reason_code.when(inner == txt).then(pl.lit(code))
    reason_code = reason_code.otherwise(pl.when(inner.str.len_bytes() > 0).then(inner))
    other_reason = js_trim_expr(rest)
    reason = (
        pl.when(is_no_reply)
        .then(reason_code)
        .otherwise(pl.when(other_reason.str.len_bytes() > 0).then(other_reason))
    )
    return pl.struct(
        pl.when(is_no_reply).then(pl.lit("no_reply")).otherwise(kind).alias("kind"),
        pl.when(kind.is_not_null()).then(reason).alias("reason"),
    )


# ---------------------------------------------------------------------------------------
# exchanges
# ---------------------------------------------------------------------------------------


def _agents(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Resolved from/to agents (rules §3) unless the frame is already enriched."""
    cols = frame.collect_schema().names()
    if "from_agent" in cols and "to_agent" in cols:
        return frame
    agent = js_trim_expr(pl.col("agent_id"))
    return frame.with_columns(
        pl.coalesce(_text("fromAgent"), _text("senderAgentId"), pl.when(agent.str.len_bytes() > 0).then(agent)).alias(
            "from_agent"
        ),
        pl.coalesce(_text("toAgent"), _text("targetAgentId")).alias("to_agent"),
    )


#: The ``data`` fields :func:`exchange_events` keeps.
_EXCHANGE_FIELDS: tuple[str, ...] = (
    "conversationId", "parentConversationId", "workSessionId", "taskId", "turn", "maxTurns", "outcome",
    "message", "replyPreview", "waitStatus", "waitError", "configuredMaxTurns", "effectiveTurns", "actualTurns",
    "announced", "earlyTermination", "terminationReason", "concurrencyBlocked", "messageIntent", "payloadType",
    "payloadJson", "depth", "hop", "attempt", "errorCode", "errorCategory",
)


@same_kind()
def exchange_events(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """The events of A2A exchanges with their exchange key.

    Returns the ``a2a.send/response/retry/complete`` events that carry a conversation id,
    with ``conversation_id`` (JS-trimmed), the exchange's direction ``requester`` →
    ``target``, ``exchange`` (1-based: the number of sends of that conversation and
    direction so far; 0 before the first) and ``seq`` (frame order), sorted by
    conversation, direction, time and frame order. The direction is part of the key
    because a relay (A → B, then B → C as a sub-agent) reuses one conversation id for both
    hops, and a sub-agent may ask its parent a question (B → A) in the middle of A → B.
    """
    # carry only what the exchange analytics read: sorting and joining the full event
    # (63 data fields and the raw line) would move every column
    frame = _agents(events.lazy()).collect() if isinstance(events, pl.LazyFrame) or "from_agent" not in events.columns else events
    lf = narrow(
        frame, pl.col("type").is_in(EXCHANGE_TYPES), _EXCHANGE_FIELDS,
        ("file", "line", "type", "event_ms", "event_time", "from_agent", "to_agent"),
    ).lazy()
    conv = _text("conversationId")
    frm, to = pl.col("from_agent"), pl.col("to_agent")
    turn = _num("turn")
    a2a = lf.filter(pl.col("type").is_in(EXCHANGE_TYPES) & conv.is_not_null()).with_columns(
        conv.alias("conversation_id")
    )
    # Directions that have a send: an event is placed in the direction written if a send
    # went that way, else in the opposite one if a send went that way, else by its type.
    sent = (
        a2a.filter(pl.col("type") == "a2a.send")
        .select("conversation_id", frm.alias("_r"), to.alias("_t"))
        .unique()
    )
    keys = ["conversation_id", "_r", "_t"]
    flagged = (
        a2a.join(
            sent.with_columns(pl.lit(True).alias("_fwd")),
            left_on=["conversation_id", "from_agent", "to_agent"], right_on=keys, how="left", nulls_equal=True,
        )
        .join(
            sent.with_columns(pl.lit(True).alias("_rev")),
            left_on=["conversation_id", "to_agent", "from_agent"], right_on=keys, how="left", nulls_equal=True,
        )
    )
    # By its type an event is written requester → target (send, retry, complete, a
    # ping-pong turn t with t odd) or target → requester (the reply, an even turn); a send
    # in the other direction only (e.g. a gate refusal written by the requester) overrides.
    forward_by_type = (pl.col("type") != "a2a.response") | (turn.is_not_null() & (turn % 2 == 1))
    fwd, rev = pl.col("_fwd").is_not_null(), pl.col("_rev").is_not_null()
    reversed_ = (
        pl.when(pl.col("type") == "a2a.send").then(False)
        .when(forward_by_type).then(~fwd & rev)
        .otherwise(rev | ~fwd)
    )
    return (
        flagged.with_columns(
            pl.when(reversed_).then(to).otherwise(frm).alias("requester"),
            pl.when(reversed_).then(frm).otherwise(to).alias("target"),
        )
        .drop("_fwd", "_rev")
        .sort(["conversation_id", "requester", "target", "event_ms", "_seq"], nulls_last=True)
        .with_columns(
            (pl.col("type") == "a2a.send")
            .cum_sum()
            .over("conversation_id", "requester", "target")
            .alias("exchange")
        )
        .rename({"_seq": "seq"})
    )


@same_kind()
def conversations(events: pl.DataFrame | pl.LazyFrame, *, intent_rules: IntentRules = INTENT_RULES_V1) -> pl.DataFrame:
    """One row per exchange: who asked whom, how fast, how it ended.

    Parameters
    ----------
    events
        An event frame (loaded, or enriched: resolved ``from_agent``/``to_agent`` are reused).
    intent_rules
        The classifier used when an exchange logs no ``messageIntent`` and no payload.

    Returns
    -------
    pl.DataFrame
        Columns: ``conversation_id, exchange, from_agent`` (requester), ``to_agent`` (target),
        ``work_session_id, task_id, start_time`` (UTC; the send, else the first event),
        ``first_reply_s`` (send → first reply without an outcome, seconds), ``end_time``
        (``a2a.complete``), ``duration_s``, ``responses``, ``configured_max_turns,
        effective_turns, actual_turns`` (as logged), ``turns`` (integer: actual when logged,
        else the number of ping-pong turn responses), ``outcome`` (replied, no_reply,
        concurrency_blocked, incomplete — runtime §3b), ``outcome_reason``, ``retries``
        (``a2a.retry`` events), ``announced``, ``termination_reason``,
        ``early_termination``, ``intent`` (payload type, else logged ``messageIntent``, else
        the reference classifier on the sent message), ``intent_source``, ``payload_type``
        (the send's), ``depth``, ``parent_conversation_id``, ``has_send``, ``has_complete``,
        ``events`` and the file/line provenance of the first event (``file``, ``line``).
        Sorted by start time.

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
    return _conversations_of(exchange_events(events.lazy()), intent_rules)


def _conversations_of(
    ex: pl.LazyFrame, intent_rules: IntentRules = INTENT_RULES_V1, *, with_ms: bool = False
) -> pl.DataFrame:
    """:func:`conversations` from already computed :func:`exchange_events`.

    ``with_ms`` adds ``_start_ms``, ``_end_ms`` and ``_first_reply_ms``: the times as the
    log's float epoch ms, exact where a ``Datetime`` cuts fractions of a millisecond.
    """
    t = pl.col("type")
    is_send, is_resp, is_retry, is_complete = (t == x for x in EXCHANGE_TYPES)
    outcome_field = _text("outcome")
    text = pl.coalesce(_D.struct.field("message"), _D.struct.field("replyPreview"))
    # parse only the texts that can be outcome texts (a small minority)
    text_outcome = outcome_text_expr(pl.when(text.str.contains("[outcome]", literal=True)).then(text))
    ex = ex.with_columns(
        outcome_field.alias("_outcome"),
        text_outcome.struct.field("kind").alias("_text_kind"),
        text_outcome.struct.field("reason").alias("_text_reason"),
        _text("waitStatus").alias("_wait_status"),
        _text("waitError").alias("_wait_error"),
    )
    replied = is_resp & pl.col("_outcome").is_null() & pl.col("_text_kind").is_null()
    no_reply_resp = is_resp & (
        (pl.col("_outcome") == "no_reply")
        | (pl.col("_outcome") == "blocked")
        | (pl.col("_text_kind") == "no_reply")
    )
    field_reason = (
        pl.when(pl.col("_wait_error").is_not_null()).then(pl.col("_wait_error"))
        .when(pl.col("_wait_status").is_in(list(REASON_TEXTS))).then(pl.col("_wait_status"))
        .when(pl.col("_wait_status") == "timeout").then(pl.lit("timeout"))
    )
    # every "first/last value where <condition>" is a masked column aggregated with
    # first/last(ignore_nulls=True): Polars' fast group-by kernels, no per-group filter
    masked = {
        "_send_ms": (pl.col("event_ms"), is_send),
        "_reply_ms": (pl.col("event_ms"), replied),
        "end": (pl.col("event_ms"), is_complete),
        "configured_max_turns": (_num("configuredMaxTurns"), is_complete),
        "effective_turns": (_num("effectiveTurns"), is_complete),
        "actual_turns": (_num("actualTurns"), is_complete),
        "announced": (_num("announced"), is_complete),
        "early_termination": (_num("earlyTermination"), is_complete),
        "_complete_termination": (_text("terminationReason"), is_complete),
        "_any_termination": (_text("terminationReason"), pl.lit(True)),
        "_text_no_reply_reason": (pl.col("_text_reason"), no_reply_resp & (pl.col("_text_kind") == "no_reply")),
        "_field_no_reply_reason": (field_reason, no_reply_resp),
        "_complete_reason": (field_reason, is_complete),
        "_complete_intent": (_text("messageIntent"), is_complete),
        "_any_intent": (_text("messageIntent"), pl.lit(True)),
        "_send_message": (_D.struct.field("message"), is_send),
        "payload_type": (_text("payloadType"), is_send),
        "_payload_json": (_D.struct.field("payloadJson"), is_send),
        "depth": (_num("depth"), is_send),
        "parent_conversation_id": (_text("parentConversationId"), is_send),
        "work_session_id": (_text("workSessionId"), pl.lit(True)),
        "task_id": (_text("taskId"), pl.lit(True)),
    }
    last_of = {"end", "configured_max_turns", "effective_turns", "actual_turns", "announced", "early_termination",
               "_complete_termination", "_any_termination", "_complete_reason", "_complete_intent"}
    ex = ex.with_columns(
        *[pl.when(cond).then(value).alias("_m" + name) for name, (value, cond) in masked.items()],
        is_send.alias("_is_send"), is_resp.alias("_is_resp"), is_retry.alias("_is_retry"),
        is_complete.alias("_is_complete"), replied.alias("_replied_row"), no_reply_resp.alias("_no_reply_row"),
        (is_resp & _num("turn").is_not_null()).alias("_turn_row"),
        (is_complete & _num("concurrencyBlocked").fill_null(False)).alias("_conc_row"),
    )
    agg = ex.group_by("conversation_id", "requester", "target", "exchange").agg(
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
        pl.col("_is_send").any().alias("has_send"),
        pl.col("_is_complete").any().alias("has_complete"),
        pl.len().cast(pl.Int64).alias("events"),
        pl.col("file").first().alias("file"),
        pl.col("line").first().alias("line"),
    ).with_columns(
        pl.coalesce("_complete_termination", "_any_termination").alias("termination_reason"),
        pl.coalesce("_text_no_reply_reason", "_field_no_reply_reason").alias("_no_reply_text_reason"),
        pl.col("_field_no_reply_reason").alias("_no_reply_field_reason"),
        pl.coalesce("_complete_intent", "_any_intent").alias("_logged_intent"),
    )
    payload_kind = pl.col("_payload_json").str.extract(r'"type"\s*:\s*"([a-z_]+)"', 1)
    payload_intent = pl.coalesce(pl.col("payload_type"), payload_kind).replace_strict(
        dict(PAYLOAD_INTENTS), default=None, return_dtype=pl.String
    )
    classified = intent_expr(pl.col("_send_message"), intent_rules)
    start = pl.coalesce("_send_ms", "_first_ms")
    outcome = (
        pl.when(pl.col("_conc_blocked")).then(pl.lit("concurrency_blocked"))
        .when(pl.col("_no_reply")).then(pl.lit("no_reply"))
        .when(~pl.col("has_complete")).then(pl.lit("incomplete"))
        .when(pl.col("_replied")).then(pl.lit("replied"))
        .otherwise(pl.lit("incomplete"))
    )
    reason = (
        pl.when(pl.col("_conc_blocked")).then(pl.lit("concurrency_gate"))
        .when(pl.col("_no_reply")).then(
            pl.coalesce("_no_reply_field_reason", "_no_reply_text_reason", "_complete_reason", pl.lit("unknown"))
        )
        .when(~pl.col("has_complete")).then(
            pl.when(pl.col("has_send")).then(pl.lit("no_complete")).otherwise(pl.lit("no_send"))
        )
        .when(~pl.col("_replied")).then(pl.lit("no_response"))
    )
    out = agg.with_columns(
        pl.col("requester").alias("from_agent"),
        pl.col("target").alias("to_agent"),
        start.alias("start"),
        ms_to_seconds(pl.col("_reply_ms") - start).alias("first_reply_s"),
        ms_to_seconds((pl.col("end") - start).clip(lower_bound=0)).alias("duration_s"),
        # a logged count that is not a whole number stays null rather than being rounded
        pl.coalesce(
            pl.when(pl.col("actual_turns") == pl.col("actual_turns").floor()).then(pl.col("actual_turns")).cast(pl.Int64, strict=False),
            pl.col("_turn_responses"),
        ).alias("turns"),
        outcome.alias("outcome"),
        reason.alias("outcome_reason"),
        pl.coalesce(payload_intent, pl.col("_logged_intent"), classified).alias("intent"),
        pl.when(payload_intent.is_not_null()).then(pl.lit("payload"))
        .when(pl.col("_logged_intent").is_not_null()).then(pl.lit("logged"))
        .when(pl.col("_send_message").is_not_null()).then(pl.lit("classifier"))
        .alias("intent_source"),
    ).with_columns(
        ms_to_time(pl.col("start")).alias("start_time"),
        ms_to_time(pl.col("end")).alias("end_time"),
    )
    cols = [
        "conversation_id", "exchange", "from_agent", "to_agent", "work_session_id", "task_id", "start_time",
        "first_reply_s", "end_time", "duration_s", "responses", "configured_max_turns", "effective_turns", "actual_turns",
        "turns", "outcome", "outcome_reason", "retries", "announced", "termination_reason", "early_termination",
        "intent", "intent_source", "payload_type", "depth", "parent_conversation_id", "has_send", "has_complete",
        "events", "file", "line",
    ]
    if with_ms:
        out = out.with_columns(
            pl.col("start").alias("_start_ms"),
            pl.col("end").alias("_end_ms"),
            (pl.col("_reply_ms") - pl.col("start")).alias("_first_reply_ms"),
        )
        cols += ["_start_ms", "_end_ms", "_first_reply_ms"]
    return (
        out.sort(["start", "conversation_id", "from_agent", "to_agent", "exchange"], nulls_last=True)
        .select(cols)
        .collect()
    )


# ---------------------------------------------------------------------------------------
# per pair / per target
# ---------------------------------------------------------------------------------------


def _latency_aggs() -> list[pl.Expr]:
    lat = pl.col("first_reply_s")
    return [
        pl.len().cast(pl.Int64).alias("exchanges"),
        (pl.col("outcome") == "replied").sum().cast(pl.Int64).alias("replied"),
        (pl.col("outcome") == "no_reply").sum().cast(pl.Int64).alias("no_reply"),
        (pl.col("outcome") == "concurrency_blocked").sum().cast(pl.Int64).alias("concurrency_blocked"),
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

    lf = _agents(events.lazy())
    parsed = parse_payloads(lf)
    base = (
        lf.filter(_D.struct.field("payloadJson").is_not_null())
        .select(
            "file", "line", "type", "event_ms", "event_time", "from_agent", "to_agent",
            _text("conversationId").alias("conversation_id"),
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
        valid, "question", "payload_question_id",
        pl.col("from_agent").first().alias("asked_by"), pl.col("to_agent").first().alias("asked_to"),
        pl.col("event_time").first().alias("asked_time"), pl.col("event_ms").first().alias("_asked_ms"), pl.len().cast(pl.Int64).alias("asked"),
    )
    answers = _per_link(
        valid, "answer", "payload_question_id",
        pl.col("from_agent").first().alias("answered_by"), pl.col("event_time").first().alias("answered_time"),
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
        .select("question_id", "asked_by", "asked_to", "asked_time", "asked", "answers", "answered_by", "answered_time",
                "answer_latency_s", "answered")
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
        valid, "task_delegation", "payload_task_id",
        pl.col("from_agent").first().alias("delegated_by"), pl.col("to_agent").first().alias("delegated_to"),
        pl.col("event_time").first().alias("delegated_time"), pl.len().cast(pl.Int64).alias("delegations"),
    )
    reports = _per_link(
        valid, "status_report", "payload_task_id",
        pl.len().cast(pl.Int64).alias("reports"),
        pl.col("payload_status").last().alias("last_status"),
        pl.col("payload_progress_percent").drop_nulls().last().alias("last_progress"),
        pl.col("event_time").last().alias("last_report_time"),
        pl.col("payload_blockers").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls()
        .unique(maintain_order=True).alias("blockers"),
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
