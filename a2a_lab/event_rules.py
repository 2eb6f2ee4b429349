"""What the reference rules say about one event: its agents, its intent, its outcome.

The readers every analysis shares (issue 11 item 2), re-exported by :mod:`a2a_lab.exchanges`
(which matches events to their exchange):

- its agents (rules §3): :func:`from_agent_expr`, :func:`to_agent_expr`, :func:`with_agents`;
- the intent of a sent message (runtime §3): :func:`intent_expr`, :func:`suggested_turns_expr`,
  :func:`payload_intent_expr`;
- its outcome kind and reason (runtime §3b): :func:`outcome_text_expr` for ``[outcome] …``
  texts, :func:`wait_reason_expr` for the wait fields, :func:`with_response_outcome` for an
  ``a2a.response``.
"""

from __future__ import annotations

from functools import cache
from typing import Final

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

from a2a_lab._frames import data_text as _text
from a2a_lab.reference.jsstr import js_string_expr, js_trim_expr
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, PAYLOAD_INTENTS, IntentRules
from a2a_lab.reference.runtime.outcome import LEGACY_NO_REPLY_TEXT, NO_REPLY_TEXT, REASON_TEXTS

__all__ = [
    "FROM_AGENT",
    "TO_AGENT",
    "from_agent_expr",
    "intent_expr",
    "outcome_text_expr",
    "payload_intent_expr",
    "suggested_turns_expr",
    "to_agent_expr",
    "wait_reason_expr",
    "with_agents",
    "with_response_outcome",
]

#: Names of the resolved agent columns (the enriched frame's).
FROM_AGENT: Final = "from_agent"
TO_AGENT: Final = "to_agent"

_D = pl.col("data")


# ---------------------------------------------------------------------------------------
# agents (rules §3)
# ---------------------------------------------------------------------------------------


def from_agent_expr() -> pl.Expr:
    """The sending agent (rules §3): ``data.fromAgent``, else ``data.senderAgentId``, else the
    top-level ``agent_id``; each JS-trimmed, blank counting as absent.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([{"type": "a2a.send", "agentId": " ", "ts": 1, "data": {"toAgent": "eden"}},
    ...                    {"type": "a2a.send", "agentId": "ruda", "ts": 2, "data": {"senderAgentId": " "}}])
    >>> ev.select(from_agent_expr(), to_agent_expr()).rows()
    [(None, 'eden'), ('ruda', None)]
    """
    return pl.coalesce(
        _text("fromAgent"), _text("senderAgentId"), js_string_expr(pl.col("agent_id"))
    ).alias(FROM_AGENT)


def to_agent_expr() -> pl.Expr:
    """The receiving agent (rules §3): ``data.toAgent``, else ``data.targetAgentId``."""
    return pl.coalesce(_text("toAgent"), _text("targetAgentId")).alias(TO_AGENT)


def with_agents(events: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """The events with their resolved agents, unless the frame is enriched (has them)."""
    lf = events.lazy()
    if {FROM_AGENT, TO_AGENT} <= set(lf.collect_schema().names()):
        return lf
    return lf.with_columns(from_agent_expr(), to_agent_expr())


# ---------------------------------------------------------------------------------------
# intent (runtime §3)
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
        (_ascii_case_insensitive(r.pattern.pattern), r.result.intent, r.result.suggested_turns)
        for r in rules.rules
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
    expr: Then | ChainedThen = pl.when(message.is_null()).then(pl.lit(None, pl.String))
    for pattern, intent, _ in _intent_patterns(rules):
        expr = expr.when(message.str.contains(pattern)).then(pl.lit(intent))
    return expr.otherwise(pl.lit(rules.default.intent))


def suggested_turns_expr(intent: pl.Expr, rules: IntentRules = INTENT_RULES_V1) -> pl.Expr:
    """The turns an intent suggests (runtime §3: 0 none, -1 the configured maximum)."""
    turns = {i: t for _, i, t in _intent_patterns(rules)} | {
        rules.default.intent: rules.default.suggested_turns
    }
    return intent.replace_strict(turns, default=None, return_dtype=pl.Int64)


def payload_intent_expr(payload_type: pl.Expr, payload_json: pl.Expr) -> pl.Expr:
    """The intent a structured payload stands for (its ``payloadType``, else the JSON's
    ``type``), null without one."""
    kind = payload_json.str.extract(r'"type"\s*:\s*"([a-z_]+)"', 1)
    return pl.coalesce(payload_type, kind).replace_strict(
        dict(PAYLOAD_INTENTS), default=None, return_dtype=pl.String
    )


# ---------------------------------------------------------------------------------------
# outcome (runtime §3b)
# ---------------------------------------------------------------------------------------

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
    suffix: Then | ChainedThen = pl.when(hits[0][0]).then(hits[0][1])
    for hit, tail in hits[1:]:
        suffix = suffix.when(hit).then(tail)
    inner = js_trim_expr(js_trim_expr(suffix).str.extract(r"(?s)^\((.*?)\)?$", 1))
    reason_codes: Then | ChainedThen = pl.when(inner.str.contains(r"^대기 시간 \d+초 초과$")).then(
        pl.lit("timeout")
    )
    for code, txt in REASON_TEXTS.items():
        reason_codes = reason_codes.when(inner == txt).then(pl.lit(code))
    reason_code = reason_codes.otherwise(pl.when(inner.str.len_bytes() > 0).then(inner))
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


def wait_reason_expr() -> pl.Expr:
    """The no-reply reason the wait fields give (runtime §2.3, checked in order): the
    ``waitError`` text, ``not_found``, ``error``, ``timeout``; null otherwise."""
    status, error = _text("waitStatus"), _text("waitError")
    return (
        pl.when(error.is_not_null())
        .then(error)
        .when(status.is_in(list(REASON_TEXTS)))
        .then(status)
        .when(status == "timeout")
        .then(pl.lit("timeout"))
    )


def with_response_outcome(
    frame: pl.DataFrame | pl.LazyFrame, kind: str = "outcome_kind", reason: str = "outcome_reason"
) -> pl.LazyFrame:
    """Add what each ``a2a.response`` says about its exchange (runtime §3b) as two columns:

    ``kind``
        ``reply`` (no outcome), ``turn`` (a ping-pong turn), ``no_reply`` (``outcome``
        ``no_reply``, an older-wording ``blocked`` with wait fields, or a no-reply text),
        ``blocked`` (a refusal: ``blocked`` without wait fields; a concurrency-blocked
        complete makes it ``concurrency_blocked``, else it reads as a legacy no-reply), or
        another logged outcome's name; null for other event types.
    ``reason``
        For a no-reply the wait fields' reason (:func:`wait_reason_expr`), else the text's;
        for another outcome its text's.

    Examples
    --------
    >>> from a2a_lab.io import from_records
    >>> ev = from_records([{"type": "a2a.response", "ts": 1, "data": {"outcome": "no_reply", "waitStatus": "timeout"}},
    ...                    {"type": "a2a.response", "ts": 2, "data": {"outcome": "blocked"}},
    ...                    {"type": "a2a.response", "ts": 3, "data": {"turn": 1}}])
    >>> with_response_outcome(ev).select("outcome_kind", "outcome_reason").collect().rows()
    [('no_reply', 'timeout'), ('blocked', None), ('turn', None)]
    """
    text = pl.coalesce(_D.struct.field("message"), _D.struct.field("replyPreview"))
    is_resp = pl.col("type") == "a2a.response"
    # parse only the texts that can be outcome texts (a small minority); the stages keep
    # each expression evaluated once
    parsed = outcome_text_expr(
        pl.when(is_resp & text.str.contains("[outcome]", literal=True)).then(text)
    )
    lf = frame.lazy().with_columns(
        parsed.alias("_p"),
        pl.when(is_resp).then(_text("outcome")).alias("_f"),
        wait_reason_expr().alias("_w"),
        (_text("waitStatus").is_not_null() | _text("waitError").is_not_null()).alias("_hw"),
    )
    text_kind, text_reason = pl.col("_p").struct.field("kind"), pl.col("_p").struct.field("reason")
    said = pl.coalesce("_f", text_kind)
    no_reply = (
        (said == "no_reply") | (text_kind == "no_reply") | ((said == "blocked") & pl.col("_hw"))
    )
    lf = lf.with_columns(
        pl.when(~is_resp)
        .then(pl.lit(None, pl.String))
        .when(no_reply)
        .then(pl.lit("no_reply"))
        .when(said.is_not_null())
        .then(said)
        .when(_D.struct.field("turn").is_not_null())
        .then(pl.lit("turn"))
        .otherwise(pl.lit("reply"))
        .alias(kind)
    )
    return lf.with_columns(
        pl.when(pl.col(kind) == "no_reply")
        .then(pl.coalesce("_w", pl.when(text_kind == "no_reply").then(text_reason)))
        .when(~pl.col(kind).is_in(["reply", "turn"]))
        .then(text_reason)
        .alias(reason)
    ).drop("_p", "_f", "_w", "_hw")
