"""Tests of the SimPy model (a2a_lab.sim.engine.model, plan, run): behaviour of the reference gateway.

Each test builds a small configuration whose outcome is known exactly (deterministic service
times, traces), or checks invariants that must hold for any configuration (hypothesis).
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.reference.runtime import (
    TERMINATION_REASONS,
    ConcurrencyConfig,
    classify_intent,
    effective_turns,
    resolve_intent,
    should_terminate_ping_pong,
)
from a2a_lab.reference.runtime.outcome import build_no_reply_outcome_message
from a2a_lab.sim import (
    AgentConfig,
    AnnouncePolicy,
    Deterministic,
    Exponential,
    GatePolicy,
    Lognormal,
    MessageMix,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    SimResult,
    TaskPolicy,
    TraceArrivals,
    TraceSend,
    WaitPolicy,
    draw_plan,
    presets,
    simulate,
)
from a2a_lab.sim.engine.model import Model, build_model
from a2a_lab.sim.engine.stations import GateDriver
from a2a_lab.sim.workload.plan import REPLY_TEXTS
from tests.support.paths import DATA

D = pl.col("data")


def trace_config(
    sends: list[tuple[float, str, str]], services: dict[str, float], **policies
) -> SimConfig:
    """A trace replay with deterministic service times and, unless given, no ping-pong.

    Unless given, on the per-agent ``main`` sessions (``topology="agent_main"``): the
    design notes' picture these cases state (the lanes have their own tests,
    tests/sim/test_sim_lanes.py).
    """
    agents = sorted({a for _, f, t in sends for a in (f, t)})
    policies = {"topology": "agent_main", **policies}
    return SimConfig(
        agents=[
            AgentConfig(id=a, service=Deterministic(value_s=services.get(a, 1.0))) for a in agents
        ],
        workload=TraceArrivals(
            sends=[
                TraceSend(at_s=t, from_agent=f, to_agent=to, message="배포 진행해줘")
                for t, f, to in sends
            ]
        ),
        n_messages=None,
        channel_share=0.0,
        tasks=None,
        announce=None,
        **{"ping_pong": PingPongPolicy(max_turns=0), **policies},
    )


def run_model(cfg: SimConfig, seed: int = 0) -> tuple[Model, SimResult]:
    plan = draw_plan(cfg, seed)
    model = build_model(plan, cfg, seed)
    return model, SimResult(config=cfg, seed=seed, plan=plan, trace=model.run())


def field(name: str) -> pl.Expr:
    return D.struct.field(name)


# -- the reference's own example and the wait ----------------------------------------------------


def test_two_agents_sending_to_one_agent_at_once_add_up() -> None:
    cfg = trace_config([(0.0, "ruda", "eden"), (0.0, "bada", "eden")], {"eden": 60.0})
    m = simulate(cfg).messages
    assert m["latency_s"].to_list() == [60.0, 120.0]
    assert m["queue_wait_s"].to_list() == [0.0, 60.0]
    assert m["outcome"].to_list() == ["replied", "replied"]
    two = simulate(
        cfg.model_copy(
            update={"agents": [a.model_copy(update={"session_concurrency": 2}) for a in cfg.agents]}
        )
    )
    assert two.messages["latency_s"].to_list() == [60.0, 60.0]


@pytest.mark.parametrize(
    ("service", "outcome", "latency"),
    [(30.0, "replied", 30.0), (300.0, "replied", 300.0), (300.001, "no_reply", None)],
)
def test_a_run_ending_when_the_wait_ends_counts_as_a_reply(
    service: float, outcome: str, latency: float | None
) -> None:
    cfg = trace_config([(0.0, "ruda", "eden")], {"eden": service})
    res = simulate(cfg)
    row = res.messages.row(0, named=True)
    assert (row["outcome"], row["latency_s"]) == (outcome, latency)
    assert row["sojourn_s"] == service  # the run itself always completes
    if outcome == "no_reply":
        assert row["complete_s"] == 300.0 and row["wait_status"] == "timeout"
        resp = res.events.filter(pl.col("type") == "a2a.response").row(0, named=True)["data"]
        assert resp["outcome"] == "no_reply" and resp["waitStatus"] == "timeout"
        assert resp["message"] == build_no_reply_outcome_message(
            "timeout", None, max_wait_exceeded=True
        )


def test_the_agent_keeps_working_after_the_requester_gives_up() -> None:
    # A's run takes 400 s; its requester gives up at 300 s, but the session stays busy with
    # it until 400 s, so B (sent at 1 s) starts only then, and its requester gives up too
    cfg = trace_config([(0.0, "ruda", "eden"), (1.0, "bada", "eden")], {"eden": 400.0})
    res = simulate(cfg)
    m = res.messages.sort("message")
    assert m["outcome"].to_list() == ["no_reply", "no_reply"]
    assert m["complete_s"].to_list() == [300.0, 301.0]
    assert m["service_start_s"].to_list() == [0.0, 400.0]
    assert m["service_end_s"].to_list() == [400.0, 800.0]
    eden = res.timeseries.filter(pl.col("session") == "agent:eden:main")
    busy_until = eden.filter(pl.col("busy") == 0)["time_s"].to_list()
    assert busy_until == [800.0]  # busy without a break from 0 to 800 s
    sessions = res.sessions.filter(pl.col("session") == "agent:eden:main").row(0, named=True)
    assert sessions["busy_s"] == 800.0 and sessions["utilization"] == 1.0
    # the discarded work leaves no trace in the log: the last events are the two give-ups
    assert res.events["event_ms"].max() == res.events["event_ms"].min() + 301_000
    assert res.events.filter(pl.col("type") == "a2a.response")["data"].struct.field(
        "outcome"
    ).to_list() == [
        "no_reply",
        "no_reply",
    ]


def test_without_a_wait_limit_the_requester_waits_as_long_as_it_takes() -> None:
    cfg = trace_config([(0.0, "ruda", "eden"), (1.0, "bada", "eden")], {"eden": 400.0}, wait=None)
    m = simulate(cfg).messages
    assert m["outcome"].to_list() == ["replied", "replied"]
    assert m["latency_s"].to_list() == [400.0, 799.0]


# -- the concurrency gate --------------------------------------------------------------------


def _gate_cases() -> list[dict]:
    cases = json.loads(
        (DATA / "runtime" / "a2a-concurrency.test-cases.json").read_text(encoding="utf-8")
    )["cases"]
    return [
        c
        for c in cases
        if any(s["op"] == "acquire" or s["op"] == "check" for s in c["input"]["steps"])
    ]


@pytest.mark.parametrize("case", _gate_cases(), ids=lambda c: c["name"])
def test_the_simpy_gate_passes_the_reference_gate_cases(case: dict) -> None:
    steps = case["input"]["steps"]
    init = next((s for s in steps if s["op"] == "initA2AConcurrencyGate"), None)
    config = ConcurrencyConfig.model_validate(
        (init or {}).get("config") or case["input"].get("config") or {}
    )
    env = simpy.Environment()
    driver = GateDriver(env, config)
    flows: dict[str, simpy.Process] = {}
    granted: dict[str, bool] = {}
    order: list[str] = []

    def flow(agent: str, flow_id: str):
        ok = yield from driver.acquire(agent, flow_id)
        granted[flow_id] = ok
        if ok:
            order.append(flow_id)

    def script():
        for step in steps:
            at = step.get("t", 0) / 1000.0
            if at > env.now:
                yield env.timeout(at - env.now)
            op = step["op"]
            if op == "acquire":
                flows[step["flowId"]] = env.process(flow(step["agentId"], step["flowId"]))
                yield env.timeout(0)  # its synchronous part runs now
                assert flows[step["flowId"]].triggered == (step["expect"] == "granted"), step
            elif op == "release":
                driver.release(step["agentId"])
            elif op == "await":
                yield flows[step["flowId"]]
                assert granted[step["flowId"]] == (step["expect"] == "resolved"), step
                assert env.now == at
            elif op == "check":
                for agent, count in step.get("activeCount", {}).items():
                    assert driver.gate.active_count(agent) == count, step
                for agent, count in step.get("queuedCount", {}).items():
                    assert driver.gate.queued_count(agent) == count, step

    env.process(script())
    env.run()
    expect = case["expect"]
    if "grant_order" in expect:
        assert order[1:] == expect["grant_order"]
    names = {"agentId": "agent_id", "flowId": "flow_id", "queueTimeoutMs": "queue_timeout_ms"}
    for flow_id, outcome in expect.items():
        if isinstance(outcome, dict) and (outcome.get("rejects_with") or outcome.get("rejects")):
            (error,) = [e for e in driver.refusals if e.flow_id == flow_id]
            for key, value in outcome.get("error_fields", {}).items():
                assert getattr(error, names[key]) == value


def test_a_timed_out_waiter_leaves_the_queue_unlike_a_stale_simpy_request() -> None:
    # A holds the only permit from 0 to 50 s; B asks at 1 s and gives up at 31 s; C asks at
    # 35 s and would wait until 65 s. A bare SimPy request raced against a timeout and not
    # cancelled stays queued: at 50 s the permit goes to B, who is gone and never gives it
    # back, and C is refused although the permit was free. The gate driver admits C at 50 s.
    patience = 30.0

    def scenario(acquire, release) -> dict[str, object]:
        env = simpy.Environment()
        got: dict[str, object] = {}

        def flow(name: str, start: float, hold: float):
            yield env.timeout(start)
            ok = yield from acquire(env, name)
            got[name] = env.now if ok else "refused"
            if ok:
                yield env.timeout(hold)
                release(name)

        for args in (("A", 0.0, 50.0), ("B", 1.0, 1.0), ("C", 35.0, 1.0)):
            env.process(flow(*args))
        env.run()
        return got

    shared: dict[str, object] = {}

    def stale_acquire(env, name):
        server = shared.setdefault("resource", simpy.Resource(env, capacity=1))
        request = shared[name] = server.request()
        yield request | env.timeout(patience)
        return request.triggered  # the bug: the request that lost the race is not cancelled

    def stale_release(name):
        shared["resource"].release(shared[name])

    assert scenario(stale_acquire, stale_release) == {"A": 0.0, "B": "refused", "C": "refused"}

    def gate_acquire(env, name):
        config = ConcurrencyConfig(max_concurrent_flows=1, queue_timeout_ms=patience * 1000)
        driver = shared.setdefault("gate", GateDriver(env, config))
        return (yield from driver.acquire("eden", name))

    assert scenario(gate_acquire, lambda name: shared["gate"].release("eden")) == {
        "A": 0.0,
        "B": "refused",
        "C": 50.0,
    }


def test_a_refused_flow_is_blocked_after_exactly_the_permit_timeout_but_its_run_still_happens() -> (
    None
):
    sends = [(0.0, f"s{k}", "eden") for k in range(5)]
    cfg = trace_config(
        sends,
        {"eden": 100.0},
        gate=GatePolicy(max_concurrent_flows=2, queue_timeout_s=30.0),
        wait=None,
    )
    res = simulate(cfg)
    m = res.messages.sort("message")
    assert m["outcome"].to_list() == [
        "replied",
        "replied",
        "concurrency_blocked",
        "concurrency_blocked",
        "concurrency_blocked",
    ]
    assert m["gate_wait_s"].to_list() == [0.0, 0.0, 30.0, 30.0, 30.0]
    assert m["service_end_s"].to_list() == [100.0, 200.0, 300.0, 400.0, 500.0]  # delivered anyway
    ev = res.events
    blocked = ev.filter(field("outcome") == "blocked")
    assert (
        blocked.height == 3
        and blocked["data"].struct.field("message").to_list()[0]
        == "[outcome] blocked: 동시 처리 한도 초과 (agent: eden)"
    )
    completes = ev.filter(pl.col("type") == "a2a.complete")
    assert completes["data"].struct.field("concurrencyBlocked").to_list().count(True) == 3
    conv = al.conversations(ev)
    assert conv["outcome"].value_counts().sort("outcome").rows() == [
        ("concurrency_blocked", 3),
        ("replied", 2),
    ]


def test_a_permit_released_at_the_waiters_deadline_admits_it() -> None:
    # the first flow completes at 30 s, exactly when the second one's permit wait expires
    cfg = trace_config(
        [(0.0, "ruda", "eden"), (0.0, "bada", "eden")],
        {"eden": 15.0},
        gate=GatePolicy(max_concurrent_flows=1, queue_timeout_s=15.0),
    )
    m = simulate(cfg).messages
    assert m["outcome"].to_list() == ["replied", "replied"]
    assert m["gate_wait_s"].to_list() == [0.0, 15.0]


# -- no message is lost, whatever races ------------------------------------------------------


@st.composite
def racy_configs(draw: st.DrawFn) -> tuple[SimConfig, int]:
    """Small, heavily loaded configurations where every timeout races something."""
    names = ("ruda", "eden", "jiwoo")
    agents = [
        AgentConfig(
            id=name,
            kind="subagent" if name == "jiwoo" else "main",
            service=Exponential(mean_s=draw(st.floats(0.5, 60.0))),
            turn_service=Deterministic(value_s=draw(st.sampled_from([1.0, 5.0, 10.0])))
            if draw(st.booleans())
            else None,
            session_concurrency=draw(st.integers(1, 2)),
        )
        for name in names
    ]
    gate = draw(
        st.one_of(
            st.none(),
            st.builds(
                GatePolicy,
                max_concurrent_flows=st.integers(1, 3),
                queue_timeout_s=st.sampled_from([0.0, 5.0, 10.0, 20.0]),
                corrected_release=st.booleans(),
            ),
        )
    )
    wait = draw(
        st.one_of(
            st.none(),
            st.builds(
                WaitPolicy,
                chunk_s=st.sampled_from([1.0, 5.0, 10.0]),
                max_wait_s=st.sampled_from([5.0, 10.0, 30.0, 60.0]),
            ),
        )
    )
    cfg = SimConfig(
        agents=agents,
        workload=PoissonArrivals(
            agents=[{"agent": a, "rate_per_s": draw(st.floats(0.01, 1.0))} for a in names]
        ),
        n_messages=draw(st.integers(5, 60)),
        channel_share=draw(st.sampled_from([0.0, 0.5])),
        gate=gate,
        wait=wait,
        ping_pong=PingPongPolicy(
            max_turns=draw(st.integers(0, 5)),
            turn_timeout_s=draw(st.sampled_from([2.0, 10.0, 120.0])),
        ),
        announce=draw(
            st.one_of(st.none(), st.just(AnnouncePolicy(internal_share=0.0, timeout_s=5.0)))
        ),
        tasks=draw(
            st.one_of(st.none(), st.just(TaskPolicy(mean_duration_s=100.0, mean_gap_s=20.0)))
        ),
        target_session=draw(st.sampled_from(["main", "a2a"])),
    )
    return cfg, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=30)
@given(racy_configs())
def test_no_message_is_lost_when_waits_race_timeouts(case: tuple[SimConfig, int]) -> None:
    cfg, seed = case
    model, res = run_model(cfg, seed)
    m, runs = res.messages, res.runs
    n = res.plan.n
    # every message ended exactly once, with a reply time exactly when it replied
    assert m.height == n and m["outcome"].null_count() == 0
    assert m["complete_s"].is_nan().sum() == 0 and (m["complete_s"] >= m["arrival_s"]).all()
    assert ((m["outcome"] == "replied") == m["reply_s"].is_not_null()).all()
    # every run (message, turn, announce) was queued, started and finished, FIFO per session
    assert runs.select(pl.col("enqueue_s", "start_s", "end_s").is_nan().sum()).row(0) == (0, 0, 0)
    assert (runs["wait_s"] >= 0).all()
    assert (
        (runs["end_s"] - runs["start_s"] - runs["service_s"]).abs()
        <= 1e-9 * (1 + runs["end_s"].abs())
    ).all()
    fifo = (
        runs.with_row_index("job")
        .sort("session", "enqueue_s", "job")
        .with_columns(pl.col("start_s").diff().over("session").alias("gap"))
    )
    assert (fifo["gap"].drop_nulls() >= 0).all()
    ts = res.timeseries
    capacity = dict(zip(res.sessions["session"], res.sessions["capacity"], strict=True))
    assert (ts["busy"] <= ts["session"].replace_strict(capacity)).all() and (
        ts["queue_length"] >= 0
    ).all()
    assert (
        ts.group_by("session").agg(pl.col("in_system").last())["in_system"].to_list()
        == [0] * ts["session"].n_unique()
    )
    # the gate is drained: nobody waits, nobody holds a permit
    if model.gate is not None:
        gate = model.gate.gate
        assert model.gate.pending == 0
        assert all(gate.active_count(a) == 0 and gate.queued_count(a) == 0 for a in res.plan.agents)
        blocked = m.filter(pl.col("outcome") == "concurrency_blocked")
        assert ((blocked["gate_wait_s"] - cfg.gate.queue_timeout_s).abs() < 1e-9).all()
        if cfg.gate.corrected_release:
            t = res.trace
            granted = t.outcome != 2
            for agent in np.unique(res.plan.target[granted]):
                mine = granted & (res.plan.target == agent)
                # a release and an acquire at one instant: the release first (-1 sorts first)
                points = sorted(
                    [(g, 1) for g in t.gate_s[mine]] + [(e, -1) for e in t.complete_s[mine]]
                )
                assert (
                    max(np.cumsum([d for _, d in points]), default=0)
                    <= cfg.gate.max_concurrent_flows
                )
    # the log: one send and one complete per message; replies and turns before the complete
    ev = res.events
    assert ev.filter(pl.col("type") == "a2a.send").height == n
    assert ev.filter(pl.col("type") == "a2a.complete").height == n
    t = res.trace
    assert (t.turn_s <= t.complete_s[t.turn_message]).all()
    replied = ~np.isnan(t.reply_s)
    assert (t.reply_s[replied] <= t.complete_s[replied]).all()


# -- ping-pong and announce --------------------------------------------------------------------


def pingpong_config(endings: dict[str, float], **overrides) -> SimConfig:
    return SimConfig(
        agents=[
            AgentConfig(id="ruda", service=Deterministic(value_s=10.0)),
            AgentConfig(id="eden", service=Deterministic(value_s=10.0)),
        ],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent="ruda", to_agent="eden", rate_per_s=1 / 600)]
        ),
        n_messages=40,
        mix=MessageMix(intents={"collaboration": 1.0}, payload_share=0.0),
        ping_pong=PingPongPolicy(endings=endings),
        channel_share=0.0,
        announce=None,
        tasks=None,
        **overrides,
    )


def test_turns_alternate_between_the_two_sessions_and_queue_there() -> None:
    res = simulate(pingpong_config({}), seed=2)
    m = res.messages
    assert (
        (m["effective_turns"] == 5).all()
        and (m["turns"] == 5).all()
        and m["termination_reason"].null_count() == m.height
    )
    turns = res.runs.filter(pl.col("kind") == "turn").with_columns(
        pl.int_range(1, pl.len() + 1).over("message").alias("k")
    )
    # the requester's steps on its own session, the target's on the conversation lane the
    # send ran on (runtime §1)
    turns = turns.join(m.select("message", "target_session"), on="message")
    expected = (
        pl.when(pl.col("k") % 2 == 1)
        .then(pl.lit("agent:ruda:main"))
        .otherwise(pl.col("target_session"))
    )
    assert (turns["session"] == turns.select(expected).to_series()).all()
    assert turns["target_session"].str.starts_with("agent:eden:a2a:").all()
    logged = res.events.filter(field("turn").is_not_null())
    speakers = logged.select(pl.col("agent_id"), field("turn")).with_columns(
        pl.when(pl.col("turn") % 2 == 1).then(pl.lit("ruda")).otherwise(pl.lit("eden")).alias("x")
    )
    assert (speakers["agent_id"] == speakers["x"]).all()
    assert logged.height == 5 * m.height


@pytest.mark.parametrize(
    ("endings", "turns", "reason"),
    [
        ({"conclusion": 1.0}, 1, "conclusion_detected"),
        ({"minimal": 1.0}, 1, "minimal_content"),
        ({"explicit_skip": 1.0}, 0, "explicit_skip"),
        ({"empty_reply": 1.0}, 0, "empty_reply"),
        ({"agent_error": 1.0}, 0, "agent_error"),
        ({"repetition": 1.0}, 2, "repetition_detected"),  # turn 1 has nothing to repeat
    ],
)
def test_early_endings_follow_the_reference_rules(
    endings: dict[str, float], turns: int, reason: str
) -> None:
    res = simulate(pingpong_config(endings), seed=3)
    m = res.messages
    assert (m["turns"] == turns).all() and (m["termination_reason"] == reason).all()
    completes = res.events.filter(pl.col("type") == "a2a.complete")
    assert (completes["data"].struct.field("terminationReason") == reason).all()
    assert completes["data"].struct.field("earlyTermination").all()
    assert (completes["data"].struct.field("actualTurns") == turns).all()


def test_a_turn_that_takes_longer_than_the_turn_timeout_ends_the_loop_but_still_runs() -> None:
    cfg = pingpong_config({})
    cfg = cfg.model_copy(
        update={
            "agents": [
                a.model_copy(update={"turn_service": Deterministic(value_s=200.0)})
                for a in cfg.agents
            ]
        }
    )
    res = simulate(cfg, seed=1)
    m = res.messages
    assert (m["turns"] == 0).all() and (m["termination_reason"] == "turn_timeout").all()
    assert ((m["complete_s"] - m["reply_s"] - 120.0).abs() < 1e-9).all()
    turn_runs = res.runs.filter(pl.col("kind") == "turn")
    assert (
        turn_runs.height == m.height
        and ((turn_runs["end_s"] - turn_runs["start_s"] - 200.0).abs() < 1e-9).all()
    )


def test_logged_turns_agree_with_the_reference_rules_and_the_intent() -> None:
    res = simulate(SimConfig(n_messages=600), seed=11)
    t = res.trace
    turns = pl.DataFrame(
        {
            "message": t.turn_message,
            "turn": t.turn_number,
            "text": [REPLY_TEXTS[k] for k in t.turn_text.tolist()],
            "reason": [TERMINATION_REASONS[k] if k >= 0 else None for k in t.turn_reason.tolist()],
        }
    )
    assert turns.height > 100
    # every logged ping-pong reply's reason is the reference rule applied to it and the
    # replies of its exchange before it
    for (_,), group in turns.group_by("message", maintain_order=True):
        assert group["turn"].to_list() == list(range(1, group.height + 1))
        texts = group["text"].to_list()
        for k, (text, reason) in enumerate(zip(texts, group["reason"], strict=True)):
            verdict = should_terminate_ping_pong(text, texts[:k])
            assert reason == (verdict.reason if verdict.terminate else None)
    logged = res.events.filter(field("turn").is_not_null())
    assert sorted(
        logged["data"].struct.field("terminationReason").drop_nulls().to_list()
    ) == sorted(turns["reason"].drop_nulls().to_list())
    assert sorted(logged["data"].struct.field("message").to_list()) == sorted(
        turns["text"].to_list()
    )
    # effective turns follow the intent of the sent message (a payload's type first)
    m = res.messages
    sent = res.events.filter(pl.col("type") == "a2a.send")["data"]
    for k, (text, payload) in enumerate(
        zip(sent.struct.field("message"), sent.struct.field("payloadType"), strict=True)
    ):
        expected = resolve_intent(text, payload, reference_caller=True)
        assert m["intent"][k] == expected.intent
        assert m["effective_turns"][k] == effective_turns(5, expected)


def test_only_exchanges_from_a_channel_session_are_announced() -> None:
    res = simulate(SimConfig(n_messages=800, gate=None), seed=5)
    m = res.messages.filter(pl.col("outcome") == "replied")
    ran = m.filter(pl.col("announce_ran"))
    assert ran.height > 0 and ran["requester_session"].str.contains(":discord:group:").all()
    assert m.filter(pl.col("announced"))["announce_ran"].all()
    skipped = m.filter(~pl.col("announce_ran"))
    assert skipped.height > 0
    complete = res.events.filter(
        pl.col("type") == "a2a.complete",
        field("concurrencyBlocked").is_null(),
        field("waitStatus").is_null(),
    )
    assert complete.select(field("announceSkipped").sum()).item() == skipped.height
    # the announce step is a run on the TARGET's session
    announce_runs = res.runs.filter(pl.col("kind") == "announce").join(
        m.select("message", "target_session"), on="message"
    )
    assert (
        announce_runs.height == ran.height
        and (announce_runs["session"] == announce_runs["target_session"]).all()
    )


# -- shortcuts, draws, determinism -------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg",
    [presets.mm1(0.7, 1.0, n_messages=3000), SimConfig(n_messages=400, gate=None, wait=None)],
    ids=["mm1", "default-without-gate-and-wait"],
)
def test_the_shortcut_gives_the_same_results_as_the_full_flow(cfg: SimConfig) -> None:
    fast = simulate(cfg, seed=4)
    full = simulate(cfg, seed=4, full_flow=True)
    assert fast.messages.equals(full.messages)
    assert fast.runs.equals(full.runs)


def test_policies_compared_with_one_seed_share_every_draw() -> None:
    base = SimConfig(n_messages=500)
    variants = [
        base.model_copy(update={"gate": None}),
        base.model_copy(update={"wait": WaitPolicy(max_wait_s=60.0)}),
        base.model_copy(
            update={
                "agents": [a.model_copy(update={"session_concurrency": 3}) for a in base.agents]
            }
        ),
        base.model_copy(update={"ping_pong": PingPongPolicy(turn_timeout_s=10.0)}),
    ]
    p0 = draw_plan(base, 9)
    for cfg in variants:
        p = draw_plan(cfg, 9)
        for name in (
            "arrival_s",
            "sender",
            "target",
            "text",
            "payload",
            "service_s",
            "turn_service_s",
            "turn_ending",
            "first_reply",
            "task",
            "conversation",
        ):
            assert np.array_equal(getattr(p, name), getattr(p0, name)), name
        res = simulate(cfg, 9)
        assert res.messages["service_s"].equals(simulate(base, 9).messages["service_s"])


def test_another_rate_rescales_and_another_distribution_remaps_the_same_draws() -> None:
    a = draw_plan(presets.mm1(0.8, 1.0, n_messages=2000), 5)
    b = draw_plan(presets.mm1(0.4, 1.0, n_messages=2000), 5)
    assert np.allclose(b.interarrival_s, 2 * a.interarrival_s, rtol=1e-12)
    c = draw_plan(presets.mg1_lognormal(0.8, 1.0, 2.0, n_messages=2000), 5)
    # one uniform per message, mapped through another quantile function: the same order
    assert np.array_equal(np.argsort(a.service_s), np.argsort(c.service_s))
    assert np.array_equal(a.arrival_s, c.arrival_s)


def test_simulated_arrival_times_are_the_plans_to_the_last_bit() -> None:
    res = simulate(presets.mm1(0.9, 1.0, n_messages=5000), seed=8)
    assert np.array_equal(res.messages["arrival_s"].to_numpy(), np.cumsum(res.plan.interarrival_s))
    assert np.array_equal(res.trace.job_enqueue[: res.plan.n], res.plan.arrival_s)


@settings(max_examples=12)
@given(racy_configs())
def test_the_same_seed_gives_the_same_log_byte_for_byte(case: tuple[SimConfig, int]) -> None:
    cfg, seed = case
    first = al.write_events(simulate(cfg, seed).events)
    assert first == al.write_events(simulate(cfg, seed).events)
    assert first != al.write_events(simulate(cfg, seed + 1).events)


# -- workloads ---------------------------------------------------------------------------------


def test_an_hourly_profile_shapes_arrivals_by_local_hour() -> None:
    night = [0.0] * 8 + [1.0] * 4 + [2.0] * 12
    cfg = SimConfig(
        agents=[AgentConfig(id="a"), AgentConfig(id="b")],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent="a", to_agent="b", rate_per_s=0.05)], hourly_profile=night
        ),
        n_messages=20_000,
        gate=None,
        wait=None,
        announce=None,
        tasks=None,
        ping_pong=PingPongPolicy(max_turns=0),
    )
    plan = draw_plan(cfg, 1)
    local_hour = (np.floor(plan.arrival_s / 3600) + cfg.start.hour) % 24
    counts = np.bincount(local_hour.astype(int), minlength=24)
    assert counts[:8].sum() == 0
    per_hour_low, per_hour_high = counts[8:12].mean(), counts[12:].mean()
    assert per_hour_high / per_hour_low == pytest.approx(2.0, rel=0.1)


def test_a_duration_limit_stops_the_arrivals() -> None:
    cfg = presets.mm1(0.5, 1.0, n_messages=10).model_copy(
        update={"n_messages": None, "duration_s": 2000.0}
    )
    plan = draw_plan(cfg, 3)
    assert plan.arrival_s.max() <= 2000.0 and plan.n > 800
    longer = draw_plan(cfg.model_copy(update={"duration_s": 4000.0}), 3)
    assert np.array_equal(longer.arrival_s[: plan.n], plan.arrival_s)


def test_trace_replay_of_a_recorded_log() -> None:
    sample = al.samples.sample_dir()
    cfg = SimConfig(workload=TraceArrivals(path=str(sample)), n_messages=None, gate=None)
    res = simulate(cfg, seed=1)
    sends = (
        al.load(sample)
        .events.filter(pl.col("type") == "a2a.send")
        .sort("event_ms", maintain_order=True)
    )
    assert res.plan.n == sends.height
    expected = (sends["event_ms"].to_numpy() - sends["event_ms"].min()) / 1000.0
    assert np.allclose(res.messages["arrival_s"].to_numpy(), expected)
    assert res.messages["from_agent"].to_list() == sends["data"].struct.field("fromAgent").to_list()
    replayed = (
        res.events.filter(pl.col("type") == "a2a.send")["data"].struct.field("message").to_list()
    )
    assert replayed == sends["data"].struct.field("message").to_list()
    recorded_intents = [classify_intent(t).intent for t in replayed]
    assert res.messages["intent"].to_list() == recorded_intents


def test_subagents_run_in_their_spawned_session_and_get_delegation_roles() -> None:
    res = simulate(SimConfig(n_messages=300), seed=2)
    m = res.messages.filter(pl.col("to_agent") == "jiwoo")
    assert (
        m.height > 0
        and m["target_session"].str.contains(r"^agent:jiwoo:subagent:[0-9a-f-]{36}$").all()
    )
    assert m["target_session"].n_unique() == 1
    roles = res.events.filter(pl.col("type") == "a2a.send", field("toAgent") == "jiwoo")[
        "data"
    ].struct.field("eventRole")
    assert (roles == "delegation.subagent").all()


def test_summary_counts_add_up_and_warmup_drops_early_messages() -> None:
    res = simulate(SimConfig(n_messages=500), seed=6)
    s = res.summary()
    assert s["messages"] == 500
    assert s["replied_rate"] + s["no_reply_rate"] + s["blocked_rate"] == pytest.approx(1.0)
    m = res.messages
    assert s["no_reply_rate"] == pytest.approx((m["outcome"] == "no_reply").mean())
    replied = m.filter(pl.col("outcome") == "replied")
    assert s["p95_latency_s"] == pytest.approx(replied["latency_s"].quantile(0.95, "linear"))
    later = res.summary(warmup_s=float(m["arrival_s"][100]))
    assert later["messages"] == 400 and later["horizon_s"] < s["horizon_s"]
    with_lognormal = SimConfig(
        n_messages=50,
        agents=[
            a.model_copy(update={"service": Lognormal(mean_s=5.0, cv=0.5)})
            for a in SimConfig().agents
        ],
    )
    assert simulate(with_lognormal, seed=1).summary()["mean_service_s"] < 20
