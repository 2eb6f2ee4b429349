"""Parameter sweeps with confidence intervals, on any executor, and the capacity search.

A **sweep** runs every point of a grid of configuration changes with the same independent
replications and returns one row per point: the mean and a Student-t confidence interval of
every figure of :meth:`~a2a_lab.sim.run.SimResult.summary`::

    from a2a_lab.sim import SimConfig
    from a2a_lab.sim.experiments.replicate import RunOptions
    from a2a_lab.sim.experiments.sweep import sweep, capacity_search

    sweep(SimConfig(), {"rate_scale": [0.5, 1, 2], "gate.max_concurrent_flows": [1, 3]},
          RunOptions(replications=10, seed=1))

**Grid.** A mapping of parameter → values (their cartesian product, in order) or a list of
points (mappings, e.g. one per what-if scenario). A parameter is a dotted path into the configuration's JSON form
(``"gate.max_concurrent_flows"``, ``"agents.1.service.mean_s"``, ``"wait"`` — ``None``
switches a policy off, a mapping switches one on) or ``"rate_scale"``, which multiplies
every arrival rate (:func:`scale_arrivals`; applied after the paths).

**Seeding: common random numbers.** Replication ``k`` of every grid point runs with
``numpy.random.SeedSequence(seed, spawn_key=(k,))`` (:func:`replication_seed`, the same
sequence as ``SeedSequence(seed).spawn(n)[k]``, so replication ``k`` of a sweep is
replication ``k`` of :func:`~a2a_lab.sim.experiments.replicate.replicate`). The simulator splits it
into one stream per purpose (arrivals, routing, service, mix, turns, …) drawn per message
index (:mod:`~a2a_lab.sim.workload.plan`). The grid point is NOT part of the seed: every point sees
the same messages, service times and replies, so differences between points are the
parameters' own (their confidence intervals are much narrower than those of the points),
and a point's result does not depend on what else is in the grid.

**Executors.** Each (point, replication) is one task of :func:`run_replication` (importable
from the package, so nothing from a notebook has to be pickled). How they run is a
:class:`~a2a_lab.sim.experiments.replicate.RunOptions` (with the replications, seed, warm-up
and progress bar): ``executor=None`` runs them on a process pool of this machine
(``workers=1``: in this process); any
:class:`concurrent.futures.Executor` works, e.g. a Dask cluster's
``distributed.Client(...).get_executor()``. Results are identical on every executor.

**Cache.** With ``cache_dir``, a replication's summary is stored under a hash of the
configuration, the seed, the replication, the warm-up and the a2a_lab version
(:func:`cache_key`) and reused by later sweeps; clear the directory after changing the
model's code without changing its version.

**Progress.** A :mod:`tqdm.auto` bar counts finished replications when ``RunOptions.progress`` is True;
``None`` (the default) shows it in a terminal or a Jupyter kernel but not under pytest or
nbval, and notebooks whose outputs are stored pass ``progress=False``.

**Capacity search.** :func:`~a2a_lab.sim.experiments.capacity.capacity_search` finds the highest
arrival rate at which a latency quantile stays under a target; it lives in
:mod:`~a2a_lab.sim.experiments.capacity` (with :func:`~a2a_lab.sim.experiments.capacity.scale_arrivals`) and is
importable from here too, as before.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from a2a_lab.sim.config import SimConfig
from a2a_lab.sim.experiments.capacity import (
    CapacityResult,
    CapacityTask,
    capacity_replication,
    capacity_search,
    latency_quantile,
    scale_arrivals,
)
from a2a_lab.sim.experiments.replicate import RunOptions, replication_seed, run_tasks, t_quantile
from a2a_lab.sim.run import SUMMARY_KEYS, SUMMARY_RANGES, simulate

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
Grid = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


# ----------------------------------------------------------------------------------------
# configurations of grid points
# ----------------------------------------------------------------------------------------


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
                raise ValueError(
                    f"grid parameter {path!r}: no item {part!r} in a list of {len(node)}"
                ) from None
            key: int | str = index
        elif isinstance(node, dict):
            key = part
        else:
            raise TypeError(
                f"grid parameter {path!r}: {'.'.join(parts[:depth])!r} is not a mapping or a list"
            )
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
        return [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*(grid[k] for k in keys))
        ]
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
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> s = run_replication(ReplicationTask(mm1(0.5, 1.0, n_messages=200), seed=1, replication=0))
    >>> s["messages"], s["replied_rate"]
    (200, 1.0)
    """
    return simulate(task.config, replication_seed(task.seed, task.replication)).summary(
        task.warmup_s
    )


def cache_key(config: SimConfig, seed: int, replication: int, warmup_s: float = 0.0) -> str:
    """The hash a replication's cached summary is stored under.

    It covers the whole configuration (its JSON form), the seed, the replication, the
    warm-up, the cache layout and the a2a_lab version.

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> k = cache_key(mm1(0.5, 1.0, n_messages=10), 1, 0)
    >>> len(k), k == cache_key(mm1(0.5, 1.0, n_messages=10), 1, 0), k == cache_key(mm1(0.5, 1.0, n_messages=10), 1, 1)
    (64, True, False)
    """
    from a2a_lab._version import __version__

    doc = {
        "format": CACHE_FORMAT,
        "a2a_lab": __version__,
        "config": config.model_dump(mode="json", by_alias=True),
        "seed": seed,
        "replication": replication,
        "warmup_s": warmup_s,
    }
    return hashlib.sha256(
        json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def _cache_read(directory: Path, key: str) -> dict[str, float] | None:
    path = directory / f"{key}.json"
    try:
        out: dict[str, float] | None = json.loads(path.read_text(encoding="utf-8"))
        return out
    except FileNotFoundError:
        return None


def _cache_write(directory: Path, key: str, summary: dict[str, float]) -> None:
    # write then rename: a concurrent reader never sees half a file
    tmp = directory / f"{key}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(summary), encoding="utf-8")
    tmp.replace(directory / f"{key}.json")


# ----------------------------------------------------------------------------------------
# sweeps
# ----------------------------------------------------------------------------------------


def sweep_runs(
    config: SimConfig,
    grid: Grid,
    options: RunOptions | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
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
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> from a2a_lab.sim.experiments.replicate import RunOptions
    >>> runs = sweep_runs(mm1(0.5, 1.0, n_messages=100), {"rate_scale": [1.0, 1.5]}, RunOptions(replications=2, workers=1))
    >>> runs.select("point", "rate_scale", "replication", "messages").rows()
    [(0, 1.0, 0, 100), (0, 1.0, 1, 100), (1, 1.5, 0, 100), (1, 1.5, 1, 100)]
    """
    opts = options if options is not None else RunOptions()
    replications, seed, warmup_s = opts.replications, opts.seed, opts.warmup_s
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
    fresh = run_tasks(
        run_replication,
        [tasks[i] for i in todo],
        executor=opts.executor,
        workers=opts.workers,
        progress=opts.progress,
        desc="sweep",
    )
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
    body = pl.DataFrame(
        summaries, schema={k: pl.Int64 if k == "messages" else pl.Float64 for k in SUMMARY_KEYS}
    )
    return pl.concat(
        [frame.select("point"), params, frame.select("replication"), body], how="horizontal"
    )


def summarize(
    runs: pl.DataFrame, *, metrics: Sequence[str] | None = None, level: float = 0.95
) -> pl.DataFrame:
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
        whose metric is NaN (e.g. no replied message) makes the point's figures NaN. The
        interval of a summary figure is clipped to the range the figure can take
        (:data:`~a2a_lab.sim.run.SUMMARY_RANGES`: never below 0, shares never above 1), as
        :func:`~a2a_lab.sim.experiments.replicate.confidence_interval` with ``bounds`` explains.

    Examples
    --------
    >>> runs = pl.DataFrame({"point": [0, 0, 0], "replication": [0, 1, 2], "x": [1.0, 2.0, 3.0]})
    >>> summarize(runs, metrics=["x"]).rows()
    [(0, 3, 2.0, -0.4841..., 4.4841...)]
    """
    names = list(SUMMARY_KEYS if metrics is None else metrics)
    missing = [m for m in names if m not in runs.columns]
    if missing:
        raise ValueError(
            f"unknown metric(s) {', '.join(missing)}; choose from {', '.join(SUMMARY_KEYS)}"
        )
    params = [c for c in runs.columns if c not in {"point", "replication", *SUMMARY_KEYS, *names}]
    agg = runs.group_by("point", maintain_order=True).agg(
        *[pl.col(p).first() for p in params],
        pl.len().cast(pl.Int64).alias("replications"),
        *[pl.col(m).cast(pl.Float64).mean().alias(m) for m in names],
        *[pl.col(m).cast(pl.Float64).std(ddof=1).alias(f"_sd_{m}") for m in names],
    )
    # Student t quantile per replication count (one count per sweep, so a tiny mapping)
    counts = agg["replications"].unique().to_list()
    t_of = {c: t_quantile(level, c) for c in counts if c > 1}
    t = pl.col("replications").replace_strict(t_of, default=None, return_dtype=pl.Float64)
    half = {m: t * pl.col(f"_sd_{m}") / pl.col("replications").sqrt() for m in names}
    cols = [pl.col("point"), *[pl.col(p) for p in params], pl.col("replications")]
    for m in names:
        low, high = SUMMARY_RANGES.get(m, (None, None))
        cols += [
            pl.col(m),
            (pl.col(m) - half[m]).clip(lower_bound=low).alias(f"{m}_low"),
            (pl.col(m) + half[m]).clip(upper_bound=high).alias(f"{m}_high"),
        ]
    return agg.select(cols).sort("point")


def sweep(
    config: SimConfig,
    grid: Grid,
    options: RunOptions | None = None,
    *,
    metrics: Sequence[str] | None = None,
    level: float = 0.95,
    cache_dir: str | os.PathLike[str] | None = None,
) -> pl.DataFrame:
    """Run a grid of configuration changes with replications; mean and CI per point.

    Parameters
    ----------
    config
        The base configuration.
    grid
        Parameter → values (cartesian product) or a list of points; a parameter is a dotted
        path into the configuration or ``"rate_scale"`` (see the module documentation).
    options
        Replications, seed, warm-up, executor, workers and progress bar
        (:class:`~a2a_lab.sim.experiments.replicate.RunOptions`; default: 10 replications,
        seed 0, on a process pool here); every point runs the same replications (common
        random numbers).
    metrics
        Summary keys to report (default: all of
        :data:`~a2a_lab.sim.run.SUMMARY_KEYS`).
    level
        Confidence level of the intervals (Student t over replications).
    cache_dir
        Directory of cached replication summaries (None: no cache).

    Returns
    -------
    pl.DataFrame
        One row per grid point (see :func:`summarize`).

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> from a2a_lab.sim.experiments.replicate import RunOptions
    >>> out = sweep(mm1(0.5, 1.0, n_messages=300), {"rate_scale": [1.0, 1.6]}, RunOptions(replications=3, workers=1),
    ...             metrics=["utilization", "mean_wait_s"])
    >>> out.columns
    ['point', 'rate_scale', 'replications', 'utilization', 'utilization_low', 'utilization_high', 'mean_wait_s', 'mean_wait_s_low', 'mean_wait_s_high']
    >>> bool(out["mean_wait_s"][1] > out["mean_wait_s"][0])  # same draws, more load: longer waits
    True
    """
    runs = sweep_runs(config, grid, options, cache_dir=cache_dir)
    return summarize(runs, metrics=metrics, level=level)
