"""The simulator's ground truth per message (issue 11 item 3): what a log analysis must recover.

:attr:`SimResult.messages` names, per message, the exchange it belongs to (conversation id,
the send's runId, requester and target, send time as the log's ``ts``) and what the model
simulated (outcome and its reason, first-reply latency as the log's timestamps give it,
turns, retries), none of it read from the log. The conversation table that
:func:`a2a_lab.conversations` reconstructs from the log is held against it message by
message where the log is unambiguous (tasks off: one conversation id per exchange).
"""

from __future__ import annotations

import polars as pl
import pytest

import a2a_lab as al
from a2a_lab.sim import FailurePolicy, SimConfig, simulate
from a2a_lab.sim.experiments.capacity import scale_arrivals

GROUND_TRUTH = {
    "conversation_id": pl.String,
    "run_id": pl.String,
    "from_agent": pl.String,
    "to_agent": pl.String,
    "send_s": pl.Float64,
    "send_time": pl.Datetime("ms", "UTC"),
    "reply_time": pl.Datetime("ms", "UTC"),
    "complete_time": pl.Datetime("ms", "UTC"),
    "first_reply_s": pl.Float64,
    "outcome": pl.String,
    "outcome_reason": pl.String,
    "turns": pl.Int64,
    "retries": pl.Int64,
    "logged": pl.Boolean,
}


def _pick(frame: pl.DataFrame, snake: str, camel: str) -> pl.Expr:
    """A column of the conversation table by its snake_case name (issue 13), or the camelCase one it had."""
    return pl.col(snake if snake in frame.columns else camel)


def test_the_ground_truth_columns_are_there_with_their_types() -> None:
    m = simulate(SimConfig(n_messages=200), seed=3).messages
    assert {name: m.schema[name] for name in GROUND_TRUTH} == GROUND_TRUTH
    assert m["run_id"].n_unique() == m.height  # one runId per send
    replied = m.filter(pl.col("outcome") == "replied")
    assert replied["outcome_reason"].null_count() == replied.height
    assert (replied["first_reply_s"] >= 0).all() and replied["first_reply_s"].null_count() == 0
    # the log's own instants: the send's ts is the a2a.send event's
    sends = simulate(SimConfig(n_messages=200), seed=3).events.filter(pl.col("type") == "a2a.send")
    run_ids = sends["data"].struct.field("runId")
    by_run = dict(zip(run_ids.to_list(), sends["event_time"].to_list(), strict=True))
    assert [by_run[r] for r in m["run_id"].to_list()] == m["send_time"].to_list()


def test_no_reply_and_refusal_reasons() -> None:
    cfg = scale_arrivals(
        SimConfig(
            n_messages=600,
            tasks=None,
            failures=FailurePolicy(rates={"run_not_found": 0.05, "server_overload": 0.05}),
        ),
        4.0,
    )
    m = simulate(cfg, seed=2).messages
    reasons = dict(m.group_by("outcome").agg(pl.col("outcome_reason").unique().sort()).iter_rows())
    assert set(reasons) == {"replied", "no_reply", "concurrency_blocked"}
    assert reasons["replied"] == [None]
    assert reasons["concurrency_blocked"] == ["concurrency_gate"]
    # the waitError if there is one, else the waitStatus
    assert {"timeout", "not_found", "529 Overloaded"} <= set(reasons["no_reply"])
    no_reply = m.filter(pl.col("outcome") == "no_reply")
    assert no_reply.select(
        (pl.col("outcome_reason") == pl.coalesce("wait_error", "wait_status")).all()
    ).item()


@pytest.mark.parametrize(
    ("scale", "seed", "failures"),
    [
        (1.0, 1, None),
        (3.0, 2, None),
        (3.0, 5, FailurePolicy(rates={"gateway_connection": 0.1, "server_overload": 0.03})),
    ],
)
def test_the_conversation_table_agrees_message_by_message_where_the_log_is_unambiguous(
    scale: float, seed: int, failures: FailurePolicy | None
) -> None:
    res = simulate(
        scale_arrivals(SimConfig(n_messages=500, tasks=None, failures=failures), scale), seed=seed
    )
    truth = res.messages.filter("logged")
    table = al.conversations(al.enrich(res.events))
    got = table.select(
        _pick(table, "conversation_id", "conversationId").alias("conversation_id"),
        _pick(table, "start_time", "startTime").alias("start_time"),
        pl.col("outcome").alias("log_outcome"),
        (
            pl.col("first_reply_s")
            if "first_reply_s" in table.columns
            else pl.col("firstReplyMs") / 1000.0
        ).alias("log_first_reply_s"),
        _pick(table, "actual_turns", "actualTurns").cast(pl.Int64).alias("log_turns"),
        pl.col("retries").alias("log_retries"),
    )
    assert got.height == truth.height  # tasks off: one conversation per exchange
    both = truth.join(got, on="conversation_id", how="inner", validate="1:1")
    assert both.height == truth.height
    assert (both["log_outcome"] == both["outcome"]).all()
    assert (both["start_time"] == both["send_time"]).all()
    assert (
        both.select((pl.col("log_first_reply_s") - pl.col("first_reply_s")).abs().max()).item()
        < 1e-9
    )
    assert (both["log_retries"] == both["retries"]).all()
    replied = both.filter(pl.col("outcome") == "replied")
    assert (replied["log_turns"] == replied["turns"]).all()
    assert truth["outcome"].n_unique() >= (1 if scale == 1.0 else 2)


@pytest.mark.parametrize(("scale", "seed"), [(1.0, 1), (3.0, 2)])
def test_the_truth_names_each_exchanges_own_complete(scale: float, seed: int) -> None:
    # issue 22: tasks on under the default lanes, several exchanges share a conversation id
    # (both directions); the truth's complete times are, per conversation id, exactly the
    # ts of the log's a2a.complete events, and its first replies those of the replies
    res = simulate(scale_arrivals(SimConfig(n_messages=600), scale), seed=seed)
    truth = res.truth
    assert truth["run_id"].n_unique() == truth.height
    per_conversation = truth.group_by("conversation_id").len()
    assert per_conversation["len"].max() > 1  # the log alone does not pair them
    assert (truth["lane"] == "nested").all()
    assert (truth["session_lane"] == "session:" + truth["session_key"]).all()
    completes = (
        res.events.filter(pl.col("type") == "a2a.complete")
        .select(
            pl.col("data").struct.field("conversationId").alias("conversation_id"),
            pl.col("event_time").alias("end_time"),
        )
        .sort(pl.all())
    )
    expected = (
        truth.filter(pl.col("end_time").is_not_null())
        .select("conversation_id", "end_time")
        .sort(pl.all())
    )
    assert completes.equals(expected)
    # every exchange's complete comes after its send and its first reply
    assert (truth["end_time"] >= truth["start_time"]).all()
    replied = truth.filter(pl.col("outcome") == "replied")
    assert (replied["end_time"] >= replied["reply_time"]).all()
    assert (replied["first_reply_s"] >= 0).all()
