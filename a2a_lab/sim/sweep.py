"""Parameter sweeps with confidence intervals, on any executor, and the capacity search.

A **sweep** runs every point of a grid of configuration changes with the same independent
replications and returns one row per point: the mean and a Student-t confidence interval of
every figure of :meth:`~a2a_lab.sim.run.SimResult.summary`::

    from a2a_lab.sim import SimConfig
    from a2a_lab.sim.sweep import sweep, capacity_search

    sweep(SimConfig(), {"rate_scale": [0.5, 1, 2], "gate.max_concurrent_flows": [1, 3]},
          replications=10, seed=1)

**Grid.** A mapping of parameter → values (their cartesian product, in order) or a list of
points (mappings, e.g. one per what-if scenario). A parameter is a dotted path into the configuration's JSON form
(``"gate.max_concurrent_flows"``, ``"agents.1.service.mean_s"``, ``"wait"`` — ``None``
switches a policy off, a mapping switches one on) or ``"rate_scale"``, which multiplies
every arrival rate (:func:`scale_arrivals`; applied after the paths).

**Seeding: common random numbers.** Replication ``k`` of every grid point runs with
``numpy.random.SeedSequence(seed, spawn_key=(k,))`` (:func:`replication_seed`, the same
sequence as ``SeedSequence(seed).spawn(n)[k]``, so replication ``k`` of a sweep is
replication ``k`` of :func:`~a2a_lab.sim.experiment.replicate`). The simulator splits it
into one stream per purpose (arrivals, routing, service, mix, turns, …) drawn per message
index (:mod:`~a2a_lab.sim.plan`). The grid point is NOT part of the seed: every point sees
the same messages, service times and replies, so differences between points are the
parameters' own (their confidence intervals are much narrower than those of the points),
and a point's result does not depend on what else is in the grid.

**Executors.** Each (point, replication) is one task of :func:`run_replication` (importable
from the package, so nothing from a notebook has to be pickled). ``executor=None`` runs them
on a process pool of this machine (``workers=1``: in this process); any
:class:`concurrent.futures.Executor` works, e.g. a Dask cluster's
``distributed.Client(...).get_executor()``. Results are identical on every executor.

**Cache.** With ``cache_dir``, a replication's summary is stored under a hash of the
configuration, the seed, the replication, the warm-up and the a2a_lab version
(:func:`cache_key`) and reused by later sweeps; clear the directory after changing the
model's code without changing its version.

**Progress.** A :mod:`tqdm.auto` bar counts finished replications when ``progress`` is True;
``None`` (the default) shows it in a terminal or a Jupyter kernel but not under pytest or
nbval, and notebooks whose outputs are stored pass ``progress=False``.

**Capacity search.** :func:`capacity_search` finds the highest arrival rate at which a
latency quantile stays under a target; see its documentation for the method.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import numpy as np
import polars as pl
from scipy import stats

from a2a_lab.sim.config import PoissonArrivals, SimConfig, TraceArrivals
from a2a_lab.sim.run import SUMMARY_KEYS, simulate

__all__ = [
    "RATE_SCALE",
    "CapacityResult",
    "CapacityTask",
    "ReplicationTask",
    "apply_point",
    "cache_key",
    "capacity_replication",
    "capacity_search",
    "grid_points",
    "latency_quantile",
    "replication_seed",
    "run_replication",
    "scale_arrivals",
    "summarize",
    "sweep",
    "sweep_runs",
]

#: The grid parameter that multiplies every arrival rate.
RATE_SCALE: Final = "rate_scale"
#: Version of the cache entries' layout (part of :func:`cache_key`).
CACHE_FORMAT: Final = 1

_T = TypeVar("_T")
_R = TypeVar("_R")
Grid = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


# ----------------------------------------------------------------------------------------
# configurations of grid points
# ----------------------------------------------------------------------------------------


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


def scale_arrivals(config: SimConfig, factor: float) -> SimConfig:
    """The configuration with every arrival rate multiplied by ``factor``.

    Poisson rates (per pair and per agent) are multiplied; a replayed trace runs ``factor``
    times faster (its ``time_scale`` is divided). With the same seed the scaled run sees the
    same messages, rescaled in time (:mod:`~a2a_lab.sim.plan`).

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> scale_arrivals(mm1(0.4, 1.0, n_messages=10), 2.0).total_rate_per_s
    0.8
    """
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"rate_scale must be a positive number, got {factor!r}")
    wl = config.workload
    if isinstance(wl, PoissonArrivals):
        new_wl: PoissonArrivals | TraceArrivals = wl.model_copy(
            update={
                "pairs": [p.model_copy(update={"rate_per_s": p.rate_per_s * factor}) for p in wl.pairs],
                "agents": [a.model_copy(update={"rate_per_s": a.rate_per_s * factor}) for a in wl.agents],
            }
        )
    else:
        new_wl = wl.model_copy(update={"time_scale": wl.time_scale / factor})
    return config.model_copy(update={"workload": new_wl})


def _set_path(data: Any, path: str, value: Any) -> None:
    """Set ``data[a][b]…`` for the dotted ``path`` ``a.b.…`` (list items by index)."""
    parts = path.split(".")
    node = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            try:
                index = int(part)
                node[index]
            except (ValueError, IndexError):
                raise ValueError(f"grid parameter {path!r}: no item {part!r} in a list of {len(node)}") from None
            key: int | str = index
        elif isinstance(node, dict):
            key = part
        else:
            raise TypeError(f"grid parameter {path!r}: {'.'.join(parts[:depth])!r} is not a mapping or a list")
        if last:
            node[key] = value
            return
        child = node[key] if not isinstance(node, dict) else node.get(key)
        if child is None:
            # a policy that is off (None) is switched on with its defaults, then changed
            child = {}
            node[key] = child
        node = child


def _json_scalar(value: Any) -> Any:
    """A NumPy scalar of a grid as its Python value (JSON knows no other)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"grid value {value!r} of type {type(value).__name__} is not JSON")


def apply_point(config: SimConfig, point: Mapping[str, Any]) -> SimConfig:
    """The configuration of one grid point (dotted paths first, then ``rate_scale``).

    Raises
    ------
    ValueError
        On a path that does not exist or a value the configuration rejects (pydantic's
        error names the field).
    TypeError
        On a path that goes through a value that is neither a mapping nor a list.

    Examples
    --------
    >>> from a2a_lab.sim import SimConfig
    >>> cfg = apply_point(SimConfig(), {"gate.max_concurrent_flows": 1, "wait": None, "rate_scale": 2})
    >>> cfg.gate.max_concurrent_flows, cfg.wait, round(cfg.total_rate_per_s / SimConfig().total_rate_per_s, 12)
    (1, None, 2.0)
    """
    paths = {k: v for k, v in point.items() if k != RATE_SCALE}
    out = config
    if paths:
        data = config.model_dump(mode="json", by_alias=True)
        for path, value in paths.items():
            _set_path(data, path, value)
        # through JSON, as a configuration file is read: strict types, ISO datetimes, arrays
        out = SimConfig.model_validate_json(json.dumps(data, default=_json_scalar))
    if RATE_SCALE in point:
        out = scale_arrivals(out, float(point[RATE_SCALE]))
    return out


def grid_points(grid: Grid) -> list[dict[str, Any]]:
    """The points of a grid: the cartesian product of a mapping of values, or a list as is.

    Points of a list may name different parameters: a parameter a point does not name keeps
    the base configuration's value (and is null in that point's row of a sweep).

    Examples
    --------
    >>> grid_points({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    >>> grid_points([{"a": 1}, {"a": 5}])
    [{'a': 1}, {'a': 5}]
    """
    if isinstance(grid, Mapping):
        keys = list(grid)
        for k in keys:
            if isinstance(grid[k], str | bytes) or not isinstance(grid[k], Sequence):
                raise TypeError(f"grid parameter {k!r}: give a list of values")
        return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]
    return [dict(p) for p in grid]


# ----------------------------------------------------------------------------------------
# the worker function and its cache
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicationTask:
    """One replication of one configuration (what a worker receives).

    Attributes
    ----------
    config
        The configuration of the grid point.
    seed
        The experiment's seed.
    replication
        The replication number ``k``; the run is seeded :func:`replication_seed`.
    warmup_s
        Warm-up left out of the summary.
    """

    config: SimConfig
    seed: int
    replication: int
    warmup_s: float = 0.0


def run_replication(task: ReplicationTask) -> dict[str, float]:
    """Run one replication and return its summary (the worker function of :func:`sweep`).

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> s = run_replication(ReplicationTask(mm1(0.5, 1.0, n_messages=200), seed=1, replication=0))
    >>> s["messages"], s["replied_rate"]
    (200, 1.0)
    """
    return simulate(task.config, replication_seed(task.seed, task.replication)).summary(task.warmup_s)


def cache_key(config: SimConfig, seed: int, replication: int, warmup_s: float = 0.0) -> str:
    """The hash a replication's cached summary is stored under.

    It covers the whole configuration (its JSON form), the seed, the replication, the
    warm-up, the cache layout and the a2a_lab version.

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> k = cache_key(mm1(0.5, 1.0, n_messages=10), 1, 0)
    >>> len(k), k == cache_key(mm1(0.5, 1.0, n_messages=10), 1, 0), k == cache_key(mm1(0.5, 1.0, n_messages=10), 1, 1)
    (64, True, False)
    """
    from a2a_lab import __version__

    doc = {
        "format": CACHE_FORMAT,
        "a2a_lab": __version__,
        "config": config.model_dump(mode="json", by_alias=True),
        "seed": seed,
        "replication": replication,
        "warmup_s": warmup_s,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _cache_read(directory: Path, key: str) -> dict[str, float] | None:
    path = directory / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def _cache_write(directory: Path, key: str, summary: dict[str, float]) -> None:
    # write then rename: a concurrent reader never sees half a file
    tmp = directory / f"{key}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(summary), encoding="utf-8")
    tmp.replace(directory / f"{key}.json")


# ----------------------------------------------------------------------------------------
# running tasks
# ----------------------------------------------------------------------------------------


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


def _execute(
    fn: Callable[[_T], _R],
    tasks: Sequence[_T],
    *,
    executor: Executor | None,
    workers: int | None,
    progress: bool | None,
    desc: str,
) -> list[_R]:
    """``[fn(t) for t in tasks]``, on ``executor`` (or a local process pool), in task order."""
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
        pool = ProcessPoolExecutor(n_workers, mp_context=multiprocessing.get_context("spawn")) if own else executor
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


# ----------------------------------------------------------------------------------------
# sweeps
# ----------------------------------------------------------------------------------------


def sweep_runs(
    config: SimConfig,
    grid: Grid,
    *,
    replications: int = 10,
    seed: int = 0,
    warmup_s: float = 0.0,
    executor: Executor | None = None,
    workers: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> pl.DataFrame:
    """Every replication of every grid point: the raw material of :func:`sweep`.

    Parameters are those of :func:`sweep`.

    Returns
    -------
    pl.DataFrame
        One row per point and replication: ``point`` (its index in the grid), the grid
        parameters, ``replication`` and the keys of
        :meth:`~a2a_lab.sim.run.SimResult.summary`.

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> runs = sweep_runs(mm1(0.5, 1.0, n_messages=100), {"rate_scale": [1.0, 1.5]}, replications=2, workers=1)
    >>> runs.select("point", "rate_scale", "replication", "messages").rows()
    [(0, 1.0, 0, 100), (0, 1.0, 1, 100), (1, 1.5, 0, 100), (1, 1.5, 1, 100)]
    """
    if replications < 1:
        raise ValueError("replications must be at least 1")
    points = grid_points(grid)
    if not points:
        raise ValueError("the grid has no points")
    configs = [apply_point(config, p) for p in points]
    tasks = [ReplicationTask(c, seed, k, warmup_s) for c in configs for k in range(replications)]
    directory = Path(cache_dir) if cache_dir is not None else None
    keys: list[str] = []
    summaries: list[dict[str, float] | None] = [None] * len(tasks)
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        keys = [cache_key(t.config, t.seed, t.replication, t.warmup_s) for t in tasks]
        summaries = [_cache_read(directory, k) for k in keys]
    todo = [i for i, s in enumerate(summaries) if s is None]
    fresh = _execute(run_replication, [tasks[i] for i in todo], executor=executor, workers=workers, progress=progress, desc="sweep")
    for i, summary in zip(todo, fresh, strict=True):
        summaries[i] = summary
        if directory is not None:
            _cache_write(directory, keys[i], summary)
    names = list(dict.fromkeys(k for p in points for k in p))
    params = pl.DataFrame(
        {k: [p.get(k) for p in points for _ in range(replications)] for k in names}, strict=False
    )
    frame = pl.DataFrame(
        {
            "point": np.repeat(np.arange(len(points), dtype=np.int64), replications),
            "replication": np.tile(np.arange(replications, dtype=np.int64), len(points)),
        }
    )
    body = pl.DataFrame(summaries, schema={k: pl.Int64 if k == "messages" else pl.Float64 for k in SUMMARY_KEYS})
    return pl.concat([frame.select("point"), params, frame.select("replication"), body], how="horizontal")


def summarize(runs: pl.DataFrame, *, metrics: Sequence[str] | None = None, level: float = 0.95) -> pl.DataFrame:
    """Mean and Student-t confidence interval of each metric per grid point.

    Parameters
    ----------
    runs
        The output of :func:`sweep_runs`.
    metrics
        The summary keys to keep (default: all).
    level
        Confidence level.

    Returns
    -------
    pl.DataFrame
        One row per point: ``point``, the grid parameters, ``replications``, then for each
        metric ``<metric>`` (the mean over replications), ``<metric>_low`` and
        ``<metric>_high`` (the interval; null with a single replication). A replication
        whose metric is NaN (e.g. no replied message) makes the point's figures NaN.

    Examples
    --------
    >>> runs = pl.DataFrame({"point": [0, 0, 0], "replication": [0, 1, 2], "x": [1.0, 2.0, 3.0]})
    >>> summarize(runs, metrics=["x"]).rows()
    [(0, 3, 2.0, -0.4841..., 4.4841...)]
    """
    names = list(SUMMARY_KEYS if metrics is None else metrics)
    missing = [m for m in names if m not in runs.columns]
    if missing:
        raise ValueError(f"unknown metric(s) {', '.join(missing)}; choose from {', '.join(SUMMARY_KEYS)}")
    params = [c for c in runs.columns if c not in {"point", "replication", *SUMMARY_KEYS, *names}]
    agg = runs.group_by("point", maintain_order=True).agg(
        *[pl.col(p).first() for p in params],
        pl.len().cast(pl.Int64).alias("replications"),
        *[pl.col(m).cast(pl.Float64).mean().alias(m) for m in names],
        *[pl.col(m).cast(pl.Float64).std(ddof=1).alias(f"_sd_{m}") for m in names],
    )
    # Student t quantile per replication count (one count per sweep, so a tiny mapping)
    counts = agg["replications"].unique().to_list()
    t_of = {c: float(stats.t.ppf(0.5 + level / 2, c - 1)) for c in counts if c > 1}
    t = pl.col("replications").replace_strict(t_of, default=None, return_dtype=pl.Float64)
    half = {m: t * pl.col(f"_sd_{m}") / pl.col("replications").sqrt() for m in names}
    cols = [pl.col("point"), *[pl.col(p) for p in params], pl.col("replications")]
    for m in names:
        cols += [pl.col(m), (pl.col(m) - half[m]).alias(f"{m}_low"), (pl.col(m) + half[m]).alias(f"{m}_high")]
    return agg.select(cols).sort("point")


def sweep(
    config: SimConfig,
    grid: Grid,
    *,
    replications: int = 10,
    seed: int = 0,
    metrics: Sequence[str] | None = None,
    level: float = 0.95,
    warmup_s: float = 0.0,
    executor: Executor | None = None,
    workers: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> pl.DataFrame:
    """Run a grid of configuration changes with replications; mean and CI per point.

    Parameters
    ----------
    config
        The base configuration.
    grid
        Parameter → values (cartesian product) or a list of points; a parameter is a dotted
        path into the configuration or ``"rate_scale"`` (see the module documentation).
    replications
        Independent replications per point; every point runs the same ones (common random
        numbers).
    seed
        The experiment's seed.
    metrics
        Summary keys to report (default: all of
        :data:`~a2a_lab.sim.run.SUMMARY_KEYS`).
    level
        Confidence level of the intervals (Student t over replications).
    warmup_s
        Warm-up left out of each replication's summary.
    executor
        Any :class:`concurrent.futures.Executor` (e.g. ``Client(...).get_executor()`` of
        Dask); None: a process pool here.
    workers
        Size of that process pool (default: one per CPU); 1 runs in this process.
    cache_dir
        Directory of cached replication summaries (None: no cache).
    progress
        Show a progress bar (None: only when someone is watching).

    Returns
    -------
    pl.DataFrame
        One row per grid point (see :func:`summarize`).

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> out = sweep(mm1(0.5, 1.0, n_messages=300), {"rate_scale": [1.0, 1.6]}, replications=3,
    ...             metrics=["utilization", "mean_wait_s"], workers=1)
    >>> out.columns
    ['point', 'rate_scale', 'replications', 'utilization', 'utilization_low', 'utilization_high', 'mean_wait_s', 'mean_wait_s_low', 'mean_wait_s_high']
    >>> bool(out["mean_wait_s"][1] > out["mean_wait_s"][0])  # same draws, more load: longer waits
    True
    """
    runs = sweep_runs(
        config, grid, replications=replications, seed=seed, warmup_s=warmup_s, executor=executor,
        workers=workers, cache_dir=cache_dir, progress=progress,
    )
    return summarize(runs, metrics=metrics, level=level)


# ----------------------------------------------------------------------------------------
# capacity search
# ----------------------------------------------------------------------------------------


def latency_quantile(
    result: Any, q: float, *, warmup_s: float = 0.0, unanswered: Literal["infinite", "exclude"] = "infinite"
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
    >>> from a2a_lab.sim.presets import mm1
    >>> res = simulate(mm1(0.5, 1.0, n_messages=500), seed=1)
    >>> latency_quantile(res, 0.95) == res.summary()["p95_latency_s"]
    True
    """
    plan, trace = result.plan, result.trace
    keep = plan.arrival_s >= warmup_s
    latency = (trace.reply_s - plan.arrival_s)[keep]
    latency = latency[trace.outcome[keep] == 0] if unanswered == "exclude" else np.where(np.isnan(latency), np.inf, latency)
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
    >>> from a2a_lab.sim.presets import mm1
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
        return latency_quantile(result, task.quantile, warmup_s=task.warmup_s, unanswered=task.unanswered)

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
        the target) and its confidence interval.
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
        where = f"{self.rate_per_s:.4g}/s [{self.rate_low:.4g}, {self.rate_high:.4g}]" if not math.isnan(self.base_rate_per_s) else ""
        return (
            f"capacity for {q} latency ≤ {self.target_latency_s:g} s: {where} "
            f"= ×{self.scale:.4g} [{self.scale_low:.4g}, {self.scale_high:.4g}] of the configured rate "
            f"({100 * self.level:g} % CI over {self.replications.height} replications)"
        ).replace("  ", " ")


def capacity_search(
    config: SimConfig,
    *,
    target_latency_s: float,
    target_quantile: float = 0.95,
    replications: int = 10,
    seed: int = 0,
    rel_tol: float = 0.01,
    start_scale: float = 1.0,
    max_doublings: int = 20,
    warmup_s: float = 0.0,
    unanswered: Literal["infinite", "exclude"] = "infinite",
    level: float = 0.95,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: bool | None = None,
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
    The replications are independent, so the capacity is their mean and its confidence
    interval the Student-t interval over them. Each replication's search is one task on the
    executor, so replications run in parallel.

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
    replications
        Independent replications (at least 2 for an interval).
    seed
        The experiment's seed.
    rel_tol
        Relative width of each replication's final bracket.
    start_scale
        The first scale tried.
    max_doublings
        Most doublings (or halvings) while bracketing; a replication that stays unbracketed
        gives a bound (see :attr:`CapacityResult.bracketed`).
    warmup_s
        Leave out messages sent before this time.
    unanswered
        ``"infinite"`` or ``"exclude"`` (see :func:`latency_quantile`).
    level
        Confidence level.
    executor, workers, progress
        As for :func:`sweep`.

    Returns
    -------
    CapacityResult

    Examples
    --------
    >>> from a2a_lab.sim.presets import mm1
    >>> cap = capacity_search(mm1(0.5, 1.0, n_messages=2000), target_latency_s=15.0, target_quantile=0.95,
    ...                       replications=4, seed=3, workers=1)
    >>> lam = 1.0 - math.log(20.0) / 15.0  # M/M/1: the sojourn is exponential with rate mu - lambda
    >>> cap.bracketed, cap.rate_low < lam < cap.rate_high
    (True, True)
    """
    if not 0 < target_quantile < 1:
        raise ValueError("target_quantile must be in (0, 1)")
    if not target_latency_s > 0:
        raise ValueError("target_latency_s must be positive")
    if replications < 1:
        raise ValueError("replications must be at least 1")
    tasks = [
        CapacityTask(config, seed, k, float(target_latency_s), float(target_quantile), rel_tol, start_scale,
                     max_doublings, warmup_s, unanswered)
        for k in range(replications)
    ]
    rows = _execute(capacity_replication, tasks, executor=executor, workers=workers, progress=progress, desc="capacity")
    base = config.total_rate_per_s
    reps = pl.DataFrame(rows).with_columns((pl.col("scale") * base).alias("rate_per_s"))
    scales = reps["scale"].to_numpy()
    mean = float(scales.mean())
    if replications > 1:
        half = float(stats.t.ppf(0.5 + level / 2, replications - 1) * scales.std(ddof=1) / math.sqrt(replications))
    else:
        half = math.nan
    return CapacityResult(
        rate_per_s=mean * base,
        rate_low=(mean - half) * base,
        rate_high=(mean + half) * base,
        scale=mean,
        scale_low=mean - half,
        scale_high=mean + half,
        base_rate_per_s=base,
        target_latency_s=float(target_latency_s),
        quantile=float(target_quantile),
        level=level,
        replications=reps,
    )
