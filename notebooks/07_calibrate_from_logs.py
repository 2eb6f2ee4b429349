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
# # 07 · A digital twin from a recorded log
#
# The simulator (notebooks 05 and 06) runs on assumed numbers. This notebook fits it to a
# recorded coordination log instead, checks that the fitted model — the *twin* — behaves like
# the log, and then asks it questions the log cannot answer:
#
# 1. **Fit**: arrival rates per agent pair and hour, each agent's run time, ping-pong turns,
#    message mix (`a2a_lab.analysis.calibrate.fit_log`).
# 2. **Check**: simulate the twin with today's policies and compare first-reply latencies and
#    turns with the log (`compare`); the median must come out within 10 %.
# 3. **Ask**: what if traffic doubles, agents get per-conversation sessions, the wait limit
#    grows, or the LLM gets slower (`sweep`)? How much more traffic fits before p95 latency
#    passes four minutes (`capacity_search`)?

# %%
import altair as alt
import polars as pl

import a2a_lab as al
from a2a_lab.analysis.calibrate import compare, fit_log
from a2a_lab.views.notebook import setup
from a2a_lab.sim import simulate
from a2a_lab.sim.sweep import capacity_search, sweep

LOGS = setup()
events = al.load(LOGS).events
cal = fit_log(events)
twin = cal.config
print(f"{cal.exchanges.height} sessions_send exchanges over {cal.span_s / 86400:.1f} days fitted; "
      f"{cal.spawned} sub-agent spawns left out")

# %% [markdown]
# ## 1. What was fitted
#
# The unit is the `sessions_send` **exchange** (notebook 03): a send, the target's first
# reply, ping-pong turns, the complete. Exchanges that *spawn* a sub-agent are left out: their
# result comes back when the sub-agent's whole run ends, with no wait limit, a path the
# simulator does not model.
#
# **Arrivals.** Poisson rates per directed pair — the pair's exchanges over the log's span —
# shaped over the day by an hourly profile: exchanges per local hour (KST) over the hours the
# log covered, as multipliers of mean 1.

# %%
cal.rates.sort("exchanges", descending=True).head(8)

# %%
alt.Chart(cal.hourly, title="Arrival profile over the day (KST): rate multiplier").mark_bar().encode(
    x=alt.X("hour:O", title="local hour"),
    y=alt.Y("multiplier:Q", title="× the mean rate"),
    tooltip=["hour:O", "exchanges:Q", alt.Tooltip("exposure_h:Q", format=".1f"), alt.Tooltip("multiplier:Q", format=".2f")],
).properties(width=520, height=200)

# %% [markdown]
# **Run time per target agent.** The time from the send to the first reply is the target's
# run — plus any wait behind work already on its session. Two corrections make it the run
# alone:
#
# - *Queueing taken out.* Only exchanges that found the target **idle** are fitted: no other
#   exchange of that agent (as target or requester) in flight at the send. A run whose
#   requester gave up is not cancelled, so an unanswered exchange keeps its target busy for
#   another wait limit after it ends.
# - *Censoring.* An exchange that timed out (`no_reply`, reason `timeout`) says the run took
#   longer than the 300 s wait: it enters the maximum-likelihood fit
#   (`scipy.stats.CensoredData`) as *right-censored* at 300 s instead of being dropped, which
#   would make agents look faster than they are.
#
# A lognormal per target; agents with fewer than 8 idle replies (here: the sub-agents, which
# only ever send) get the fit pooled over all targets.

# %%
cal.service.filter(pl.col("exchanges") > 0).select(
    "agent", "exchanges", "idle", "observed", "censored",
    pl.col("mean_s", "median_s").round(1), pl.col("cv").round(2),
)

# %% [markdown]
# This log is lightly loaded, so taking queueing out changes little; on every exchange the
# fit would read the waits as run time:

# %%
naive = fit_log(events, only_idle=False).service
cal.service.join(naive, on="agent", suffix="_all").filter(pl.col("exchanges") > 0).select(
    "agent", pl.col("mean_s").round(1).alias("mean_s (idle only)"), pl.col("mean_s_all").round(1).alias("mean_s (all)")
)

# %% [markdown]
# **Ping-pong turns.** The turn time (previous reply → turn reply) from exchanges that ran
# alone, censored at the 120 s turn timeout, and per turn the chance of each early ending —
# its count over the turns that could have ended so. The message mix (intents, payload types)
# comes from the log too: it decides each exchange's turn budget by the reference rules.

# %%
print(cal.turn_service)
cal.turns.with_columns(pl.col("probability").round(3))

# %% [markdown]
# **Outcomes** per target, for reference. The simulator's gate and wait limit produce
# refusals and timeouts; failures of the run itself (errors, rate limits) are not in its
# model, so the twin answers a little more often than the log.

# %%
cal.outcomes.with_columns(pl.col("replied", "timeout", "error", "blocked", "incomplete").round(3))

# %% [markdown]
# ## 2. Does the twin behave like the log?
#
# Five replications of the twin — the log's week, today's policies — go through the same
# analysis as the log (`compare`: `conversations`, spawns left out) and are held against it.

# %%
cmp = compare([simulate(twin, seed=k) for k in range(5)], events)
cmp.overall.select(
    "observed", "simulated", pl.col("^(observed|simulated)_p(50|95)$").round(1), pl.col("ks").round(3),
    pl.col("median_ratio").round(3),
)

# %%
matched = abs(cmp.median_ratio - 1) <= 0.10
print(f"median first-reply latency: log {cmp.overall['observed_p50'][0]:.1f} s, "
      f"twin {cmp.overall['simulated_p50'][0]:.1f} s ({cmp.median_ratio - 1:+.1%}): "
      f"{'matched within 10 %' if matched else 'NOT matched within 10 %'}, KS {cmp.overall['ks'][0]:.2f}")

# %% [markdown]
# *On the sample* the median is matched and the distributions are close (KS statistic about 0.05); the
# twin's p95 comes out higher than the log's, as a lognormal's tail is heavier than that of
# this log's run times. Per pair (the busiest ones; a KS statistic needs 5 replies on each
# side):

# %%
cmp.latency.sort("observed", descending=True).head(8).select(
    "from_agent", "to_agent", "observed", "simulated", pl.col("observed_p50", "simulated_p50", "observed_p95", "simulated_p95").round(1),
    pl.col("ks", "ks_pvalue").round(3),
)

# %%
cmp.chart()

# %% [markdown]
# Latencies match; turns less so. The simulator ends a ping-pong loop with the same chance at
# every turn, and the fitted chances make the log's average ending rate — but in this log an
# exchange that survives the first turns tends to run its full budget, so the twin has too
# many one-turn and too few five-turn conversations:

# %%
print(f"turns KS {cmp.turns_ks:.3f}")
cmp.turns.with_columns(pl.col("observed_share", "simulated_share").round(3))

# %% [markdown]
# ## 3. What-ifs
#
# Each scenario is a point of one `sweep`: a grid point changes the twin by dotted paths into
# its configuration (`rate_scale` multiplies every arrival rate), and every point runs the
# *same* replications — common random numbers: message by message the same draws of sender,
# text, run time and reply — so differences between scenarios are mostly the scenarios' own.
# 95 % confidence intervals over 3 replications of a week each.

# %%
slower = {f"agents.{i}.service.mean_s": a.service.mean * 1.5 for i, a in enumerate(twin.agents)}
scenarios = [
    {},                                 # today
    {"rate_scale": 2.0},                # twice the traffic
    {"rate_scale": 8.0},                # eight times the traffic
    {"target_session": "a2a"},          # per-conversation sessions (commit 0b3325a28)
    {"wait.max_wait_s": 600.0},         # wait ten minutes instead of five
    slower,                             # runs take 50 % longer
]
names = ["today", "traffic ×2", "traffic ×8", "a2a sessions", "wait 600 s", "runs ×1.5"]
metrics = ["p50_latency_s", "p95_latency_s", "mean_wait_s", "no_reply_rate"]
whatif = sweep(twin, scenarios, replications=3, seed=7, metrics=metrics, workers=1, progress=False)
whatif = whatif.select(pl.Series("scenario", names), *[pl.col(f"^{m}(_low|_high)?$") for m in metrics])
whatif.with_columns(pl.exclude("scenario").round(3))

# %%
alt.Chart(whatif, title="p95 first-reply latency per scenario (95 % CI)").mark_errorbar(ticks=True).encode(
    y=alt.Y("scenario:N", sort=names, title=None),
    x=alt.X("p95_latency_s_low:Q", title="seconds"),
    x2="p95_latency_s_high:Q",
) + alt.Chart(whatif).mark_point(filled=True, size=60).encode(
    y=alt.Y("scenario:N", sort=names), x="p95_latency_s:Q", tooltip=["scenario:N", alt.Tooltip("p95_latency_s:Q", format=".1f")]
)

# %% [markdown]
# **How much more traffic fits?** `capacity_search` finds, for each replication, the highest
# multiple of today's traffic at which p95 first-reply latency stays within 240 s — a message
# that gets no reply counts as infinitely late — by bisection on that replication's own draws,
# and reports the mean over replications with its confidence interval. To keep the notebook
# quick, two days of traffic per run and a 5 % bracket.

# %%
two_days = twin.model_copy(update={"duration_s": 2 * 86400.0})
cap = capacity_search(
    two_days, target_latency_s=240.0, target_quantile=0.95, replications=4, seed=1, rel_tol=0.05,
    start_scale=8.0, workers=1, progress=False,
)
print(cap)
cap.replications.with_columns(pl.col("scale", "scale_above", "quantile_at_scale", "rate_per_s").round(4))

# %% [markdown]
# ## 4. Bigger experiments
#
# `sweep` and `capacity_search` take any `concurrent.futures.Executor`; by default they use a
# process pool on this machine. Each replication is one task of an importable worker
# function, so the same call runs on a Dask cluster with identical results:
#
# ```python
# from distributed import Client
#
# with Client("tcp://scheduler:8786") as client:
#     big = sweep(twin, {"rate_scale": [1, 2, 4, 8, 16]}, replications=50, seed=7,
#                 executor=client.get_executor())
# ```
#
# Add `cache_dir=...` to keep every replication's summary on disk, keyed by a hash of the
# configuration, the seed and the replication: re-running a sweep with more points or more
# replications only computes what is new.
