"""Tests of a2a_lab.sim.experiments.sweep: grids, common random numbers, executors, cache, progress, capacity."""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor, ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from a2a_lab.sim import SimConfig, simulate
from a2a_lab.sim.experiments import RunOptions, SearchOptions
from a2a_lab.sim.experiments.replicate import confidence_interval, replicate
from a2a_lab.sim.experiments.sweep import (
    CapacityTask,
    apply_point,
    capacity_replication,
    capacity_search,
    grid_points,
    latency_quantile,
    replication_seed,
    scale_arrivals,
    summarize,
    sweep,
    sweep_runs,
)
from a2a_lab.sim.run import SUMMARY_KEYS
from a2a_lab.sim.workload.presets import mm1

#: A small configuration of the full model: gate, wait limit, ping-pong, announce, tasks.
SMALL = SimConfig(n_messages=120)
GRID = {"rate_scale": [1.0, 4.0], "gate.max_concurrent_flows": [1, 3]}


class RefusingExecutor(Executor):
    """An executor that must not be used (everything should come from the cache)."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        raise AssertionError("submit called although every result is cached")


@pytest.fixture(scope="module")
def serial_runs() -> pl.DataFrame:
    return sweep_runs(SMALL, GRID, RunOptions(replications=3, seed=11, workers=1))


# ---------------------------------------------------------------------------------------
# grids and configurations
# ---------------------------------------------------------------------------------------


def test_grid_points_product_order_and_validation() -> None:
    assert grid_points({"a": [1, 2], "b": [3]}) == [{"a": 1, "b": 3}, {"a": 2, "b": 3}]
    with pytest.raises(TypeError, match="list of values"):
        grid_points({"a": 3})  # type: ignore[dict-item]
    assert grid_points([{"a": 1}, {"b": 2}]) == [{"a": 1}, {"b": 2}]


def test_apply_point_paths_policies_and_errors() -> None:
    off = SMALL.model_copy(update={"gate": None})
    # a policy that is off is switched on with its defaults, then changed
    on = apply_point(off, {"gate.queue_timeout_s": 5.0})
    assert (
        on.gate is not None and on.gate.queue_timeout_s == 5.0 and on.gate.max_concurrent_flows == 3
    )
    assert (
        apply_point(SMALL, {"agents.1.session_concurrency": 2}).agents[1].session_concurrency == 2
    )
    assert apply_point(SMALL, {}) is SMALL
    with pytest.raises(ValueError, match="no item '99'"):
        apply_point(SMALL, {"agents.99.session_concurrency": 2})
    with pytest.raises(ValueError, match="max_concurrent_flows"):
        apply_point(SMALL, {"gate.max_concurrent_flows": 0})
    with pytest.raises(ValueError, match="extra"):
        apply_point(SMALL, {"gate.no_such_field": 1})
    with pytest.raises(TypeError, match="not a mapping"):
        apply_point(SMALL, {"n_messages.x": 1})
    with pytest.raises(ValueError, match="positive"):
        apply_point(SMALL, {"rate_scale": 0})


def test_scale_arrivals_rescales_the_same_gaps() -> None:
    base = mm1(0.2, 1.0, n_messages=300)
    a = simulate(base, seed=4).plan
    b = simulate(scale_arrivals(base, 2.5), seed=4).plan
    np.testing.assert_allclose(b.interarrival_s * 2.5, a.interarrival_s, rtol=1e-12)
    np.testing.assert_array_equal(a.service_s, b.service_s)
    trace = SimConfig(
        workload={
            "kind": "trace",
            "sends": [
                {"at_s": 0, "from": "main", "to": "ruda"},
                {"at_s": 10, "from": "ruda", "to": "main"},
            ],
        }
    )
    assert scale_arrivals(trace, 2.0).workload.time_scale == 0.5  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------
# seeding: common random numbers, independence from the rest of the grid
# ---------------------------------------------------------------------------------------


def test_replication_k_is_replication_k_of_replicate() -> None:
    cfg = mm1(0.7, 1.0, n_messages=200)
    runs = sweep_runs(cfg, [{}], RunOptions(replications=3, seed=5, workers=1))
    reps = replicate(cfg, 3, seed=5, workers=1)
    assert_frame_equal(runs.drop("point"), reps)


def test_every_point_sees_the_same_draws(serial_runs: pl.DataFrame) -> None:
    # the service times of the messages are the same at every point: only the policy and
    # the load differ (n_messages fixed, so the same messages run everywhere)
    per_rep = serial_runs.group_by("replication").agg(
        pl.col("mean_service_s").n_unique().alias("distinct")
    )
    assert per_rep["distinct"].to_list() == [1, 1, 1]
    # and replications differ from each other
    assert serial_runs.filter(pl.col("point") == 0)["mean_service_s"].n_unique() == 3


def test_a_point_does_not_depend_on_the_rest_of_the_grid(serial_runs: pl.DataFrame) -> None:
    alone = sweep_runs(
        SMALL,
        [{"rate_scale": 4.0, "gate.max_concurrent_flows": 1}],
        RunOptions(replications=3, seed=11, workers=1),
    )
    same = serial_runs.filter(
        (pl.col("rate_scale") == 4.0) & (pl.col("gate.max_concurrent_flows") == 1)
    )
    assert_frame_equal(alone.drop("point"), same.drop("point"))


@settings(max_examples=8)
@given(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=1, max_size=4, unique=True))
def test_any_grid_gives_each_point_its_own_result(scales: list[float]) -> None:
    cfg = mm1(0.3, 1.0, n_messages=60)
    runs = sweep_runs(cfg, {"rate_scale": scales}, RunOptions(replications=2, seed=2, workers=1))
    for s in scales:
        expected = [
            simulate(scale_arrivals(cfg, s), replication_seed(2, k)).summary()["mean_sojourn_s"]
            for k in range(2)
        ]
        assert runs.filter(pl.col("rate_scale") == s)["mean_sojourn_s"].to_list() == expected


def test_scenarios_may_name_different_parameters() -> None:
    cfg = mm1(0.5, 1.0, n_messages=100)
    runs = sweep_runs(
        cfg,
        [{"rate_scale": 1.5}, {"agents.1.session_concurrency": 2}, {}],
        RunOptions(replications=2, seed=1, workers=1),
    )
    assert runs.columns[:3] == ["point", "rate_scale", "agents.1.session_concurrency"]
    assert runs["rate_scale"].to_list() == [1.5, 1.5, None, None, None, None]
    assert runs["agents.1.session_concurrency"].to_list() == [None, None, 2, 2, None, None]
    base = runs.filter(pl.col("point") == 2)["mean_wait_s"].to_list()
    assert base == [
        simulate(cfg, replication_seed(1, k)).summary()["mean_wait_s"] for k in range(2)
    ]
    # two servers wait less than one, more load waits more: same draws, so per replication
    per_point = runs.pivot(on="point", index="replication", values="mean_wait_s")
    assert (per_point["1"] < per_point["2"]).all() and (per_point["0"] > per_point["2"]).all()


def test_load_raises_waits_pathwise(serial_runs: pl.DataFrame) -> None:
    # same draws, four times the load: every replication waits longer (not just on average)
    wide = serial_runs.filter(pl.col("gate.max_concurrent_flows") == 3).pivot(
        on="rate_scale", index="replication", values="mean_wait_s"
    )
    assert (wide["4.0"] > wide["1.0"]).all()


# ---------------------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------------------


def test_summary_is_mean_and_t_interval(serial_runs: pl.DataFrame) -> None:
    out = summarize(serial_runs, level=0.95)
    assert out.height == 4 and out["replications"].to_list() == [3, 3, 3, 3]
    assert out.columns[:4] == ["point", "rate_scale", "gate.max_concurrent_flows", "replications"]
    assert all(f"{m}_low" in out.columns and f"{m}_high" in out.columns for m in SUMMARY_KEYS)
    for point in range(4):
        values = serial_runs.filter(pl.col("point") == point)["p95_latency_s"]
        mean, low, high = confidence_interval(values, level=0.95)
        row = out.row(point, named=True)
        assert row["p95_latency_s"] == pytest.approx(mean, rel=1e-12)
        assert row["p95_latency_s_low"] == pytest.approx(low, rel=1e-12)
        assert row["p95_latency_s_high"] == pytest.approx(high, rel=1e-12)


def test_summary_with_one_replication_has_no_interval() -> None:
    out = sweep(
        mm1(0.5, 1.0, n_messages=50),
        {"rate_scale": [1.0]},
        RunOptions(replications=1, workers=1),
        metrics=["mean_wait_s"],
    )
    assert out["mean_wait_s_low"].is_null().all() and out["mean_wait_s"].is_not_null().all()
    with pytest.raises(ValueError, match="unknown metric"):
        summarize(
            sweep_runs(mm1(0.5, 1.0, n_messages=50), [{}], RunOptions(replications=1, workers=1)),
            metrics=["nope"],
        )


# ---------------------------------------------------------------------------------------
# executors, cache, progress
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_thread_and_process_executors_match_serial(serial_runs: pl.DataFrame) -> None:
    with ThreadPoolExecutor(2) as pool:
        assert_frame_equal(
            sweep_runs(SMALL, GRID, RunOptions(replications=3, seed=11, executor=pool)), serial_runs
        )
    assert_frame_equal(
        sweep_runs(SMALL, GRID, RunOptions(replications=3, seed=11, workers=2)), serial_runs
    )


@pytest.mark.slow
def test_dask_distributed_matches_serial(serial_runs: pl.DataFrame) -> None:
    distributed = pytest.importorskip("distributed")
    started = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster, timeout="60s") as client,
    ):
        client.wait_for_workers(2, timeout=60)
        out = sweep_runs(
            SMALL, GRID, RunOptions(replications=3, seed=11, executor=client.get_executor())
        )
        # both workers ran replications
        assert len(client.scheduler_info()["workers"]) == 2
    assert_frame_equal(out, serial_runs)
    assert time.perf_counter() - started < 90


def test_cache_reuses_results(tmp_path, serial_runs: pl.DataFrame) -> None:  # type: ignore[no-untyped-def]
    first = sweep_runs(
        SMALL, GRID, RunOptions(replications=3, seed=11, workers=1), cache_dir=tmp_path
    )
    assert len(list(tmp_path.glob("*.json"))) == 12
    assert_frame_equal(first, serial_runs)
    again = sweep_runs(
        SMALL,
        GRID,
        RunOptions(replications=3, seed=11, executor=RefusingExecutor()),
        cache_dir=tmp_path,
    )
    assert_frame_equal(again, serial_runs)
    # a new replication is computed, the cached ones are not
    with pytest.raises(AssertionError, match="submit called"):
        sweep_runs(
            SMALL,
            GRID,
            RunOptions(replications=4, seed=11, executor=RefusingExecutor()),
            cache_dir=tmp_path,
        )


def test_progress_quiet_under_tests_and_shown_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = mm1(0.5, 1.0, n_messages=30)
    sweep_runs(cfg, {"rate_scale": [1.0, 2.0]}, RunOptions(replications=2, workers=1))
    assert capsys.readouterr().err == ""
    sweep_runs(
        cfg, {"rate_scale": [1.0, 2.0]}, RunOptions(replications=2, workers=1, progress=True)
    )
    err = capsys.readouterr().err
    assert "sweep" in err and "4/4" in err


# ---------------------------------------------------------------------------------------
# capacity search
# ---------------------------------------------------------------------------------------


def test_latency_quantile_counts_unanswered_as_infinite() -> None:
    # a 2 s wait limit on an M/M/1 at 90 % load: many messages get no reply
    cfg = apply_point(mm1(0.9, 1.0, n_messages=400), {"wait": {"chunk_s": 1.0, "max_wait_s": 2.0}})
    res = simulate(cfg, seed=1)
    s = res.summary()
    assert 0.05 < s["no_reply_rate"] < 0.9
    assert latency_quantile(res, 0.95) == math.inf
    assert latency_quantile(res, 0.95, unanswered="exclude") == pytest.approx(s["p95_latency_s"])
    # below the replied share, the quantile is that of all messages, the unanswered last
    latency = res.messages["latency_s"].fill_null(1e12).to_numpy()
    q = 0.9 * s["replied_rate"]
    assert latency_quantile(res, q) == pytest.approx(float(np.quantile(latency, q)), rel=1e-12)


def test_capacity_matches_mm1_theory() -> None:
    target, q = 12.0, 0.9
    lam = 1.0 + math.log1p(-q) / target  # M/M/1 sojourn ~ Exp(mu - lambda), mu = 1
    cap = capacity_search(
        mm1(0.4, 1.0, n_messages=6000),
        target_latency_s=target,
        target_quantile=q,
        level=0.99,
        options=RunOptions(replications=6, seed=8, workers=1),
        search=SearchOptions(rel_tol=0.005),
    )
    assert cap.bracketed
    assert cap.rate_low < lam < cap.rate_high
    assert cap.rate_per_s == pytest.approx(lam, rel=0.05)
    assert cap.scale * 0.4 == pytest.approx(cap.rate_per_s)
    assert "p90 latency ≤ 12 s" in str(cap)


def test_capacity_replication_brackets_its_own_crossing() -> None:
    cfg = SimConfig(n_messages=150)
    task = CapacityTask(cfg, 3, 1, 180.0, 0.9, 0.02, 1.0, 12, 0.0, "infinite")
    out = capacity_replication(task)
    assert out["bracketed"] and out["scale"] < out["scale_above"] <= out["scale"] * 1.02
    seed = replication_seed(3, 1)
    below = latency_quantile(simulate(scale_arrivals(cfg, out["scale"]), seed), 0.9)
    above = latency_quantile(simulate(scale_arrivals(cfg, out["scale_above"]), seed), 0.9)
    assert below <= 180.0 < above
    assert below == out["quantile_at_scale"]


def test_capacity_unbracketed_gives_a_bound() -> None:
    # a target far above anything a light M/M/1 reaches within two doublings
    cap = capacity_search(
        mm1(0.01, 1.0, n_messages=100),
        target_latency_s=1e4,
        options=RunOptions(replications=2, workers=1),
        search=SearchOptions(max_doublings=2),
    )
    assert not cap.bracketed
    assert cap.replications["scale"].to_list() == [4.0, 4.0]
    assert cap.replications["scale_above"].is_nan().all()


# ---------------------------------------------------------------------------------------
# intervals of quantities that cannot be negative (issue 23)
# ---------------------------------------------------------------------------------------


def _t_interval(values: list[float], level: float) -> tuple[float, float, float]:
    """The textbook Student-t interval, from scipy's own interval function (the oracle)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):  # equal values: scipy's NaN interval, handled below
        low, high = stats.t.interval(level, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    return float(x.mean()), float(low), float(high)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
        min_size=2,
        max_size=6,
    ),
    st.sampled_from([0.9, 0.95, 0.99]),
)
def test_summary_intervals_stay_in_the_range_each_figure_can_take(
    values: list[float], level: float
) -> None:
    """A wait's interval never reaches below 0, a share's never above 1; inside the range
    the interval is scipy's Student-t interval, unchanged."""
    runs = pl.DataFrame(
        {
            "point": [0] * len(values),
            "replication": list(range(len(values))),
            "mean_wait_s": values,
            "no_reply_rate": values,
        }
    )
    row = summarize(runs, metrics=["mean_wait_s", "no_reply_rate"], level=level).row(0, named=True)
    mean, low, high = _t_interval(values, level)
    if math.isnan(low):  # every value the same: scipy gives no interval, summarize width 0
        low = high = mean
    assert row["mean_wait_s_low"] == pytest.approx(max(low, 0.0), abs=1e-12)
    assert row["mean_wait_s_high"] == pytest.approx(high, abs=1e-12)
    assert row["no_reply_rate_low"] == pytest.approx(max(low, 0.0), abs=1e-12)
    assert row["no_reply_rate_high"] == pytest.approx(min(high, 1.0), abs=1e-12)
    got = confidence_interval(values, level=level, bounds=(0.0, 1.0))
    assert got[1] == pytest.approx(max(low, 0.0), abs=1e-12)
    assert got[2] == pytest.approx(min(high, 1.0), abs=1e-12)


def test_a_light_load_wait_interval_starts_at_zero_not_below() -> None:
    """Few replications of a nearly idle queue: the t interval of the mean wait reaches
    below zero; the sweep shows 0 there (and an interval that still holds the mean)."""
    opts = RunOptions(replications=3, seed=5, workers=1)
    out = sweep(mm1(0.02, 1.0, n_messages=40), {"rate_scale": [1.0]}, opts, metrics=["mean_wait_s"])
    runs = sweep_runs(mm1(0.02, 1.0, n_messages=40), [{}], opts)
    _, raw_low, _ = _t_interval(runs["mean_wait_s"].to_list(), 0.95)
    assert raw_low < 0  # the case this guards against
    row = out.row(0, named=True)
    assert row["mean_wait_s_low"] == 0.0 <= row["mean_wait_s"] <= row["mean_wait_s_high"]


def test_capacity_interval_covers_the_bisection_bracket() -> None:
    """Replications that end in the same bracket (notebook 07 showed [19.0, 19.0]) give the
    bracket as the interval, not one of width zero."""
    cap = capacity_search(
        mm1(0.4, 1.0, n_messages=3000),
        target_latency_s=12.0,
        target_quantile=0.9,
        options=RunOptions(replications=3, seed=8, workers=1),
        search=SearchOptions(rel_tol=0.25),
    )
    reps = cap.replications
    assert cap.bracketed
    assert cap.scale_low <= reps["scale"].min() <= cap.scale
    assert cap.scale_high >= reps["scale_above"].mean() > cap.scale
    assert cap.scale_high - cap.scale_low >= reps["scale_above"].min() - reps["scale"].max()
    assert cap.rate_low == pytest.approx(cap.scale_low * 0.4)
