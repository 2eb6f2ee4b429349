"""The run budget of a simulation and the bounds that make a valid configuration runnable.

Issue 27 item 4: a configuration that validates also runs. :class:`RunBudget` (the
``budget`` field of :class:`~a2a_lab.sim.config.SimConfig`) states how large a run may get;
:func:`check_runnable` (the config's validator) bounds every number of the configuration
(times by ``budget.max_sim_s``, cv, rates, counts) and its expected size (messages, span,
tasks) by the budget, and the SimPy run stops with :class:`BudgetExceeded` past the budget's
steps or wall time. Before, cv 1e308 overflowed, n_messages 10**30 and duration_s 1e308 hit
dimension limits, an hourly profile of 1e-300 a size limit, and wait.max_wait_s 1e308 or a
trace send at 1e308 s hung.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final

from pydantic import BaseModel, Field

from a2a_lab.sim._strict import STRICT_ALIASED

__all__ = [
    "MAX_CV",
    "MAX_SIM_S",
    "BudgetExceeded",
    "RunBudget",
    "check_runnable",
]

_CONFIG = STRICT_ALIASED


#: The longest simulated span any configuration may ask for (seconds, ≈ 31.7 years): times,
#: timeouts and service-time means beyond it are refused, so no run computes with a time
#: of 1e308 (overflow) or lays a grid over it (a dimension error).
MAX_SIM_S: Final = 1e9
#: The largest coefficient of variation of a service or task time: cv² must not overflow,
#: and a lognormal's sigma stays below 3.04.
MAX_CV: Final = 100.0
#: The largest rate (per second) of one arrival stream.
MAX_RATE_PER_S: Final = 1e6
#: The smallest positive time and cv (a mean of 5e-324 s makes a lognormal's mu NaN).
MIN_POSITIVE: Final = 1e-9
#: Every other number of a configuration (counts, limits, windows) stays within this.
MAX_NUMBER: Final = 1e12
#: The most wait chunks one exchange may need (``wait.max_wait_s / wait.chunk_s``).
MAX_WAIT_CHUNKS: Final = 1_000_000
#: Positive hourly multipliers may be at most this many times smaller than the largest:
#: a near-zero hour (1e-300) stretches the time change's grid beyond any memory.
MAX_PROFILE_RATIO: Final = 1e6


class BudgetExceeded(RuntimeError):
    """A run needed more than its :class:`RunBudget` (the message names the limit)."""


class RunBudget(BaseModel):
    """How large a run may get; a validated configuration is checked against it.

    Validation refuses a configuration whose expected size (messages, simulated span, task
    count) exceeds the budget; during the run, :func:`a2a_lab.sim.simulate` stops with
    :class:`BudgetExceeded` once the SimPy steps or the wall time exceed it (a heavy-tailed
    draw can still make a run longer than expected).

    Attributes
    ----------
    max_messages
        Most messages (arrivals) and most tasks the configuration may produce.
    max_sim_s
        Longest simulated span (seconds, at most :data:`MAX_SIM_S`).
    max_steps
        Most SimPy steps (scheduled events) of the run.
    max_wall_s
        Most wall-clock seconds of the SimPy run.
    """

    model_config = _CONFIG

    max_messages: Annotated[int, Field(ge=1, le=100_000_000)] = 5_000_000
    max_sim_s: Annotated[float, Field(gt=0, le=MAX_SIM_S)] = 3.2e8
    max_steps: Annotated[int, Field(ge=1, le=10_000_000_000)] = 500_000_000
    max_wall_s: Annotated[float, Field(gt=0, le=7 * 86_400)] = 3600.0


def _numbers(model: BaseModel, path: str = "") -> list[tuple[str, str, float]]:
    """Every number of ``model`` and its sub-models: (path, field name, value)."""
    out: list[tuple[str, str, float]] = []

    def walk(value: Any, where: str, name: str) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int | float):
            out.append((where, name, float(value)))
        elif isinstance(value, BaseModel):
            for field in type(value).model_fields:
                walk(getattr(value, field), f"{where}.{field}" if where else field, field)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}", name)
        elif isinstance(value, list | tuple):
            for i, v in enumerate(value):
                walk(v, f"{where}.{i}", name)

    walk(model, path, "")
    return out


def _bound(where: str, name: str, value: float, max_sim_s: float) -> str | None:
    """Why a number cannot run (None: it can). Seconds by the field's ``_s`` suffix."""
    if not math.isfinite(value):
        return f"{where}: {value!r} is not a finite number"
    if 0 < abs(value) < MIN_POSITIVE and (
        name in ("cv", "samples_s") or name.endswith(("_cv", "_s", "_ms"))
    ):
        return f"{where}: {value:g} is below the smallest positive value {MIN_POSITIVE:g}"
    if name == "cv" or name.endswith("_cv"):
        if value > MAX_CV:
            return f"{where}: {value:g} exceeds the largest coefficient of variation {MAX_CV:g}"
    elif name.endswith("rate_per_s"):
        if value > MAX_RATE_PER_S:
            return f"{where}: {value:g} per second exceeds {MAX_RATE_PER_S:g}"
    elif name.endswith("_s") or name == "samples_s":
        if abs(value) > max_sim_s:
            return (
                f"{where}: {value:g} s exceeds the run budget's span "
                f"budget.max_sim_s = {max_sim_s:g} s"
            )
    elif name.endswith("_ms"):
        if abs(value) > max_sim_s * 1000.0:
            return f"{where}: {value:g} ms exceeds budget.max_sim_s = {max_sim_s:g} s"
    elif abs(value) > MAX_NUMBER:
        return f"{where}: {value:g} exceeds {MAX_NUMBER:g}"
    return None


def check_runnable(config: Any) -> None:
    """Raise ValueError naming the first number of ``config`` (a :class:`SimConfig`) that
    cannot run, or the budget its expected size exceeds (the ``SimConfig`` validator)."""
    b = config.budget
    for where, name, value in _numbers(config):
        if where.startswith("budget.") or where == "n_messages":
            continue  # n_messages is bounded by the budget below
        why = _bound(where, name, value, b.max_sim_s)
        if why is not None:
            raise ValueError(why)
    if config.n_messages is not None and config.n_messages > b.max_messages:
        raise ValueError(
            f"n_messages: {config.n_messages} exceeds budget.max_messages = {b.max_messages}"
        )
    if config.wait is not None and config.wait.max_wait_s / config.wait.chunk_s > MAX_WAIT_CHUNKS:
        raise ValueError(
            f"wait: max_wait_s / chunk_s = {config.wait.max_wait_s / config.wait.chunk_s:g} "
            f"chunks exceeds {MAX_WAIT_CHUNKS:,}"
        )
    span = _expected_span_s(config)
    if span > b.max_sim_s:
        raise ValueError(
            f"workload: the arrivals span about {span:g} s, beyond "
            f"budget.max_sim_s = {b.max_sim_s:g} s"
        )
    wl = config.workload
    if wl.kind == "poisson":
        profile = wl.hourly_profile
        if profile is not None:
            top = max(profile)
            tiny = [i for i, m in enumerate(profile) if 0 < m < top / MAX_PROFILE_RATIO]
            if tiny:
                raise ValueError(
                    f"workload.hourly_profile.{tiny[0]}: {profile[tiny[0]]:g} is more than "
                    f"{MAX_PROFILE_RATIO:g} times smaller than the largest multiplier "
                    "(use 0 for an hour without arrivals)"
                )
        if config.n_messages is None and config.duration_s is not None:
            expected = config.total_rate_per_s * config.duration_s * _profile_peak(config)
            if expected > b.max_messages:
                raise ValueError(
                    f"workload: about {expected:g} messages in duration_s, beyond "
                    f"budget.max_messages = {b.max_messages}"
                )
    elif wl.sends is not None and len(wl.sends) > b.max_messages:
        raise ValueError(
            f"workload.sends: {len(wl.sends)} sends exceed budget.max_messages = {b.max_messages}"
        )
    if config.tasks is not None:
        per_task = config.tasks.mean_duration_s + config.tasks.mean_gap_s
        tasks = len(config.agents or [None]) * (min(span, b.max_sim_s) / per_task + 1)
        if tasks > b.max_messages:
            raise ValueError(
                f"tasks: about {tasks:g} tasks over the run, beyond "
                f"budget.max_messages = {b.max_messages}"
            )


def _profile_peak(config: Any) -> float:
    """The largest hourly multiplier over their mean (1 without a profile)."""
    wl = config.workload
    if wl.kind != "poisson" or wl.hourly_profile is None:
        return 1.0
    mean = math.fsum(wl.hourly_profile) / 24.0
    return float(max(wl.hourly_profile)) / mean


def _expected_span_s(config: Any) -> float:
    """About how long the arrivals last (simulated seconds)."""
    wl = config.workload
    if wl.kind == "trace":
        if wl.sends is None:
            return 0.0  # a trace file is checked when it is read
        return float(max(s.at_s for s in wl.sends)) * float(wl.time_scale)
    if config.duration_s is not None:
        return float(config.duration_s)
    if config.n_messages is None:
        return 0.0  # no bound at all: _consistent refuses it
    rate = config.total_rate_per_s
    if wl.hourly_profile is not None:
        rate *= math.fsum(wl.hourly_profile) / 24.0
    return config.n_messages / rate if rate > 0 else math.inf
