"""Every run a log shows, on the lanes it queued on (runtime §1), with its start where told."""

from __future__ import annotations

from typing import Final

import polars as pl

from a2a_lab.analysis.calibrate._occupancy import NESTED_LIMIT, run_jobs, with_idle, with_pool
from a2a_lab.analysis.conversations import exchange_events
from a2a_lab.reference.jsstr import js_trim_expr

__all__ = ["run_lanes"]

_KEY: Final = ["conversation_id", "from_agent", "to_agent", "exchange"]


def run_lanes(
    ev: pl.DataFrame,
    all_ex: pl.DataFrame,
    turn_timeout_ms: float = 120_000.0,
    nested_limit: int | None = NESTED_LIMIT,
) -> pl.DataFrame:
    """Every run the log shows, with whether it started on an idle session (:mod:`._occupancy`).

    ``all_ex`` holds every exchange (spawns too: they occupy sessions all the same), with
    ``_row``.
    """
    # a reply's ping-pong turn; one that is not a whole number within 32 bits (a fuzzed
    # 1e308 or 2**64) names no turn the gateway ran, and its reply is left out of the fit
    # as an out-of-range time is (the cast to Int64 below would fail on it)
    logged = pl.col("data").struct.field("turn")
    turn = pl.when((logged.abs() <= 2**31) & (logged == logged.floor())).then(logged)
    xe = exchange_events(ev.lazy()).collect()
    # the lanes (runtime §1). On today's gateway (most sends name a conversation-scoped
    # `agent:<target>:a2a:<conversation>` session) the target's runs queue on the session
    # the send names (`targetSessionKey`) and the requester's turns on the session it sent
    # from (`fromSessionType` main: `agent:<requester>:main`; a channel: one of its channel
    # sessions; unknown: perhaps its main session). On an older gateway every run of an
    # agent queues on its main session (the design notes' picture, `agent_main`), so the
    # target's lane is its main session, which its requester side shares only when it
    # sent from `main` and every send to it ran on `main`
    fields = {f.name for f in ev.schema["data"].fields} if "data" in ev.columns else set()  # type: ignore[attr-defined]
    lane = (
        js_trim_expr(pl.col("data").struct.field("targetSessionKey"))
        if "targetSessionKey" in fields
        else pl.lit(None, pl.String)
    )
    lanes = (
        ev.filter(pl.col("type") == "a2a.send")
        .select(
            js_trim_expr(pl.col("data").struct.field("conversationId")).alias("conversation_id"),
            "from_agent",
            "to_agent",
            pl.col("event_ms").cast(pl.Float64).alias("_start_ms"),
            pl.when(lane.str.starts_with("agent:")).then(lane).alias("target_lane"),
        )
        .unique(["conversation_id", "from_agent", "to_agent", "_start_ms"], keep="first")
    )
    keyed = lanes["target_lane"].drop_nulls()
    by_key = keyed.len() > 0 and float(keyed.str.contains(":a2a:", literal=True).mean()) > 0.5  # type: ignore[arg-type]
    sides = _requester_sides(xe, by_key)
    if by_key:
        all_ex = all_ex.join(
            lanes, on=["conversation_id", "from_agent", "to_agent", "_start_ms"], how="left"
        )
    all_ex = all_ex.join(sides, on=_KEY, how="left")
    replies = (
        xe.lazy()
        .filter((pl.col("type") == "a2a.response") & turn.is_not_null())
        .select(
            "conversation_id",
            pl.col("requester").alias("from_agent"),
            pl.col("target").alias("to_agent"),
            "exchange",
            turn.cast(pl.Int64).alias("turn"),
            "event_ms",
        )
        .collect()
        .join(all_ex.select(*_KEY, "_row"), on=_KEY, how="inner")
        .select("_row", "turn", "event_ms")
    )
    with_announce = _with_announce(ev, all_ex)
    jobs = with_idle(run_jobs(with_announce, replies, turn_timeout_ms))
    # a hidden run is taken to hold its pool slot no longer than the longest run the log
    # shows from request to end (a plug-in: a longer one could make a slot look free)
    seen = jobs.select((pl.col("end") - pl.col("request")).max()).item()
    return with_pool(jobs, nested_limit, float(seen or turn_timeout_ms))


def _requester_sides(xe: pl.DataFrame, by_key: bool) -> pl.DataFrame:
    """Per exchange, whether the requester's turns run on the target's lane (``target``),
    on another session (``elsewhere``) or the log cannot tell (null)."""
    types = xe.filter(pl.col("type") == "a2a.send").select(
        "conversation_id",
        pl.col("requester").alias("from_agent"),
        pl.col("target").alias("to_agent"),
        "exchange",
        js_trim_expr(pl.col("data").struct.field("fromSessionType")).alias("_from_type"),
        js_trim_expr(pl.col("data").struct.field("toSessionType")).alias("_to_type"),
    )
    main_targets = (
        types.group_by("to_agent")
        .agg((pl.col("_to_type") == "main").all().alias("_main"))
        .filter("_main")
        .select(pl.col("to_agent").alias("from_agent"), "_main")
    )
    from_type = pl.col("_from_type")
    shares_main = pl.lit(True) if by_key else pl.col("_main").is_not_null()
    return (
        types.join(main_targets, on="from_agent", how="left")
        .select(
            *_KEY,
            pl.when(from_type.is_null() | (from_type == "unknown") | ~shares_main)
            .then(pl.lit(None, pl.String))
            .when(from_type == "main")
            .then(pl.lit("target"))
            .otherwise(pl.lit("elsewhere"))
            .alias("requester_side"),
        )
        .unique(_KEY, keep="first", maintain_order=True)
    )


def _with_announce(ev: pl.DataFrame, all_ex: pl.DataFrame) -> pl.DataFrame:
    """``all_ex`` with ``announce_ran``: whether an announce step ran after the exchange."""
    d = pl.col("data")
    skipped = (
        ev.filter(pl.col("type") == "a2a.complete")
        .select(
            js_trim_expr(d.struct.field("conversationId")).alias("conversation_id"),
            "from_agent",
            "to_agent",
            pl.col("event_ms").cast(pl.Float64).alias("_end_ms"),
            (~d.struct.field("announceSkipped")).alias("announce_ran"),
        )
        .unique(["conversation_id", "from_agent", "to_agent", "_end_ms"], keep="first")
    )
    return (
        all_ex.with_columns(pl.col("_end_ms").cast(pl.Float64))
        .join(skipped, on=["conversation_id", "from_agent", "to_agent", "_end_ms"], how="left")
        .with_columns(
            pl.when(pl.col("announced") == True)  # noqa: E712 (a Polars expression)
            .then(True)
            .otherwise("announce_ran")
            .alias("announce_ran")
        )
    )
