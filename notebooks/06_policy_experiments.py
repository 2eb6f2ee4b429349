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
# # 06 · Policy experiments: retries, loop guards, wait limits, the synchronous path
#
# The changes engineers argue about, tried on the model first. Beside the gateway of
# notebook 05, `a2a_lab.sim` models the policies of a2a-runtime.md §2, §4 and §5, each a
# `SimConfig` field whose default is what `sessions_send` does today:
#
# | field | today | what it models |
# |---|---|---|
# | `failures` | off | per target agent, the chance of each error class of §4 (a run that fails, an `agent.wait` call that fails, an LLM timeout) |
# | `retry` | `ReferenceRetry()` | at most 3 retries of retriable errors, re-polling the same run, backoff `floor(min(60 s, 2 s·2^k)·U(0.5, 1))`; or `ExponentialRetry` (re-send, jitter, budget, attempt timeout), `CollaborationRetry` (the design notes' 1, 2, 4 s and Retry-After), `None` |
# | `idempotency` | 5 minutes | a re-send within the key's lifetime joins the original run unless that run failed |
# | `loop_guard`, `collaborate_limit` | off | N messages per sliding window per agent pair (switched on: 6 per 60 s), relay depth 5; 10 calls per 5 min |
# | `queue_capacity`, `rate_limit` | off | M/M/1/K sessions; Discord's 5 messages/s per channel, 5 new threads/min |
# | `sync` | off (asynchronous path) | `timeoutSeconds > 0`, with the known bug: a timeout logs nothing |
#
# The loop guard, the collaborate limit and Discord's rate limits act on Discord messages
# and the collaborate tool, not on `sessions_send` today, hence "off" until switched on.
#
# Four experiments, each over one seed: runs that differ only in a policy share their
# random draws (*common random numbers*: the same messages, run times, failures and backoff
# draws), so a difference between two runs is the policy's.

# %%
import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab import sim
from a2a_lab.analysis.checks import check, replay_guard
from a2a_lab.views.notebook import setup

LOGS = setup()
SEED = 20260302

# %% [markdown]
# ## 0. Where your log stands
#
# The experiments below run on model deployments and a fixed seed, so their numbers do not
# depend on the log. What the log says is where the deployment stands today on the same
# scales: how many attempts an exchange takes (retries per send), how many end without a
# reply, and the busiest minute of any agent pair — the quantity the loop guard of
# section 2 limits. Messages are counted as the loop guard counts them, and as notebook 04
# and `check` replay it (`replay_guard`): sends and ping-pong turns per unordered pair.

# %%
log_events = al.enrich(al.load(LOGS).events)
exchanges = al.conversations(log_events)
counted = replay_guard(log_events, limit=10_000, window_s=60)  # no limit: count only
busiest_minute = (
    counted.with_columns(pl.col("event_ms").cast(pl.Int64).cast(pl.Datetime("ms")).alias("at"))
    .sort("pair", "at")
    .rolling("at", period="60s", closed="both", group_by="pair")
    .agg(pl.len().alias("messages in 60 s"))
    .sort(["messages in 60 s", "pair"], descending=[True, False])
    .head(1)
)
blocked_at_6 = int(replay_guard(log_events, limit=6, window_s=60)["blocked"].sum())
if exchanges.height:
    retries = int((log_events["type"] == "a2a.retry").sum())
    no_reply = float((exchanges["outcome"] == "no_reply").mean())
    top = busiest_minute.row(0, named=True) if busiest_minute.height else None
    display(
        Markdown(
            f"The log has **{exchanges.height:,}** exchanges: **{retries / exchanges.height:.2f}** retries per "
            f"exchange and **{no_reply:.1%}** without a reply. "
            + (
                f"Its busiest agent pair exchanged **{top['messages in 60 s']}** messages (sends and "
                f"ping-pong turns) within 60 s (`{top['pair']}`): a loop guard of N = 6 per 60 s "
                f"would have blocked **{blocked_at_6}** of the log's {counted.height:,} counted messages."
                if top
                else ""
            )
        )
    )
else:
    display(
        Markdown(
            "**Nothing to show:** the log has no A2A exchange to compare with the experiments."
        )
    )

# %% [markdown]
# ## 1. Retries at rising load: does a retry storm appear, and where?
#
# Four agents send to `eden`, whose runs take 40 s on average (lognormal, cv 1, one at a
# time). Under today's `lanes` topology every message here runs on its own conversation
# session (no tasks, so no work session ties two messages together), and only the gateway-wide
# `nested` pool can queue them: with its default 8 slots nothing would queue at these loads
# (notebook 05 §3), so the pool gets one slot and is `eden`'s one server. 5 % of its runs fail with `529 Overloaded` (retriable) and 2 % of the requesters'
# `agent.wait` calls fail to connect. First, what one failure looks like in the log: today's
# loop re-polls the run three times, each retry an `a2a.retry` event, then gives up.

# %%
senders = ("ruda", "bada", "seum", "main")
failing = sim.FailurePolicy(rates={"server_overload": 0.05, "gateway_connection": 0.02})
KEYS = sim.IdempotencyPolicy()  # today's idempotency keys: 5 minutes


def hub(utilisation: float, retry, idempotency=KEYS, n_messages: int = 2000) -> sim.SimConfig:
    """Four senders, one 40 s agent at the given offered utilisation, with failures."""
    rate = utilisation / 40.0
    return sim.SimConfig(
        agents=[
            *(sim.AgentConfig(id=a) for a in senders),
            sim.AgentConfig(id="eden", service=sim.Lognormal(mean_s=40.0, cv=1.0)),
        ],
        workload=sim.PoissonArrivals(
            pairs=[
                sim.PairRate(from_agent=a, to_agent="eden", rate_per_s=rate / 4) for a in senders
            ]
        ),
        n_messages=n_messages,
        lanes=sim.LanePools(nested=1),
        ping_pong=sim.PingPongPolicy(max_turns=0),
        announce=None,
        tasks=None,
        channel_share=0.0,
        failures=failing,
        retry=retry,
        idempotency=idempotency,
    )


today = sim.simulate(hub(0.5, sim.ReferenceRetry()), seed=SEED)
first = (
    today.messages.filter(pl.col("error_code") == "server_overload")
    .sort("message")
    .row(0, named=True)
)
today.events.filter(
    pl.col("data").struct.field("conversationId") == first["conversation_id"]
).select(
    "type",
    "agent_id",
    ((pl.col("event_ms") - pl.col("event_ms").min()) / 1000).alias("s_after_send"),
    *(
        pl.col("data").struct.field(f)
        for f in ("attempt", "errorCode", "backoffMs", "elapsedMs", "waitStatus", "waitError")
    ),
)

# %% [markdown]
# Retrying cannot rescue that exchange: the run failed, and polling it again shows the same
# error. A retry that helps has to send the message again. The proposal most often made:
# re-send after a backoff when a run fails or an attempt has no answer after 150 s. We
# compare four policies at offered utilisations from 20 % to 90 % (messages × 40 s per
# second of `eden`):
#
# - **today**: the reference loop (re-polls; the requester gives up after 300 s);
# - **re-send**: `ExponentialRetry(attempt_timeout_s=150)` without idempotency keys, so
#   each re-send is a new run of `eden`;
# - **re-send + keys**: the same with today's 5-minute idempotency keys: a re-send joins the
#   original run while it has not failed;
# - **re-send + budget**: no keys, but a retry budget of 10 % of the requests of the last
#   10 minutes.
#
# `runs per message` counts `eden`'s runs (the load the policy puts on it); the measured
# utilisation is what `eden` actually worked.

# %%
policies = {
    "today (re-poll)": (sim.ReferenceRetry(), KEYS),
    "re-send": (sim.ExponentialRetry(attempt_timeout_s=150.0), None),
    "re-send + keys": (sim.ExponentialRetry(attempt_timeout_s=150.0), KEYS),
    "re-send + budget": (
        sim.ExponentialRetry(
            attempt_timeout_s=150.0,
            budget=sim.RetryBudget(ratio=0.1, min_retries=1, window_s=600.0),
        ),
        None,
    ),
}
storm_rows = []
for name, (retry, keys) in policies.items():
    for utilisation in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        res = sim.simulate(hub(utilisation, retry, keys), seed=SEED)
        s = res.summary()
        storm_rows.append(
            {
                "policy": name,
                "offered utilisation": utilisation,
                "runs per message": round(float(res.messages["runs"].mean()), 3),
                "attempts per message": round(s["retry_amplification"], 3),
                "measured utilisation": round(s["utilization"], 3),
                "replied": round(s["replied_rate"], 3),
                "p95 latency s": round(s["p95_latency_s"], 1),
            }
        )
storm = pl.DataFrame(storm_rows)
storm.pivot("policy", index="offered utilisation", values="replied").sort("offered utilisation")

# %%
order = list(policies)
base = alt.Chart(storm).encode(
    x=alt.X("offered utilisation:Q", scale=alt.Scale(domain=[0.2, 0.9])),
    color=alt.Color("policy:N", sort=order),
    tooltip=[
        "policy:N",
        "offered utilisation:Q",
        "runs per message:Q",
        "measured utilisation:Q",
        "replied:Q",
    ],
)
load = base.mark_line(point=True).encode(
    y=alt.Y("runs per message:Q", title="eden's runs per message")
)
replied = base.mark_line(point=True).encode(
    y=alt.Y("replied:Q", title="share of exchanges replied")
)
load = load.properties(title="The load the policy puts on eden", width=300)
load | replied.properties(title="What requesters get", width=300)


# %%
def at(policy: str, u: float, col: str) -> float:
    return storm.filter(pl.col("policy") == policy, pl.col("offered utilisation") == u)[col][0]


loads = sorted(storm["offered utilisation"].unique())
low = loads[0]
worst = (
    storm.filter(pl.col("policy") == "re-send")
    .sort("replied", "offered utilisation")
    .row(0, named=True)
)
budget_max = storm.filter(pl.col("policy") == "re-send + budget")["runs per message"].max()
today_best = storm.filter(pl.col("policy") == "today (re-poll)")["runs per message"].max()
display(
    Markdown(
        "**The storm appears, and where.** Without idempotency keys every timed-out attempt "
        f"becomes one more run of `eden`: at {low:.0%} offered load the re-send policy already "
        f"runs {at('re-send', low, 'runs per message'):.2f} runs per message (the slowest runs "
        f"outlive 150 s on their own), and its share replied falls to {worst['replied']:.1%} "
        f"at {worst['offered utilisation']:.0%}, where today's policy answers "
        f"{at('today (re-poll)', worst['offered utilisation'], 'replied'):.1%}. With "
        f"idempotency keys the re-sends join the original run: at {low:.0%} "
        f"{at('re-send + keys', low, 'replied'):.1%} are answered against "
        f"{at('today (re-poll)', low, 'replied'):.1%} today, until waits outlast the keys' "
        "5-minute lifetime and late re-sends are new runs again. A retry budget of 10 % caps "
        f"the copies at {budget_max:.2f} runs per message; today's re-polls stay at "
        f"{today_best:.2f} (they add no runs, and rescue only the failed calls)."
    )
)

# %% [markdown]
# The storm starts where the time to an answer crosses the attempt timeout. Next to the
# re-send policy's runs per message, the share of exchanges whose run ends more than 150 s
# after the send under today's policy:

# %%
trigger = []
for utilisation in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
    m = sim.simulate(hub(utilisation, sim.ReferenceRetry()), seed=SEED).messages
    trigger.append(
        {
            "offered utilisation": utilisation,
            "runs ending > 150 s after the send": round(float((m["sojourn_s"] > 150).mean()), 3),
            "mean queue wait s": round(float(m["queue_wait_s"].mean()), 1),
        }
    )
pl.DataFrame(trigger).join(
    storm.filter(pl.col("policy") == "re-send").select("offered utilisation", "runs per message"),
    on="offered utilisation",
).sort("offered utilisation")

# %%
knee = (
    pl.DataFrame(trigger)
    .join(
        storm.filter(pl.col("policy") == "re-send").select(
            "offered utilisation", "runs per message"
        ),
        on="offered utilisation",
    )
    .sort("offered utilisation")
)
jump = (
    knee.with_columns(pl.col("runs per message").diff().alias("step"))
    .sort("step", "offered utilisation", descending=[True, False], nulls_last=True)
    .row(0, named=True)
)
display(
    Markdown(
        f"The re-send policy's runs per message grow most steeply at {jump['offered utilisation']:.0%} "
        f"offered load, where {jump['runs ending > 150 s after the send']:.1%} of today's runs end more "
        "than 150 s after their send: each such exchange is sent up to four times, and every "
        "copy lengthens the wait of everything behind it."
    )
)

# %% [markdown]
# ## 2. Loop-guard thresholds against legitimate traffic
#
# The loop guard stops two agents from talking in a loop: at most N messages (sends and
# ping-pong replies) per unordered pair in any 60 s; a blocked send is dropped, a blocked
# reply ends the ping-pong. Too low a limit also cuts legitimate conversations. The traffic:
# the default deployment with three times today's rate (tasks off), plus two bots, `bot_a`
# and `bot_b`, stuck messaging each other every 10 s on average in both directions (their
# runs take 2 s). We switch the guard on with N from 2 to 20 per 60 s (today's call site: 6;
# the library's default: 10) and count, for the bots and for everyone else, the sends
# blocked and the exchanges whose ping-pong the guard cut short.

# %%
mains = ("main", "ruda", "eden", "seum", "bada")
day = sim.SimConfig(duration_s=4 * 3600.0, n_messages=None, tasks=None)
legit = [  # three times today's rates, to the main agents only (not to the bots)
    r.model_copy(
        update={
            "rate_per_s": 3 * r.rate_per_s,
            "targets": r.targets or {m: 1.0 for m in mains if m != r.agent},
        }
    )
    for r in day.workload.agents
]
loop = [
    sim.PairRate(from_agent="bot_a", to_agent="bot_b", rate_per_s=0.1),
    sim.PairRate(from_agent="bot_b", to_agent="bot_a", rate_per_s=0.1),
]
bots = [sim.AgentConfig(id=b, service=sim.Deterministic(value_s=2.0)) for b in ("bot_a", "bot_b")]
looping = day.model_copy(
    update={
        "agents": [*day.agents, *bots],
        "workload": day.workload.model_copy(update={"agents": legit, "pairs": loop}),
    }
)
guard_rows = []
for limit in (None, 2, 4, 6, 10, 20):
    guard_policy = None if limit is None else sim.LoopGuardPolicy(max_messages_per_window=limit)
    cfg = looping.model_copy(update={"loop_guard": guard_policy})
    m = sim.simulate(cfg, seed=SEED).messages
    bot = pl.col("from_agent").str.starts_with("bot_")
    traffic = pl.when(bot).then(pl.lit("bots' loop")).otherwise(pl.lit("legitimate"))
    per_kind = m.group_by(traffic.alias("traffic")).agg(
        pl.len().alias("messages"),
        (pl.col("outcome") == "guard_blocked").mean().round(4).alias("sends blocked"),
        (pl.col("termination_reason") == "aborted").mean().round(4).alias("ping-pong cut"),
        pl.col("turns").mean().round(3).alias("mean turns"),
    )
    label = "off" if limit is None else f"{limit} / 60 s"
    guard_rows.append(
        per_kind.with_columns(pl.lit(label).alias("guard"), pl.lit(limit or 0).alias("N"))
    )
guard = pl.concat(guard_rows).sort("N", "traffic")
guard.select("guard", "traffic", "messages", "sends blocked", "ping-pong cut", "mean turns")

# %%
alt.Chart(guard.filter(pl.col("N") > 0)).mark_line(point=True).encode(
    x=alt.X("N:Q", title="loop guard: messages per pair per 60 s"),
    y=alt.Y("sends blocked:Q", title="share of sends blocked"),
    color=alt.Color("traffic:N"),
    tooltip=["guard:N", "traffic:N", "sends blocked:Q", "ping-pong cut:Q"],
).properties(title="What the loop guard blocks", width=420)

# %%
BOTS = "bots' loop"


def g(n: int, traffic: str, col: str) -> float:
    return guard.filter(pl.col("N") == n, pl.col("traffic") == traffic)[col][0]


display(
    Markdown(
        f"Today's 6 per 60 s drops {g(6, BOTS, 'sends blocked'):.0%} of the bots' sends "
        f"and {g(6, 'legitimate', 'sends blocked'):.1%} of the legitimate ones (ping-pong cut "
        f"short: {g(6, 'legitimate', 'ping-pong cut'):.1%}), at three times today's load. At 2 "
        f"per 60 s, {g(2, 'legitimate', 'sends blocked'):.1%} of the legitimate sends are "
        f"dropped and {g(2, 'legitimate', 'ping-pong cut'):.1%} of legitimate exchanges lose "
        f"their ping-pong. The library's 10 per 60 s lets "
        f"{1 - g(10, BOTS, 'sends blocked'):.0%} of the loop through. No threshold "
        "stops the loop: a rate limit slows it to N messages a minute, which is what the guard "
        "is for."
    )
)

# %% [markdown]
# ## 3. Wait limits
#
# How long should a requester wait for the target's run? The busy default deployment again
# (three times today's rate, no loop, 1,500 messages), waiting 60 s to 20 minutes instead of today's 300 s.
# An exchange without a reply is not work saved: the target still runs the message (and
# everything behind it waits), only nobody reads the answer. The concurrency gate's permits
# are held while the requester waits, so longer waits also mean more flows refused by the
# gate.

# %%
busy = day.model_copy(
    update={
        "workload": day.workload.model_copy(update={"agents": legit}),
        "n_messages": 1500,
        "duration_s": None,
    }
)
wait_rows = []
for max_wait in (60.0, 120.0, 300.0, 600.0, 1200.0):
    res = sim.simulate(
        busy.model_copy(update={"wait": sim.WaitPolicy(max_wait_s=max_wait)}), seed=SEED
    )
    s, m = res.summary(), res.messages
    wait_rows.append(
        {
            "max wait s": max_wait,
            "replied": round(s["replied_rate"], 3),
            "no reply": round(s["no_reply_rate"], 3),
            "refused by the gate": round(s["blocked_rate"], 3),
            "p95 latency s": round(s["p95_latency_s"], 1),
            "agent hours nobody waited for": round(
                float(m.filter(pl.col("outcome") == "no_reply")["service_s"].sum()) / 3600, 2
            ),
        }
    )
pl.DataFrame(wait_rows)

# %%
w = {r["max wait s"]: r for r in wait_rows}
display(
    Markdown(
        f"Today's 300 s leaves {w[300.0]['no reply']:.1%} of this busy day's exchanges "
        f"unanswered ({w[300.0]['refused by the gate']:.1%} refused by the gate). A 60 s limit "
        f"would leave {w[60.0]['no reply']:.1%} unanswered, while their runs, "
        f"{w[60.0]['agent hours nobody waited for']} agent hours, are done anyway: waiting less "
        "hides latency rather than removing it. Waiting 1,200 s leaves "
        f"{w[1200.0]['no reply']:.1%} unanswered, at a p95 latency of "
        f"{w[1200.0]['p95 latency s']} s instead of {w[300.0]['p95 latency s']} s, and the gate "
        f"refuses {w[1200.0]['refused by the gate']:.1%} of the flows."
    )
)

# %% [markdown]
# ## 4. Synchronous or asynchronous: what the dashboard can see
#
# With `timeoutSeconds > 0` the caller blocks until the reply or the timeout. On success the
# reference then logs the exchange (the `a2a.send` only after the wait); on a timeout it
# logs nothing at all (the known bug): the target still runs the message, but the
# conversation never reaches the log. The reference's tool takes 30 s when the caller
# omits the parameter. Same busy day, the asynchronous path against synchronous calls with
# 10 s to 120 s timeouts, and the fixed synchronous path (the flow starts at the timeout).

# %%
paths = [("asynchronous", None)]
paths += [(f"synchronous {t:g} s", sim.SyncPath(timeout_s=t)) for t in (10.0, 30.0, 60.0, 120.0)]
paths += [("synchronous 30 s, fixed", sim.SyncPath(timeout_s=30.0, emit_on_timeout=True))]
sync_rows = []
for label, path in paths:
    res = sim.simulate(busy.model_copy(update={"sync": path}), seed=SEED)
    s = res.summary()
    seen = al.conversations(al.enrich(res.events))
    sync_rows.append(
        {
            "path": label,
            "exchanges": s["messages"],
            "invisible": int(s["invisible_conversations"]),
            "in the log": seen.height,
            "replied (truth)": round(s["replied_rate"], 3),
            "replied (as the log shows)": round(float((seen["outcome"] == "replied").mean()), 3),
            "health findings": check(res.events)
            .filter(~pl.col("rule").str.starts_with("guard."))
            .height,
        }
    )
visibility = pl.DataFrame(sync_rows).with_columns(
    (pl.col("invisible") / pl.col("exchanges")).round(3).alias("share invisible")
)
first = ["path", "exchanges", "invisible", "share invisible"]
visibility.select(*first, pl.exclude(first))

# %%
alt.Chart(visibility).mark_bar().encode(
    x=alt.X(
        "share invisible:Q",
        title="share of exchanges missing from the log",
        scale=alt.Scale(domain=[0, 1]),
    ),
    y=alt.Y("path:N", sort=[p for p, _ in paths], title=None),
    tooltip=["path:N", "exchanges:Q", "invisible:Q", "in the log:Q"],
).properties(title="Conversations the dashboard never sees", width=420)

# %%
v30 = visibility.filter(pl.col("path") == "synchronous 30 s").row(0, named=True)
display(
    Markdown(
        f"With the 30 s default, {v30['invisible']:,} of {v30['exchanges']:,} exchanges "
        f"({v30['share invisible']:.0%}) are invisible on this day: every exchange whose run "
        "ends more than 30 s after the call. Worse than the gap is the bias: what remains in the "
        f"log are the fast exchanges, so the log shows {v30['replied (as the log shows)']:.1%} "
        f"answered (truth: {v30['replied (truth)']:.1%}), and the log-health check finds "
        f"{v30['health findings']} issue(s): there is no trace of what is missing. Only the "
        "simulator's `invisible_conversations` (or a count of the target's runs) shows it. "
        "The asynchronous path, and the fixed synchronous one, log every exchange; the fix "
        "pays with a late `a2a.send` (written when the caller's wait ends, not when the "
        "message was sent)."
    )
)
