# %% [markdown]
# Cells for notebooks/05_capacity_whatif.py (issue 8), to be merged after its section 3.
# They use `sim`, `SEED` and `hub(rate_per_s, concurrency)` from the cells above; the
# function `sweep` is imported as `sweep_grid` because section 3 already names a frame
# `sweep`. (Kept out of notebooks/ until merged: every notebooks/*.py is a notebook.)

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

from a2a_lab.sim.sweep import capacity_search, sweep as sweep_grid

unit = hub(1 / 40.0, 1)  # 4 senders → eden at 1/40 messages per second: utilisation 1 at one slot
points = [
    {"rate_scale": u * c, "agents.4.session_concurrency": c}
    for c in (1, 2)
    for u in (0.3, 0.5, 0.7, 0.85)
]
curve = sweep_grid(
    unit, points, replications=3, seed=SEED, metrics=["p95_latency_s", "p95_sojourn_s", "no_reply_rate"],
    workers=1, progress=False,
)
curve = curve.with_columns(
    (pl.col("rate_scale") / pl.col("agents.4.session_concurrency")).round(2).alias("utilisation"),
    (pl.col("rate_scale") * 60 / 40.0).round(2).alias("messages per minute"),
    pl.col("agents.4.session_concurrency").cast(pl.String).alias("session concurrency"),
)
curve.select(
    "session concurrency", "utilisation", "messages per minute",
    pl.col("^p95_sojourn_s.*$").round(1), pl.col("^no_reply_rate.*$").round(4),
)

# %%
band = alt.Chart(curve).mark_area(opacity=0.25).encode(
    x=alt.X("messages per minute:Q"),
    y=alt.Y("p95_sojourn_s_low:Q", scale=alt.Scale(type="log"), title="p95 send → run done (s, log scale)"),
    y2="p95_sojourn_s_high:Q",
    color=alt.Color("session concurrency:N"),
)
mean = alt.Chart(curve).mark_line(point=True).encode(
    x="messages per minute:Q",
    y=alt.Y("p95_sojourn_s:Q", scale=alt.Scale(type="log")),
    color="session concurrency:N",
    tooltip=["session concurrency:N", "utilisation:Q", alt.Tooltip("p95_sojourn_s:Q", format=".1f"),
             alt.Tooltip("p95_sojourn_s_low:Q", format=".1f"), alt.Tooltip("p95_sojourn_s_high:Q", format=".1f")],
)
(band + mean).properties(title="eden: p95 sojourn against the arrival rate, 95 % CI over 3 replications")

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
    sim.presets.mm1(0.5, 1.0, n_messages=4000), target_latency_s=target, target_quantile=0.95,
    replications=5, seed=SEED, rel_tol=0.01, level=0.99, workers=1, progress=False,
)
exact = 1.0 - math.log(20.0) / target
print(mm1_cap)
print(f"theory: {exact:.4f}/s, inside the 99 % interval: {mm1_cap.rate_low <= exact <= mm1_cap.rate_high}")

# %% [markdown]
# Now `eden` with one and with two session slots:

# %%
capacity = []
for c in (1, 2):
    cap = capacity_search(
        hub(0.5 * c / 40.0, c), target_latency_s=180.0, target_quantile=0.95, replications=3, seed=SEED,
        rel_tol=0.05, workers=1, progress=False,
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
