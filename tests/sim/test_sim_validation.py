"""The simulator against queueing theory (a2a_lab.sim.workload.presets, experiment, theory).

Each textbook queue runs as independent replications of the FULL model (every other policy
off), in parallel, with a warm-up deleted from each. For every figure the theoretical value
must lie inside the replications' 99 % confidence interval AND the estimate must be within
the stated tolerance of it. Sample sizes were chosen (from pilot runs of other seeds) so
that each tolerance is about three standard errors of its estimate or more; the tightest
are the M/M/1 99th percentile of the sojourn time (1.6 M messages: 2.7) and the
heavy-tailed M/G/1 mean wait (3 M messages: about 3.3). Exact checks: Little's law on a
run, and single-server FIFO waits equal to Lindley's recursion on the same draws.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from a2a_lab.sim import SimConfig, confidence_interval, presets, replicate, simulate, theory

# statistical validation against queueing theory: make test-all
pytestmark = pytest.mark.slow


def assert_agrees(values: pl.Series, expected: float, tolerance: float) -> None:
    """Theory inside the 99 % CI of the replications and the estimate within ``tolerance``."""
    mean, low, high = confidence_interval(values, level=0.99)
    assert low <= expected <= high, f"{expected} outside the 99 % CI [{low:.5f}, {high:.5f}]"
    assert abs(mean - expected) <= tolerance * expected, (
        f"estimate {mean:.5f} not within {tolerance:.0%} of {expected}"
    )


def test_theory_gives_the_figures_of_the_issue() -> None:
    assert theory.mm1_mean_wait(0.8, 1.0) == pytest.approx(4.0)
    assert theory.mm1_sojourn_quantile(0.8, 1.0, 0.95) == pytest.approx(14.979, abs=5e-4)
    assert theory.mm1_sojourn_quantile(0.8, 1.0, 0.99) == pytest.approx(23.026, abs=5e-4)
    assert theory.erlang_c(2.4, 1.0, 3) == pytest.approx(0.64719, abs=5e-6)
    assert theory.mmc_mean_wait(2.4, 1.0, 3) == pytest.approx(1.07865, abs=5e-6)
    assert theory.md1_mean_wait(0.8, 1.0) == pytest.approx(2.0)
    assert theory.mg1_mean_wait(0.5, 1.0, 2.0) == pytest.approx(2.5)
    # M/M/1 is M/M/c with one server, and M/G/1 with cv 1
    assert theory.erlang_c(0.8, 1.0, 1) == pytest.approx(0.8)
    assert theory.mg1_mean_wait(0.8, 1.0, 1.0) == pytest.approx(theory.mm1_mean_wait(0.8, 1.0))
    with pytest.raises(ValueError, match="not stable"):
        theory.mm1_mean_wait(1.0, 1.0)


def test_mm1_waits_and_sojourn_percentiles(pool) -> None:
    reps = replicate(
        presets.mm1(0.8, 1.0, n_messages=100_000), 16, seed=601, warmup_s=2_000.0, executor=pool
    )
    assert reps["messages"].min() > 97_000
    assert_agrees(reps["mean_wait_s"], theory.mm1_mean_wait(0.8, 1.0), 0.03)
    assert_agrees(reps["p_wait"], 0.8, 0.01)
    assert_agrees(reps["p95_sojourn_s"], theory.mm1_sojourn_quantile(0.8, 1.0, 0.95), 0.03)
    assert_agrees(reps["p99_sojourn_s"], theory.mm1_sojourn_quantile(0.8, 1.0, 0.99), 0.04)
    assert_agrees(reps["utilization"], 0.8, 0.01)


def test_mm3_erlang_c(pool) -> None:
    reps = replicate(
        presets.mmc(2.4, 1.0, 3, n_messages=100_000), 8, seed=602, warmup_s=500.0, executor=pool
    )
    assert_agrees(reps["mean_wait_s"], theory.mmc_mean_wait(2.4, 1.0, 3), 0.03)
    assert_agrees(reps["p_wait"], theory.erlang_c(2.4, 1.0, 3), 0.02)


def test_md1_mean_wait(pool) -> None:
    reps = replicate(
        presets.md1(0.8, 1.0, n_messages=100_000), 8, seed=603, warmup_s=2_000.0, executor=pool
    )
    assert_agrees(reps["mean_wait_s"], theory.md1_mean_wait(0.8, 1.0), 0.03)


def test_mg1_lognormal_mean_wait(pool) -> None:
    reps = replicate(
        presets.mg1_lognormal(0.5, 1.0, 2.0, n_messages=200_000),
        15,
        seed=604,
        warmup_s=2_000.0,
        executor=pool,
    )
    assert_agrees(reps["mean_wait_s"], theory.mg1_mean_wait(0.5, 1.0, 2.0), 0.05)


@pytest.mark.parametrize(
    "cfg",
    [
        presets.mm1(0.8, 1.0, n_messages=50_000),
        presets.mmc(2.4, 1.0, 3, n_messages=50_000),
        SimConfig(n_messages=2_000),
    ],
    ids=["mm1", "mm3", "default"],
)
def test_littles_law_holds_exactly_on_a_run(cfg: SimConfig) -> None:
    res = simulate(cfg, seed=7)
    horizon = res.trace.end_s
    # L: the time average of the exact queue-length step functions
    area = (
        res.timeseries.sort("session", "time_s")
        .with_columns(pl.col("time_s").shift(-1).over("session").fill_null(horizon).alias("next"))
        .group_by("session")
        .agg(((pl.col("next") - pl.col("time_s")) * pl.col("in_system")).sum().alias("area"))
    )
    # lambda * W per session, from the runs
    runs = res.runs.group_by("session").agg(
        pl.len().alias("runs"), (pl.col("end_s") - pl.col("enqueue_s")).mean().alias("w")
    )
    both = area.join(runs, on="session")
    assert both.height == res.sessions.filter(pl.col("runs") > 0).height
    L = both["area"] / horizon
    assert np.allclose(L, both["runs"] / horizon * both["w"], rtol=1e-9, atol=0)
    if cfg.workload.pairs:  # the preset: the messages are the server's only runs
        m = res.messages
        s = res.summary()
        assert s["mean_in_system"] == pytest.approx(
            s["arrival_rate_per_s"] * s["mean_sojourn_s"], rel=1e-9
        )
        server = both.filter(pl.col("session") == "agent:server:main")
        assert server["area"].item() / horizon == pytest.approx(
            m.height / horizon * m["sojourn_s"].mean(), rel=1e-9
        )


def _lindley(interarrival: np.ndarray, service: np.ndarray) -> np.ndarray:
    """W(k+1) = max(0, W(k) + S(k) - A(k+1)), W(0) = 0."""
    waits = [0.0] * interarrival.shape[0]
    w = 0.0
    gaps, services = interarrival.tolist(), service.tolist()
    for k in range(1, len(waits)):
        w = max(0.0, w + services[k - 1] - gaps[k])
        waits[k] = w
    return np.asarray(waits)


@pytest.mark.parametrize(
    "cfg",
    [
        presets.mm1(0.95, 1.0, n_messages=200_000),
        presets.md1(0.8, 1.0, n_messages=100_000),
        presets.mg1_lognormal(0.5, 1.0, 2.0, n_messages=100_000),
    ],
    ids=["mm1", "md1", "mg1"],
)
def test_single_server_fifo_waits_equal_lindleys_recursion_on_the_same_draws(
    cfg: SimConfig,
) -> None:
    res = simulate(cfg, seed=11)
    expected = _lindley(res.plan.interarrival_s, res.plan.service_s)
    simulated = res.messages["queue_wait_s"].to_numpy()
    assert expected.max() > 20  # long busy periods: the recursion is really exercised
    assert np.max(np.abs(simulated - expected)) < 1e-9
    assert np.array_equal(res.messages["service_s"].to_numpy(), res.plan.service_s)
