"""Runs queued behind a hidden run: their start, drawn from what the log says about that run.

:mod:`._occupancy` measures a run's service time only where the log tells when it started.
A ping-pong turn that outlived the turn timeout hides when its session became free (runtime
§3: the flow moves on, the turn runs to its end unseen), and so does an announce step that
outlived its 30 s timeout; the next run on that session then has an unknown start: at its
request if the hidden run was over by then, else at its end (first come first served,
runtime §1). On a slow agent most unmeasured runs are of this kind.

What the log does tell about them is exact. Three patterns are used, each with a known
start of the first hidden run (every run requested before it was over by then):

- a turn ``H`` that timed out: it ended at ``s_H + T``, ``T`` past ``r_H + turn_timeout``
  (``r_H``: its request, the last logged reply of its exchange);
- an announce step ``A`` whose complete came at its timeout: it ended past the complete.
  Its request is the last logged reply, or ``r_H + turn_timeout`` after a turn that timed
  out; after a turn that logged nothing (skip, empty reply, agent error) it is unseen, and
  such steps are left out;
- ``H`` then ``A`` of the same flow, requested when the turn timed out and queued behind
  ``H``: it ended at ``max(r_A, s_H + T) + X``, past its complete.

The next run ``J`` on the session (requested at ``r_J``, nothing in between) started at
``max(r_J, E)`` with ``E`` the end of the hidden run. Its likelihood is that of the reply at
``e_J`` (or of no reply within the wait limit), averaged over ``E``: ``T`` and ``X`` follow
the agent's fitted turn time (the twin's announce step takes the turn time too), truncated
to what the log says (stratified draws by inverse CDF; the announce bound of the third
pattern as a weight). Which runs qualify depends only on runs requested before them, never
on their own length, so the selection adds no bias; the fitted turn time is a plug-in.
``tests/analysis/test_calibrate_twin.py`` checks every constraint on the simulator's ground truth.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import polars as pl

from a2a_lab.analysis.calibrate._fits import Frozen, TimeData, frozen
from a2a_lab.analysis.calibrate._occupancy import ANNOUNCE_TIMEOUT_MS
from a2a_lab.sim.distributions import ServiceTime

__all__ = ["DRAWS", "behind_hidden", "hidden_data", "start_draws"]

#: Draws of the hidden end per run.
DRAWS: Final = 256
#: Timestamp rounding of the log (ms): a complete this close to the announce timeout may be it.
_ROUND_MS: Final = 2.0
#: Endings of a turn that ran but logged nothing and did not time out: its end is unseen.
_UNSEEN_TURN_END: Final = ("explicit_skip", "empty_reply", "agent_error")


def _hidden_before(jobs: pl.DataFrame, turn_timeout_ms: float) -> pl.DataFrame:
    """First runs right after one hidden run (or a timed-out turn and its announce step).

    A hidden run is a tail job on the target that logged no end; the row says which
    exchange it was, when it started and what it ran past.
    """
    line = "timeline" if "timeline" in jobs.columns else "agent"
    ordered = jobs.with_row_index("_order").sort(line, "request", "_order")

    def prev(col: str, k: int) -> pl.Expr:
        return pl.col(col).shift(k).over(line)

    def hidden(k: int) -> pl.Expr:
        return (
            (prev("job", k) == "tail") & prev("end", k).is_null() & prev("on_target", k)
        ).fill_null(False)

    turn1 = prev("timed_out", 1).fill_null(False)
    single = hidden(1) & prev("run_start", 1).is_not_null()
    pair = (
        hidden(1)
        & ~turn1
        & prev("run_start", 1).is_null()
        & hidden(2)
        & prev("timed_out", 2).fill_null(False)
        & (prev("_row", 2) == prev("_row", 1)).fill_null(False)
        & prev("run_start", 2).is_not_null()
    )
    return (
        ordered.with_columns(
            prev("_row", 1).alias("hidden_row"),
            pl.when(single)
            .then(prev("run_start", 1))
            .otherwise(prev("run_start", 2))
            .alias("hidden_start"),
            # a turn that timed out ran past its timeout; an announce step past its complete
            pl.when(single & turn1)
            .then(prev("request", 1) + turn_timeout_ms)
            .when(single)
            .then(-prev("request", 1))
            .otherwise(prev("request", 2) + turn_timeout_ms)
            .alias("hidden_limit"),
            pair.alias("announced"),
            pl.when(pair).then(prev("request", 1)).alias("announce_request"),
            (
                (pl.col("job") == "first")
                & pl.col("run_start").is_null()
                & pl.col("on_target")
                & (single | pair)
            ).alias("_found"),
        )
        .filter("_found")
        .select(
            *("_row", "hidden_row", "agent", "request", "hidden_start", "hidden_limit"),
            *("announced", "announce_request"),
        )
    )


def behind_hidden(jobs: pl.DataFrame, conv: pl.DataFrame, turn_timeout_ms: float) -> pl.DataFrame:
    """First runs whose only unknown is the end of the hidden run(s) just before them.

    Parameters
    ----------
    jobs
        :func:`~._occupancy.with_idle` output with ``_row``.
    conv
        Exchanges with ``_row``, ``_start_ms``, ``_first_reply_ms``, ``_end_ms``, ``outcome``,
        ``outcome_reason``.
    turn_timeout_ms
        The ping-pong turn timeout.

    Returns
    -------
    pl.DataFrame
        One row per run ``J``: ``_row`` (its exchange), ``hidden_row`` (the exchange of
        the hidden run), ``agent``, ``request`` (``r_J``), ``reply`` (``e_J``; null without
        one), ``timeout`` (no reply within the wait limit), ``hidden_start`` (when the
        first hidden run started), ``hidden_limit`` (it ran past this), ``announced`` (an
        announce step ``A`` followed it), ``announce_request`` (``r_A``) and
        ``announce_limit`` (``A`` ran past this).
    """
    found = _hidden_before(jobs, turn_timeout_ms)
    ex = conv.select(
        "_row",
        (pl.col("_start_ms") + pl.col("_first_reply_ms")).cast(pl.Float64).alias("reply"),
        ((pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") == "timeout")).alias(
            "timeout"
        ),
        (pl.col("outcome") == "replied").alias("_replied"),
    )
    completes = conv.select(
        pl.col("_row").alias("hidden_row"),
        pl.col("_end_ms").alias("_done"),
        # a turn that logged nothing ended unseen: the announce step after it was requested then
        pl.col("termination_reason").is_in(_UNSEEN_TURN_END).fill_null(False).alias("_unseen"),
    )

    def past_complete(asked: pl.Expr) -> pl.Expr:
        # the complete came at the step's end or at its timeout, whichever was first
        return pl.min_horizontal("_done", asked + ANNOUNCE_TIMEOUT_MS) - _ROUND_MS

    lone_announce = pl.col("hidden_limit") < 0
    return (
        found.join(ex, on="_row", how="inner")
        .join(completes, on="hidden_row", how="left")
        .filter(
            (pl.col("_replied") | pl.col("timeout"))
            & pl.col("_done").is_not_null()
            & ~(lone_announce & pl.col("_unseen"))
        )
        .with_columns(
            pl.when(lone_announce)
            .then(past_complete(-pl.col("hidden_limit")))
            .otherwise("hidden_limit")
            .alias("hidden_limit"),
            pl.when("announced")
            .then(past_complete(pl.col("announce_request")))
            .alias("announce_limit"),
        )
        .drop("_done", "_replied", "_unseen")
    )


def _truncated(d: Frozen, lower_s: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Draws of ``d`` above ``lower_s`` (per row) at uniforms ``u`` (per column): inverse CDF."""
    lo = np.asarray(d.cdf(np.maximum(lower_s, 0.0)), dtype=float)
    p = lo[:, None] + (1.0 - lo[:, None]) * u[None, :]
    return np.asarray(d.ppf(np.clip(p, 0.0, 1.0 - 1e-12)), dtype=float)


def start_draws(
    runs: pl.DataFrame, turn_time: Frozen, seed: int = 0, draws: int = DRAWS
) -> tuple[np.ndarray, np.ndarray]:
    """Draws of each run's start (ms, ``runs × draws``) and their weights.

    ``runs`` are rows of :func:`behind_hidden` of one agent; ``turn_time`` its turn time
    (hidden turn and announce step, :func:`~._fits.frozen`). A weight is 0 where the draw
    contradicts the log (an announce step that ended before the complete said).
    """
    rng = np.random.default_rng(seed)
    u = (np.arange(draws) + rng.random(draws)) / draws
    v = rng.permutation((np.arange(draws) + rng.random(draws)) / draws)
    s_h = runs["hidden_start"].to_numpy().astype(float)
    limit = runs["hidden_limit"].to_numpy().astype(float)
    end = s_h[:, None] + 1000.0 * _truncated(turn_time, (limit - s_h) / 1000.0, u)
    announced = runs["announced"].to_numpy().astype(bool)
    asked = runs["announce_request"].fill_null(0.0).to_numpy().astype(float)
    bound = runs["announce_limit"].fill_null(-np.inf).to_numpy().astype(float)
    x = np.asarray(turn_time.ppf(v), dtype=float) * 1000.0
    end = np.where(announced[:, None], np.maximum(asked[:, None], end) + x[None, :], end)
    weight = np.where(end < bound[:, None], 0.0, 1.0)
    request = runs["request"].to_numpy().astype(float)
    return np.maximum(request[:, None], end), weight


def hidden_data(
    runs: pl.DataFrame,
    obs: pl.DataFrame,
    turn_of: dict[str, ServiceTime],
    agents: list[str],
    max_wait_ms: float,
) -> tuple[dict[str, TimeData], dict[str, int]]:
    """Each listed agent's run times with its runs behind a hidden run added.

    ``runs``: :func:`behind_hidden`; ``obs``: the exact and censored times (``to_agent``,
    ``time_s``, ``censored``) of the first fit; ``turn_of``: the fitted turn times (the
    hidden run's length). Returns the likelihood data per agent that has such runs, and
    the runs used per agent.
    """
    data: dict[str, TimeData] = {}
    used: dict[str, int] = {}
    for agent in agents:
        mine = runs.filter(pl.col("agent") == agent)
        turn = frozen(turn_of[agent])
        if mine.is_empty() or turn is None:
            continue
        start, weight = start_draws(mine, turn)
        replied = mine["reply"].is_not_null().to_numpy()
        reply = mine["reply"].fill_null(0.0).to_numpy()[:, None]
        gap_r = (reply[replied] - start[replied]) / 1000.0
        keep = ((gap_r > 0) & (weight[replied] > 0)).any(axis=1)
        limit = mine["request"].to_numpy()[:, None] + max_wait_ms
        waited = ~replied & (weight.sum(axis=1) > 0)
        own = obs.filter(pl.col("to_agent") == agent)
        data[agent] = TimeData(
            own.filter(~pl.col("censored"))["time_s"].to_numpy().astype(float),
            own.filter(pl.col("censored"))["time_s"].to_numpy().astype(float),
            gap_r[keep],
            weight[replied][keep],
            (limit[waited] - start[waited]) / 1000.0,
            weight[waited],
        )
        used[agent] = int(keep.sum() + waited.sum())
    return data, used
