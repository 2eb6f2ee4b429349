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
# 1. **Fit**: arrival rates per agent pair and hour, each agent's run time and turn time,
#    ping-pong endings, message mix, failures and retries, tasks and their work sessions
#    (`a2a_lab.analysis.calibrate.fit_log`).
# 2. **Check**: simulate the twin — tasks on, as in the log — and compare first-reply
#    latencies, turns and outcomes with the log (`compare`).
# 3. **Ask**: what if traffic doubles, agents get per-conversation sessions, the wait limit
#    grows, or the LLM gets slower (`sweep`)? How much more traffic fits before p85 latency
#    passes four minutes (`capacity_search`)?

# %%
import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab.analysis.calibrate import compare, fit_log
from a2a_lab.sim import simulate
from a2a_lab.sim.experiments import RunOptions, SearchOptions
from a2a_lab.sim.experiments.sweep import capacity_search, sweep
from a2a_lab.views.notebook import display_timezone, setup

LOGS = setup()
TZ = display_timezone()  # $A2A_LAB_TZ, else UTC: the zone of every local hour below
events = al.load(LOGS).events


def with_fit(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """``columns`` of a fitted run-time table and its fit (family, mean with its 95 %
    interval, median, CV), rounded to read."""
    return frame.select(
        *columns,
        *(["family"] if "family" in frame.columns else []),
        pl.col("mean_s", "median_s").round(1),
        pl.col("^mean_(lo|hi)$").round(1),
        pl.col("cv").round(2),
    )


try:
    cal = fit_log(events, tz=TZ)  # the hourly profile is in this zone
except ValueError as exc:  # fit_log's documented refusal: nothing in the log to fit
    cal = None
    display(
        Markdown(
            f"**Nothing to show:** the twin cannot be fitted to this log ({exc}); every section below stays empty."
        )
    )
if cal is not None:
    twin = cal.config
    SPAN = (
        f"{cal.span_s / 86400:.1f} days"
        if cal.span_s >= 86400
        else f"{cal.span_s / 3600:.1f} hours"
    )
    display(
        Markdown(
            f"{cal.exchanges.height} sessions_send exchanges over {SPAN} fitted; "
            f"{cal.spawned} sub-agent spawns left out. Local hours are in {TZ}. The log reads "
            f"as topology `{twin.topology}`"
            + (
                " (every message to an agent on its one main session)."
                if twin.topology == "agent_main"
                else f" (conversation-scoped sessions, a `nested` pool of {twin.lanes.nested})."
            )
            + (
                " Warnings: " + "; ".join(str(w) for w in cal.warnings)
                if cal.warnings
                else " No saturation warning."
            )
        )
    )

# %% [markdown]
# ## 1. What was fitted
#
# The unit is the `sessions_send` **exchange** (notebook 03): a send, the target's first
# reply, ping-pong turns, the complete. Exchanges that *spawn* a sub-agent are left out: their
# result comes back when the sub-agent's whole run ends, with no wait limit, a path the
# simulator does not model.
#
# **Arrivals.** Poisson rates per directed pair — the pair's exchanges over the log's span —
# shaped over the day by an hourly profile: exchanges per local hour (in the display time
# zone, printed above) over the hours the log covered, as multipliers of mean 1.

# %%
if cal is not None:
    display(cal.rates.sort("exchanges", descending=True).head(8))

# %%
if cal is not None:
    display(
        alt.Chart(cal.hourly, title=f"Arrival profile over the day ({TZ}): rate multiplier")
        .mark_bar()
        .encode(
            x=alt.X("hour:O", title="local hour"),
            y=alt.Y("multiplier:Q", title="× the mean rate"),
            tooltip=[
                "hour:O",
                "exchanges:Q",
                alt.Tooltip("exposure_h:Q", format=".1f"),
                alt.Tooltip("multiplier:Q", format=".2f"),
            ],
        )
        .properties(width=520, height=200)
    )

# %% [markdown]
# **Run time per target agent.** The time from the send to the first reply is the target's
# run — plus any wait behind work already on its session. With tasks on, work sessions keep
# one conversation id per agent pair, so exchanges overlap and most sends find the session
# busy. Two corrections make it the run alone:
#
# - *Queueing taken out.* A session runs one message at a time, first come first served
#   (under `lanes` a run also waits for a slot of the gateway-wide `nested` pool).
#   Every run the log shows — first replies, ping-pong turns on either side, announce steps —
#   is a job on a session with a request time and, mostly, an end. A run starts at its send or
#   when the last earlier run on the session ends; the fit uses only runs whose start the log
#   tells for sure. Runs that end unseen — a requester that got no reply or was refused by the
#   gate does not cancel the run, a timed-out turn goes on, the announce step outlives the
#   complete — hold the session until a later run there has ended.
# - *Censoring.* An exchange that timed out (`no_reply`, reason `timeout`) says the run took
#   longer than the rest of the 300 s wait: it enters the maximum-likelihood fit
#   (`scipy.stats.CensoredData`) as *right-censored* instead of being dropped, which would make
#   agents look faster than they are. Runs that ended in an error say nothing of their length.
#
# Per target, the family of least AIC (exponential, gamma or lognormal: `family`), with a 95 %
# profile-likelihood interval on the mean (`mean_lo`–`mean_hi`); agents with fewer than 8
# usable replies get the fit pooled over all targets (*in the sample* every agent has enough:
# the sub-agents reply to the main agents' delegations).

# %%
if cal is not None:
    served = cal.service.filter(pl.col("exchanges") > 0)
    display(with_fit(served, "agent", "exchanges", "idle", "observed", "censored"))

# %% [markdown]
# On every exchange, from the send, the fit would read the waits as run time:

# %%
if cal is not None:
    naive = fit_log(events, only_idle=False).service
    queueing = (
        cal.service.join(naive, on="agent", suffix="_all")
        .filter(pl.col("exchanges") > 0)
        .select(
            "agent",
            pl.col("mean_s").round(1).alias("mean_s (queueing out)"),
            pl.col("mean_s_all").round(1).alias("mean_s (all)"),
        )
    )
    display(queueing)

# %%
if cal is not None:
    inflation = (queueing["mean_s (all)"] / queueing["mean_s (queueing out)"] - 1).to_numpy()
    display(
        Markdown(
            f"Fitted on every exchange from its send, the agents' mean run times would come out "
            f"{inflation.min():+.0%} to {inflation.max():+.0%} off; the correction uses "
            f"{int(cal.service['observed'].sum())} replies and {int(cal.service['censored'].sum())} timeouts "
            f"of {cal.exchanges.height} exchanges."
        )
    )

# %% [markdown]
# **Ping-pong turns.** Each turn is a run too, on the requester's session for odd turns and
# the target's for even ones: its time (previous reply → turn reply) per speaking agent, from
# turns whose start the log tells, censored at the 120 s turn timeout; and per turn the chance
# of each early ending — its count over the turns that could have ended so. The message mix
# (intents, payload types) comes from the log too: it decides each exchange's turn budget by
# the reference rules.

# %%
if cal is not None:
    display(
        with_fit(cal.turn_times.filter(pl.col("fit") == "agent"), "agent", "observed", "censored")
    )

# %%
if cal is not None:
    display(cal.turns.with_columns(pl.col("probability").round(3)))

# %% [markdown]
# **Failures and retries.** A run that fails (runtime §4) ends its exchange in `no_reply` with
# the error as its reason: its chance per run is the count over the runs seen to end. An
# `agent.wait` call that fails and is retried leaves an `a2a.retry` event with its error code:
# its chance per call is the count over the calls the waits imply. The twin injects both
# (`FailurePolicy`) and retries as the reference does.

# %%
if cal is not None:
    display(cal.failures.with_columns(pl.col("rate").round(4)))

# %% [markdown]
# **Tasks.** Agents work through tasks (`task.started` … `task.completed` or `task.cancelled`);
# every message sent during a task carries its work session, and the reference reuses one
# conversation id per work session and agent pair. The twin draws task durations (lognormal;
# a task that never ends in the log is censored at its last event) and the gaps between an
# agent's tasks from the log.

# %%
if cal is not None:
    tasks = twin.tasks
    display(
        Markdown(
            f"{cal.tasks.height} tasks, {int(cal.tasks['end_time'].is_null().sum())} never ended: the twin's tasks last "
            f"{tasks.mean_duration_s / 3600:.1f} h on average (CV {tasks.duration_cv:.2f}) with "
            f"{tasks.mean_gap_s / 3600:.1f} h between an agent's tasks; run by {tasks.agents} agents."
            if tasks is not None
            else "The log has no tasks: the twin runs without them."
        )
    )

# %% [markdown]
# **Outcomes** per target, for reference.

# %%
if cal is not None:
    display(
        cal.outcomes.with_columns(
            pl.col("replied", "timeout", "error", "blocked", "incomplete").round(3)
        )
    )

# %% [markdown]
# ## 2. Does the twin behave like the log?
#
# Five replications of the twin — the log's span, today's policies, tasks, failures and
# retries as fitted — go through the same analysis as the log (`compare`: `conversations`,
# spawns left out) and are held against it.

# %%
if cal is not None:
    cmp = compare([simulate(twin, seed=k) for k in range(5)], events)
    display(
        cmp.overall.select(
            "observed",
            "simulated",
            pl.col("^(observed|simulated)_p(50|95)$").round(1),
            pl.col("ks").round(3),
            pl.col("median_ratio").round(3),
        )
    )

# %%
if cal is not None:
    display(cmp.outcomes.with_columns(pl.col("observed", "simulated").round(3)))

# %%
if cal is not None:
    row = cmp.overall.row(0, named=True)
    shares = {o: (a, b) for o, a, b in cmp.outcomes.iter_rows()}
    no_reply = shares.get("no_reply", (0.0, 0.0))
    p95_ratio = row["simulated_p95"] / row["observed_p95"]
    display(
        Markdown(
            f"**What the comparison says.** Median first-reply latency: log {row['observed_p50']:.1f} s, twin "
            f"{row['simulated_p50']:.1f} s ({cmp.median_ratio - 1:+.1%}); p95: log {row['observed_p95']:.1f} s, twin "
            f"{row['simulated_p95']:.1f} s ({p95_ratio - 1:+.1%}); KS statistic {row['ks']:.3f} over "
            f"{row['observed']} and {row['simulated']} replies. No reply: log {no_reply[0]:.1%}, twin {no_reply[1]:.1%} "
            f"({(no_reply[1] - no_reply[0]) * 100:+.1f} points)."
        )
    )

# %% [markdown]
# Per pair (the busiest ones; a KS statistic needs 5 replies on each side):

# %%
if cal is not None:
    display(
        cmp.latency.sort("observed", descending=True)
        .head(8)
        .select(
            "from_agent",
            "to_agent",
            "observed",
            "simulated",
            pl.col("observed_p50", "simulated_p50", "observed_p95", "simulated_p95").round(1),
            pl.col("ks", "ks_pvalue").round(3),
        )
    )

# %%
if cal is not None:
    display(cmp.chart())

# %% [markdown]
# Turns per replied exchange. The simulator ends a ping-pong loop with the same chance at
# every turn, fitted to the log's average ending rate; where the log's exchanges that survive
# the first turns tend to run their full budget, the twin's turn counts spread differently:

# %%
if cal is not None:
    display(cmp.turns.with_columns(pl.col("observed_share", "simulated_share").round(3)))

# %%
if cal is not None:
    mean_turns = cmp.turns.select(
        (pl.col("turns") * pl.col(f"{side}_share")).sum().alias(side)
        for side in ("observed", "simulated")
    ).row(0)
    display(
        Markdown(
            f"Turns KS statistic {cmp.turns_ks:.3f}: mean turns per replied exchange {mean_turns[0]:.2f} in the log, "
            f"{mean_turns[1]:.2f} in the twin."
        )
    )

# %% [markdown]
# ## 3. What-ifs
#
# Each scenario is a point of one `sweep`: a grid point changes the twin by dotted paths into
# its configuration (`rate_scale` multiplies every arrival rate), and every point runs the
# *same* replications — common random numbers: message by message the same draws of sender,
# text, run time and reply — so differences between scenarios are mostly the scenarios' own.
# 95 % confidence intervals over 3 replications, each as long as the log. The topology
# scenario runs the twin under the other queueing topology (`lanes` or `agent_main`,
# whichever the log did not show).

# %%
if cal is not None:
    other = "agent_main" if twin.topology == "lanes" else "lanes"
    slower = {f"agents.{i}.service.mean_s": a.service.mean * 1.5 for i, a in enumerate(twin.agents)}
    scenarios = [
        {},  # today
        {"rate_scale": 2.0},  # twice the traffic
        {"rate_scale": 8.0},  # eight times the traffic
        {"topology": other},  # the other queueing topology
        {"wait.max_wait_s": 600.0},  # wait ten minutes instead of five
        slower,  # runs take 50 % longer
    ]
    names = ["today", "traffic ×2", "traffic ×8", f"topology {other}", "wait 600 s", "runs ×1.5"]
    metrics = ["p50_latency_s", "p95_latency_s", "mean_wait_s", "no_reply_rate"]
    whatif = sweep(
        twin,
        scenarios,
        RunOptions(replications=3, seed=7, workers=1, progress=False),
        metrics=metrics,
    )
    whatif = whatif.select(
        pl.Series("scenario", names), *[pl.col(f"^{m}(_low|_high)?$") for m in metrics]
    )
    display(whatif.with_columns(pl.exclude("scenario").round(3)))

# %%
if cal is not None:
    display(
        alt.Chart(whatif, title="p95 first-reply latency per scenario (95 % CI)")
        .mark_errorbar(ticks=True)
        .encode(
            y=alt.Y("scenario:N", sort=names, title=None),
            x=alt.X("p95_latency_s_low:Q", title="seconds"),
            x2="p95_latency_s_high:Q",
        )
        + alt.Chart(whatif)
        .mark_point(filled=True, size=60)
        .encode(
            y=alt.Y("scenario:N", sort=names),
            x="p95_latency_s:Q",
            tooltip=["scenario:N", alt.Tooltip("p95_latency_s:Q", format=".1f")],
        )
    )

# %% [markdown]
# **How much more traffic fits?** `capacity_search` finds, for each replication, the highest
# multiple of today's traffic at which p85 first-reply latency stays within 240 s — a message
# that gets no reply counts as infinitely late — by bisection on that replication's own draws
# (common random numbers: message k keeps its draws at any rate), and reports the mean over
# replications with its confidence interval. A bisection only knows that each replication's
# capacity lies between the last scale that met the target and the first that missed it, so
# the interval spans that bracket as well as the spread between replications: replications
# that end in the same bracket give the bracket, not a zero-width interval. The twin carries
# the log's failures, so some messages get no reply at any load — *in the sample* about 5 %
# of them (the `no_reply_rate` of the `today` row above, with its interval) — so p95 could
# miss any target at any load; the search holds p85.
# To keep the notebook quick, one day of traffic per run, three replications and a 10 %
# bracket.

# %%
if cal is not None:
    one_day = twin.model_copy(update={"duration_s": 86400.0})
    cap = capacity_search(
        one_day,
        target_latency_s=240.0,
        target_quantile=0.85,
        options=RunOptions(replications=3, seed=1, workers=1, progress=False),
        search=SearchOptions(rel_tol=0.10, start_scale=4.0),
    )
    print(cap)
    display(
        cap.replications.with_columns(
            pl.col("scale", "scale_above", "quantile_at_scale", "rate_per_s").round(4)
        )
    )

# %%
if cal is not None:
    today = whatif.row(0, named=True)
    topo = whatif.filter(pl.col("scenario") == f"topology {other}").row(0, named=True)
    display(
        Markdown(
            f"**Takeaways.** Today the twin's p95 first-reply latency is {today['p95_latency_s']:.0f} s "
            f"(95 % CI {today['p95_latency_s_low']:.0f}–{today['p95_latency_s_high']:.0f} s; replied messages). "
            f"p85 over all messages, an unanswered one counting as infinitely late, stays within "
            f"{cap.target_latency_s:.0f} s up to {cap.scale:.1f} × today's traffic "
            f"({cap.level:.0%} CI {cap.scale_low:.1f}–{cap.scale_high:.1f} ×, {cap.rate_per_s * 3600:.0f} exchanges an hour). "
            f"Run as `{other}` instead of `{twin.topology}`, the twin's p95 is {topo['p95_latency_s']:.0f} s "
            f"(95 % CI {topo['p95_latency_s_low']:.0f}–{topo['p95_latency_s_high']:.0f} s) and its mean queue wait "
            f"{topo['mean_wait_s']:.1f} s against {today['mean_wait_s']:.1f} s."
        )
    )

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
