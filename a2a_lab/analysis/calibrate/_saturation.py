"""Which session lanes a log shows at or above saturation: where no service-time fit is safe.

A fit measures a run's service time only where the log tells when it started
(:mod:`._occupancy`). On a lane that is never idle, the only runs measured are the few that
found it idle (early in the log, or in a lull), and a queue that grows without bound makes
the log's own picture of the agent unreliable: the issue's overloaded agent (ρ ≈ 1.16) was
fitted −50 … +41 % off. So every lane's load is estimated from the log in two ways:

- ``busy``: the share of the log's span the lane had a run in it (the union of every
  run's ``[request, end]``, a hidden run counted to what the log says it outlived: the
  wait limit of a send that timed out, the timeout of a turn): a queue at
  ρ ≥ 1 is busy all the time, a stable one a share ρ of it;
- ``rho``: the offered load, the work the lane was asked for (its runs times the fitted
  mean of their kind: service for a send's run and an announce step, turn time for a
  ping-pong step) over the span.

A lane with either at or above :data:`SATURATION` is saturated; its agent is named in a
:class:`~._window.FitWarning` and flagged in :attr:`Calibration.service`. The gateway-wide
``nested`` lane gets the same test on its offered load (:func:`pool_load`): every run's
work over its slots.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from a2a_lab.sim.distributions import ServiceTime

__all__ = ["SATURATION", "lane_load", "pool_load"]

#: Busy share or offered load at which a lane counts as saturated (ρ ≥ ~1: a stable
#: queue at ρ = 0.95 is already dominated by its backlog).
SATURATION: Final = 0.95


def lane_load(
    jobs: pl.DataFrame,
    service_of: dict[str, ServiceTime],
    turn_of: dict[str, ServiceTime],
    span_ms: float,
) -> pl.DataFrame:
    """Per agent, its most loaded session lane.

    Parameters
    ----------
    jobs
        Every run (:func:`~._occupancy.run_jobs`): ``agent``, ``timeline``, ``job``,
        ``request``, ``end`` (ms), and optionally ``floor`` (ms: a hidden run went on at
        least this long, e.g. past the wait limit its requester gave up at).
    service_of, turn_of
        The fitted service and turn times per agent.
    span_ms
        The log's span.

    Returns
    -------
    pl.DataFrame
        ``agent``, ``lane`` (its busiest lane), ``busy``, ``rho`` (the largest of the
        agent's lanes), ``saturated``.

    Examples
    --------
    >>> from a2a_lab.sim import Exponential
    >>> jobs = pl.DataFrame({
    ...     "agent": ["b"] * 3, "timeline": ["agent:b:main"] * 3, "job": ["first"] * 3,
    ...     "request": [0.0, 10.0, 60.0], "end": [40.0, 50.0, None],
    ... })
    >>> out = lane_load(jobs, {"b": Exponential(mean_s=0.03)}, {"b": Exponential(mean_s=0.01)}, 100.0)
    >>> out.select("busy", "rho", "saturated").row(0)
    (0.5, 0.9, False)
    """
    if jobs.is_empty() or span_ms <= 0:
        return pl.DataFrame(
            schema={
                "agent": pl.String,
                "lane": pl.String,
                "busy": pl.Float64,
                "rho": pl.Float64,
                "saturated": pl.Boolean,
            }
        )
    service_ms = {a: d.mean * 1000.0 for a, d in service_of.items()}
    turn_ms = {a: d.mean * 1000.0 for a, d in turn_of.items()}
    work = (
        pl.when(pl.col("job") == "turn")
        .then(pl.col("agent").replace_strict(turn_ms, default=None, return_dtype=pl.Float64))
        .otherwise(
            pl.col("agent").replace_strict(service_ms, default=None, return_dtype=pl.Float64)
        )
    )
    # a hidden run lasted at least to its floor (a run its requester stopped waiting for
    # went on past the wait limit), else to its request
    floor = pl.col("floor") if "floor" in jobs.columns else pl.lit(None, pl.Float64)
    end = pl.max_horizontal("request", pl.coalesce("end", floor, "request"))
    reach = pl.col("_end").cum_max().shift(1).over("timeline")
    per_lane = (
        jobs.filter(pl.col("request").is_not_null())
        .with_columns(end.alias("_end"), work.alias("_work"))
        .sort("timeline", "request")
        # merged busy periods: a run requested after every earlier one ended opens a new one
        .with_columns(
            (reach.is_null() | (pl.col("request") > reach))
            .cum_sum()
            .over("timeline")
            .alias("_period")
        )
        .group_by("timeline", "_period")
        .agg(
            pl.col("agent").mode().first().alias("agent"),
            (pl.col("_end").max() - pl.col("request").min()).alias("_busy"),
            pl.col("_work").sum().alias("_work"),
        )
        .group_by("timeline")
        .agg(
            pl.col("agent").mode().first().alias("agent"),
            (pl.col("_busy").sum() / span_ms).alias("busy"),
            (pl.col("_work").sum() / span_ms).alias("rho"),
        )
    )
    return (
        per_lane.sort("agent", "rho", "busy", "timeline", descending=[False, True, True, False])
        .group_by("agent", maintain_order=True)
        .agg(
            pl.col("timeline").first().alias("lane"),
            pl.col("busy").max(),
            pl.col("rho").max(),
        )
        .with_columns(
            ((pl.col("busy") >= SATURATION) | (pl.col("rho") >= SATURATION)).alias("saturated")
        )
    )


def pool_load(
    jobs: pl.DataFrame,
    service_of: dict[str, ServiceTime],
    turn_of: dict[str, ServiceTime],
    span_ms: float,
    slots: int | None,
) -> float | None:
    """The offered load of the gateway-wide ``nested`` lane: every run's fitted mean work
    over ``slots`` times the span (None without a limit or a span).

    Examples
    --------
    >>> from a2a_lab.sim import Exponential
    >>> jobs = pl.DataFrame({"agent": ["b"] * 4, "job": ["first", "turn", "first", "tail"]})
    >>> pool_load(jobs, {"b": Exponential(mean_s=0.03)}, {"b": Exponential(mean_s=0.01)}, 100.0, 2)
    0.5
    """
    if slots is None or span_ms <= 0 or jobs.is_empty():
        return None
    service_ms = {a: d.mean * 1000.0 for a, d in service_of.items()}
    turn_ms = {a: d.mean * 1000.0 for a, d in turn_of.items()}
    work = jobs.select(
        pl.when(pl.col("job") == "turn")
        .then(pl.col("agent").replace_strict(turn_ms, default=None, return_dtype=pl.Float64))
        .otherwise(
            pl.col("agent").replace_strict(service_ms, default=None, return_dtype=pl.Float64)
        )
        .sum()
    ).item()
    return float(work or 0.0) / (slots * span_ms)
