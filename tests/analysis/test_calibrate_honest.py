"""Honest calibration (issue 22 item 4), validated on the simulator's ground truth.

Four agents, two with gamma and two with lognormal service times, exchange messages over
two simulated days on the reference's conversation-scoped session lanes
(the simulator's default ``topology="lanes"``: every run on its session lane, then on the
gateway-wide nested lane of 8 slots). Over 20 seeds × 4 agents the fit must:

- put the configured mean inside its reported 95 % interval for 90–98 % of the pairs;
- put the point estimate within 10 % of it for at least 95 %;
- pick gamma for the agents generated from gamma;

and a log whose busiest agent is overloaded (ρ ≈ 1.16 on its main session) must name
that agent in a warning and flag it, not fit it silently.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

from a2a_lab.analysis.calibrate import Calibration, FitWarning, GatewayLimits, fit_log
from a2a_lab.sim import (
    AgentConfig,
    Gamma,
    LanePools,
    Lognormal,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    simulate,
)
from tests.support.exchange_truth import measured_runs

SEEDS = range(20)
AGENTS = {
    "a": Gamma(mean_s=30.0, cv=0.5),
    "b": Lognormal(mean_s=60.0, cv=1.0),
    "c": Gamma(mean_s=90.0, cv=0.7),
    "d": Lognormal(mean_s=45.0, cv=0.6),
}
PAIRS = [
    ("a", "b", 0.004),
    ("b", "c", 0.003),
    ("c", "d", 0.004),
    ("d", "a", 0.005),
    ("a", "c", 0.002),
    ("b", "d", 0.003),
]


def config() -> SimConfig:
    """The four-agent gateway of the validation, 36 hours long."""
    return SimConfig(
        agents=[AgentConfig(id=a, service=d) for a, d in AGENTS.items()],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent=f, to_agent=t, rate_per_s=r) for f, t, r in PAIRS]
        ),
        n_messages=None,
        duration_s=1.5 * 86_400.0,
        tasks=None,
    )


def _fit(seed: int) -> Calibration:
    return fit_log(simulate(config(), seed=seed).events, hourly=False)


@pytest.fixture(scope="module")
def fits() -> pl.DataFrame:
    rows = []
    for seed in SEEDS:
        service = _fit(seed).service.filter(pl.col("agent").is_in(list(AGENTS)))
        rows.append(service.with_columns(pl.lit(seed).alias("seed")))
    truth = pl.DataFrame(
        {
            "agent": list(AGENTS),
            "true_mean": [d.mean for d in AGENTS.values()],
            "true_family": [d.kind for d in AGENTS.values()],
        }
    )
    return pl.concat(rows).join(truth, on="agent")


@pytest.mark.slow
def test_intervals_cover_the_true_mean_90_to_98_percent(fits: pl.DataFrame) -> None:
    assert fits.height == len(SEEDS) * len(AGENTS)
    assert (fits["fit"] == "agent").all() and not fits["saturated"].any()
    covered = fits.select(
        pl.col("true_mean").is_between(pl.col("mean_lo"), pl.col("mean_hi")).mean()
    ).item()
    assert 0.90 <= covered <= 0.98, covered


@pytest.mark.slow
def test_point_estimates_within_10_percent(fits: pl.DataFrame) -> None:
    close = fits.select(
        ((pl.col("mean_s") / pl.col("true_mean") - 1.0).abs() <= 0.10).mean()
    ).item()
    assert close >= 0.95, close


@pytest.mark.slow
def test_gamma_agents_are_fitted_as_gamma(fits: pl.DataFrame) -> None:
    gamma = fits.filter(pl.col("true_family") == "gamma")
    assert (gamma["family"] == "gamma").all(), gamma.select("seed", "agent", "family")
    # the chosen family is reported with every family's AIC
    assert fits.select(pl.col("^aic_.*$").is_not_null().all()).row(0) == (True, True, True)


def overloaded() -> SimConfig:
    """An older gateway (every send on the target's main session) whose agent ``b`` gets
    more work than it can do: ρ = 0.0193 /s × 60 s ≈ 1.16; the others are light."""
    return SimConfig(
        agents=[AgentConfig(id=a, service=d) for a, d in AGENTS.items()],
        workload=PoissonArrivals(
            pairs=[
                PairRate(from_agent="a", to_agent="b", rate_per_s=0.0113),
                PairRate(from_agent="c", to_agent="b", rate_per_s=0.008),
                PairRate(from_agent="b", to_agent="d", rate_per_s=0.002),
                PairRate(from_agent="d", to_agent="a", rate_per_s=0.002),
            ]
        ),
        n_messages=None,
        duration_s=86_400.0,
        tasks=None,
        announce=None,
        ping_pong=PingPongPolicy(max_turns=0),
        topology="agent_main",
    )


@pytest.mark.slow
def test_an_overloaded_agent_is_named_and_flagged_not_fitted_silently() -> None:
    events = simulate(overloaded(), seed=3).events
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cal = fit_log(events, hourly=False, limits=GatewayLimits(nested_limit=None))
    flagged = cal.service.filter("saturated")["agent"].to_list()
    assert flagged == ["b"], cal.service.select("agent", "busy", "rho", "saturated")
    messages = [str(w.message) for w in caught if issubclass(w.category, FitWarning)]
    assert any(m.startswith("agent b is at or above saturation") for m in messages), messages
    assert messages == list(cal.warnings)
    b = cal.service.filter(pl.col("agent") == "b").row(0, named=True)
    assert b["busy"] >= 0.95


@pytest.mark.slow
def test_runs_are_measured_from_max_of_request_lane_and_pool_slot() -> None:
    """On the reference topology with a pool that binds (5 nested slots: 16 % of the
    messages wait for one), every first run whose start the fit reads from the log
    (``run_start``: its lane and a pool slot free) is measured exactly: reply - run start
    is the run's simulated service time, to the log's millisecond."""
    cfg = config().model_copy(update={"lanes": LanePools(nested=5), "duration_s": 43_200.0})
    result = simulate(cfg, seed=7)
    cal = fit_log(result.events, hourly=False, limits=GatewayLimits(nested_limit=5))
    used, joined = measured_runs(cal.exchanges, result.messages)
    assert joined.height == used.height > 300
    off = joined.filter((pl.col("measured_ms") - pl.col("service_ms")).abs() > 2.0)
    assert off.height <= 0.005 * joined.height, off
    assert result.messages["queue_wait_s"].gt(0).mean() > 0.10  # the pool did bind


@pytest.mark.slow
def test_a_saturated_nested_pool_is_named_in_a_warning() -> None:
    """Two nested slots for the four agents' runs: the gateway's lane is saturated and the
    fit says so; five slots (16 % of the messages wait) are not."""
    for slots, saturated in ((2, True), (5, False)):
        cfg = config().model_copy(update={"lanes": LanePools(nested=slots), "duration_s": 43_200.0})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cal = fit_log(
                simulate(cfg, seed=7).events, hourly=False, limits=GatewayLimits(nested_limit=slots)
            )
        pool = [w for w in cal.warnings if w.startswith("the gateway-wide nested lane")]
        assert bool(pool) is saturated, cal.warnings
        assert [str(w.message) for w in caught if issubclass(w.category, FitWarning)] == list(
            cal.warnings
        )
