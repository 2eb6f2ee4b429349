"""The reference gateway's lanes in the simulator (issue 22 item 1), against theory.

Under ``topology="lanes"`` (the default) every run is queued twice: on its session lane
(``session:<sessionKey>``, one run at a time, FIFO), then, still holding it, for a slot of
the gateway-wide ``nested`` lane pool (runtime §1). A cross-agent send runs on the
conversation-scoped session ``agent:<target>:a2a:<conversationId>``, which ``a2a.send``
logs as ``targetSessionKey``, and one conversation id serves a work session and an
unordered pair in both directions (§6).

The validations: a brute-force event-loop model of the two-level queue, written here from
the spec, gives every run's lane, start and end times to the last bit on the same draws;
with every conversation distinct the pool is an M/M/c (mean wait, the chance to wait and
Little's law inside the 95 % confidence interval over independent replications); with two
session lanes feeding a one-slot pool, the order of service does not depend on the service
times, so the mean wait is M/M/1's (the conservation law).
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np
import polars as pl
import pytest

from a2a_lab.sim import (
    AgentConfig,
    Deterministic,
    Exponential,
    LanePools,
    PairRate,
    PoissonArrivals,
    SimConfig,
    confidence_interval,
    presets,
    replicate,
    simulate,
    theory,
)
from a2a_lab.sim.config import PingPongPolicy, TaskPolicy, TraceArrivals, TraceSend
from a2a_lab.sim.experiments.sweep import scale_arrivals

D = pl.col("data")


# -- the topology as the reference runs it ---------------------------------------------------


def test_a_send_runs_on_its_conversation_lane_and_logs_it_as_target_session_key() -> None:
    res = simulate(SimConfig(n_messages=600), seed=4)
    sends = res.events.filter(pl.col("type") == "a2a.send").select(
        D.struct.field("runId").alias("run_id"),
        D.struct.field("targetSessionKey").alias("logged_key"),
        D.struct.field("conversationId").alias("logged_conversation"),
    )
    t = res.truth.join(sends, on="run_id", how="inner", validate="1:1")
    assert t.height == res.truth.height
    assert (t["logged_key"] == t["session_key"]).all()
    assert (t["logged_conversation"] == t["conversation_id"]).all()
    assert (t["session_lane"] == "session:" + t["session_key"]).all()
    assert (t["lane"] == "nested").all()
    main = set(presets.SAMPLE_MAIN_AGENTS) & {a.id for a in res.config.agents}
    to_main = t.filter(pl.col("to_agent").is_in(list(main)))
    expected = "agent:" + to_main["to_agent"] + ":a2a:" + to_main["conversation_id"]
    assert to_main.height > 300 and (to_main["session_key"] == expected).all()
    # a send to a spawned sub-agent addresses its sub-agent session (a delegation)
    workers = t.filter(~pl.col("to_agent").is_in(list(main)))
    assert workers.height > 0 and workers["session_key"].str.contains(":subagent:").all()


def _two_requesters(**policies: object) -> SimConfig:
    return SimConfig(
        agents=[
            AgentConfig(id=a, service=Deterministic(value_s=60.0)) for a in ("bada", "eden", "ruda")
        ],
        workload=TraceArrivals(
            sends=[
                TraceSend(at_s=0.0, from_agent="ruda", to_agent="eden"),
                TraceSend(at_s=0.0, from_agent="bada", to_agent="eden"),
            ]
        ),
        n_messages=None,
        channel_share=0.0,
        tasks=None,
        announce=None,
        ping_pong=PingPongPolicy(max_turns=0),
        **policies,
    )


def test_two_requesters_reach_one_target_in_parallel_up_to_the_pool() -> None:
    # runtime §1: two conversation ids reach one target in parallel, up to the nested lane
    assert simulate(_two_requesters()).messages["latency_s"].to_list() == [60.0, 60.0]
    one_slot = simulate(_two_requesters(lanes=LanePools(nested=1))).messages
    assert one_slot["latency_s"].to_list() == [60.0, 120.0]
    # ... and on the agent's main session they add up (the design notes' picture)
    main = simulate(_two_requesters(topology="agent_main")).messages
    assert main["latency_s"].to_list() == [60.0, 120.0]
    assert main["target_session"].to_list() == ["agent:eden:main"] * 2


def both_ways(n_messages: int) -> SimConfig:
    """200 sends between ``a`` and ``b``, both directions, both in tasks part of the time."""
    return SimConfig(
        agents=[AgentConfig(id="a"), AgentConfig(id="b")],
        workload=PoissonArrivals(
            pairs=[
                PairRate(from_agent="a", to_agent="b", rate_per_s=1 / 600),
                PairRate(from_agent="b", to_agent="a", rate_per_s=1 / 600),
            ]
        ),
        n_messages=n_messages,
        tasks=TaskPolicy(),
    )


def conversations_both_ways(res: object) -> tuple[int, int]:
    """(conversation ids that carry both directions, conversation ids)."""
    m = res.messages  # type: ignore[attr-defined]
    per = m.group_by("conversation_id").agg(pl.col("from_agent").n_unique().alias("sides"))
    return int((per["sides"] == 2).sum()), per.height


def test_one_conversation_id_serves_both_directions() -> None:
    res = simulate(both_ways(200), seed=1)
    both, ids = conversations_both_ways(res)
    assert both > 0 and both < ids
    m = res.messages.filter(pl.col("work_session_id").is_not_null())
    # one id per work session and unordered pair, whoever sends
    per_ws = m.group_by("work_session_id").agg(pl.col("conversation_id").n_unique())
    assert (per_ws["conversation_id"] == 1).all()
    # the per-agent model keeps the requester's own work session: never both directions
    old = simulate(both_ways(200).model_copy(update={"topology": "agent_main"}), seed=1)
    assert conversations_both_ways(old)[0] == 0


# -- the queue: a brute-force model on the same draws -------------------------------------------


def brute_force_lanes(
    enqueue: np.ndarray, session: np.ndarray, service: np.ndarray, slots: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lane, start and end times of jobs on one-run session lanes feeding a FIFO pool.

    An event loop over (time, order) written from the spec, sharing no code with the model:
    a job arriving at a free session lane takes it and asks the pool; a job ending frees its
    pool slot (the oldest waiter takes it at once), then its session lane (the next job
    there takes it and asks the pool, behind every job already waiting).
    """
    n = enqueue.shape[0]
    lane, start, end = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    events: list[tuple[float, int, int, int]] = []  # (time, order, kind 0 end / 1 arrival, job)
    order = 0
    for j in np.argsort(enqueue, kind="stable").tolist():
        events.append((float(enqueue[j]), 1, order, j))
        order += 1
    heapq.heapify(events)
    session_busy: dict[int, bool] = {}
    session_queue: dict[int, deque[int]] = {}
    pool_free = slots
    pool_queue: deque[int] = deque()

    def run(job: int, now: float) -> None:
        nonlocal order
        start[job] = now
        end[job] = now + float(service[job])
        heapq.heappush(events, (end[job], 0, order, job))
        order += 1

    def ask_pool(job: int, now: float) -> None:
        nonlocal pool_free
        lane[job] = now
        if pool_free > 0:
            pool_free -= 1
            run(job, now)
        else:
            pool_queue.append(job)

    while events:
        now, kind, _, job = heapq.heappop(events)
        s = int(session[job])
        if kind == 1:
            if session_busy.get(s):
                session_queue.setdefault(s, deque()).append(job)
            else:
                session_busy[s] = True
                ask_pool(job, now)
            continue
        if pool_queue:
            run(pool_queue.popleft(), now)
        else:
            pool_free += 1
        waiting = session_queue.get(s)
        if waiting:
            ask_pool(waiting.popleft(), now)
        else:
            session_busy[s] = False
    return lane, start, end


@pytest.mark.parametrize(
    ("scale", "slots", "seed"), [(4.0, 4, 1), (3.0, 2, 2), (6.0, 3, 3), (3.0, 1, 4)]
)
def test_the_two_level_queue_equals_a_brute_force_model_on_the_same_draws(
    scale: float, slots: int, seed: int
) -> None:
    # tasks on (conversation lanes that several sends share), one run per message; the
    # 15-agent sample deployment, so many conversation lanes compete for the pool
    cfg = scale_arrivals(
        presets.sample_like(1_000, n_messages=3_000).model_copy(
            update={
                "ping_pong": PingPongPolicy(max_turns=0),
                "announce": None,
                "gate": None,
                "wait": None,
                "failures": None,
                "topology": "lanes",
                "lanes": LanePools(nested=slots),
            }
        ),
        scale,
    )
    res = simulate(cfg, seed=seed)
    runs = res.runs
    lane, start, end = brute_force_lanes(
        runs["enqueue_s"].to_numpy(),
        runs.select(pl.col("session").cast(pl.String).rank("dense")).to_series().to_numpy(),
        runs["service_s"].to_numpy(),
        slots,
    )
    assert np.array_equal(runs["lane_s"].to_numpy(), lane)
    assert np.array_equal(runs["start_s"].to_numpy(), start)
    assert np.array_equal(runs["end_s"].to_numpy(), end)
    pool_wait = runs["start_s"] - runs["lane_s"]
    session_wait = runs["lane_s"] - runs["enqueue_s"]
    # both levels really queue
    assert float(pool_wait.max()) > 0 and float(session_wait.max()) > 0
    # the pool never runs more than its slots at once
    edges = np.concatenate(
        [np.stack([start, np.ones_like(start)], 1), np.stack([end, -np.ones_like(end)], 1)]
    )
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    assert int(np.cumsum(edges[:, 1]).max()) <= slots


# -- against theory ---------------------------------------------------------------------------------


def inside_95(values: pl.Series, expected: float) -> None:
    mean, low, high = confidence_interval(values, level=0.95)
    assert low <= expected <= high, (
        f"{expected} outside the 95 % CI [{low:.5f}, {high:.5f}] (mean {mean:.5f})"
    )


@pytest.mark.slow
def test_with_every_conversation_distinct_the_pool_is_an_mmc(pool) -> None:
    # λ = 2.4, μ = 1, c = 3 slots: every send its own conversation lane
    cfg = presets.mmc_lanes(2.4, 1.0, 3, n_messages=30_000)
    reps = replicate(cfg, 8, seed=2201, warmup_s=500.0, executor=pool)
    inside_95(reps["mean_wait_s"], theory.mmc_mean_wait(2.4, 1.0, 3))
    inside_95(reps["p_wait"], theory.erlang_c(2.4, 1.0, 3))
    inside_95(reps["utilization"], 0.8)
    # Little's law on every replication: L = λ W (time-average runs in the system)
    expected_l = 2.4 * (theory.mmc_mean_wait(2.4, 1.0, 3) + 1.0)
    inside_95(reps["mean_in_system"], expected_l)


@pytest.mark.slow
def test_two_session_lanes_into_a_one_slot_pool_wait_as_mm1(pool) -> None:
    # two targets' main sessions (two session lanes) feed ONE pool slot: the pool serves in
    # an order that does not depend on the service times, so the number in the system is
    # M/M/1's and so is the mean wait (λ = 0.8, μ = 1: W_q = 4)
    cfg = presets.mm1(0.4, 1.0, n_messages=40_000)
    cfg = cfg.model_copy(
        update={
            "agents": [
                *cfg.agents,
                AgentConfig(id="server2", service=Exponential(mean_s=1.0)),
            ],
            "workload": PoissonArrivals(
                pairs=[
                    PairRate(from_agent="client", to_agent="server", rate_per_s=0.4),
                    PairRate(from_agent="client", to_agent="server2", rate_per_s=0.4),
                ]
            ),
            "topology": "lanes",
            "target_session": "main",
            "lanes": LanePools(nested=1),
        }
    )
    reps = replicate(cfg, 8, seed=2202, warmup_s=2_000.0, executor=pool)
    inside_95(reps["mean_wait_s"], theory.mm1_mean_wait(0.8, 1.0))
    inside_95(reps["utilization"], 0.8)
