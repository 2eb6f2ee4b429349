"""Independent replications in parallel, and confidence intervals over them.

Replication ``k`` of :func:`replicate` runs with ``numpy.random.SeedSequence(seed).spawn(n)[k]``,
so replications are independent and the whole experiment is reproducible from one seed.
They run in worker processes (:class:`concurrent.futures.ProcessPoolExecutor`, ``spawn``
start method: each worker imports a2a_lab afresh, which is safe with Polars' thread pool)
and each returns only its :meth:`~a2a_lab.sim.run.SimResult.summary`, so a replication of a
million messages ships a few numbers back, not its frames. A script that starts workers
needs the usual ``if __name__ == "__main__":`` guard (notebooks and tests need none).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import polars as pl
from scipy import stats

from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.run import simulate

__all__ = ["confidence_interval", "replicate", "replication_summary"]


def replication_summary(task: tuple[SimConfig, np.random.SeedSequence, float]) -> dict[str, float]:
    """Run one replication and return its summary (the worker function; importable).

    Parameters
    ----------
    task
        ``(config, seed sequence, warm-up seconds)``.
    """
    config, seed, warmup_s = task
    return simulate(config, seed).summary(warmup_s)


def replicate(
    config: SimConfig,
    replications: int,
    *,
    seed: int = 0,
    warmup_s: float = 0.0,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pl.DataFrame:
    """Run independent replications of a configuration, in parallel.

    Parameters
    ----------
    config
        The configuration.
    replications
        How many.
    seed
        The experiment's seed; replication ``k`` runs with ``SeedSequence(seed).spawn(n)[k]``.
    warmup_s
        Warm-up deleted from each replication's summary.
    workers
        Worker processes (default: one per CPU, at most one per replication); 1 runs them in
        this process.
    executor
        Run on this executor instead (e.g. one process pool shared by several experiments);
        ``workers`` is then ignored.

    Returns
    -------
    pl.DataFrame
        One row per replication: ``replication`` and the keys of
        :meth:`~a2a_lab.sim.run.SimResult.summary`.

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> reps = replicate(mm1(0.5, 1.0, n_messages=500), 3, seed=1, workers=1)
    >>> reps.height, reps["messages"].to_list()
    (3, [500, 500, 500])
    """
    seeds = np.random.SeedSequence(seed).spawn(replications)
    tasks = [(config, s, warmup_s) for s in seeds]
    workers = min(replications, workers or os.cpu_count() or 1)
    if executor is not None:
        rows = list(executor.map(replication_summary, tasks))
    elif workers <= 1:
        rows = [replication_summary(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows = list(pool.map(replication_summary, tasks))
    return pl.DataFrame([{"replication": k, **row} for k, row in enumerate(rows)])


def confidence_interval(values: Sequence[float] | np.ndarray | pl.Series, level: float = 0.99) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent replication estimates.

    Parameters
    ----------
    values
        One estimate per replication (at least two).
    level
        Confidence level.

    Returns
    -------
    tuple of float
        ``(mean, low, high)``.

    Examples
    --------
    >>> mean, low, high = confidence_interval([3.9, 4.1, 4.0, 4.05, 3.95], level=0.95)
    >>> round(mean, 3), round(low, 3), round(high, 3)
    (4.0, 3.902, 4.098)
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        raise ValueError("a confidence interval needs at least two replications")
    mean = float(x.mean())
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return mean, mean - half, mean + half
