"""The twin fitted with tasks on (issue 11 item 4): a 3-day log with known service times and failures.

The log: today's deployment (``SimConfig()``: tasks, work sessions that share conversation
ids, channel sessions, announce steps, the gate), five main agents whose lognormal service
times have means 30, 60, 90, 120 and 150 s (CV 0.6), two sub-agents of mean 90 s, and 3 %
of runs failing with ``529 Overloaded``, over three days. The fit must find every agent's
mean within 10 % (see the test for the bound against the configured mean), the arrival rates
as logged and within their Poisson error, the failure chance within
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


def test_service_times_measured_exactly_where_the_log_tells(
    log: SimResult, fit: Calibration
) -> None:
    """No bias in which runs count as started on an idle session: for every replied
    exchange whose run start the fit read from the log (``run_start``: the send, or the end
    of the run before it on the session), reply - run start is the run's simulated service
    time, to the millisecond of the log, for all but a handful of runs."""
    used = fit.exchanges.filter(
        pl.col("run_start").is_not_null() & pl.col("first_reply_s").is_not_null()
    ).with_columns(
        (
            (pl.col("start_time").dt.epoch("ms") + pl.col("first_reply_s") * 1000.0)
            - pl.col("run_start")
        ).alias("measured_ms")
    )
    truth = log.messages.select("run_id", (pl.col("service_s") * 1000.0).alias("service_ms"))
    joined = used.join(truth, on="run_id", how="inner")
    assert joined.height == used.height > 1000
    off = joined.filter((pl.col("measured_ms") - pl.col("service_ms")).abs() > 2.0)
    assert off.height <= 0.005 * joined.height, off


def test_every_agents_mean_service_time_within_10_percent(log: SimResult, fit: Calibration) -> None:
    """Every agent's fitted mean service time is within 10 % of the mean of its runs in the
    log (the service times the simulator drew for them: what calibration can recover), and
    within 10 % of the configured mean, or 3 standard errors where the log has too few
    measurable runs for that (``cv / sqrt(observed)``: the slowest agent's turns time out
    and keep its session busy unseen, leaving 110-140 runs with a known start on a 3-day
    log, a standard error of 5-6 %; the log's own runs differ from the configured mean by
    up to 8 % on seeds 1-6, see BENCHMARKS.md)."""
    configured = {a.id: a.service.mean for a in CONFIG.agents}
    realised = dict(log.messages.group_by("to_agent").agg(pl.col("service_s").mean()).iter_rows())
    service = fit.service.filter(pl.col("agent").is_in(list(configured)))
    assert service.height == len(configured)
    assert (service["fit"] == "agent").all()  # no agent falls back to the pooled fit
    for row in service.iter_rows(named=True):
        agent, mean = row["agent"], row["mean_s"]
        assert mean == pytest.approx(realised[agent], rel=0.10), agent
        bound = max(0.10, 3.0 * 0.6 / math.sqrt(row["observed"]))
        assert mean == pytest.approx(configured[agent], rel=bound), agent


def test_rates_are_the_logged_counts_and_within_poisson_error(
    log: SimResult, fit: Calibration
) -> None:
    """Pair rates: the fit is the rate realised in the log (its exchanges over its span),
    exactly. Against the configured rate the realised count is a Poisson draw: with
    40 pairs, some expecting only ~29 exchanges in 3 days (a 19 % standard deviation), 5 %
    per pair is out of reach; each pair's count must lie in its exact Poisson interval at a
    family-wise error of 0.1 % (Bonferroni over the pairs), and the total rate within 5 %."""
    from scipy import stats

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
    logged = (
        log.messages.filter(pl.col("logged")) if "logged" in log.messages.columns else log.messages
    )
    counts = {(f, t): n for f, t, n in logged.group_by("from_agent", "to_agent").len().iter_rows()}
    alpha = 0.001 / len(truth) / 2
    for pair, rate in truth.items():
        r, n = fitted.get(pair, (0.0, 0))
        assert n == counts.get(pair, 0), pair
        assert r == pytest.approx(n / fit.span_s, rel=1e-12), pair
        expected = rate * fit.span_s
        lo, hi = stats.poisson.ppf(alpha, expected), stats.poisson.isf(alpha, expected)
        assert lo <= n <= hi, (pair, n, expected)
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
