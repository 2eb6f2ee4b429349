"""The policies against theory and invariants (the policy hooks of a2a_lab.sim.engine.model).

- M/M/1/K: with ``queue_capacity = K`` the preset M/M/1 refuses an arrival that finds K in
  the system; the blocking probability and the accepted messages' mean wait are held against
  the closed forms, theory inside the replications' 99 % confidence interval AND within the
  stated tolerance (5 % for blocking, about 3 standard errors).
- Retry amplification: with failure probability p = 0.3 per attempt and R = 3 retries, a
  message makes ``1 + p + p² + p³ = 1.417`` attempts on average and finally fails with
  probability ``p⁴ = 0.0081`` (within 0.01), both for the reference's re-polls of a failing
  ``agent.wait`` call and for a policy that re-sends a failing run.
- The loop guard never lets more than N messages per window through for any pair
  (hypothesis, on the guard object and on simulated logs).
- With every policy at today's default the simulated log passes the log-health checks,
  except for findings the policies explain.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_lab.analysis.checks import check, replay_guard
from a2a_lab.sim import (
    AgentConfig,
    AgentRate,
    CollaborateLimit,
    Deterministic,
    Exponential,
    ExponentialRetry,
    FailurePolicy,
    LoopGuardPolicy,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    ReferenceRetry,
    SimConfig,
    confidence_interval,
    presets,
    replicate,
    simulate,
)
from a2a_lab.sim.policies import SendGuards

D = pl.col("data")


def mm1k_blocking(arrival_rate: float, service_rate: float, k: int) -> float:
    """P(an arrival finds K in the system) of M/M/1/K (PASTA: the time-stationary P_K)."""
    rho = arrival_rate / service_rate
    return (1 - rho) * rho**k / (1 - rho ** (k + 1))


def mm1k_mean_wait(arrival_rate: float, service_rate: float, k: int) -> float:
    """Mean queue wait of the ACCEPTED arrivals of M/M/1/K (Little's law on the accepted flow)."""
    rho = arrival_rate / service_rate
    in_system = rho / (1 - rho) - (k + 1) * rho ** (k + 1) / (1 - rho ** (k + 1))
    accepted = arrival_rate * (1 - mm1k_blocking(arrival_rate, service_rate, k))
    return in_system / accepted - 1 / service_rate


def assert_agrees(values: pl.Series | np.ndarray, expected: float, tolerance: float) -> None:
    """Theory inside the 99 % CI and the estimate within ``tolerance`` (relative)."""
    mean, low, high = confidence_interval(values, level=0.99)
    assert low <= expected <= high, f"{expected} outside the 99 % CI [{low:.5f}, {high:.5f}]"
    assert abs(mean - expected) <= tolerance * expected, (
        f"estimate {mean:.5f} not within {tolerance:.0%} of {expected}"
    )


def test_mm1k_formulas() -> None:
    assert mm1k_blocking(0.8, 1.0, 5) == pytest.approx(0.08882, abs=5e-6)
    assert mm1k_mean_wait(0.8, 1.0, 5) == pytest.approx(1.56308, abs=5e-5)
    # K → ∞ is M/M/1
    assert mm1k_blocking(0.8, 1.0, 400) == pytest.approx(0.0, abs=1e-12)
    assert mm1k_mean_wait(0.8, 1.0, 400) == pytest.approx(4.0)


def test_mm1k_blocking_and_waits() -> None:
    config = presets.mm1(0.8, 1.0, n_messages=30_000).model_copy(update={"queue_capacity": 5})
    reps = replicate(config, 10, seed=707, warmup_s=200.0, workers=1)
    assert_agrees(reps["blocked_rate"], mm1k_blocking(0.8, 1.0, 5), 0.05)
    assert_agrees(reps["mean_wait_s"], mm1k_mean_wait(0.8, 1.0, 5), 0.05)
    assert reps["replied_rate"].to_numpy() + reps["blocked_rate"].to_numpy() == pytest.approx(
        np.ones(10)
    )


def _retry_queue(
    failures: FailurePolicy, retry: ReferenceRetry | ExponentialRetry, n: int
) -> SimConfig:
    """Light traffic to a 1 s server: attempts are independent, nothing waits for a chunk."""
    return SimConfig(
        agents=[
            AgentConfig(id="client"),
            AgentConfig(id="server", service=Deterministic(value_s=1.0)),
        ],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent="client", to_agent="server", rate_per_s=0.05)]
        ),
        n_messages=n,
        gate=None,
        ping_pong=PingPongPolicy(max_turns=0),
        announce=None,
        tasks=None,
        channel_share=0.0,
        failures=failures,
        retry=retry,
    )


@pytest.mark.parametrize(
    ("failures", "retry", "counts"),
    [
        # the reference re-polls a failing agent.wait call; the run itself is healthy
        (FailurePolicy(rates={"gateway_connection": 0.3}), ReferenceRetry(), "attempts"),
        # a re-sending policy runs the message again after a failed run
        (FailurePolicy(rates={"server_overload": 0.3}), ExponentialRetry(), "runs"),
    ],
    ids=["reference-call-failures", "resend-run-failures"],
)
def test_retry_amplification(
    failures: FailurePolicy, retry: ReferenceRetry | ExponentialRetry, counts: str
) -> None:
    res = simulate(_retry_queue(failures, retry, 40_000), seed=808)
    p, retries = 0.3, 3
    expected = sum(p**k for k in range(retries + 1))
    m = res.messages
    summary = res.summary()
    assert summary["retry_amplification"] == pytest.approx(m["attempts"].mean())
    mean, low, high = confidence_interval(m[counts].to_numpy(), level=0.99)
    assert low <= expected <= high and abs(mean - expected) <= 0.01
    failed = (m["outcome"] == "no_reply").to_numpy()
    mean, low, high = confidence_interval(failed, level=0.99)
    assert low <= p ** (retries + 1) <= high and abs(mean - p ** (retries + 1)) <= 0.01
    # every failure that ended a message is the injected one, after exactly R retries
    assert (m.filter(pl.col("outcome") == "no_reply")["retries"] == retries).all()


def test_reference_retries_cannot_rescue_a_failed_run() -> None:
    # today's loop re-polls the same run: a run-level error stays, three retries later
    res = simulate(
        _retry_queue(FailurePolicy(rates={"server_overload": 0.3}), ReferenceRetry(), 20_000),
        seed=809,
    )
    m = res.messages
    failed = (m["outcome"] == "no_reply").mean()
    assert abs(failed - 0.3) < 0.015 and (m["runs"] == 1).all()
    assert res.summary()["retry_amplification"] == pytest.approx(1 + 3 * failed)


# ----------------------------------------------------------------------------------------
# the loop guard: never more than N per window
# ----------------------------------------------------------------------------------------


def _max_in_window(times_ms: np.ndarray, window_ms: float) -> int:
    """The most events of one sorted series in any closed window ``[t - window, t]``."""
    if times_ms.size == 0:
        return 0
    first = np.searchsorted(times_ms, times_ms - window_ms, side="left")
    return int((np.arange(times_ms.size) - first + 1).max())


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]), st.sampled_from(["a", "b", "c"]), st.integers(0, 3000)
        ),
        max_size=80,
    ),
    limit=st.integers(0, 6),
    window_ms=st.integers(1, 2000),
)
def test_the_guard_object_never_lets_more_than_n_per_window_through(
    calls, limit, window_ms
) -> None:
    guards = SendGuards(
        LoopGuardPolicy(max_messages_per_window=limit, window_s=window_ms / 1000), None
    )
    passed: dict[str, list[int]] = {}
    blocked_at: list[tuple[str, int]] = []
    clock = 0
    for a, b, gap in calls:
        clock += gap
        t_s = clock / 1000
        now = math.floor(t_s * 1000)  # the millisecond the guard (and the log) sees
        pair = "::".join(sorted((a, b)))
        if guards.admit_send(a, b, 0, t_s) < 0:
            passed.setdefault(pair, []).append(now)
        else:
            blocked_at.append((pair, now))
    for times in passed.values():
        assert _max_in_window(np.array(times, dtype=float), window_ms) <= limit
    # and it blocks only when the window is full
    for pair, t in blocked_at:
        times = np.array(passed.get(pair, []))
        assert ((times >= t - window_ms) & (times <= t)).sum() == limit


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    limit=st.integers(1, 5),
    window_s=st.sampled_from([5.0, 20.0, 60.0]),
    count_turns=st.booleans(),
)
def test_simulated_logs_never_exceed_the_guard(seed, limit, window_s, count_turns) -> None:
    agents = [AgentConfig(id=a, service=Exponential(mean_s=3.0)) for a in ("ana", "bo", "cy")]
    cfg = SimConfig(
        agents=agents,
        workload=PoissonArrivals(agents=[AgentRate(agent=a.id, rate_per_s=1.0) for a in agents]),
        n_messages=200,
        ping_pong=PingPongPolicy(max_turns=3, endings={}),
        announce=None,
        tasks=None,
        channel_share=0.0,
        loop_guard=LoopGuardPolicy(
            max_messages_per_window=limit, window_s=window_s, count_turns=count_turns
        ),
    )
    res = simulate(cfg, seed=seed)
    assert (res.messages["outcome"] == "guard_blocked").sum() > 0
    ev = res.events
    counted = pl.col("type") == "a2a.send"
    if count_turns:
        counted = counted | (
            (pl.col("type") == "a2a.response") & D.struct.field("turn").is_not_null()
        )
    msgs = ev.filter(counted).select(
        pl.concat_str(
            pl.min_horizontal(D.struct.field("fromAgent"), D.struct.field("toAgent")),
            pl.lit("::"),
            pl.max_horizontal(D.struct.field("fromAgent"), D.struct.field("toAgent")),
        ).alias("pair"),
        "event_ms",
    )
    for (_,), group in msgs.group_by("pair"):
        assert _max_in_window(np.sort(group["event_ms"].to_numpy()), window_s * 1000) <= limit
    types = ("a2a.send", "a2a.response") if count_turns else ("a2a.send",)
    assert not replay_guard(ev, limit=limit, window_s=window_s, types=types)["blocked"].any()


# ----------------------------------------------------------------------------------------
# log health with today's defaults
# ----------------------------------------------------------------------------------------


def _unexplained(findings: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Findings not explained by a policy.

    ``a2a.*`` sequence findings in conversations whose id several exchanges of one direction
    reuse (runtime §6: one id per work session and pair) are the conversation-id policy's;
    ``guard.*`` findings are what the loop guard and collaborate limit, which do not act on
    ``sessions_send`` today, would have blocked.
    """
    sends = events.filter(pl.col("type") == "a2a.send").select(
        D.struct.field("conversationId").alias("c"),
        D.struct.field("fromAgent").alias("f"),
        D.struct.field("toAgent").alias("t"),
    )
    reused = sends.group_by("c", "f", "t").len().filter(pl.col("len") > 1)["c"].unique()
    return findings.filter(
        ~pl.col("rule").str.starts_with("guard."),
        ~(
            pl.col("rule").str.starts_with("a2a.")
            & pl.col("conversation_id").is_in(reused.implode())
        ),
    )


def test_default_policies_pass_the_log_health_checks() -> None:
    cfg = SimConfig(n_messages=2000)
    res = simulate(cfg, seed=31)
    events = res.events
    findings = check(events)
    assert _unexplained(findings, events).height == 0
    assert findings.filter(pl.col("severity") == "error").height == 0


def test_the_guards_explain_the_guard_findings_of_a_busy_log() -> None:
    busy = SimConfig(
        n_messages=1500,
        tasks=None,
        workload=PoissonArrivals(
            agents=[
                AgentRate(agent=a, rate_per_s=0.05)
                for a in ("main", "ruda", "eden", "seum", "bada")
            ]
        ),
    )
    off = simulate(busy, seed=32)
    found = check(off.events)
    assert found.filter(pl.col("rule") == "guard.loop").height > 0
    assert found.filter(pl.col("rule").str.starts_with("a2a.")).height == 0
    on = simulate(
        busy.model_copy(
            update={"loop_guard": LoopGuardPolicy(), "collaborate_limit": CollaborateLimit()}
        ),
        seed=32,
    )
    assert (on.messages["outcome"] == "guard_blocked").sum() > 0
    assert (
        check(on.events)
        .filter(pl.col("rule").str.starts_with("guard.") | pl.col("rule").str.starts_with("a2a."))
        .height
        == 0
    )


def test_failures_and_retries_keep_the_log_healthy() -> None:
    failing = FailurePolicy(
        rates={
            "server_overload": 0.1,
            "context_exceeded": 0.02,
            "gateway_connection": 0.05,
            "llm_timeout": 0.01,
        }
    )
    res = simulate(SimConfig(n_messages=2000, tasks=None, failures=failing), seed=33)
    assert res.events.filter(pl.col("type") == "a2a.retry").height > 100
    findings = check(res.events)
    assert findings.filter(~pl.col("rule").str.starts_with("guard.")).height == 0
