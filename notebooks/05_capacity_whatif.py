# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · Capacity what-ifs with the simulator
#
# Before changing a production gateway, ask the model. `a2a_lab.sim` is a SimPy model of the
# reference gateway (a2a-runtime.md §1–§3): every agent session handles one message at a
# time, first come first served; a concurrency gate admits at most 3 A2A flows per target
# and refuses a flow after 30 s without a permit; the requester waits in 30 s chunks for at
# most 300 s; a reply may lead to up to 5 ping-pong turns, each queued on the other agent's
# session; an announce step may follow. Its output is a coordination log in exactly the
# schema of a recorded one, so the analyses of notebooks 02–04 run on it unchanged.
#
# This notebook:
#
# 1. reproduces the reference's own example of queueing (60 s + 60 s ≈ 120 s);
# 2. compares session concurrency 1, 2 and 3 on the same traffic;
# 3. plots the 95th-percentile latency against the arrival rate — where is the knee?
# 4. replays the send times of the recorded log against a slower agent;
# 5. pushes a simulated log through work sessions and the conversation analytics.
#
# Every run takes a seed. Runs that differ only in a policy share their random draws
# (*common random numbers*): the same messages arrive at the same times with the same run
# times, so a difference between two runs is the policy's, not chance.

# %%
import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab import plots, sim
from a2a_lab.views.notebook import setup

LOGS = setup()
SEED = 20260302

# %% [markdown]
# ## 1. Two agents send to one agent at once
#
# The reference documents it itself: when two agents send to the same agent at the same
# moment, the second message waits for the first, so with 60 s per run the second reply
# comes after about 120 s. We replay exactly that: two sends at time 0 to `eden`, whose runs
# take 60 s (a deterministic service time), ping-pong and announce off.

# %%
two_at_once = sim.SimConfig(
    agents=[
        sim.AgentConfig(id="ruda"),
        sim.AgentConfig(id="bada"),
        sim.AgentConfig(id="eden", service=sim.Deterministic(value_s=60)),
    ],
    workload=sim.TraceArrivals(
        sends=[
            sim.TraceSend(
                at_s=0, from_agent="ruda", to_agent="eden", message="스테이징 서버 배포 진행해줘"
            ),
            sim.TraceSend(
                at_s=0, from_agent="bada", to_agent="eden", message="회귀 테스트 결과 정리해줘"
            ),
        ]
    ),
    n_messages=None,
    ping_pong=sim.PingPongPolicy(max_turns=0),
    announce=None,
    tasks=None,
    channel_share=0.0,
)
example = sim.simulate(two_at_once, seed=SEED)
columns = [
    "from_agent",
    "to_agent",
    "arrival_s",
    "queue_wait_s",
    "service_s",
    "latency_s",
    "outcome",
]
example.messages.select(columns)

# %% [markdown]
# The second message spends 60 s in `eden`'s queue before its own 60 s run. With two
# messages at a time per session (`session_concurrency=2`) both answers come after 60 s:

# %%
wider = two_at_once.model_copy(
    update={"agents": [a.model_copy(update={"session_concurrency": 2}) for a in two_at_once.agents]}
)
sim.simulate(wider, seed=SEED).messages.select(columns)

# %% [markdown]
# The same two exchanges as the log the gateway would have written: the reply of the second
# one comes 120 s after its send.

# %%
example.events.select(
    "line",
    "type",
    "agent_id",
    (pl.col("event_ms") - pl.col("event_ms").min()).alias("ms_after_first"),
    pl.col("data").struct.field("conversationId").str.slice(0, 8).alias("conversation"),
)

# %% [markdown]
# ## 2. Session concurrency 1, 2 or 3 on the same traffic
#
# Now the default deployment (five main agents, two sub-agents, Poisson traffic, LLM runs
# of 40 s on average with a coefficient of variation of 1, all of today's policies), with
# its traffic tripled, so that sessions are busy. Only the session concurrency changes
# between the three runs; the seed, and with it every message, stays the same.

# %%
busy_day = sim.SimConfig(n_messages=3000)
busy_day = busy_day.model_copy(
    update={
        "workload": busy_day.workload.model_copy(
            update={
                "agents": [
                    r.model_copy(update={"rate_per_s": 3 * r.rate_per_s})
                    for r in busy_day.workload.agents
                ]
            }
        )
    }
)


def with_concurrency(cfg: sim.SimConfig, c: int) -> sim.SimConfig:
    return cfg.model_copy(
        update={"agents": [a.model_copy(update={"session_concurrency": c}) for a in cfg.agents]}
    )


rows, runs = [], {}
for c in (1, 2, 3):
    res = runs[c] = sim.simulate(with_concurrency(busy_day, c), seed=SEED)
    s = res.summary()
    busiest = res.sessions.sort("utilization", "session", descending=[True, False]).row(
        0, named=True
    )
    rows.append(
        {
            "session_concurrency": c,
            "p50_latency_s": s["p50_latency_s"],
            "p95_latency_s": s["p95_latency_s"],
            "p99_latency_s": s["p99_latency_s"],
            "mean_wait_s": s["mean_wait_s"],
            "no_reply_rate": s["no_reply_rate"],
            "blocked_rate": s["blocked_rate"],
            "busiest_session": busiest["session"],
            "its_utilization": busiest["utilization"],
        }
    )
pl.DataFrame(rows).with_columns(pl.selectors.float().round(3))

# %%
def _less(a: float, b: float) -> str:
    return f"{1 - b / a:.0%} less" if a > 0 else "no change"


one, two, three = rows
display(
    Markdown(
        f"With one message at a time, a message waits on average {one['mean_wait_s']:.0f} s "
        "behind other senders' messages and ping-pong turns (which queue on the same sessions), "
        f"and {one['no_reply_rate']:.1%} of the exchanges get no reply within 300 s. "
        f"A second slot per session brings the mean wait to {two['mean_wait_s']:.0f} s "
        f"({_less(one['mean_wait_s'], two['mean_wait_s'])}) and no reply to "
        f"{two['no_reply_rate']:.1%}; a third to {three['mean_wait_s']:.0f} s "
        f"({_less(two['mean_wait_s'], three['mean_wait_s'])} than two) and "
        f"{three['no_reply_rate']:.1%}. p95 latency: {one['p95_latency_s']:.0f} s, "
        f"{two['p95_latency_s']:.0f} s, {three['p95_latency_s']:.0f} s."
    )
)

# %% [markdown]
# Once the queues are gone, what remains of the tail is the run time itself. Exchanges without
# a reply still had their runs executed (the agent keeps working after the requester gives
# up), so they still delayed everything behind them.
#
# Every run also records each session's queue as an exact step function
# (`res.timeseries`); `binned_timeseries` averages it over time bins for a chart. Here the
# busiest session's queue (messages waiting, not counting those being processed), hour by
# hour, under the three settings — the same messages arrive at the same times in all three:

# %%
busiest = rows[0]["busiest_session"]
queue = pl.concat(
    [
        runs[c]
        .binned_timeseries(3600.0, [busiest])
        .with_columns(pl.lit(str(c)).alias("session concurrency"))
        for c in (1, 2, 3)
    ]
).select(
    "session concurrency", (pl.col("time_s") / 3600).alias("hour"), pl.col("queue_length").round(3)
)
owner, kind = busiest.split(":")[1:3]
title = f"{owner}'s {kind} session: messages waiting (hourly mean)"
alt.Chart(queue, title=title).mark_line(interpolate="step-after").encode(
    x=alt.X("hour:Q", title="hours since the start"),
    y=alt.Y("queue_length:Q", title="messages waiting"),
    color=alt.Color("session concurrency:N"),
    tooltip=["session concurrency:N", "hour:Q", "queue_length:Q"],
)

# %% [markdown]
# ## 3. The 95th-percentile latency against the arrival rate
#
# Four agents send to `eden`, whose runs take 40 s on average (lognormal, cv 1). We raise the
# total arrival rate step by step and read two 95th percentiles: of the time from send to
# the reply (solid lines: what a requester sees; only exchanges that got a reply count, so
# it can never exceed the 300 s wait limit) and of the time until `eden` has finished the
# run (dashed: the queue's own sojourn time, whether or not anyone still waits for it). Ping-pong is off
# here, so `eden`'s utilisation is simply rate × 40 s / concurrency. All runs share one
# seed: the curves are smooth because every point sees the same messages, only more densely
# packed.

# %%
senders = ("ruda", "bada", "seum", "main")


def hub(rate_per_s: float, concurrency: int) -> sim.SimConfig:
    return sim.SimConfig(
        agents=[
            *(sim.AgentConfig(id=a) for a in senders),
            sim.AgentConfig(
                id="eden",
                service=sim.Lognormal(mean_s=40.0, cv=1.0),
                session_concurrency=concurrency,
            ),
        ],
        workload=sim.PoissonArrivals(
            pairs=[
                sim.PairRate(from_agent=a, to_agent="eden", rate_per_s=rate_per_s / len(senders))
                for a in senders
            ]
        ),
        n_messages=4000,
        ping_pong=sim.PingPongPolicy(max_turns=0),
        announce=None,
        tasks=None,
        channel_share=0.0,
    )


sweep = []
for concurrency in (1, 2):
    for utilisation in (0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
        rate = utilisation * concurrency / 40.0
        s = sim.simulate(hub(rate, concurrency), seed=SEED).summary()
        sweep.append(
            {
                "session concurrency": str(concurrency),
                "messages per minute": round(rate * 60, 2),
                "utilisation": utilisation,
                "p95 send → reply (s)": round(s["p95_latency_s"], 1),
                "p95 send → run done (s)": round(s["p95_sojourn_s"], 1),
                "no-reply rate": round(s["no_reply_rate"], 4),
            }
        )
sweep = pl.DataFrame(sweep)
long = sweep.unpivot(
    ["p95 send → reply (s)", "p95 send → run done (s)"],
    index=["session concurrency", "messages per minute", "utilisation", "no-reply rate"],
    variable_name="measured",
    value_name="seconds",
)
latency = (
    alt.Chart(long, title="eden: 95th-percentile latency against the arrival rate")
    .mark_line(point=True)
    .encode(
        x=alt.X("messages per minute:Q"),
        y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="seconds (log scale)"),
        color=alt.Color("session concurrency:N"),
        strokeDash=alt.StrokeDash("measured:N", legend=None),
        shape=alt.Shape("measured:N", title=None),
        tooltip=[
            "session concurrency:N",
            "measured:N",
            "messages per minute:Q",
            "utilisation:Q",
            "seconds:Q",
            "no-reply rate:Q",
        ],
    )
)
ceiling = (
    alt.Chart(pl.DataFrame({"y": [300.0], "label": ["300 s: the requester gives up"]}))
    .mark_rule(strokeDash=[2, 2], color="gray")
    .encode(y="y:Q", tooltip=["label:N"])
)
latency + ceiling

# %% [markdown]
# Below about 60 % utilisation the tail is a few run times long; past 80 % the queue's tail
# grows like 1 / (1 − ρ). Requesters do not see that growth as latency: beyond 300 s they
# stop waiting, so their percentile flattens under the limit while the no-reply rate climbs
# — even though every message is eventually processed, and delays the ones behind it. A
# second slot per session moves the knee to twice the traffic.

# %%
sweep.filter(pl.col("utilisation") >= 0.8).sort("session concurrency", "utilisation")

# %% [markdown]
# ### 3b. The same curve with confidence intervals, on any executor
#
# One seed gives one sample path. `sweep_grid` (`a2a_lab.sim.sweep.sweep`) runs every point
# of a grid with the same independent replications and reports, per point, the mean and a
# 95 % confidence interval of every summary figure. A grid point changes the configuration
# by dotted paths (`"agents.4.session_concurrency"` is `eden`'s) and `rate_scale` multiplies
# every arrival rate; here the base configuration sends one run's worth of work per second
# of one slot, so `utilisation × concurrency` is the scale. Replication `k` of every point
# uses the same seed (`SeedSequence(SEED, spawn_key=(k,))`), so the points share their
# draws (common random numbers) and a point's result does not depend on what else is in
# the grid.
#
# `workers=1` runs in this kernel; the default is a process pool over every core, and any
# `concurrent.futures.Executor` works — for a Dask cluster,
# `executor=distributed.Client("tcp://scheduler:8786").get_executor()`, with identical
# results.

# %%
import math

from a2a_lab.sim.sweep import capacity_search
from a2a_lab.sim.sweep import sweep as sweep_grid

unit = hub(1 / 40.0, 1)  # 4 senders → eden at 1/40 messages per second: utilisation 1 at one slot
points = [
    {"rate_scale": u * c, "agents.4.session_concurrency": c}
    for c in (1, 2)
    for u in (0.3, 0.5, 0.7, 0.85)
]
curve = sweep_grid(
    unit,
    points,
    replications=3,
    seed=SEED,
    metrics=["p95_latency_s", "p95_sojourn_s", "no_reply_rate"],
    workers=1,
    progress=False,
)
curve = curve.with_columns(
    (pl.col("rate_scale") / pl.col("agents.4.session_concurrency")).round(2).alias("utilisation"),
    (pl.col("rate_scale") * 60 / 40.0).round(2).alias("messages per minute"),
    pl.col("agents.4.session_concurrency").cast(pl.String).alias("session concurrency"),
)
curve.select(
    "session concurrency",
    "utilisation",
    "messages per minute",
    pl.col("^p95_sojourn_s.*$").round(1),
    pl.col("^no_reply_rate.*$").round(4),
)

# %%
band = (
    alt.Chart(curve)
    .mark_area(opacity=0.25)
    .encode(
        x=alt.X("messages per minute:Q"),
        y=alt.Y(
            "p95_sojourn_s_low:Q",
            scale=alt.Scale(type="log"),
            title="p95 send → run done (s, log scale)",
        ),
        y2="p95_sojourn_s_high:Q",
        color=alt.Color("session concurrency:N"),
    )
)
mean = (
    alt.Chart(curve)
    .mark_line(point=True)
    .encode(
        x="messages per minute:Q",
        y=alt.Y("p95_sojourn_s:Q", scale=alt.Scale(type="log")),
        color="session concurrency:N",
        tooltip=[
            "session concurrency:N",
            "utilisation:Q",
            alt.Tooltip("p95_sojourn_s:Q", format=".1f"),
            alt.Tooltip("p95_sojourn_s_low:Q", format=".1f"),
            alt.Tooltip("p95_sojourn_s_high:Q", format=".1f"),
        ],
    )
)
(band + mean).properties(
    title="eden: p95 sojourn against the arrival rate, 95 % CI over 3 replications"
)

# %% [markdown]
# ### 3c. Capacity: the highest arrival rate that meets a latency target
#
# `capacity_search` answers the question directly: the highest arrival rate at which the
# 95th percentile of send → reply stays within 180 s (`eden`'s runs alone reach 110 s at
# their 95th percentile). A message without a reply counts as
# infinitely late, so a load that leaves more than 5 % unanswered never qualifies. Each
# replication bisects its own curve — the same draws at every rate, so its percentile is a
# function of the rate alone — and the capacity is the mean over replications, with a 95 %
# confidence interval.
#
# First a check on a queue with a known answer: in M/M/1 the time in system is exponential
# with rate μ − λ, so p95 ≤ T holds up to λ* = μ − ln 20 / T.

# %%
target = 15.0
mm1_cap = capacity_search(
    sim.presets.mm1(0.5, 1.0, n_messages=4000),
    target_latency_s=target,
    target_quantile=0.95,
    replications=5,
    seed=SEED,
    rel_tol=0.01,
    level=0.99,
    workers=1,
    progress=False,
)
exact = 1.0 - math.log(20.0) / target
print(mm1_cap)
print(
    f"theory: {exact:.4f}/s, inside the 99 % interval: {mm1_cap.rate_low <= exact <= mm1_cap.rate_high}"
)

# %% [markdown]
# Now `eden` with one and with two session slots:

# %%
capacity = []
for c in (1, 2):
    cap = capacity_search(
        hub(0.5 * c / 40.0, c),
        target_latency_s=180.0,
        target_quantile=0.95,
        replications=3,
        seed=SEED,
        rel_tol=0.05,
        workers=1,
        progress=False,
    )
    capacity.append(
        {
            "session concurrency": c,
            "messages per minute": round(cap.rate_per_s * 60, 2),
            "95 % CI low": round(cap.rate_low * 60, 2),
            "95 % CI high": round(cap.rate_high * 60, 2),
            "utilisation": round(cap.rate_per_s * 40.0 / c, 3),
        }
    )
pl.DataFrame(capacity)

# %% [markdown]
# With one slot, `eden` meets the target only up to about a quarter of its capacity in
# utilisation: its own runs already take up most of the 180 s. A second slot more than
# triples the traffic it can take — queueing, not the run time, is what the second slot
# removes, and at low utilisation queueing is what pushes the 95th percentile over the
# target.

# %% [markdown]
# ## 4. Replaying the recorded traffic against a slower agent
#
# The workload can also be the send times of a recorded log (`TraceArrivals`): who sent
# to whom, when, with which text (the intent, hence the ping-pong budget, is read from the
# recorded message). Here the log of this notebook's `LOGS`, replayed twice with the same
# seed: as it is, and with the agent that receives the most messages (found from the replay)
# three times slower.

# %%
d = pl.col("data").struct
recorded_sends = (
    al.load(LOGS)
    .events.filter(pl.col("type") == "a2a.send", pl.col("event_ms") > 0)
    .select(
        pl.coalesce(d.field("toAgent"), d.field("targetAgentId"))
        .str.strip_chars()
        .alias("to_agent")
    )
    .filter(pl.col("to_agent").str.len_chars() > 0)
)
if recorded_sends.is_empty():
    display(Markdown("**Nothing to show:** the log has no `a2a.send` to replay."))
else:
    replay = sim.SimConfig(workload=sim.TraceArrivals(path=str(LOGS)), n_messages=None)
    base = sim.simulate(replay, seed=SEED).messages
    SLOW = (
        base.group_by("to_agent")
        .len()
        .sort(["len", "to_agent"], descending=[True, False])["to_agent"][0]
    )
    slower = replay.model_copy(
        update={
            "agents": [
                a.model_copy(update={"service": sim.Lognormal(mean_s=120.0, cv=1.0)})
                if a.id == SLOW
                else a
                for a in replay.agents
            ]
        }
    )
    compare = []
    for label, m in (
        ("as recorded", base),
        (f"{SLOW} 3x slower", sim.simulate(slower, seed=SEED).messages),
    ):
        compare.append(
            m.filter(pl.col("to_agent") == SLOW).select(
                pl.lit(label).alias("scenario"),
                pl.len().alias(f"messages to {SLOW}"),
                pl.col("latency_s").quantile(0.5, "linear").round(1).alias("p50 latency s"),
                pl.col("latency_s").quantile(0.95, "linear").round(1).alias("p95 latency s"),
                (pl.col("outcome") == "no_reply").mean().round(3).alias("no-reply rate"),
            )
        )
    compare = pl.concat(compare)
    before, after = compare.rows(named=True)
    display(compare)
    display(
        Markdown(
            f"With `{SLOW}` three times slower, the p95 latency of the {before[f'messages to {SLOW}']} messages "
            f"to it goes from {before['p95 latency s']} s to {after['p95 latency s']} s and its no-reply rate "
            f"from {before['no-reply rate']:.1%} to {after['no-reply rate']:.1%}."
        )
    )

# %% [markdown]
# ## 5. The simulated log, analysed like a recorded one
#
# A default run, written as the gateway would write it, goes through the same pipeline as a
# loaded log: enrichment, work sessions (tasks create them; every message an agent sends
# during a task carries its work-session id) and the conversation analytics.

# %%
day = sim.simulate(sim.SimConfig(n_messages=1500), seed=SEED)
events = day.events
print(f"{day.plan.n} messages → {events.height} events, {events['type'].n_unique()} event types")
events.group_by("type").len("events").sort("events", "type", descending=[True, False])

# %%
enriched = al.enrich(events)
now = float(events["event_ms"].max()) + 3_600_000  # one hour after the last event
ws = al.work_sessions(enriched, now=now)
ws.sessions.select("id", "status", "thread_count", "event_count", "collab_category").sort(
    "event_count", "id", descending=[True, False]
).head(8)

# %%
plots.category_bars(ws.sessions, title="Work sessions per category (simulated)")

# %% [markdown]
# One row per exchange, read back from the log alone:

# %%
conv = al.conversations(enriched)
conv.group_by("outcome").len("exchanges").sort("exchanges", "outcome", descending=[True, False])

# %%
plots.outcome_bars(conv)

# %%
plots.latency_by_pair(conv, top=12, min_exchanges=10)

# %% [markdown]
# The per-message frame of the simulator knows what the log only implies; where both say
# something, they agree. One caveat the simulation makes visible: the reference reuses a
# conversation id for every exchange of a work session and agent pair, so when an agent
# sends to the same agent again before the previous exchange completed, the two exchanges
# interleave under one id and the log cannot tell them apart: the log-health check reports
# them (missing completes, events after a complete, turns out of order), and the
# conversation analytics count some of them as incomplete.

# %%
from a2a_lab.analysis.checks import check

check(events).group_by("rule", "severity").len("findings").sort(
    "findings", "rule", descending=[True, False]
)
