"""Ground truth of simulated exchanges, and the log-derived table compared with it.

The one place the tests read what the simulator did per message: :attr:`SimResult.truth`
(per logged exchange, keyed by the send's ``runId``: conversation id, the session lane it
ran on, outcome, first reply, the complete's time, turns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from a2a_lab.sim.run import SimResult


def truth(res: SimResult) -> pl.DataFrame:
    """Per logged message: ``run_id``, ``conversation_id``, ``outcome`` (replied, no_reply,
    concurrency_blocked; a logged guard refusal reads as ``no_reply``, runtime §3b),
    ``first_reply_s`` (the send as logged → the reply, by the log's timestamps), ``end_time``
    (its ``a2a.complete``), ``turns`` and the lane it ran on."""
    return res.truth


def measured_runs(
    exchanges: pl.DataFrame, messages: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The fitted exchanges whose run start the fit read from the log (``run_start``) and
    that were replied, with ``measured_ms`` = reply - run start; and those joined (by
    ``run_id``) to the simulator's service time of the same run, ``service_ms``."""
    used = exchanges.filter(
        pl.col("run_start").is_not_null() & pl.col("first_reply_s").is_not_null()
    ).with_columns(
        (
            (pl.col("start_time").dt.epoch("ms") + pl.col("first_reply_s") * 1000.0)
            - pl.col("run_start")
        ).alias("measured_ms")
    )
    service = messages.select("run_id", (pl.col("service_s") * 1000.0).alias("service_ms"))
    return used, used.join(service, on="run_id", how="inner")


@dataclass(frozen=True)
class Agreement:
    """How a conversation table agrees with the simulated messages."""

    messages: int
    wrong_outcome: int
    wrong_first_reply: int
    wrong_complete: int
    ambiguous: int
    incomplete_but_completed: int
    missing: int
    latency_p50: tuple[float, float]
    latency_p95: tuple[float, float]
    rows: pl.DataFrame

    @property
    def off_budget(self) -> int:
        """Messages whose outcome is wrong, missing or ambiguous."""
        return int(self.rows.filter(pl.col("_wrong") | pl.col("_amb") | pl.col("_missing")).height)


def compare(res: SimResult, conv: pl.DataFrame) -> Agreement:
    """Join the conversation table to the simulated messages by the send's ``runId``."""
    t = truth(res)
    got = conv.filter(pl.col("run_id").is_not_null()).select(
        pl.col("run_id"),
        pl.col("outcome").alias("got"),
        pl.col("first_reply_s").alias("got_first_reply_s"),
        pl.col("end_time").alias("got_end_time"),
        pl.col("ambiguous").alias("_amb"),
    )
    rows = t.join(got, on="run_id", how="left").with_columns(
        pl.col("got").is_null().alias("_missing"),
        (pl.col("got") != pl.col("outcome")).fill_null(False).alias("_wrong"),
        # both in whole milliseconds of the log: equal or wrong, no tolerance
        pl.col("got_first_reply_s")
        .ne_missing(pl.col("first_reply_s"))
        .and_(pl.col("got").is_not_null())
        .alias("_wrong_first_reply"),
        pl.col("got_end_time")
        .ne_missing(pl.col("end_time"))
        .and_(pl.col("got").is_not_null())
        .alias("_wrong_complete"),
        pl.col("_amb").fill_null(False),
    )
    replied = rows.filter(pl.col("outcome") == "replied")
    got_lat = rows.filter(pl.col("got") == "replied")["got_first_reply_s"].drop_nulls().to_numpy()
    sim_lat = replied["first_reply_s"].drop_nulls().to_numpy()

    def q(a: np.ndarray, p: float) -> float:
        return float(np.quantile(a, p)) if a.size else float("nan")

    return Agreement(
        messages=t.height,
        wrong_outcome=int(rows["_wrong"].sum()),
        wrong_first_reply=int(rows["_wrong_first_reply"].sum()),
        wrong_complete=int(rows["_wrong_complete"].sum()),
        ambiguous=int(rows["_amb"].sum()),
        incomplete_but_completed=int(rows.filter(pl.col("got") == "incomplete").height),
        missing=int(rows["_missing"].sum()),
        latency_p50=(q(got_lat, 0.5), q(sim_lat, 0.5)),
        latency_p95=(q(got_lat, 0.95), q(sim_lat, 0.95)),
        rows=rows,
    )
