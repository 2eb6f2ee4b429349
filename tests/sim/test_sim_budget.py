"""Configs that can run (issue 27 item 4): a configuration that validates also runs.

Validation bounds every number of a :class:`~a2a_lab.sim.config.SimConfig` (times by the
run budget's span, cv, rates, counts) and the run's expected size by its
:class:`~a2a_lab.sim.config.RunBudget`; the run itself stops with ``BudgetExceeded`` past
the budget's steps or wall time. The reproducers of the issue (cv 1e308, n_messages 10**30,
duration_s 1e308, an hourly profile of 1e-300, wait.max_wait_s 1e308, a trace send at
at_s 1e308: OverflowError, dimension errors or hangs before) are refused with the field
named; random configurations with extremes in every number either fail validation or run
to completion within their budget.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from a2a_lab.sim import SimConfig, simulate
from a2a_lab.sim.budget import BudgetExceeded

_POISSON = {"kind": "poisson", "agents": [{"agent": "main", "rate_per_s": 0.01}]}

REPRODUCERS: dict[str, tuple[dict[str, Any], str]] = {
    "service cv 1e308": (
        {"agents": [{"id": "main", "service": {"kind": "lognormal", "mean_s": 10, "cv": 1e308}}]},
        "agents.0.service.cv",
    ),
    "tasks cv 1e308": ({"tasks": {"duration_cv": 1e308}}, "tasks.duration_cv"),
    "gamma cv 1e308": (
        {"agents": [{"id": "main", "service": {"kind": "gamma", "mean_s": 10, "cv": 1e308}}]},
        "agents.0.service.cv",
    ),
    "n_messages 10**30": ({"n_messages": 10**30}, "n_messages"),
    "duration_s 1e308": ({"n_messages": None, "duration_s": 1e308}, "duration_s"),
    "hourly profile 1e-300": (
        {"workload": {**_POISSON, "hourly_profile": [1e-300] * 24}},
        "budget.max_sim_s",
    ),
    "one hour at 1e-300": (
        {"workload": {**_POISSON, "hourly_profile": [1.0] + [1e-300] * 23}},
        "workload.hourly_profile.1",
    ),
    "wait.max_wait_s 1e308": ({"wait": {"max_wait_s": 1e308}}, "wait.max_wait_s"),
    "trace at_s 1e308": (
        {
            "workload": {
                "kind": "trace",
                "sends": [
                    {"at_s": 0, "from": "main", "to": "ruda"},
                    {"at_s": 1e308, "from": "main", "to": "ruda"},
                ],
            }
        },
        "workload.sends.1.at_s",
    ),
    "rate 1e308": (
        {"workload": {"kind": "poisson", "agents": [{"agent": "main", "rate_per_s": 1e308}]}},
        "rate_per_s",
    ),
}


@pytest.mark.parametrize("name", list(REPRODUCERS))
def test_the_issue_reproducers_are_refused_naming_the_field(name: str) -> None:
    data, field = REPRODUCERS[name]
    started = time.monotonic()
    with pytest.raises(ValidationError) as info:
        SimConfig.model_validate(data)
    assert field in str(info.value)
    assert time.monotonic() - started < 5


def test_a_run_past_its_step_budget_stops_with_a_clear_error() -> None:
    config = SimConfig(n_messages=500, budget={"max_steps": 1000})  # type: ignore[arg-type]
    with pytest.raises(BudgetExceeded, match=r"budget\.max_steps = 1,000"):
        simulate(config, seed=1)


def test_a_run_within_its_budget_is_unchanged() -> None:
    """The budget only watches: the same seed gives the same log with a roomy budget."""
    small = SimConfig(n_messages=300)
    roomy = SimConfig(n_messages=300, budget={"max_steps": 10**9, "max_wall_s": 600})  # type: ignore[arg-type]
    assert simulate(small, seed=4).events.equals(simulate(roomy, seed=4).events)


# ---------------------------------------------------------------------------------------
# random configurations with extremes in every number
# ---------------------------------------------------------------------------------------

_EXTREMES = [0.0, 5e-324, 1e-300, 1e-6, 0.5, 1.0, 30.0, 3600.0, 1e6, 1e9, 1e12, 1e308]


def _weighted(k: int) -> st.SearchStrategy[float]:
    # one number in 20 is an extreme or any float at all: a config holds ~10-50 numbers, so
    # some configurations validate and the others probe the bounds
    if k < 3:
        return st.sampled_from(_EXTREMES)
    if k < 5:
        return st.floats(allow_nan=False, allow_infinity=False)
    return st.floats(min_value=1e-2, max_value=60.0)


_num = st.integers(0, 99).flatmap(_weighted)
_dist = st.one_of(
    st.fixed_dictionaries({"kind": st.just("exponential"), "mean_s": _num}),
    st.fixed_dictionaries({"kind": st.just("deterministic"), "value_s": _num}),
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["lognormal", "gamma"]), "mean_s": _num, "cv": _num}
    ),
)
_workload = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("poisson"),
            "agents": st.lists(
                st.fixed_dictionaries(
                    {"agent": st.sampled_from(["main", "ruda"]), "rate_per_s": _num}
                ),
                min_size=1,
                max_size=2,
            ),
        },
        optional={"hourly_profile": st.lists(_num, min_size=24, max_size=24)},
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("trace"),
            "sends": st.lists(
                st.fixed_dictionaries(
                    {"at_s": _num, "from": st.just("main"), "to": st.just("ruda")}
                ),
                min_size=1,
                max_size=20,
            ),
        },
        optional={"time_scale": _num},
    ),
)
_configs = st.fixed_dictionaries(
    {
        "agents": st.tuples(_dist, _dist).map(
            lambda d: [{"id": "main", "service": d[0]}, {"id": "ruda", "service": d[1]}]
        ),
        "workload": _workload,
        "n_messages": st.integers(0, 49).flatmap(
            lambda k: st.just(10**30) if k == 0 else st.none() if k == 1 else st.integers(1, 200)
        ),
        "budget": st.fixed_dictionaries(
            {
                "max_messages": st.integers(200, 3000),
                "max_wall_s": st.just(60.0),
                "max_sim_s": st.sampled_from([1e4, 1e6, 1e9]),
            }
        ),
    },
    optional={
        "duration_s": st.one_of(st.none(), _num),
        "wait": st.one_of(
            st.just(False), st.fixed_dictionaries({"chunk_s": _num, "max_wait_s": _num})
        ),
        "tasks": st.one_of(
            st.just(False),
            st.fixed_dictionaries(
                {"mean_duration_s": _num, "duration_cv": _num, "mean_gap_s": _num}
            ),
        ),
        "gate": st.fixed_dictionaries({"queue_timeout_s": _num}),
        "ping_pong": st.fixed_dictionaries({"turn_timeout_s": _num}),
    },
)


def _validated_configs_run(data: dict[str, Any], seed: int) -> bool:
    """Validate ``data``; a config that validates must run to its end within its budget."""
    try:
        config = SimConfig.model_validate(data)
    except ValidationError:
        return False
    started = time.monotonic()
    res = simulate(config, seed=seed)  # BudgetExceeded or anything else fails the test
    assert res.events.height >= 0
    assert time.monotonic() - started <= config.budget.max_wall_s
    return True


_FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
# about a third of the drawn configurations validate: 3,500 draws give 1,000 that do
_SLOW = settings(max_examples=3500, deadline=None, suppress_health_check=list(HealthCheck))
VALIDATED = {"fast": 0, "slow": 0}


@_FAST
@given(data=_configs, seed=st.integers(0, 2**32 - 1))
def test_random_configs_that_validate_run_fast(data: dict[str, Any], seed: int) -> None:
    VALIDATED["fast"] += _validated_configs_run(data, seed)


def test_the_fast_run_ran_validated_configs() -> None:
    """Not vacuous: some of the fast run's configurations validated (and so ran)."""
    if not VALIDATED["fast"]:
        pytest.skip("run with test_random_configs_that_validate_run_fast")
    print(f"validated and ran: {VALIDATED['fast']}")
    assert VALIDATED["fast"] >= 5


@pytest.mark.slow
@_SLOW
@given(data=_configs, seed=st.integers(0, 2**32 - 1))
def test_random_configs_that_validate_all_run(data: dict[str, Any], seed: int) -> None:
    VALIDATED["slow"] += _validated_configs_run(data, seed)


@pytest.mark.slow
def test_1000_validated_configs_ran() -> None:
    """The issue's goal: 1,000 random configurations that validate all ran within budget."""
    if not VALIDATED["slow"]:
        pytest.skip("run with test_random_configs_that_validate_all_run")
    print(f"validated and ran: {VALIDATED['slow']}")
    assert VALIDATED["slow"] >= 1000
