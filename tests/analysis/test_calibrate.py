"""Tests of a2a_lab.analysis.calibrate: exchanges, censored fits, recovery of a known model, the sample twin, compare."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import a2a_lab as al
from a2a_lab.analysis.calibrate import (
    Calibration,
    GatewayLimits,
    compare,
    comparison_chart,
    exchanges,
    fit_log,
    fit_service_time,
)
from a2a_lab.sim import (
    AgentConfig,
    Exponential,
    Gamma,
    Lognormal,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    WaitPolicy,
    simulate,
)
from a2a_lab.sim.experiments.sweep import apply_point
from a2a_lab.views.plots import MAX_ROWS

TURN = Lognormal(mean_s=10.0, cv=0.5)
ENDINGS = {"conclusion": 0.2, "minimal": 0.1, "explicit_skip": 0.1}
#: A known model under load: b is ~40 % busy, a 120 s wait limit leaves ~15 % unanswered.
KNOWN = SimConfig(
    agents=[
        AgentConfig(id="a", service=Lognormal(mean_s=40.0, cv=1.0), turn_service=TURN),
        AgentConfig(id="b", service=Lognormal(mean_s=60.0, cv=1.0), turn_service=TURN),
        AgentConfig(id="c", service=Lognormal(mean_s=30.0, cv=0.5), turn_service=TURN),
    ],
    workload=PoissonArrivals(
        pairs=[
            PairRate(from_agent="a", to_agent="b", rate_per_s=0.002),
            PairRate(from_agent="c", to_agent="b", rate_per_s=0.002),
            PairRate(from_agent="a", to_agent="c", rate_per_s=0.001),
        ]
    ),
    n_messages=None,
    duration_s=300_000.0,
    channel_share=0.0,
    announce=None,
    tasks=None,
    wait=WaitPolicy(max_wait_s=120.0),
    ping_pong=PingPongPolicy(max_turns=3, endings=ENDINGS),
    topology="agent_main",  # the per-agent picture: b's sends queue on its main session
)


@pytest.fixture(scope="module")
def sample_events() -> pl.DataFrame:
    return al.load(al.samples.sample_dir()).events


@pytest.fixture(scope="module")
def sample_fit(sample_events: pl.DataFrame) -> Calibration:
    return fit_log(sample_events, tz="Asia/Seoul")  # the sample gateway's zone (KST)


@pytest.fixture(scope="module")
def known_events() -> pl.DataFrame:
    return simulate(KNOWN, seed=5).events


@pytest.fixture(scope="module")
def known_fit(known_events: pl.DataFrame) -> Calibration:
    return fit_log(known_events, hourly=False, limits=GatewayLimits(KNOWN.wait, KNOWN.ping_pong))


# ---------------------------------------------------------------------------------------
# exchanges
# ---------------------------------------------------------------------------------------


def spawns_that_ran(events: pl.DataFrame) -> int:
    """Spawns that ran (``a2a.spawn_result`` ok or accepted) in ``events``."""
    status = pl.col("data").struct.field("status")
    return events.filter(
        (pl.col("type") == "a2a.spawn_result") & status.is_in(["ok", "accepted"])
    ).height


def test_spawned_exchanges_are_the_sends_to_new_subagent_sessions(
    sample_events: pl.DataFrame,
) -> None:
    ex = exchanges(sample_events)
    assert ex.height == al.conversations(sample_events).height
    # in the sample each sub-agent session `agent:<id>:subagent:<uuid>` is spawned right before
    # its first send, and only then (later delegations reuse the session)
    d = pl.col("data")
    subagent_sends = (
        sample_events.filter(
            (pl.col("type") == "a2a.send")
            & d.struct.field("targetSessionKey").str.contains(":subagent:", literal=True)
        )
        .sort("event_ms", maintain_order=True)
        .with_columns(key=d.struct.field("targetSessionKey"))
        .unique("key", keep="first", maintain_order=True)
        .select(
            d.struct.field("conversationId").alias("conversation_id"),
            pl.col("event_time").alias("start_time"),
        )
    )
    flagged = ex.filter("spawned").select("conversation_id", "start_time")
    assert flagged.height == subagent_sends.height == spawns_that_ran(sample_events) > 0
    assert flagged.sort("conversation_id", "start_time").equals(
        subagent_sends.sort("conversation_id", "start_time")
    )
    assert np.allclose(
        ex["latency_s"].to_numpy(), ex["first_reply_s"].to_numpy(), rtol=1e-12, equal_nan=True
    )


# ---------------------------------------------------------------------------------------
# censored fits
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "truth"),
    [
        ("lognormal", Lognormal(mean_s=30.0, cv=1.2)),
        ("gamma", Gamma(mean_s=30.0, cv=0.6)),
        ("exponential", Exponential(mean_s=30.0)),
    ],
)
def test_censored_fit_recovers_each_family(
    family: str, truth: Lognormal | Gamma | Exponential
) -> None:
    x = truth.ppf(np.random.default_rng(3).random(5000))
    cut = float(np.quantile(x, 0.8))  # a fifth censored
    d = fit_service_time(x[x <= cut], np.full(int((x > cut).sum()), cut), family)  # type: ignore[arg-type]
    assert d.kind == truth.kind
    assert d.mean == pytest.approx(truth.mean, rel=0.05)
    if family != "exponential":
        assert d.cv == pytest.approx(truth.cv, rel=0.08)  # type: ignore[union-attr]
    # ignoring the censoring is visibly biased
    assert fit_service_time(x[x <= cut], family=family).mean < 0.8 * truth.mean  # type: ignore[arg-type]


def test_fit_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one"):
        fit_service_time([], [5.0])
    with pytest.raises(ValueError, match="positive"):
        fit_service_time([1.0, -2.0])
    with pytest.raises(ValueError, match="unknown family"):
        fit_service_time([1.0, 2.0], family="weibull")  # type: ignore[arg-type]


@settings(max_examples=12)
@given(
    st.lists(st.floats(0.5, 500.0), min_size=3, max_size=30),
    st.lists(st.floats(0.5, 500.0), max_size=10),
    st.floats(0.1, 20.0),
)
def test_fits_are_scale_equivariant(observed: list[float], censored: list[float], k: float) -> None:
    x, c = np.array(observed), np.array(censored)
    exp = fit_service_time(x, c, "exponential")
    assert exp.mean == pytest.approx((x.sum() + c.sum()) / x.size)
    assert fit_service_time(k * x, k * c, "exponential").mean == pytest.approx(k * exp.mean)
    if np.ptp(np.log(x)) > 1e-3:  # a lognormal needs some spread
        ln = fit_service_time(x, c, "lognormal")
        scaled = fit_service_time(k * x, k * c, "lognormal")
        assert scaled.mean == pytest.approx(k * ln.mean, rel=1e-3)
        assert scaled.cv == pytest.approx(ln.cv, rel=1e-3)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------
# recovery of a known configuration
# ---------------------------------------------------------------------------------------


def test_rates_and_agents_recovered(known_fit: Calibration) -> None:
    rates = {
        (f, t): r
        for f, t, r in known_fit.rates.select("from_agent", "to_agent", "rate_per_s").iter_rows()
    }
    truth = {(p.from_agent, p.to_agent): p.rate_per_s for p in KNOWN.workload.pairs}  # type: ignore[union-attr]
    assert rates.keys() == truth.keys()
    for pair, rate in truth.items():
        n = known_fit.rates.filter(
            (pl.col("from_agent") == pair[0]) & (pl.col("to_agent") == pair[1])
        )["exchanges"][0]
        assert abs(rates[pair] - rate) < 3 * rate / math.sqrt(n)  # within 3 Poisson standard errors
    assert [a.id for a in known_fit.config.agents] == ["a", "b", "c"]
    assert {a.kind for a in known_fit.config.agents} == {"main"}
    assert known_fit.config.workload.hourly_profile is None  # type: ignore[union-attr]
    assert known_fit.config.duration_s == pytest.approx(known_fit.span_s)
    assert known_fit.spawned == 0


def test_service_times_recovered_with_queueing_taken_out(
    known_events: pl.DataFrame, known_fit: Calibration
) -> None:
    s = {r["agent"]: r for r in known_fit.service.iter_rows(named=True)}
    assert s["b"]["fit"] == "agent" and s["b"]["censored"] > 30  # the 120 s wait limit censors b
    assert s["b"]["mean_s"] == pytest.approx(60.0, rel=0.10)
    assert s["b"]["cv"] == pytest.approx(1.0, rel=0.15)
    assert s["c"]["mean_s"] == pytest.approx(30.0, rel=0.10)
    assert s["c"]["cv"] == pytest.approx(0.5, rel=0.15)
    assert s["a"]["fit"] == "pooled"  # a never receives
    # the same fit on every exchange measures waits too: b queues, so its "service" inflates
    naive = fit_log(
        known_events,
        hourly=False,
        limits=GatewayLimits(KNOWN.wait, KNOWN.ping_pong),
        only_idle=False,
    )
    assert naive.service.filter(pl.col("agent") == "b")["mean_s"][0] > 1.2 * 60.0
    assert known_fit.exchanges["idle"].sum() < known_fit.exchanges.height


def test_turns_recovered(known_fit: Calibration) -> None:
    assert known_fit.turn_service.mean == pytest.approx(TURN.mean, rel=0.10)
    assert known_fit.turn_service.cv == pytest.approx(TURN.cv, rel=0.15)  # type: ignore[union-attr]
    probs = dict(known_fit.turns.select("ending", "probability").iter_rows())
    for ending in (
        "conclusion",
        "minimal",
        "explicit_skip",
        "repetition",
        "empty_reply",
        "agent_error",
    ):
        assert probs[ending] == pytest.approx(ENDINGS.get(ending, 0.0), abs=0.035)
    pp = known_fit.config.ping_pong
    assert pp.max_turns == 3 and pp.turn_timeout_s == KNOWN.ping_pong.turn_timeout_s
    assert known_fit.config.mix.payload_share == pytest.approx(KNOWN.mix.payload_share, abs=0.03)


def test_outcome_shares(known_fit: Calibration) -> None:
    out = known_fit.outcomes
    shares = out.select("replied", "timeout", "error", "blocked", "incomplete").sum_horizontal()
    assert np.allclose(shares.to_numpy(), 1.0)
    total = out.filter(pl.col("to_agent") == "*").row(0, named=True)
    assert total["exchanges"] == known_fit.exchanges.height
    assert (
        total["error"] == 0.0
    )  # the simulator's unanswered messages all time out (or are refused)
    assert 0.05 < total["timeout"] < 0.3


# ---------------------------------------------------------------------------------------
# the sample log's twin
# ---------------------------------------------------------------------------------------


def test_sample_fit_tables(sample_fit: Calibration, sample_events: pl.DataFrame) -> None:
    cal = sample_fit
    # every spawn that ran is one exchange left out; every other exchange with a send is fitted
    spawns = spawns_that_ran(sample_events)
    sent = al.conversations(sample_events).filter("has_send").height
    assert cal.spawned == spawns > 0 and cal.exchanges.height == sent - spawns
    assert cal.rates["exchanges"].sum() == cal.exchanges.height
    # hourly profile: the sample's days cover every hour; multipliers of mean 1
    hourly = cal.hourly
    assert hourly.height == 24 and hourly["exchanges"].sum() == cal.exchanges.height
    assert hourly["exposure_h"].sum() == pytest.approx(cal.span_s / 3600.0)
    assert hourly["multiplier"].mean() == pytest.approx(1.0)
    assert cal.config.workload.hourly_profile == pytest.approx(hourly["multiplier"].to_list())  # type: ignore[union-attr]
    assert cal.pair_hours["exchanges"].sum() == cal.exchanges.height
    kinds = {a.id: a.kind for a in cal.config.agents}
    assert {a for a, k in kinds.items() if k == "main"} == {
        "main",
        "ruda",
        "eden",
        "seum",
        "bada",
        "haneul",
    }
    assert cal.config.start.utcoffset().total_seconds() == 9 * 3600  # type: ignore[union-attr]
    assert 0.0 < cal.config.channel_share < 0.5 and cal.config.topology == "agent_main"
    assert (
        cal.config.gate == SimConfig().gate and cal.config.wait == SimConfig().wait
    )  # today's policies


def test_short_logs_get_no_hourly_profile(known_events: pl.DataFrame) -> None:
    day = known_events.filter(pl.col("event_ms") < pl.col("event_ms").min() + 20 * 3_600_000)
    assert fit_log(day).config.workload.hourly_profile is None  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="every hour"):
        fit_log(day, hourly=True)


def test_twin_reproduces_the_sample_median_latency(
    sample_events: pl.DataFrame, sample_fit: Calibration
) -> None:
    twin = fit_log(sample_events, tz="Asia/Seoul").config
    assert twin == sample_fit.config
    cmp = compare([simulate(twin, seed=k) for k in range(6)], sample_events)
    observed = sample_fit.observed_median_latency_s
    assert cmp.overall["observed_p50"][0] == pytest.approx(observed)
    assert cmp.median_ratio == pytest.approx(1.0, abs=0.10)  # the 10 %
    assert cmp.overall["ks"][0] < 0.1


# ---------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_runs() -> tuple[pl.DataFrame, pl.DataFrame]:
    cfg = SimConfig(n_messages=400)
    return simulate(cfg, seed=1).events, simulate(cfg, seed=2).events


def test_compare_with_itself_is_identity(two_runs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    a, _ = two_runs
    cmp = compare(a, a)
    assert cmp.overall["ks"][0] == 0.0 and cmp.median_ratio == 1.0
    lat = cmp.latency
    for q in ("p50", "p90", "p95", "p99"):
        assert lat[f"observed_{q}"].equals(lat[f"simulated_{q}"])
    assert lat.filter(pl.col("ks").is_not_null())["ks"].max() == 0.0
    assert cmp.turns["observed"].equals(cmp.turns["simulated"]) and cmp.turns_ks == 0.0
    assert cmp.outcomes["observed"].equals(cmp.outcomes["simulated"])


def test_compare_per_pair_ks_is_scipys(two_runs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    a, b = two_runs
    cmp = compare(a, b, min_samples=5)
    ca, cb = al.conversations(a), al.conversations(b)
    row = cmp.latency.sort("observed", descending=True).row(0, named=True)
    pair = (
        (pl.col("from_agent") == row["from_agent"])
        & (pl.col("to_agent") == row["to_agent"])
        & (pl.col("outcome") == "replied")
    )
    xa = ca.filter(pair)["first_reply_s"].to_numpy()
    xb = cb.filter(pair)["first_reply_s"].to_numpy()
    assert (row["simulated"], row["observed"]) == (xa.size, xb.size)
    assert row["ks"] == pytest.approx(stats.ks_2samp(xa, xb).statistic)
    assert row["observed_p95"] == pytest.approx(float(np.quantile(xb, 0.95)))
    # a pair with too few replies on a side has no KS
    sparse = cmp.latency.filter((pl.col("observed") < 5) | (pl.col("simulated") < 5))
    assert sparse["ks"].is_null().all()
    assert cmp.turns["observed"].sum() == cmp.overall["observed"][0]
    assert cmp.outcomes["observed"].sum() == pytest.approx(1.0) and cmp.outcomes[
        "simulated"
    ].sum() == pytest.approx(1.0)


def test_compare_sees_a_slower_model(two_runs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    a, _ = two_runs
    slower = apply_point(
        SimConfig(n_messages=400), {f"agents.{i}.service.mean_s": 120.0 for i in range(5)}
    )
    cmp = compare(simulate(slower, seed=1), a)
    assert cmp.overall["ks"][0] > 0.2 and cmp.overall["ks_pvalue"][0] < 1e-6
    assert cmp.median_ratio > 1.8


def test_comparison_chart(two_runs: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    a, b = two_runs
    cmp = compare(a, b)
    chart = comparison_chart(cmp, title="t")
    assert isinstance(chart, alt.HConcatChart) and isinstance(cmp.chart(), alt.HConcatChart)
    spec = chart.to_dict()
    assert len(spec["hconcat"]) == 2
    assert spec["hconcat"][0]["title"].startswith("t: first-reply latency (KS ")
    rows = sum(len(v) for v in spec["datasets"].values())
    assert 0 < rows <= MAX_ROWS
