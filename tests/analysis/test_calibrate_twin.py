"""The twin fitted with tasks on (issue 11 item 4): a 3-day log with known service times and failures.

The log: today's deployment (``SimConfig()``: tasks, work sessions that share conversation
ids, channel sessions, announce steps, the gate), five main agents whose lognormal service
times have means 30, 60, 90, 120 and 150 s (CV 0.6), two sub-agents of mean 90 s, and 3 %
of runs failing with ``529 Overloaded``, over three days. The fit must find every agent's
mean within 10 % of its configured mean (seeds 1 and 2), the arrival rates as logged and within their Poisson error, the failure chance within
1.5 points; five replications of the twin must match the log's first-reply latencies (KS ≤
0.05), no-reply share (2 points) and failure share (1.5 points).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from a2a_lab.analysis.calibrate import Calibration, Comparison, compare, exchanges, fit_log
from a2a_lab.analysis.calibrate._exchanges import _enriched, _exchanges
from a2a_lab.analysis.calibrate._hidden import behind_hidden
from a2a_lab.analysis.calibrate._lanes import run_lanes
from a2a_lab.sim import AgentConfig, FailurePolicy, Lognormal, SimConfig, SimResult, simulate
from a2a_lab.sim.workload.arrivals import poisson_routes
from tests.support.exchange_truth import measured_runs

# statistical validation of the twin: make test-all
pytestmark = pytest.mark.slow

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
        topology="agent_main",  # runs queued behind hidden turns on each agent's main session
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
    used, joined = measured_runs(fit.exchanges, log.messages)
    assert joined.height == used.height > 1000
    off = joined.filter((pl.col("measured_ms") - pl.col("service_ms")).abs() > 2.0)
    assert off.height <= 0.005 * joined.height, off


def test_runs_behind_a_hidden_turn_are_modelled_exactly(log: SimResult) -> None:
    """The model of a run queued behind a turn that timed out (:mod:`._hidden`) holds on the
    simulator's ground truth, run by run: the run ``J`` started at ``max(r_J, E)`` with
    ``E`` the end of the run just before it on its session; that run is the hidden turn
    ``H`` (or the announce step ``A`` of the same flow, queued behind ``H``); ``H`` started
    at ``hidden_start`` and ran past ``hidden_limit``; ``A`` started at
    ``max(r_A, end of H)`` and ran past ``announce_limit``. The likelihood draws ``E`` from
    exactly these constraints, so every constraint it uses is true of every run it uses."""
    ev = _enriched(log.events)
    all_ex = _exchanges(ev).with_row_index("_row")
    jobs = run_lanes(ev, all_ex)
    hidden = behind_hidden(jobs, all_ex, CONFIG.ping_pong.turn_timeout_s * 1000.0)
    assert hidden.height > 150 and hidden["announced"].sum() > 5
    assert (hidden["hidden_limit"] > hidden["hidden_start"]).mean() > 0.5
    zero = CONFIG.start.timestamp() * 1000.0
    message = log.messages.select("run_id", "message")
    runs = (
        log.runs.with_columns(
            (zero + pl.col(c) * 1000.0).alias(c) for c in ("enqueue_s", "start_s", "end_s")
        )
        .sort("session", "start_s")
        .with_columns(
            pl.col(c).shift(k).over("session").alias(f"{c}_{k}")
            for c in ("kind", "message", "start_s", "end_s", "enqueue_s")
            for k in (1, 2)
        )
    )
    first = runs.filter(pl.col("kind") == "message").unique("message", keep="first")
    rows = (
        hidden.join(all_ex.select("_row", "run_id"), on="_row")
        .join(message, on="run_id")
        .join(
            all_ex.select(pl.col("_row").alias("hidden_row"), pl.col("run_id").alias("_h_run")),
            on="hidden_row",
        )
        .join(message.rename({"run_id": "_h_run", "message": "hidden_message"}), on="_h_run")
        .join(first, on="message")
    )
    assert rows.height == hidden.height
    ms = 2.0  # the log's millisecond timestamps

    def near(a: str | pl.Expr, b: str | pl.Expr) -> pl.Expr:
        a, b = pl.col(a) if isinstance(a, str) else a, pl.col(b) if isinstance(b, str) else b
        return (a - b).abs() <= ms

    alone, chained = rows.filter(~pl.col("announced")), rows.filter(pl.col("announced"))
    checks = {
        "J starts at max(r_J, E)": rows.select(
            near("start_s", pl.max_horizontal("request", "end_s_1")).all()
        ),
        "the hidden run just before J": alone.select(
            (
                pl.col("kind_1").is_in(["turn", "announce"])
                & (pl.col("message_1") == pl.col("hidden_message"))
            ).all()
        ),
        "it starts at hidden_start": alone.select(near("start_s_1", "hidden_start").all()),
        "it runs past hidden_limit": alone.select(
            (pl.col("end_s_1") >= pl.col("hidden_limit")).all()
        ),
        "A just before J, H before A": chained.select(
            (
                (pl.col("kind_1") == "announce")
                & (pl.col("kind_2") == "turn")
                & (pl.col("message_1") == pl.col("hidden_message"))
                & (pl.col("message_2") == pl.col("hidden_message"))
            ).all()
        ),
        "H starts at hidden_start": chained.select(near("start_s_2", "hidden_start").all()),
        "H runs past hidden_limit": chained.select(
            (pl.col("end_s_2") >= pl.col("hidden_limit") - ms).all()
        ),
        "A requested at the turn timeout": chained.select(
            near("enqueue_s_1", "announce_request").all()
        ),
        "A runs past announce_limit": chained.select(
            (pl.col("end_s_1") >= pl.col("announce_limit")).all()
        ),
    }
    failed = [name for name, frame in checks.items() if frame.item() is False]
    assert not failed, failed


def _mean_errors(result: SimResult, fitted: Calibration) -> dict[str, float]:
    configured = {a.id: a.service.mean for a in CONFIG.agents}
    service = fitted.service.filter(pl.col("agent").is_in(list(configured)))
    assert service.height == len(configured)
    assert (service["fit"] == "agent").all()  # no agent falls back to the pooled fit
    return {a: m / configured[a] - 1.0 for a, m in service.select("agent", "mean_s").iter_rows()}


def test_every_agents_mean_service_time_within_10_percent(log: SimResult, fit: Calibration) -> None:
    """The goal as written: every agent's fitted mean service time within 10 % of its
    configured mean (seed 1; seed 2 in the next test)."""
    errors = _mean_errors(log, fit)
    assert max(abs(e) for e in errors.values()) <= 0.10, errors
    # the fit uses the runs queued behind a hidden turn: the slow agents have many
    hidden = dict(fit.service.select("agent", "hidden").iter_rows())
    assert hidden["bada"] > 30 and hidden["seum"] > 30


def test_every_agents_mean_service_time_within_10_percent_second_seed() -> None:
    result = simulate(CONFIG, seed=2)
    errors = _mean_errors(result, fit_log(result.events))
    assert max(abs(e) for e in errors.values()) <= 0.10, errors


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
