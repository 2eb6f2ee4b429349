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
# # 04 · Log health, safety-limit replay and process mining
#
# Before trusting any number from a log, check the log. This notebook runs a2a_lab's health
# rules — exchange sequences, task lifecycles, clocks, ids — replays the gateway's safety
# limits on the recorded traffic ("what would the loop guard have blocked?"), and hands the
# log to process-mining tools as a directly-follows graph and an OCEL 2.0 file.
#
# The same checks gate a CI pipeline: `a2a-lab check LOGS --json --fail-on error` exits with
# status 1 when an error-level finding exists.

# %%
import tempfile
from pathlib import Path

import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab import plots
from a2a_lab.analysis.checks import RULES, check, replay_guard
from a2a_lab.analysis.pm import directly_follows, variants, write_ocel2
from a2a_lab.views.notebook import setup

LOGS = setup()
res = al.load(LOGS)
events = res.events
# the clock for "future timestamp" findings: explicit, so the stored outputs stay stable
# (a log without events has no last event: then the clock starts at 0)
NOW = int(events["event_ms"].max() or 0) + 3_600_000
res.report

# %% [markdown]
# ## 1. The rules
#
# Every rule has an id, a severity and a definition; findings name the file and the physical
# line numbers of the events involved, so you can open the log right there.

# %%
pl.DataFrame(
    [{"rule": r.id, "severity": r.severity, "what it finds": r.description} for r in RULES.values()]
)

# %% [markdown]
# ## 2. Findings on this log

# %%
findings = check(events, now=NOW)
summary = (
    findings.group_by("rule", "severity")
    .agg(pl.len().alias("findings"), pl.col("lines").list.len().sum().alias("events"))
    .sort(["findings", "rule"], descending=[True, False])
)
if findings.is_empty():
    display(Markdown("**Nothing to show:** no rule finds anything on this log."))
else:
    by_severity = dict(findings.group_by("severity").len().iter_rows())
    display(
        Markdown(
            f"{findings.height} findings on {events.height} events: "
            + ", ".join(f"{by_severity.get(s, 0)} {s}" for s in ("error", "warning", "info"))
            + f"; the most frequent rule is `{summary['rule'][0]}` ({summary['findings'][0]})."
        )
    )
summary

# %%
alt.Chart(summary, title="Findings per rule").mark_bar().encode(
    x=alt.X("findings:Q"),
    y=alt.Y("rule:N", sort="-x", title=None),
    color=alt.Color(
        "severity:N",
        # the severities of this log only, each in its fixed colour
        scale=plots.color_scale(plots.SEVERITY_COLORS, summary["severity"].unique().to_list()),
    ),
    tooltip=["rule", "severity", "findings", "events"],
)

# %% [markdown]
# ### A few findings explained
#
# **`a2a.missing_complete`** — an exchange that never closed. Looking at what else the log says
# about the same conversation usually tells why (*in the sample*, the only one is the exchange
# still running when the log was read: its send, near the end of the live file, is its
# conversation's only event). Here the first one of this log, with every event of its
# conversation:

# %%
missing = findings.filter(pl.col("rule") == "a2a.missing_complete")
first = missing.row(0, named=True) if missing.height else None
if first is None:
    display(Markdown("**Nothing to show:** every exchange of this log has its `a2a.complete`."))
first

# %%
if first is not None:
    conv_id = events.filter(pl.col("line") == first["lines"][0], pl.col("file") == first["file"])[
        "data"
    ].struct.field("conversationId")[0]
    d = pl.col("data").struct
    display_cols = [
        "line",
        "type",
        d.field("fromAgent").alias("from"),
        d.field("toAgent").alias("to"),
        d.field("status"),
        d.field("replyPreview").str.slice(0, 60).alias("text"),
    ]
    print(events.filter(d.field("conversationId") == conv_id).select(display_cols))

# %% [markdown]
# **`a2a.turns_out_of_order`** and **`a2a.event_after_complete`** find turns and events that do
# not fit their exchange. Exchanges in the same direction on one conversation id often overlap
# (the reference reuses the id per work session and pair); they are told apart first
# (`a2a_lab.exchanges`: run ids, refusal timing, first come first served, turn chains), so
# overlap alone raises nothing here. Where the log truly cannot tell two exchanges apart, the
# conversation table marks them `ambiguous` instead — a reason to give every event of an
# exchange its run id in the emitter.

# %%
findings.filter(
    pl.col("rule").is_in(["a2a.turns_out_of_order", "a2a.event_after_complete"])
).select("rule", "conversation_id", "lines", "message")

# %% [markdown]
# ## 3. What would the safety limits have done?
#
# The loop guard allows at most N messages per unordered agent pair in any sliding window
# (a blocked message is not recorded). Today's live call site uses **6 per 60 s**; the
# library's own default is **10 per 60 s**. Replaying both (and a stricter 3 per 60 s) on the
# recorded sends and ping-pong turns shows how much legitimate traffic each would stop.

# %%
rows = []
for limit, window in [(3, 60), (6, 60), (10, 60)]:
    rep = replay_guard(events, limit=limit, window_s=window)
    blocked = rep.filter(pl.col("blocked"))
    rows.append(
        {
            "guard": f"{limit} / {window} s",
            "messages": rep.height,
            "blocked": blocked.height,
            "pairs hit": blocked["pair"].n_unique(),
            "first trigger": None
            if blocked.height == 0
            else blocked.sort("event_ms")["event_ms"][0],
        }
    )
guard_table = pl.DataFrame(rows).with_columns(
    (pl.col("blocked") / pl.col("messages")).round(4).alias("share blocked"),
    pl.col("first trigger").cast(pl.Int64).cast(pl.Datetime("ms", "UTC")),
)
guard_table

# %% [markdown]
# How close does real traffic come to the limit? For every counted message, the number of
# messages of its pair in the 60 s before it (itself included): the loop guard fires when this
# would exceed the limit.

# %%
rep = replay_guard(events, limit=10_000, window_s=60)
in_window = (
    rep.sort("pair", "event_ms")
    .with_columns(pl.col("event_ms").cast(pl.Int64).cast(pl.Datetime("ms")).alias("t"))
    .rolling("t", period="60s", closed="both", group_by="pair")
    .agg(pl.len().alias("messages_in_60s"))
    .group_by("messages_in_60s")
    .len("messages")
    .sort("messages_in_60s")
)
if in_window.height:
    # bars from 1 on a log scale (a bar from 0 has no length there); rules between N and N+1:
    # a limit of N lets the N-th message of a window through and blocks the next
    bars = in_window.with_columns(
        (pl.col("messages_in_60s") - 0.4).alias("x0"),
        (pl.col("messages_in_60s") + 0.4).alias("x1"),
        pl.lit(1).alias("base"),
    )
    limits = pl.DataFrame({"limit": ["6 / 60 s (today)", "10 / 60 s (library)"], "x": [6.5, 10.5]})
    x_max = max(int(in_window["messages_in_60s"].max()), 10) + 1
    x_scale = alt.Scale(domain=[0.5, x_max + 0.5], nice=False)
    chart = alt.layer(
        alt.Chart(bars)
        .mark_bar()
        .encode(
            x=alt.X(
                "x0:Q",
                scale=x_scale,
                title="messages of the pair in the last 60 s",
                axis=alt.Axis(tickMinStep=1),
            ),
            x2="x1:Q",
            y=alt.Y(
                "messages:Q", scale=alt.Scale(type="log", domainMin=1), title="messages (log scale)"
            ),
            y2="base:Q",
            tooltip=["messages_in_60s", "messages"],
        ),
        alt.Chart(limits)
        .mark_rule(color="#e45756", strokeDash=[4, 3])
        .encode(x="x:Q", tooltip=["limit"]),
        alt.Chart(limits)
        .mark_text(align="left", dx=3, dy=-4, color="#e45756", baseline="top")
        .encode(x="x:Q", y=alt.value(0), text="limit:N"),
    ).properties(title="Messages of the same pair within 60 s (per counted message)", width=480)
    display(chart)
else:
    display(
        Markdown("**Nothing to show:** the log has no A2A message for the loop guard to count.")
    )

# %% [markdown]
# ## 4. The process, mined
#
# With the work session as the case, the directly-follows graph shows how work flows: which
# event directly follows which, how often (row = activity, column = what follows it).

# %%
dfg = directly_follows(events, case="work_session")
# a short log has few repeated steps: keep the threshold at 5 where that leaves a graph
min_count = 5 if dfg.filter(pl.col("count") >= 5).height else 1
if dfg.height:
    display(
        plots.dfg_chart(
            dfg,
            min_count=min_count,
            title=f"Directly-follows graph (case = work session, steps seen ≥ {min_count} times)",
        )
    )
else:
    display(Markdown("**Nothing to show:** no event of this log belongs to a work session."))

# %% [markdown]
# With the conversation as the case, the variants are the shapes an exchange takes — the
# most common first:

# %%
shapes = variants(events, case="conversation")
if shapes.is_empty():
    display(Markdown("**Nothing to show:** the log has no conversation."))
shapes.select("variant", "length", "cases", pl.col("share").round(3)).head(8)

# %% [markdown]
# ## 5. Hand-off to process-mining tools
#
# `write_ocel2` writes an OCEL 2.0 object-centric log — objects: work sessions,
# conversations, tasks, agents, log files — that PM4Py (`pm4py.read_ocel2_json`), OCPM tools
# and Celonis read.

# %%
out = Path(tempfile.mkdtemp()) / "coordination.jsonocel"
write_ocel2(events, out)
import json  # noqa: E402

doc = json.loads(out.read_text(encoding="utf-8"))
{
    "events": len(doc["events"]),
    "objects": len(doc["objects"]),
    "relations": sum(len(e["relationships"]) for e in doc["events"]),
    "object types": [t["name"] for t in doc["objectTypes"]],
}
