"""A2A exchanges as OpenTelemetry GenAI agent spans, built as Polars frames.

One exchange (a row of :func:`a2a_lab.conversations`) is one trace:

- the requester's ``invoke_agent {target}`` CLIENT span over the whole exchange (the root);
- the target's run (``invoke_agent {target}``, SERVER): from the send plus the inferred queue
  wait to the first outcome response (the reply, a no-reply or a refusal);
- each ping-pong turn (``invoke_agent {speaker}``, INTERNAL): from the previous step to the
  turn's response;
- the announce step (``announce {target}``, INTERNAL): from the last step to ``a2a.complete``.

Every event of the exchange is a span event (its exact time, its ``data`` fields as
``a2a.data.*`` attributes, its ``a2a_lab.log.file``/``a2a_lab.log.line``) on the span it
opens or ends; retries and any further responses or completes are events of the root span.
So every span points back to its log lines and :func:`a2a_lab.otel.load_otlp` can rebuild
the events exactly. A work session is a LINK between traces: the root of every exchange
links to the root of the first exchange of its work session.

Ids are derived from the log, so exporting the same log again gives the same ids (an
idempotent re-export): the trace id is the 128-bit BLAKE2b digest of the exchange key
(conversation id, requester, target, exchange number), a span id the 64-bit BLAKE2b digest
of the key and the span's role and position. ``hashlib`` does the hashing: Polars' own hash
is not stable across Polars versions.
"""

from __future__ import annotations

import hashlib
from typing import Final

import polars as pl

from a2a_lab.analysis.conversations import conversation_rows
from a2a_lab.exchanges import exchange_events, with_response_outcome
from a2a_lab.reference.runtime.intent import INTENT_RULES_V1, IntentRules

__all__ = [
    "GROUP",
    "KIND_CLIENT",
    "KIND_INTERNAL",
    "KIND_SERVER",
    "STATUS_ERROR",
    "exchange_ids",
    "span_events",
    "span_rows",
]

#: OTLP ``Span.SpanKind`` values used here.
KIND_INTERNAL: Final = 1
KIND_SERVER: Final = 2
KIND_CLIENT: Final = 3
#: OTLP ``Status.StatusCode.STATUS_CODE_ERROR``.
STATUS_ERROR: Final = 2
#: The columns that name one exchange.
GROUP: Final = ["conversation_id", "requester", "target", "exchange"]
#: Outcomes exported as an error status.
ERROR_OUTCOMES: Final = ("no_reply", "concurrency_blocked")

_NULL_KEY: Final = "\x00"


def _key_expr() -> pl.Expr:
    """The exchange key as one string (null parts kept apart from empty ones)."""
    return pl.concat_str(
        [pl.col(c).cast(pl.String).fill_null(_NULL_KEY) for c in GROUP], separator="\x1f"
    )


def _digest(values: pl.Series, size: int) -> pl.Series:
    """Hex BLAKE2b digests of ``size`` bytes; an all-zero id (invalid in OTLP) becomes 1."""
    zero = "0" * (2 * size)
    out = []
    for v in values.to_list():
        h = hashlib.blake2b(v.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()
        out.append(h if h != zero else zero[:-1] + "1")
    return pl.Series(values.name, out, dtype=pl.String)


def exchange_ids(keys: pl.Series) -> tuple[pl.Series, pl.Series]:
    """Trace id (32 hex) and root span id (16 hex) of each exchange key."""
    return _digest(keys, 16), _digest(keys + "#root", 8)


def span_events(
    events: pl.DataFrame | pl.LazyFrame, *, intent_rules: IntentRules = INTENT_RULES_V1
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The exchange events with their span role, and the exchanges (conversations rows).

    Returns
    -------
    (pl.DataFrame, pl.DataFrame)
        The events of :func:`a2a_lab.exchange_events` plus ``_kind`` (what a response says),
        ``_key``, ``_ord`` (position in its exchange), ``role`` (``root`` for the send,
        ``run`` for the first outcome response, ``turn``, ``announce`` for the last
        complete, ``event`` for the rest: events of the root span), ``span_id``,
        ``_step_ms`` (the previous run/turn end in the exchange); and the
        :func:`a2a_lab.conversations` rows with ``_key``, ``trace_id``, ``root_span_id``,
        ``_send_ms``, ``_first_ms``, ``_last_ms``, ``_run_end_ms``, ``queue_wait_ms``,
        ``_batch_ord``. Both sorted by exchange key.
    """
    x = exchange_events(events, intent_rules=intent_rules)
    return span_events_of(x.lazy() if isinstance(x, pl.DataFrame) else x, intent_rules)


def span_events_of(
    lazy: pl.LazyFrame, intent_rules: IntentRules = INTENT_RULES_V1
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`span_events` of already matched :func:`a2a_lab.exchange_events` (``lazy``):
    a set of whole conversations gives the rows the whole log gives them."""
    conv = conversation_rows(lazy, intent_rules, with_ms=True)
    t = pl.col("type")
    ev = (
        with_response_outcome(lazy, "_kind", "_said")
        .drop("_said")
        .with_columns(_key_expr().alias("_key"))
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over(GROUP).alias("_ord"))
        .collect()
    )
    is_send = t == "a2a.send"
    is_turn = (t == "a2a.response") & (pl.col("_kind") == "turn")
    is_outcome = (t == "a2a.response") & (pl.col("_kind") != "turn")
    is_complete = t == "a2a.complete"
    role = (
        pl.when(is_send & (is_send.cum_sum().over(GROUP) == 1))
        .then(pl.lit("root"))
        .when(is_outcome & (is_outcome.cum_sum().over(GROUP) == 1))
        .then(pl.lit("run"))
        .when(is_turn)
        .then(pl.lit("turn"))
        .when(is_complete & (is_complete.cum_sum().over(GROUP) == is_complete.sum().over(GROUP)))
        .then(pl.lit("announce"))
        .otherwise(pl.lit("event"))
    )
    ev = ev.with_columns(role.alias("role"))
    step = pl.col("role").is_in(["run", "turn"])
    ev = ev.with_columns(
        # the end of the previous run or turn of the exchange: where a turn or the announce
        # step starts
        pl.when(step)
        .then(pl.col("event_ms"))
        .shift(1)
        .over(GROUP)
        .forward_fill()
        .over(GROUP)
        .alias("_step_ms")
    )
    # span ids: the root's for the root and its plain events, one per run/turn/announce
    own = pl.col("role").is_in(["run", "turn", "announce"])
    span_key = pl.when(own).then(
        pl.concat_str([pl.col("_key"), pl.lit("#"), pl.col("role"), pl.lit("#"), pl.col("_ord")])
    )
    # hash only the rows that own a span (the rest take the root's id)
    own_rows = ev.select(pl.arg_where(own)).to_series()
    own_ids = pl.Series("_own", [None] * ev.height, dtype=pl.String).scatter(
        own_rows, _digest(ev.select(span_key).to_series().gather(own_rows), 8)
    )
    per_exchange = ev.group_by(GROUP, maintain_order=True).agg(
        pl.col("_key").first(),
        pl.col("event_ms").filter(pl.col("role") == "root").first().alias("_send_ms"),
        pl.col("event_ms").min().alias("_first_ms"),
        pl.col("event_ms").max().alias("_last_ms"),
        pl.col("event_ms").filter(pl.col("role") == "run").first().alias("_run_end_ms"),
        pl.col("_kind").filter(pl.col("role") == "run").first().alias("_run_kind"),
    )
    trace, root = exchange_ids(per_exchange["_key"])
    per_exchange = per_exchange.with_columns(trace.alias("trace_id"), root.alias("root_span_id"))
    ev = ev.with_columns(pl.when(own).then(own_ids).alias("_own_id")).join(
        per_exchange.select([*GROUP, "trace_id", "root_span_id"]),
        on=GROUP,
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )
    ev = ev.with_columns(pl.coalesce("_own_id", "root_span_id").alias("span_id")).drop("_own_id")
    conv = conv.join(
        per_exchange,
        left_on=["conversation_id", "from_agent", "to_agent", "exchange"],
        right_on=GROUP,
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )
    return ev, _with_queue_wait(conv).sort("_key")


def _with_queue_wait(conv: pl.DataFrame) -> pl.DataFrame:
    """``queue_wait_ms``: how long the send waited before the target's run could start.

    Exchanges of one conversation id and target queue one at a time, first come first
    served, on the target's conversation lane ``agent:<target>:a2a:<conversationId>``
    (runtime §1): a send waits until every earlier send's run on that lane has ended
    (its first outcome response). A refusal by the concurrency gate waited from the send
    to the refusal. The log does not say when a run started, so this is the wait the log
    proves (a lower bound); null without a send.
    """
    lane = ["conversation_id", "to_agent"]
    busy = pl.col("_run_end_ms").cum_max().shift(1).over(lane, order_by=["_send_ms", "_key"])
    wait = (
        pl.when(pl.col("_send_ms").is_null())
        .then(None)
        .when(pl.col("outcome") == "concurrency_blocked")
        .then((pl.col("_run_end_ms") - pl.col("_send_ms")).clip(lower_bound=0))
        .otherwise((busy - pl.col("_send_ms")).clip(lower_bound=0).fill_null(0.0))
    )
    return conv.with_columns(wait.alias("queue_wait_ms"))


def span_rows(ev: pl.DataFrame, conv: pl.DataFrame) -> pl.DataFrame:
    """One row per span (before encoding): ids, name, kind, times (ns), agent, status.

    Columns: ``trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, agent``
    (``gen_ai.agent.name``), ``service`` (the agent that emits it: the requester for the
    root, the speaker for a turn, else the target), ``step`` and ``status_message`` (null
    unless the span's status is an error), plus ``_key`` and the event's ``file``/``line``.
    """
    root_start = pl.col("_first_ms")
    roots = conv.select(
        "_key",
        "conversation_id",
        "trace_id",
        pl.col("root_span_id").alias("span_id"),
        pl.lit(None, pl.String).alias("parent_span_id"),
        pl.lit(KIND_CLIENT).alias("kind"),
        pl.lit("root").alias("step"),
        pl.col("to_agent").alias("agent"),
        pl.col("from_agent").alias("service"),
        root_start.alias("_start_ms"),
        pl.max_horizontal(pl.col("_last_ms"), root_start).alias("_end_ms"),
        pl.when(pl.col("outcome").is_in(ERROR_OUTCOMES))
        .then(
            pl.concat_str(
                [pl.col("outcome"), pl.col("outcome_reason").fill_null("unknown")],
                separator=": ",
            )
        )
        .alias("status_message"),
        "file",
        "line",
    )
    steps = ev.filter(pl.col("role").is_in(["run", "turn", "announce"])).join(
        conv.select("_key", "_send_ms", "_first_ms", "queue_wait_ms"),
        on="_key",
        how="left",
        maintain_order="left",
    )
    end = pl.col("event_ms")
    run_start = pl.min_horizontal(
        pl.coalesce(pl.col("_send_ms") + pl.col("queue_wait_ms").fill_null(0.0), end), end
    )
    prev = pl.min_horizontal(pl.coalesce("_step_ms", "_send_ms", "_first_ms"), end)
    role = pl.col("role")
    kids = steps.select(
        "_key",
        "conversation_id",
        "trace_id",
        "span_id",
        pl.col("root_span_id").alias("parent_span_id"),
        pl.when(role == "run")
        .then(pl.lit(KIND_SERVER))
        .otherwise(pl.lit(KIND_INTERNAL))
        .alias("kind"),
        role.alias("step"),
        pl.when(role == "turn")
        .then(pl.col("from_agent"))
        .otherwise(pl.col("target"))
        .alias("agent"),
        pl.when(role == "turn")
        .then(pl.col("from_agent"))
        .otherwise(pl.col("target"))
        .alias("service"),
        pl.when(role == "run").then(run_start).otherwise(prev).alias("_start_ms"),
        end.alias("_end_ms"),
        pl.when((role == "run") & pl.col("_kind").is_in(["no_reply", "blocked"]))
        .then(pl.concat_str([pl.col("_kind"), pl.lit(" response")]))
        .alias("status_message"),
        "file",
        "line",
    )
    spans = pl.concat([roots, kids], how="vertical_relaxed")
    name_agent = pl.col("agent").fill_null("unknown")
    return spans.with_columns(
        pl.when(pl.col("step") == "announce")
        .then(pl.concat_str([pl.lit("announce "), name_agent]))
        .otherwise(pl.concat_str([pl.lit("invoke_agent "), name_agent]))
        .alias("name"),
        ms_to_ns(pl.col("_start_ms")).alias("start_ns"),
        ms_to_ns(pl.col("_end_ms")).alias("end_ns"),
    ).drop("_start_ms", "_end_ms")


def ms_to_ns(ms: pl.Expr) -> pl.Expr:
    """Epoch ms (float, as logged) to integer epoch ns, computed in two parts.

    ``ms * 1e6`` in floating point is off by up to 128 ns (a float near 1.8e18 steps by
    256); the whole milliseconds times 10^6 in integers plus the rounded fraction is exact
    to the nanosecond, and :func:`a2a_lab.load_otlp` gets the logged float back from it
    (``whole + rest / 1e6``: the float step near 1.8e12 ms is 244 ns, far above the
    rounding).
    """
    whole = ms.floor()
    frac_ns = ((ms - whole) * 1_000_000).round(0).cast(pl.Int64, strict=False)
    return whole.cast(pl.Int64, strict=False) * 1_000_000 + frac_ns
