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
too, and so does an announce step that outlived its 30 s timeout (the flow writes the
complete when the step returns: a complete sooner than that after the step's request marks
its end). Such a *hidden* run still holds its session; since the session is first come first
served, it is certainly over once a run requested after it has ended. So a run found its
session idle when every run requested before it had ended (known end) or a later-requested
run had ended (hidden end) by its request. Then its logged time is its service time, with
no queueing in it.

Agents stand for their sessions here, with what the log says about the requester's side:
the send's ``fromSessionType`` is ``main`` when the requester's turns run on its main
session, where the sends to an agent whose every incoming send is ``toSessionType`` main
run too (one timeline); any other type puts them on another session (a timeline of their
own, so a turn that timed out there holds nothing here); without it both count as one,
which can only mark a run busy that was not: fewer samples, no bias, because whether a run
counts depends only on runs requested before it, never on its own length.
"""

from __future__ import annotations

from typing import Final

import polars as pl

__all__ = [
    "ANNOUNCE_TIMEOUT_MS",
    "NESTED_LIMIT",
    "UNLOGGED_TURN_REASONS",
    "run_jobs",
    "with_idle",
    "with_pool",
]

#: The announce step's timeout on the asynchronous path (the reference's
#: ``announceTimeoutMs``: 30 s when ``timeoutSeconds`` is 0); the complete follows the step.
ANNOUNCE_TIMEOUT_MS: Final = 30_000.0
#: The reference's gateway-wide `nested` lane limit (`DEFAULT_NESTED_MAX_CONCURRENT`):
#: every A2A run (send, ping-pong step, announce step) holds one of these slots.
NESTED_LIMIT: Final = 8
#: Clock slack of the log (ms timestamps, a complete written just after the step's end).
_SLACK_MS: Final = 1_000.0

#: Suffix of the timeline of an agent's runs on sessions other than its target session.
_ELSEWHERE: Final = "\x1felsewhere"

#: Termination reasons whose turn ran but logged no reply (runtime §3).
UNLOGGED_TURN_REASONS: Final = ("explicit_skip", "empty_reply", "agent_error", "turn_timeout")


def _requester_lane() -> tuple[pl.Expr, pl.Expr]:
    """Whether a requester-side run is on the agent's target session, and its timeline.

    A requester-side run is on the agent's target session (``target``), certainly on
    another of its sessions (``elsewhere``: its own timeline), or unknown (null: may be
    either).
    """
    side = pl.col("requester_side")
    req_on_target = (side == "target").fill_null(False)
    req_line = (
        pl.when(side == "elsewhere")
        .then(pl.col("from_agent") + _ELSEWHERE)
        .otherwise(pl.lit("agent:") + pl.col("from_agent") + pl.lit(":main"))
    )
    return req_on_target, req_line


def _tail_jobs(
    answered: pl.DataFrame, turns: pl.DataFrame, turn_timeout_ms: float
) -> list[pl.DataFrame]:
    """The runs after an exchange's last logged turn: announce step, unlogged turn, open end."""
    req_on_target, req_line = _requester_lane()
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
    # the announce step (if it ran) on the target's session: the flow waits for it at most
    # ANNOUNCE_TIMEOUT_MS, then writes the complete; a complete sooner than that after the
    # step was requested came at its end, a later one may have come at the timeout (hidden)
    # (requested when the last turn ended: at its reply, or at the timeout of one that timed out)
    asked = pl.col("request") + pl.when(timed_out).then(turn_timeout_ms).otherwise(0.0)
    in_time = (pl.col("end") - asked) < ANNOUNCE_TIMEOUT_MS - _SLACK_MS
    announce = tails.filter(pl.col("announce_ran").fill_null(True)).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:2],
        asked.alias("request"),
        pl.col("to_agent").alias("agent"),
        pl.when(in_time).then(pl.col("end")).cast(pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        pl.lit(True).alias("on_target"),
        pl.col("target_lane").alias("timeline"),
    )
    # a turn that logged no reply ran on the next speaker's session; one that timed out goes on unseen
    turn_tail = tails.filter(unlogged).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:],
        pl.when(requester_next).then("from_agent").otherwise("to_agent").alias("agent"),
        pl.when(timed_out).then(None).otherwise(pl.col("end")).cast(pl.Float64).alias("end"),
        timed_out.alias("timed_out"),
        pl.when(requester_next).then(req_on_target).otherwise(True).alias("on_target"),
        pl.when(requester_next).then(req_line).otherwise("target_lane").alias("timeline"),
    )
    # without a complete, what followed the reply is unknown: it may hold the requester too
    open_end = tails.filter(pl.col("end").is_null()).select(
        *common[:1],
        pl.lit("tail").alias("job"),
        *common[1:],
        pl.col("from_agent").alias("agent"),
        pl.lit(None, dtype=pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        req_on_target.alias("on_target"),
        req_line.alias("timeline"),
    )
    return [announce, turn_tail, open_end]


def run_jobs(
    conv: pl.DataFrame, turn_replies: pl.DataFrame, turn_timeout_ms: float = 120_000.0
) -> pl.DataFrame:
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
    turn_timeout_ms
        The ping-pong turn timeout: after a turn that timed out, the announce step is
        requested when the timeout passed (runtime §3), not at the last reply.

    Returns
    -------
    pl.DataFrame
        ``_row``, ``job`` (``first``, ``turn``, ``tail``), ``turn`` (null but for turns),
        ``agent`` (whose session runs it), ``request``, ``end`` (ms; null: hidden),
        ``timed_out`` (a turn that outlived the turn timeout: the tail of such an exchange)
        and ``on_target`` (the run is on the agent's target session, where sends to it run;
        a requester's turns may run on one of its channel sessions instead).
    """
    if "target_lane" not in conv.columns:
        conv = conv.with_columns(pl.lit(None, pl.String).alias("target_lane"))
    # the target's runs: on the session the send names (`targetSessionKey`), else its main one
    conv = conv.with_columns(
        pl.coalesce("target_lane", pl.lit("agent:") + pl.col("to_agent") + pl.lit(":main")).alias(
            "target_lane"
        )
    )
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
        pl.col("target_lane").alias("timeline"),
    )
    if "requester_side" not in conv.columns:
        conv = conv.with_columns(pl.lit(None, pl.String).alias("requester_side"))
    answered = conv.filter(pl.col("_first_reply_ms").is_not_null()).select(
        "_row",
        "from_agent",
        "to_agent",
        pl.col("_end_ms").alias("end"),
        "termination_reason",
        "announce_ran",
        "requester_side",
        "target_lane",
        reply.alias("_reply"),
    )
    req_on_target, req_line = _requester_lane()
    turns = (
        turn_replies.join(answered, on="_row", how="inner")
        .filter(pl.col("event_ms") >= pl.col("_reply"))
        .sort("_row", "turn", "event_ms")
        .unique(["_row", "turn"], keep="first", maintain_order=True)
        .with_columns(
            pl.col("event_ms").shift(1).over("_row").fill_null(pl.col("_reply")).alias("request")
        )
    )
    odd = pl.col("turn") % 2 == 1
    turn_jobs = turns.select(
        "_row",
        pl.lit("turn").alias("job"),
        pl.col("turn").cast(pl.Int64),
        pl.when(odd).then("from_agent").otherwise("to_agent").alias("agent"),
        pl.col("request").cast(pl.Float64),
        pl.col("event_ms").cast(pl.Float64).alias("end"),
        pl.lit(False).alias("timed_out"),
        pl.when(odd).then(req_on_target).otherwise(True).alias("on_target"),
        pl.when(odd).then(req_line).otherwise("target_lane").alias("timeline"),
    )
    jobs = pl.concat(
        [first, turn_jobs, *_tail_jobs(answered, turns, turn_timeout_ms)], how="diagonal_relaxed"
    )
    return jobs.filter(pl.col("agent").is_not_null())


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
    line = "timeline" if "timeline" in jobs.columns else "agent"
    # only a run on the target session proves a hidden run there over (channel sessions are others)
    proof = pl.when(on_target).then(end).otherwise(None).fill_null(inf)

    def before(expr: pl.Expr) -> pl.Expr:
        return expr.fill_null(-inf).cum_max().shift(1).over(line).fill_null(-inf)

    start = pl.max_horizontal("request", "_target_end")
    return (
        jobs.with_row_index("_order")
        .sort(line, "request", "_order")
        .with_columns(
            before(pl.when(on_target).then(end)).alias("_target_end"),
            before(pl.when(~on_target).then(end)).alias("_other_end"),
            # a hidden run is over by the first end of a run requested after it
            pl.when(end.is_null())
            .then(proof.reverse().cum_min().reverse().shift(-1).over(line).fill_null(inf))
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


def with_pool(jobs: pl.DataFrame, slots: int | None, hidden_cap_ms: float) -> pl.DataFrame:
    """``jobs`` (:func:`with_idle`) with the runs that may have waited for a pool slot unset.

    Every A2A run (a send's run, a ping-pong step, an announce step) is queued twice: on
    its session lane, then on the gateway-wide ``nested`` lane with ``slots`` runs at a time
    (runtime §1). A run that became ready (its lane free: ``run_start``) at ``r`` started
    then if fewer than ``slots`` other runs were in that lane at ``r``, queued or running;
    a run is there at most from its request to its end. So where the runs requested by
    ``r`` less those over by ``r`` number fewer than ``slots``, ``run_start`` stands: the
    start is ``max(request, lane free, pool slot free)`` with the pool free. Elsewhere the
    start is not told by the log, and ``run_start`` and ``idle`` are unset.

    A hidden run (null end) is over by the first end of a run requested after it on its
    lane (:func:`with_idle`), and at the latest ``hidden_cap_ms`` after its request.

    Examples
    --------
    >>> jobs = pl.DataFrame({
    ...     "timeline": ["x", "y", "z"], "on_target": [True] * 3,
    ...     "request": [0.0, 1.0, 2.0], "end": [10.0, 12.0, 14.0],
    ...     "run_start": [0.0, 1.0, 2.0], "idle": [True] * 3,
    ... })
    >>> with_pool(jobs, 2, 1e9)["run_start"].to_list()  # the third found both slots taken
    [0.0, 1.0, None]
    >>> with_pool(jobs, 3, 1e9)["run_start"].to_list()
    [0.0, 1.0, 2.0]
    """
    if slots is None or jobs.is_empty():
        return jobs
    inf = float("inf")
    end = pl.col("end")
    proof = pl.when(pl.col("on_target")).then(end).otherwise(None).fill_null(inf)
    bounded = (
        jobs.with_row_index("_order")
        .sort("timeline", "request", "_order")
        .with_columns(
            pl.when(end.is_null())
            .then(
                pl.min_horizontal(
                    proof.reverse().cum_min().reverse().shift(-1).over("timeline").fill_null(inf),
                    pl.col("request") + hidden_cap_ms,
                )
            )
            .otherwise(end)
            .alias("_out")
        )
        .sort("_order")
    )
    requests = bounded["request"].sort()
    outs = bounded["_out"].sort()
    at = bounded.select(
        pl.coalesce("run_start", pl.when("idle").then("request")).fill_null(-inf)
    ).to_series()
    # runs in the pool at r: requested by r and not over by r (the run itself included)
    present = requests.search_sorted(at, side="right") - outs.search_sorted(at, side="right")
    free = (present - 1) < slots
    return bounded.with_columns(
        pl.when(free).then(pl.col("run_start")).alias("run_start"),
        (pl.col("idle") & free).alias("idle"),
    ).drop("_order", "_out")
