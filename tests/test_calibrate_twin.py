"""The twin fitted with tasks on (issue 11 item 4): a 3-day log with known service times and failures.

The log: today's deployment (``SimConfig()``: tasks, work sessions that share conversation
ids, channel sessions, announce steps, the gate), five main agents whose lognormal service
times have means 30, 60, 90, 120 and 150 s (CV 0.6), two sub-agents of mean 90 s, and 3 %
of runs failing with ``529 Overloaded``, over three days. The fit must find every agent's
mean within 10 %, the arrival rates within their Poisson error, the failure chance within
1.5 points; five replications of the twin must match the log's first-reply latencies (KS ≤
0.05), no-reply share (2 points) and failure share (1.5 points).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from a2a_lab.analysis.calibrate import Calibration, Comparison, compare, exchanges, fit_log
from a2a_lab.sim import AgentConfig, FailurePolicy, Lognormal, SimConfig, SimResult, simulate
from a2a_lab.sim.arrivals import poisson_routes

MEANS = {"main": 30.0, "ruda": 60.0, "eden": 90.0, "seum": 120.0, "bada": 150.0}
FAILURE = 0.03


def _config() -> SimConfig:
    subs = [a for a in SimConfig().agents if a.kind == "subagent"]
    agents = [
        AgentConfig(id=a, service=Lognormal(mean_s=m, cv=0.6)) for a, m in MEANS.items()
    ] + subs
    return SimConfig(
        agents=agents,
        n_messages=None,
        duration_s=3 * 86400.0,
        failures=FailurePolicy(rates={"server_overload": FAILURE}),
    )


CONFIG = _config()


@pytest.fixture(scope="module")
def log() -> SimResult:
    return simulate(CONFIG, seed=1)


@pytest.fixture(scope="module")
def fit(log: SimResult) -> Calibration:
    return fit_log(log.events)


@pytest.fixture(scope="module")
def twins(fit: Calibration) -> list[SimResult]:
    return [simulate(fit.config, seed=100 + k) for k in range(5)]


@pytest.fixture(scope="module")
def comparison(twins: list[SimResult], log: SimResult) -> Comparison:
    return compare(twins, log.events)


def _error_share(events: list[pl.DataFrame]) -> float:
    ex = pl.concat([exchanges(e) for e in events]).filter(~pl.col("spawned") & pl.col("has_send"))
    return float(
        ex.select(
            ((pl.col("outcome") == "no_reply") & (pl.col("outcome_reason") != "timeout")).mean()
        ).item()
    )


def test_the_log_is_the_hard_case(log: SimResult, fit: Calibration) -> None:
    assert CONFIG.tasks is not None
    assert log.events.filter(pl.col("type") == "task.started").height > 100
    # work sessions reuse conversation ids: several exchanges per id
    assert fit.exchanges["conversation_id"].n_unique() < 0.8 * fit.exchanges.height
    assert log.events.filter(pl.col("type") == "a2a.retry").height > 0


def test_every_agents_mean_service_time_within_10_percent(fit: Calibration) -> None:
    truth = {a.id: a.service.mean for a in CONFIG.agents}
    service = fit.service.filter(pl.col("agent").is_in(list(truth)))
    assert service.height == len(truth)
    assert (service["fit"] == "agent").all()  # no agent falls back to the pooled fit
    for row in service.iter_rows(named=True):
        assert row["mean_s"] == pytest.approx(truth[row["agent"]], rel=0.10), row["agent"]


def test_rates_within_their_poisson_error(fit: Calibration) -> None:
    agents = tuple(a.id for a in CONFIG.agents)
    wl = CONFIG.workload
    senders, targets, rates = poisson_routes(wl, agents)  # type: ignore[arg-type]
    truth = {(agents[f], agents[t]): r for f, t, r in zip(senders, targets, rates, strict=True)}
    fitted = {
        (f, t): (r, n)
        for f, t, r, n in fit.rates.select(
            "from_agent", "to_agent", "rate_per_s", "exchanges"
        ).iter_rows()
    }
    assert fitted.keys() <= truth.keys()
    for pair, rate in truth.items():
        r, _n = fitted.get(pair, (0.0, 0))
        assert abs(r - rate) <= 3.5 * rate / math.sqrt(rate * fit.span_s), (
            pair
        )  # Poisson: sd of a count is its root
    total = sum(r for r, _ in fitted.values())
    assert total == pytest.approx(CONFIG.total_rate_per_s, rel=0.05)


def test_failures_retries_and_tasks_fitted(fit: Calibration) -> None:
    twin = fit.config
    assert twin.failures is not None
    assert twin.failures.rates["server_overload"] == pytest.approx(FAILURE, abs=0.015)
    assert twin.retry.retries_allowed == 3
    assert twin.tasks is not None and CONFIG.tasks is not None
    # about 100 tasks per agent-day pair: durations and gaps within 15 %
    assert twin.tasks.mean_duration_s == pytest.approx(CONFIG.tasks.mean_duration_s, rel=0.15)
    assert twin.tasks.mean_gap_s == pytest.approx(CONFIG.tasks.mean_gap_s, rel=0.15)
    assert twin.tasks.agents == "main"
    assert twin.channel_share == pytest.approx(CONFIG.channel_share, abs=0.03)


def test_twin_matches_the_log(
    fit: Calibration, twins: list[SimResult], log: SimResult, comparison: Comparison
) -> None:
    assert comparison.overall["ks"][0] <= 0.05
    shares = {o: (a, b) for o, a, b in comparison.outcomes.iter_rows()}
    observed, simulated = shares["no_reply"]
    assert abs(observed - simulated) <= 0.02
    observed, simulated = shares["replied"]
    assert abs(observed - simulated) <= 0.02
    assert abs(_error_share([t.events for t in twins]) - _error_share([log.events])) <= 0.015
    assert np.isfinite(comparison.median_ratio)
