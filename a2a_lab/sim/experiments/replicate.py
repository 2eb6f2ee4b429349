"""Independent replications in parallel, and confidence intervals over them.

The plumbing every experiment shares lives here too: the seed of replication ``k``
(:func:`replication_seed`) and running tasks on any executor with a progress bar
(:func:`run_tasks`), which :mod:`~a2a_lab.sim.experiments.sweep` and :mod:`~a2a_lab.sim.experiments.capacity` use.

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
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import polars as pl
from scipy import stats

from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.run import simulate

__all__ = [
    "RunOptions",
    "confidence_interval",
    "replicate",
    "replication_seed",
    "replication_summary",
    "run_tasks",
    "t_quantile",
]


@dataclass(frozen=True)
class RunOptions:
    """How an experiment runs its replications (:func:`~a2a_lab.sim.experiments.sweep.sweep`,
    :func:`~a2a_lab.sim.experiments.capacity.capacity_search`).

    Attributes
    ----------
    replications
        Independent replications (per grid point; at least 1, 2 for an interval).
    seed
        The experiment's seed: replication ``k`` runs with ``replication_seed(seed, k)``.
    warmup_s
        Leave out messages sent before this simulated time.
    executor
        Any :class:`concurrent.futures.Executor`; None: a process pool of ``workers``.
    workers
        Processes of the default pool (None: one per core; 1: in this process).
    progress
        A :mod:`tqdm.auto` bar of finished replications (None: in a terminal or a Jupyter
        kernel, not under pytest or nbval).
    """

    replications: int = 10
    seed: int = 0
    warmup_s: float = 0.0
    executor: Executor | None = None
    workers: int | None = None
    progress: bool | None = None


_T = TypeVar("_T")
_R = TypeVar("_R")


def replication_seed(seed: int, replication: int) -> np.random.SeedSequence:
    """The seed sequence of replication ``replication`` of an experiment seeded ``seed``.

    Examples
    --------
    >>> ss = replication_seed(7, 2)
    >>> ss.spawn_key, ss.entropy == np.random.SeedSequence(7).spawn(3)[2].entropy
    ((2,), True)
    >>> bool((ss.generate_state(4) == np.random.SeedSequence(7).spawn(3)[2].generate_state(4)).all())
    True
    """
    return np.random.SeedSequence(seed, spawn_key=(replication,))


def _interactive() -> bool:
    """A person is watching: a terminal on stderr or a Jupyter kernel, and not a test run."""
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def _progress_bar(show: bool | None, total: int, desc: str) -> Any:
    if not (_interactive() if show is None else show):
        return None
    # imported only when shown: tqdm.auto warns on import in a kernel without ipywidgets
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run")


def run_tasks(
    fn: Callable[[_T], _R],
    tasks: Sequence[_T],
    *,
    executor: Executor | None,
    workers: int | None,
    progress: bool | None,
    desc: str,
) -> list[_R]:
    """``[fn(t) for t in tasks]``, on ``executor`` (or a local process pool), in task order.

    ``workers`` bounds the local pool (1 or fewer: in this process); ``progress`` shows a
    :mod:`tqdm.auto` bar of finished tasks (None: when a person is watching, not under
    pytest); ``desc`` labels it.
    """
    results: list[Any] = [None] * len(tasks)
    if not tasks:
        return results
    bar = _progress_bar(progress, len(tasks), desc)
    try:
        n_workers = min(len(tasks), workers or os.cpu_count() or 1)
        if executor is None and n_workers <= 1:
            for i, task in enumerate(tasks):
                results[i] = fn(task)
                if bar is not None:
                    bar.update()
            return results
        own = executor is None
        # spawn: each worker imports a2a_lab afresh (safe with Polars' thread pool)
        pool = (
            ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("spawn"))
            if own
            else executor
        )
        assert pool is not None
        futures: dict[Future[_R], int] = {}
        try:
            futures = {pool.submit(fn, task): i for i, task in enumerate(tasks)}
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                if bar is not None:
                    bar.update()
        finally:
            for fut in futures:
                fut.cancel()
            if own:
                pool.shutdown(wait=True, cancel_futures=True)
        return results
    finally:
        if bar is not None:
            bar.close()


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
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> reps = replicate(mm1(0.5, 1.0, n_messages=500), 3, seed=1, workers=1)
    >>> reps.height, reps["messages"].to_list()
    (3, [500, 500, 500])
    """
    seeds = np.random.SeedSequence(seed).spawn(replications)
    tasks = [(config, s, warmup_s) for s in seeds]
    rows = run_tasks(
        replication_summary,
        tasks,
        executor=executor,
        workers=workers,
        progress=False,
        desc="replications",
    )
    return pl.DataFrame([{"replication": k, **row} for k, row in enumerate(rows)])


def t_quantile(level: float, replications: int) -> float:
    """The two-sided Student t quantile of a ``level`` interval over ``replications`` runs.

    The one t-interval of the simulator: half-width = ``t_quantile(level, n) * sd / sqrt(n)``.

    >>> round(t_quantile(0.95, 5), 4)
    2.7764
    """
    return float(stats.t.ppf(0.5 + level / 2, replications - 1))


def confidence_interval(
    values: Sequence[float] | np.ndarray | pl.Series,
    level: float = 0.99,
    *,
    bounds: tuple[float | None, float | None] = (None, None),
) -> tuple[float, float, float]:
    """Mean and Student-t confidence interval of independent replication estimates.

    Parameters
    ----------
    values
        One estimate per replication (at least two).
    level
        Confidence level.
    bounds
        The range the estimated quantity can take (``None``: unbounded), e.g. ``(0, None)``
        for a wait: the interval is clipped to it. The true mean lies in that range, so
        clipping loses no coverage, and the interval never shows a value no run can have
        (a t interval on few replications easily reaches below zero). A log-scale interval
        was not used: a figure can be exactly 0 in a run (no wait at light load).

    Returns
    -------
    tuple of float
        ``(mean, low, high)``.

    Examples
    --------
    >>> mean, low, high = confidence_interval([3.9, 4.1, 4.0, 4.05, 3.95], level=0.95)
    >>> round(mean, 3), round(low, 3), round(high, 3)
    (4.0, 3.902, 4.098)
    >>> confidence_interval([0.0, 0.0, 3.0], level=0.95, bounds=(0.0, None))[1]
    0.0
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        raise ValueError("a confidence interval needs at least two replications")
    mean = float(x.mean())
    half = float(t_quantile(level, x.size) * x.std(ddof=1) / np.sqrt(x.size))
    low, high = mean - half, mean + half
    if bounds[0] is not None:
        low = max(low, bounds[0])
    if bounds[1] is not None:
        high = min(high, bounds[1])
    return mean, low, high
