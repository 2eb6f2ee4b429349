"""The capacity search: the highest arrival rate at which a latency quantile stays under a target.

:func:`scale_arrivals` multiplies every arrival rate of a configuration;
:func:`capacity_search` bisects that scale per replication (:func:`capacity_replication`,
with common random numbers: every scale of replication ``k`` sees the same messages) and
reports the mean and a confidence interval over the replications (:class:`CapacityResult`);
:func:`latency_quantile` is the figure it holds against the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from a2a_lab.sim.config import PoissonArrivals, SimConfig, TraceArrivals
from a2a_lab.sim.experiments.replicate import RunOptions, replication_seed, run_tasks, t_quantile
from a2a_lab.sim.run import simulate

__all__ = [
    "CapacityResult",
    "CapacityTask",
    "SearchOptions",
    "capacity_replication",
    "capacity_search",
    "latency_quantile",
    "scale_arrivals",
]


def scale_arrivals(config: SimConfig, factor: float) -> SimConfig:
    """The configuration with every arrival rate multiplied by ``factor``.

    Poisson rates (per pair and per agent) are multiplied; a replayed trace runs ``factor``
    times faster (its ``time_scale`` is divided). With the same seed the scaled run sees the
    same messages, rescaled in time (:mod:`~a2a_lab.sim.workload.plan`).

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> scale_arrivals(mm1(0.4, 1.0, n_messages=10), 2.0).total_rate_per_s
    0.8
    """
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"rate_scale must be a positive number, got {factor!r}")
    wl = config.workload
    if isinstance(wl, PoissonArrivals):
        new_wl: PoissonArrivals | TraceArrivals = wl.model_copy(
            update={
                "pairs": [
                    p.model_copy(update={"rate_per_s": p.rate_per_s * factor}) for p in wl.pairs
                ],
                "agents": [
                    a.model_copy(update={"rate_per_s": a.rate_per_s * factor}) for a in wl.agents
                ],
            }
        )
    else:
        new_wl = wl.model_copy(update={"time_scale": wl.time_scale / factor})
    return config.model_copy(update={"workload": new_wl})


def latency_quantile(
    result: Any,
    q: float,
    *,
    warmup_s: float = 0.0,
    unanswered: Literal["infinite", "exclude"] = "infinite",
) -> float:
    """A quantile of the send → reply latency of one run.

    Parameters
    ----------
    result
        A :class:`~a2a_lab.sim.run.SimResult`.
    q
        The quantile (0.95 for p95).
    warmup_s
        Leave out messages sent before this time.
    unanswered
        ``"infinite"``: a message that got no reply (no reply in time, refused by the gate)
        has an infinite latency, so a run where more than ``1 - q`` of the messages go
        unanswered has an infinite quantile; ``"exclude"``: only replied messages count
        (as in :meth:`~a2a_lab.sim.run.SimResult.summary`).

    Returns
    -------
    float
        Linear interpolation between order statistics (numpy's default); inf when the
        interpolation touches an unanswered message; NaN without messages.

    Examples
    --------
    >>> from a2a_lab.sim import simulate
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> res = simulate(mm1(0.5, 1.0, n_messages=500), seed=1)
    >>> latency_quantile(res, 0.95) == res.summary()["p95_latency_s"]
    True
    """
    plan, trace = result.plan, result.trace
    keep = plan.arrival_s >= warmup_s
    latency = (trace.reply_s - plan.arrival_s)[keep]
    latency = (
        latency[trace.outcome[keep] == 0]
        if unanswered == "exclude"
        else np.where(np.isnan(latency), np.inf, latency)
    )
    if latency.size == 0:
        return float("nan")
    x = np.sort(latency)
    pos = q * (x.size - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if math.isinf(x[hi]):
        return math.inf
    return float(x[lo] + (x[hi] - x[lo]) * (pos - lo))


@dataclass(frozen=True)
class CapacityTask:
    """One replication's capacity search (what a worker of :func:`capacity_search` receives).

    Attributes are the parameters of :func:`capacity_search` of the same names, plus the
    ``replication`` number.
    """

    config: SimConfig
    seed: int
    replication: int
    target_latency_s: float
    quantile: float
    rel_tol: float
    start_scale: float
    max_doublings: int
    warmup_s: float
    unanswered: Literal["infinite", "exclude"]


def capacity_replication(task: CapacityTask) -> dict[str, Any]:
    """Bisect one replication's capacity (the worker function of :func:`capacity_search`).

    The latency quantile of replication ``k`` is a function of the arrival-rate scale
    alone: every scale reuses the replication's draws (common random numbers). Starting
    from ``start_scale`` the search doubles or halves the scale until the target is
    bracketed (at most ``max_doublings`` times), then bisects on the log scale until the
    bracket is narrower than ``rel_tol`` (relative).

    Returns
    -------
    dict
        ``replication``; ``scale`` (the highest scale found to meet the target; NaN when
        even the smallest one tried missed it); ``scale_above`` (the lowest scale found to
        miss it; NaN when even the largest tried met it); ``quantile_at_scale``;
        ``evaluations`` (runs simulated); ``bracketed``.

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> task = CapacityTask(mm1(0.5, 1.0, n_messages=300), 1, 0, 10.0, 0.9, 0.05, 1.0, 10, 0.0, "infinite")
    >>> out = capacity_replication(task)
    >>> out["bracketed"], out["scale"] < out["scale_above"] <= out["scale"] * 1.05
    (True, True)
    """
    seed = replication_seed(task.seed, task.replication)
    evaluations = 0

    def measure(scale: float) -> float:
        nonlocal evaluations
        evaluations += 1
        result = simulate(scale_arrivals(task.config, scale), seed)
        return latency_quantile(
            result, task.quantile, warmup_s=task.warmup_s, unanswered=task.unanswered
        )

    def meets(value: float) -> bool:
        return value <= task.target_latency_s  # NaN (no message) does not meet a target

    scale = task.start_scale
    value = measure(scale)
    lo = hi = math.nan
    lo_value = math.nan
    if meets(value):
        lo, lo_value = scale, value
        for _ in range(task.max_doublings):
            scale *= 2.0
            value = measure(scale)
            if not meets(value):
                hi = scale
                break
            lo, lo_value = scale, value
    else:
        hi = scale
        for _ in range(task.max_doublings):
            scale /= 2.0
            value = measure(scale)
            if meets(value):
                lo, lo_value = scale, value
                break
            hi = scale
    bracketed = not (math.isnan(lo) or math.isnan(hi))
    while bracketed and hi / lo - 1.0 > task.rel_tol:
        mid = math.sqrt(lo * hi)
        value = measure(mid)
        if meets(value):
            lo, lo_value = mid, value
        else:
            hi = mid
    return {
        "replication": task.replication,
        "scale": lo,
        "scale_above": hi,
        "quantile_at_scale": lo_value,
        "evaluations": evaluations,
        "bracketed": bracketed,
    }


@dataclass(frozen=True)
class CapacityResult:
    """The outcome of :func:`capacity_search`.

    Attributes
    ----------
    rate_per_s, rate_low, rate_high
        The capacity (the mean over replications of the highest total arrival rate meeting
        the target) and its confidence interval, which covers both the spread between
        replications and the bisection's resolution (see :func:`capacity_search`).
    scale, scale_low, scale_high
        The same as multiples of the configuration's arrival rates.
    base_rate_per_s
        The configuration's total arrival rate (NaN for a replayed trace, whose capacity is
        given as a scale only).
    target_latency_s, quantile, level
        What was searched for.
    replications
        One row per replication (see :func:`capacity_replication`) with its ``rate_per_s``.
    """

    rate_per_s: float
    rate_low: float
    rate_high: float
    scale: float
    scale_low: float
    scale_high: float
    base_rate_per_s: float
    target_latency_s: float
    quantile: float
    level: float
    replications: pl.DataFrame = field(repr=False)

    @property
    def bracketed(self) -> bool:
        """Whether every replication's capacity was bracketed (else the figures are bounds)."""
        return bool(self.replications["bracketed"].all())

    def __str__(self) -> str:
        q = f"p{100 * self.quantile:g}"
        where = (
            f"{self.rate_per_s:.4g}/s [{self.rate_low:.4g}, {self.rate_high:.4g}]"
            if not math.isnan(self.base_rate_per_s)
            else ""
        )
        return (
            f"capacity for {q} latency ≤ {self.target_latency_s:g} s: {where} "
            f"= ×{self.scale:.4g} [{self.scale_low:.4g}, {self.scale_high:.4g}] of the configured rate "
            f"({100 * self.level:g} % CI over {self.replications.height} replications)"
        ).replace("  ", " ")


@dataclass(frozen=True)
class SearchOptions:
    """How each replication of :func:`capacity_search` brackets and bisects the scale.

    Attributes
    ----------
    rel_tol
        Relative width of each replication's final bracket.
    start_scale
        The first scale tried.
    max_doublings
        Most doublings (or halvings) while bracketing; a replication that stays unbracketed
        gives a bound (see :attr:`CapacityResult.bracketed`).
    """

    rel_tol: float = 0.01
    start_scale: float = 1.0
    max_doublings: int = 20


def capacity_search(
    config: SimConfig,
    *,
    target_latency_s: float,
    target_quantile: float = 0.95,
    unanswered: Literal["infinite", "exclude"] = "infinite",
    level: float = 0.95,
    options: RunOptions | None = None,
    search: SearchOptions | None = None,
) -> CapacityResult:
    """The highest arrival rate whose latency quantile stays under a target, with its CI.

    **Method.** Arrival rates are varied by one factor, the *scale* (every rate of the
    configuration times the scale, :func:`scale_arrivals`). Replication ``k`` runs every
    scale with the same seed (:func:`replication_seed`), i.e. with the same messages,
    service times and replies, only closer together or further apart (common random
    numbers). Its latency quantile is then a deterministic function of the scale, rising
    with it (exactly so for a FIFO queue, whose waits grow when the same gaps shrink), and
    :func:`capacity_replication` bisects it: doubling or halving from ``start_scale`` until
    the target is bracketed, then bisecting on the log scale to a relative width of
    ``rel_tol``. Replication ``k``'s capacity is the highest scale found to meet the target.
    The replications are independent, so the capacity is their mean. Its confidence
    interval takes the bisection's resolution into account: replication ``k``'s true
    capacity lies between the scale found to meet the target and the lowest scale found to
    miss it (``scale_above``), so the interval runs from the Student-t interval's lower end
    over the former (never below 0) to its upper end over the latter. Replications that end
    in the same bracket (common random numbers make that likely with a coarse ``rel_tol``)
    thus give the bracket, not an interval of width zero. Each replication's search is one
    task on the executor, so replications run in parallel.

    By default a message without a reply counts as infinitely late, so a load at which more
    than ``1 - target_quantile`` of the messages are refused or time out never meets the
    target (``unanswered="exclude"`` looks at replied messages only, as
    :meth:`~a2a_lab.sim.run.SimResult.summary` does, whose latencies are capped by the
    wait limit).

    The capacity belongs to the configured run length: runs start empty, and a short run
    sees less congestion than steady state. Use a horizon long against the queue's
    relaxation time (heavy load relaxes slowly) or a warm-up.

    Parameters
    ----------
    config
        The configuration; its arrival rates are the scale's unit.
    target_latency_s
        The latency target (seconds).
    target_quantile
        The latency quantile held to the target (0.95: p95).
    unanswered
        ``"infinite"`` or ``"exclude"`` (see :func:`latency_quantile`).
    level
        Confidence level.
    options
        Replications (at least 2 for an interval), seed, warm-up, executor, workers and
        progress bar (:class:`~a2a_lab.sim.experiments.replicate.RunOptions`).
    search
        How each replication brackets and bisects the scale (:class:`SearchOptions`).

    Returns
    -------
    CapacityResult

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> from a2a_lab.sim.experiments.replicate import RunOptions
    >>> cap = capacity_search(mm1(0.5, 1.0, n_messages=2000), target_latency_s=15.0, target_quantile=0.95,
    ...                       options=RunOptions(replications=4, seed=3, workers=1))
    >>> lam = 1.0 - math.log(20.0) / 15.0  # M/M/1: the sojourn is exponential with rate mu - lambda
    >>> cap.bracketed, cap.rate_low < lam < cap.rate_high
    (True, True)
    """
    opts = options if options is not None else RunOptions()
    _check_search(target_latency_s, target_quantile, opts.replications)
    target = (float(target_latency_s), float(target_quantile))
    rows = run_tasks(
        capacity_replication,
        _capacity_tasks(config, target, unanswered, opts, search or SearchOptions()),
        executor=opts.executor,
        workers=opts.workers,
        progress=opts.progress,
        desc="capacity",
    )
    return _capacity_result(
        rows, config.total_rate_per_s, float(target_latency_s), float(target_quantile), level
    )


def _capacity_tasks(
    config: SimConfig,
    target: tuple[float, float],
    unanswered: Literal["infinite", "exclude"],
    opts: RunOptions,
    bounds: SearchOptions,
) -> list[CapacityTask]:
    """One bisection task per replication (``target``: latency in seconds, quantile)."""
    return [
        CapacityTask(
            config,
            opts.seed,
            k,
            target[0],
            target[1],
            bounds.rel_tol,
            bounds.start_scale,
            bounds.max_doublings,
            opts.warmup_s,
            unanswered,
        )
        for k in range(opts.replications)
    ]


def _check_search(target_latency_s: float, target_quantile: float, replications: int) -> None:
    """Raise ValueError on a target or a replication count no search can meet."""
    if not 0 < target_quantile < 1:
        raise ValueError("target_quantile must be in (0, 1)")
    if not target_latency_s > 0:
        raise ValueError("target_latency_s must be positive")
    if replications < 1:
        raise ValueError("replications must be at least 1")


def _capacity_result(
    rows: list[dict[str, Any]],
    base: float,
    target_latency_s: float,
    target_quantile: float,
    level: float,
) -> CapacityResult:
    """The mean capacity of the replications' ``rows`` and its Student-t interval."""
    reps = pl.DataFrame(rows).with_columns((pl.col("scale") * base).alias("rate_per_s"))
    low, mean, high = _capacity_interval(reps, level)
    return CapacityResult(
        rate_per_s=mean * base,
        rate_low=low * base,
        rate_high=high * base,
        scale=mean,
        scale_low=low,
        scale_high=high,
        base_rate_per_s=base,
        target_latency_s=target_latency_s,
        quantile=target_quantile,
        level=level,
        replications=reps,
    )


def _capacity_interval(reps: pl.DataFrame, level: float) -> tuple[float, float, float]:
    """``(low, mean, high)`` of the replications' capacities (scales), bisection included.

    The lower end is the t interval's over the scales found to meet the target (clipped at
    0: a capacity is never negative), the upper end the t interval's over the lowest scales
    found to miss it, or over the former where a replication never missed (unbracketed).
    One replication gives no interval (NaN ends).
    """
    met = reps["scale"].to_numpy().astype(float)
    missed = reps["scale_above"].to_numpy().astype(float)
    mean = float(met.mean())
    n = len(met)
    if n < 2:
        return math.nan, mean, math.nan
    t = t_quantile(level, n)
    low = max(0.0, mean - t * float(met.std(ddof=1)) / math.sqrt(n))
    upper = missed if np.isfinite(missed).all() else met
    high = float(upper.mean()) + t * float(upper.std(ddof=1)) / math.sqrt(n)
    return low, mean, high
