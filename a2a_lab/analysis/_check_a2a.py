"""The A2A sequence rules of :mod:`checks`: orphans, missing completes, turn order, events
after the complete, and the exchanges the log cannot tell apart (all on
:func:`a2a_lab.exchanges.exchange_events`, so overlapping exchanges under one conversation
id raise no false finding)."""

from __future__ import annotations

import polars as pl

from a2a_lab._frames import data_text as _text
from a2a_lab._frames import text_format
from a2a_lab.analysis._check_rules import _CAUSE_COLUMNS, _D, _cause, _findings
from a2a_lab.exchanges import exchange_events

__all__: list[str] = []

# ---------------------------------------------------------------------------------------
# A2A sequence
# ---------------------------------------------------------------------------------------


#: The columns that name one exchange.
KEYS = ["conversation_id", "requester", "target", "exchange"]


def _a2a_sequence(events: pl.DataFrame) -> list[pl.LazyFrame]:
    ex = sequence_frame(exchange_events(events.lazy()))
    return [_ambiguous(*ambiguity(ex)), *sequence_rules(ex)]


def sequence_frame(x: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    """The columns of :func:`a2a_lab.exchange_events` (``x``) that the rules read."""
    return (
        x.lazy()
        .select(
            *KEYS,
            "seq",
            "file",
            "line",
            "type",
            "event_ms",
            "event_time",
            _text("workSessionId").alias("work_session_id"),
            _text("taskId").alias("task_id"),
            _D.struct.field("turn").alias("_turn"),
            "ambiguous",
        )
        .collect()
        .lazy()
    )


def sequence_rules(ex: pl.LazyFrame) -> list[pl.LazyFrame]:
    """The findings of each exchange of :func:`sequence_frame` (``ex``): orphans, missing
    completes, turns out of order, events after the complete."""
    keys = KEYS
    t = pl.col("type")
    out: list[pl.LazyFrame] = []
    orphans = ex.filter((pl.col("exchange") == 0) & t.is_in(["a2a.response", "a2a.complete"]))
    for typ, rule in (
        ("a2a.response", "a2a.orphan_response"),
        ("a2a.complete", "a2a.complete_without_send"),
    ):
        rows = orphans.filter(t == typ).with_columns(pl.concat_list("line").alias("lines"))
        out.append(
            _findings(
                rows,
                rule,
                text_format(
                    "{} → {} without an a2a.send before it: {}",
                    pl.col("requester").fill_null("?"),
                    pl.col("target").fill_null("?"),
                    _cause(""),
                ),
            )
        )
    sent = ex.filter(pl.col("exchange") > 0)
    per = sent.group_by(keys).agg(
        pl.col("file").first(),
        pl.col("work_session_id").first(ignore_nulls=True),
        pl.col("task_id").first(ignore_nulls=True),
        pl.col("line").first().alias("send_line"),  # the send opens its exchange
        *[pl.col(c).first().alias(f"_open_{c}") for c in _CAUSE_COLUMNS],
        (t == "a2a.complete").any().alias("has_complete"),
        pl.col("ambiguous").any().alias("_ambiguous"),
    )
    out.append(_missing_complete(per))
    out.append(_turns_out_of_order(sent, keys))
    out.append(_after_complete(sent, keys))
    return out


def _missing_complete(per: pl.LazyFrame) -> pl.LazyFrame:
    """``a2a.missing_complete``: exchanges of ``per`` (one row per exchange) without an
    ``a2a.complete``.

    Where the exchange is ambiguous and other ambiguous exchanges share its conversation id
    and direction, the log cannot tell which of them the complete it holds belongs to (a
    sub-agent requester's sends under one id, issue 22): the finding then names them all
    ("#2 or #3"), and its lines are their sends in the same file, instead of asserting one.
    """
    direction = ["conversation_id", "requester", "target"]
    ambiguous = per.filter(pl.col("_ambiguous"))
    peers = ambiguous.group_by(direction).agg(pl.col("exchange").sort().alias("_peers"))
    peer_lines = ambiguous.group_by([*direction, "file"]).agg(
        pl.col("send_line").sort().alias("_peer_lines")
    )
    missing = (
        per.filter(~pl.col("has_complete"))
        .join(peers, on=direction, how="left", nulls_equal=True)
        .join(peer_lines, on=[*direction, "file"], how="left", nulls_equal=True)
    )
    undecided = pl.col("_ambiguous") & (pl.col("_peers").list.len() > 1)
    missing = missing.with_columns(
        pl.when(undecided)
        .then(pl.col("_peer_lines"))
        .otherwise(pl.concat_list("send_line"))
        .alias("lines")
    )
    return _findings(
        missing,
        "a2a.missing_complete",
        text_format(
            "exchange {} → {} (#{}) has no a2a.complete; opened by {}{}",
            pl.col("requester"),
            pl.col("target"),
            pl.col("exchange"),
            _cause("_open_"),
            pl.when(undecided)
            .then(
                text_format(
                    "; the log cannot tell it from the other ambiguous exchange(s) of this "
                    "conversation and direction: one of #{} has none",
                    pl.col("_peers").cast(pl.List(pl.String)).list.join(", #"),
                )
            )
            .otherwise(pl.lit("")),
        ),
    )


def _turns_out_of_order(sent: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``a2a.turns_out_of_order``: turn numbers that are not their place in time order."""
    turns = sent.filter(pl.col("_turn").is_not_null()).with_columns(
        pl.int_range(1, pl.len() + 1).over(keys).cast(pl.Float64).alias("_expected"),
        (pl.col("_turn") != pl.int_range(1, pl.len() + 1).over(keys).cast(pl.Float64))
        .any()
        .over(keys)
        .alias("_bad"),
    )
    bad_turns = (
        turns.filter(pl.col("_bad"))
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("file").first(),
            pl.col("work_session_id").first(ignore_nulls=True),
            pl.col("task_id").first(ignore_nulls=True),
            pl.col("line").alias("lines"),
            # a turn beyond the integers (1e19, 1e308: fuzzed input) is shown as its number
            pl.coalesce(
                pl.col("_turn").cast(pl.Int64, strict=False).cast(pl.String),
                pl.col("_turn").cast(pl.String),
            )
            .str.join(", ")
            .alias("_turns"),
            # the first turn whose number is not its place in time order
            *[
                pl.col(c).filter(pl.col("_turn") != pl.col("_expected")).first().alias(f"_bad_{c}")
                for c in _CAUSE_COLUMNS
            ],
        )
    )
    return _findings(
        bad_turns,
        "a2a.turns_out_of_order",
        text_format(
            "turns in time order: {}; first out of order: {}", pl.col("_turns"), _cause("_bad_")
        ),
    )


def _after_complete(sent: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """``a2a.event_after_complete``: events of an exchange after its ``a2a.complete``."""
    t = pl.col("type")
    completes = (
        sent.filter(t == "a2a.complete")
        .group_by(keys)
        .agg(
            pl.col("event_ms").first().alias("_c_ms"),
            pl.col("seq").first().alias("_c_seq"),
            *[pl.col(c).first().alias(f"_end_{c}") for c in _CAUSE_COLUMNS],
        )
    )
    after = (
        sent.join(completes, on=keys)
        .filter(
            (pl.col("event_ms") > pl.col("_c_ms"))
            | ((pl.col("event_ms") == pl.col("_c_ms")) & (pl.col("seq") > pl.col("_c_seq")))
        )
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("file").first(),
            pl.col("work_session_id").first(ignore_nulls=True),
            pl.col("task_id").first(ignore_nulls=True),
            pl.col("line").sort().alias("lines"),
            pl.col("type").sort_by("event_ms", "seq").first().alias("_first_type"),
            *[pl.col(f"_end_{c}").first() for c in _CAUSE_COLUMNS],
        )
    )
    return _findings(
        after,
        "a2a.event_after_complete",
        text_format(
            "{} event(s) after the a2a.complete of {} → {} (first: {}); ended by {}",
            pl.col("lines").list.len(),
            pl.col("requester"),
            pl.col("target"),
            pl.col("_first_type"),
            _cause("_end_"),
        ),
    )


#: How many ambiguous exchanges the ``a2a.ambiguous_exchanges`` finding names.
_AMBIGUOUS_EXAMPLES = 5


def ambiguity(
    ex: pl.LazyFrame, *, by_conversation: bool = False
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """What :func:`_ambiguous` reports of :func:`sequence_frame` (``ex``): the first
    ambiguous exchanges in log order (their first event's ``seq``), and ``_n`` (ambiguous
    exchanges) and ``_all`` (exchanges) in one row. Of several sets of whole
    conversations: concatenate the first, sort it by ``seq``, and sum the counts.

    ``by_conversation``: the first ambiguous exchanges and the counts of each conversation
    id (a store replaces those of the ids new lines touch)."""
    per = (
        ex.filter(pl.col("exchange") > 0)
        .sort("seq")
        .group_by(KEYS, maintain_order=True)
        .agg(
            pl.col("ambiguous").first(),
            pl.col("file").first(),
            pl.col("work_session_id").first(ignore_nulls=True),
            pl.col("task_id").first(ignore_nulls=True),
            pl.col("line"),
            pl.col("seq").first(),
        )
    )
    n = [
        pl.col("ambiguous").sum().cast(pl.Int64).alias("_n"),
        pl.len().cast(pl.Int64).alias("_all"),
    ]
    first = per.filter("ambiguous").sort("seq")
    if by_conversation:
        heads = first.group_by("conversation_id", maintain_order=True).head(_AMBIGUOUS_EXAMPLES)
        return heads, per.group_by("conversation_id").agg(n)
    return first.head(_AMBIGUOUS_EXAMPLES), per.select(n)


def _ambiguous(amb: pl.LazyFrame, counts: pl.LazyFrame) -> pl.LazyFrame:
    """One info finding when some exchanges are ambiguous: their count and share of all
    exchanges, and the first few (conversation, direction, exchange number, lines);
    ``amb`` and ``counts`` as :func:`ambiguity` gives them."""
    examples = amb.head(_AMBIGUOUS_EXAMPLES).select(
        text_format(
            "{} {} → {} #{}",
            pl.col("conversation_id"),
            pl.col("requester").fill_null("?"),
            pl.col("target").fill_null("?"),
            pl.col("exchange"),
        ).alias("_ex"),
        "line",
    )
    first = amb.head(1).select("conversation_id", "task_id", "work_session_id", "file")
    summary = first.join(counts, how="cross").join(
        examples.select(
            pl.col("_ex").str.join("; ").alias("_examples"),
            pl.col("line")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .sort()
            .implode()
            .alias("lines"),
        ),
        how="cross",
    )
    return _findings(
        summary,
        "a2a.ambiguous_exchanges",
        text_format(
            "{} of {} exchanges ({}%) cannot be told apart from another under the same "
            "conversation id; e.g. {}",
            pl.col("_n"),
            pl.col("_all"),
            (100.0 * pl.col("_n") / pl.col("_all")).round(2),
            pl.col("_examples"),
        ),
    )
