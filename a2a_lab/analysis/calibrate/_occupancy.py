"""Which runs of a log started on an idle session: the runs whose logged time is their service.

A session runs one message at a time, first come first served (runtime §1). Every run the
log shows ends in a logged reply, so the log gives each run's *request* (when it was queued
on its session) and, mostly, its *end*:

- the target's first run of an exchange: requested at the send, ended by the first reply;
- ping-pong turn ``k``: requested at the previous reply, ended by the turn's reply, on the
  requester's session for odd ``k`` and the target's for even ``k`` (runtime §2 step 4);
- what follows the last reply: a turn whose reply is not logged (it ended by the complete,
  unless it timed out), the announce step on the target's session (if it ran; the
  complete does not wait for it).

Some runs end unseen: a requester that got no reply (the wait limit passed, an error, the
concurrency gate refused the flow) does not cancel the run, a turn that timed out goes on
too, and so does the announce step after the complete. Such a *hidden* run still holds its session; since the session is first come first
served, it is certainly over once a run requested after it has ended. So a run found its
session idle when every run requested before it had ended (known end) or a later-requested
run had ended (hidden end) by its request. Then its logged time is its service time, with
no queueing in it.

Agents stand for their sessions here (a main agent's channel sessions and its main session
are one), which can only mark a run busy that was not: fewer samples, no bias, because
whether a run counts depends only on runs requested before it, never on its own length.
"""

from __future__ import annotations

from typing import Final

import polars as pl

__all__ = ["UNLOGGED_TURN_REASONS", "run_jobs", "with_idle"]

#: Termination reasons whose turn ran but logged no reply (runtime §3).
UNLOGGED_TURN_REASONS: Final = ("explicit_skip", "empty_reply", "agent_error", "turn_timeout")


def run_jobs(conv: pl.DataFrame, turn_replies: pl.DataFrame) -> pl.DataFrame:
    """Every run the log shows, one row each.

    Parameters
    ----------
    conv
        Exchanges with ``_row`` (their index), ``from_agent``, ``to_agent``, ``_start_ms`` (send,
        ms), ``_first_reply_ms``, ``_end_ms`` (complete, ms), ``termination_reason`` and
        ``announce_ran`` (false when the complete says the announce step was skipped;
        null: unknown, taken as ran).
    turn_replies
        Logged ping-pong turn replies: ``_row``, ``turn``, ``event_ms``.

    Returns
    -------
    pl.DataFrame
        ``_row``, ``job`` (``first``, ``turn``, ``tail``), ``turn`` (null but for turns),
        ``agent`` (whose session runs it), ``request``, ``end`` (ms; null: hidden),
        ``timed_out`` (a turn that outlived the turn timeout: the tail of such an exchange)
        and ``on_target`` (the run is on the agent's target session, where sends to it run;
        a requester's turns may run on one of its channel sessions instead).
    """
    reply = pl.col("_start_ms") + pl.col("_first_reply_ms")
    first = conv.filter(pl.col("_start_ms").is_not_null()).select(
        "_row",
        pl.lit("first").alias("job"),
        pl.lit(None, dtype=pl.Int64).alias("turn"),
        pl.col("to_agent").alias("agent"),
        pl.col("_start_ms").cast(pl.Float64).alias("request"),
        reply.cast(pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        pl.lit(True).alias("on_target"),
    )
    answered = conv.filter(pl.col("_first_reply_ms").is_not_null()).select(
        "_row",
        "from_agent",
        "to_agent",
        pl.col("_end_ms").alias("end"),
        "termination_reason",
        "announce_ran",
        reply.alias("_reply"),
    )
    turns = (
        turn_replies.join(answered, on="_row", how="inner")
        .filter(pl.col("event_ms") >= pl.col("_reply"))
        .sort("_row", "turn", "event_ms")
        .unique(["_row", "turn"], keep="first", maintain_order=True)
        .with_columns(
            pl.col("event_ms").shift(1).over("_row").fill_null(pl.col("_reply")).alias("request")
        )
    )
    turn_jobs = turns.select(
        "_row",
        pl.lit("turn").alias("job"),
        pl.col("turn").cast(pl.Int64),
        pl.when(pl.col("turn") % 2 == 1).then("from_agent").otherwise("to_agent").alias("agent"),
        pl.col("request").cast(pl.Float64),
        pl.col("event_ms").cast(pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        (pl.col("turn") % 2 == 0).alias("on_target"),
    )
    last = turns.group_by("_row").agg(
        pl.col("turn").max().alias("_last_turn"), pl.col("event_ms").max().alias("_last")
    )
    tails = answered.join(last, on="_row", how="left").with_columns(
        pl.col("_last_turn").fill_null(0),
        pl.max_horizontal("_reply", "_last").cast(pl.Float64).alias("request"),
    )
    unlogged = pl.col("termination_reason").is_in(UNLOGGED_TURN_REASONS).fill_null(False)
    timed_out = (pl.col("termination_reason") == "turn_timeout").fill_null(False)
    requester_next = pl.col("_last_turn") % 2 == 0
    common: list[str | pl.Expr] = ["_row", pl.lit(None, dtype=pl.Int64).alias("turn"), "request"]
    # the announce step (if it ran) on the target's session: the complete does not wait for
    # its end, so it is hidden
    announce = tails.filter(pl.col("announce_ran").fill_null(True)).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:],
        pl.col("to_agent").alias("agent"),
        pl.lit(None, dtype=pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        pl.lit(True).alias("on_target"),
    )
    # a turn that logged no reply ran on the next speaker's session; one that timed out goes on unseen
    turn_tail = tails.filter(unlogged).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:],
        pl.when(requester_next).then("from_agent").otherwise("to_agent").alias("agent"),
        pl.when(timed_out).then(None).otherwise(pl.col("end")).cast(pl.Float64).alias("end"),
        timed_out.alias("timed_out"),
        (~requester_next).alias("on_target"),
    )
    # without a complete, what followed the reply is unknown: it may hold the requester too
    open_end = tails.filter(pl.col("end").is_null()).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:],
        pl.col("from_agent").alias("agent"),
        pl.lit(None, dtype=pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        pl.lit(False).alias("on_target"),
    )
    return pl.concat([first, turn_jobs, announce, turn_tail, open_end], how="diagonal").filter(
        pl.col("agent").is_not_null()
    )


def with_idle(jobs: pl.DataFrame) -> pl.DataFrame:
    """``jobs`` (:func:`run_jobs`) with when each run started, where the log tells.

    A run with a known end is over at its end; a hidden one (null end) once a run
    requested after it on the agent's target session has ended (first come first served),
    else never. A run on the target session (``on_target``) starts when it is requested or
    when the last run requested before it ends, whichever is later: the log tells that
    time when every earlier run is over by then, the hidden ones included, and no earlier
    run of another of the agent's sessions (a requester's turn on a channel session) is
    still going (it might have been on this session after all).

    Returns
    -------
    pl.DataFrame
        ``jobs`` with ``run_start`` (ms; null where the log cannot tell) and ``idle`` (the
        run started at its request: every run requested before it was over).

    Examples
    --------
    >>> jobs = pl.DataFrame({
    ...     "agent": ["b"] * 5,
    ...     "request": [0.0, 10.0, 50.0, 200.0, 210.0],
    ...     "end": [5.0, None, 120.0, 230.0, 260.0],  # the run sent at 10 was never answered
    ...     "on_target": [True] * 5,
    ... })
    >>> out = with_idle(jobs)
    >>> out["idle"].to_list(), out["run_start"].to_list()
    ([True, True, False, True, False], [0.0, 10.0, None, 200.0, 230.0])
    """
    inf = float("inf")
    end, on_target = pl.col("end"), pl.col("on_target")
    # only a run on the target session proves a hidden run there over (channel sessions are others)
    proof = pl.when(on_target).then(end).otherwise(None).fill_null(inf)

    def before(expr: pl.Expr) -> pl.Expr:
        return expr.fill_null(-inf).cum_max().shift(1).over("agent").fill_null(-inf)

    start = pl.max_horizontal("request", "_target_end")
    return (
        jobs.with_row_index("_order")
        .sort("agent", "request", "_order")
        .with_columns(
            before(pl.when(on_target).then(end)).alias("_target_end"),
            before(pl.when(~on_target).then(end)).alias("_other_end"),
            # a hidden run is over by the first end of a run requested after it
            pl.when(end.is_null())
            .then(proof.reverse().cum_min().reverse().shift(-1).over("agent").fill_null(inf))
            .otherwise(-inf)
            .alias("_hold"),
        )
        .with_columns(before(pl.col("_hold")).alias("_held"))
        .with_columns(
            pl.when(on_target & (pl.col("_held") <= start) & (pl.col("_other_end") <= start))
            .then(start)
            .alias("run_start"),
            (
                (pl.col("_target_end") <= pl.col("request"))
                & (pl.col("_other_end") <= pl.col("request"))
                & (pl.col("_held") <= pl.col("request"))
            ).alias("idle"),
        )
        .sort("_order")
        .drop("_order", "_target_end", "_other_end", "_hold", "_held")
    )
