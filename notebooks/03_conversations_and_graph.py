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
# # 03 · Conversations and the agent interaction graph
#
# The dashboard groups events into work sessions; it does not say how each agent-to-agent
# exchange went. This notebook answers the questions it cannot:
#
# 1. How does each exchange end — a reply, no reply, refused by the concurrency gate?
# 2. Which requester → target pairs are slow, and which targets leave questions unanswered?
# 3. What did the structured hand-offs (delegations, questions) achieve?
# 4. Who talks to whom — and who sits in the middle?

# %%
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab import plots
from a2a_lab.analysis.conversations import (
    conversations,
    delegation_reports,
    pair_stats,
    payload_events,
    question_answers,
    status_timeline,
    target_stats,
)
from a2a_lab.analysis.graph import graph_metrics, interaction_graph
from a2a_lab.enrich import enrich
from a2a_lab.views.notebook import setup

LOGS = setup()
events = enrich(al.load(LOGS).events)
conv = conversations(events)
print(f"{events.height} events → {conv.height} exchanges")
if conv.is_empty():
    display(
        Markdown(
            "**Nothing to show** in sections 1–2: the log has no A2A exchange (`a2a.send` … "
            "`a2a.complete`); their tables and charts stay empty."
        )
    )

# %% [markdown]
# ## 1. One row per exchange
#
# An exchange is one `sessions_send`: the `a2a.send`, the target's reply, the ping-pong turns,
# retries and the closing `a2a.complete`. The reference reuses a conversation id for every
# exchange of a work session and agent pair, so a conversation id can hold several exchanges
# (`exchange` counts them) and they may overlap. Each event is matched to its send with what
# the log carries (`runId` on sends and retries, the gate's 30 s refusal, the target session's
# first come first served order, turn chains, completes); where the log cannot tell two
# exchanges apart the row says so (`ambiguous`).

# %%
conv.select(
    "conversation_id",
    "exchange",
    "from_agent",
    "to_agent",
    "start_time",
    pl.col("first_reply_s").round(1),
    "turns",
    "outcome",
    "outcome_reason",
    "retries",
    "intent",
).head(8)

# %% [markdown]
# How exchanges end (runtime §3b): **replied**; **no_reply** — the message was delivered but no
# answer came within the wait (`대기 시간 300초 초과` = waited more than 300 s), or the run
# failed; **concurrency_blocked** — the target already ran as many A2A flows as its gate
# allows (3 by default; *in the sample* 1) and the permit did not come within 30 s;
# **incomplete** — no `a2a.complete` in the log (still running, or lost).

# %%
conv.group_by("outcome", "outcome_reason").len("exchanges").sort(
    ["exchanges", "outcome", "outcome_reason"], descending=[True, False, False], nulls_last=True
)

# %% [markdown]
# How far the table can be trusted: exchanges the log cannot tell apart, orphans (events whose
# send is not in the log) and the outcome counts.

# %%
al.exchange_summary(conv)

# %%
if conv.height:
    replied = (conv["outcome"] == "replied").mean()
    display(plots.outcome_bars(conv))
    display(
        Markdown(
            f"{replied:.0%} of the {conv.height} exchanges got a reply; "
            f"{(conv['outcome'] == 'no_reply').sum()} got none and "
            f"{(conv['outcome'] == 'concurrency_blocked').sum()} were refused by the concurrency gate."
        )
    )
else:
    display(Markdown("**Nothing to show:** no exchange, no outcome."))

# %% [markdown]
# ## 2. Who is slow, who does not answer
#
# First-reply latency is send → first reply (exchanges without a reply have none). The box
# shows the middle half, the whiskers 5 %–95 %, the tick the median — per directed pair.

# %%
if conv["first_reply_s"].is_not_null().any():
    display(plots.latency_by_pair(conv, top=15))
else:
    display(
        Markdown(
            "**Nothing to show:** no exchange of this log got a reply, so there is no latency."
        )
    )

# %%
slowest = (
    pair_stats(conv)
    .filter(pl.col("replied") >= 3)
    .sort(["p95_first_reply_s", "from_agent", "to_agent"], descending=[True, False, False])
)
slowest.select(
    "from_agent",
    "to_agent",
    "exchanges",
    "replied",
    "no_reply",
    pl.col("p50_first_reply_s").round(1).alias("p50_s"),
    pl.col("p95_first_reply_s").round(1).alias("p95_s"),
    pl.col("no_reply_rate").round(3),
    pl.col("mean_turns").round(2),
).head(10)

# %% [markdown]
# Per target agent: which agents leave their requesters waiting? A high no-reply rate on a main
# agent usually means its session is saturated (one message at a time, FIFO).

# %%
target_stats(conv).select(
    "to_agent",
    "exchanges",
    "no_reply",
    "concurrency_blocked",
    pl.col("no_reply_rate").round(3),
    pl.col("p95_first_reply_s").round(1).alias("p95_s"),
).head(10)

# %%
plots.pair_heatmap(conv, value="no_reply_rate") if conv.height else Markdown(
    "**Nothing to show:** no exchange."
)

# %% [markdown]
# Load by hour of day: exchanges started per hour the log covered (a log rarely covers
# each hour of the day equally often), and the median first reply, in the display time zone
# (`$A2A_LAB_TZ`, else UTC).

# %%
import altair as alt

from a2a_lab.time import hour_exposure
from a2a_lab.views.notebook import display_timezone

TZ = display_timezone()
starts = conv["start_time"].drop_nulls() if conv.height else pl.Series([], dtype=pl.Datetime)
lo = starts.min().timestamp() * 1000 if starts.len() else 0.0
hi = starts.max().timestamp() * 1000 if starts.len() else 0.0
if hi - lo >= 3_600_000:
    covered = pl.DataFrame(
        {"hour": list(range(24)), "hours covered": hour_exposure(lo, hi, TZ).round(2)},
        schema={"hour": pl.Int8, "hours covered": pl.Float64},
    )
    by_hour = (
        covered.join(
            conv.with_columns(hour=pl.col("start_time").dt.convert_time_zone(TZ).dt.hour())
            .group_by("hour")
            .agg(
                pl.len().alias("exchanges"),
                pl.col("first_reply_s").median().alias("median_reply_s"),
            ),
            on="hour",
            how="left",
        )
        .with_columns(pl.col("exchanges").fill_null(0))
        .with_columns(
            pl.when(pl.col("hours covered") > 0)
            .then(pl.col("exchanges") / pl.col("hours covered"))
            .round(2)
            .alias("exchanges per hour covered")
        )
        .sort("hour")
    )
    display(
        alt.Chart(
            by_hour, title=f"Exchanges per hour covered and median first reply, by hour ({TZ})"
        )
        .mark_bar()
        .encode(
            x=alt.X("hour:O", title=f"hour ({TZ})"),
            y="exchanges per hour covered:Q",
            color=alt.Color(
                "median_reply_s:Q",
                title="median first reply (s)",
                scale=alt.Scale(scheme="oranges"),
            ),
            tooltip=[
                "hour",
                "exchanges",
                "hours covered",
                "exchanges per hour covered",
                alt.Tooltip("median_reply_s:Q", format=".1f"),
            ],
        )
    )
    display(
        Markdown(
            f"The exchanges span {(hi - lo) / 3_600_000:.1f} hours: each hour of the day was "
            f"covered between {by_hour['hours covered'].min():.1f} and "
            f"{by_hour['hours covered'].max():.1f} times (the first and last days are partial); "
            "the bars divide by that."
        )
    )
else:
    display(
        Markdown(
            "**Nothing to show:** no exchange."
            if not starts.len()
            else f"**Nothing to show:** the exchanges start within {(hi - lo) / 60_000:.0f} "
            "minutes, less than an hour: no time of day to compare."
        )
    )

# %% [markdown]
# ## 3. Structured hand-offs
#
# Messages may carry a typed payload (runtime §8). Invalid payloads fall back to free text;
# here is why they failed:

# %%
payloads = payload_events(events)
if payloads.is_empty():
    display(
        Markdown(
            "**Nothing to show** in section 3: no message of this log carries a typed payload."
        )
    )
payloads.group_by("payload_kind", "payload_valid").len("events").sort(
    "payload_kind", "payload_valid"
)

# %%
payloads.filter(~pl.col("payload_valid")).select(
    "line",
    "payload_type",
    "payload_kind",
    pl.col("payload_errors").list.join("; ").str.slice(0, 90).alias("errors"),
).head(8)

# %% [markdown]
# **Unanswered questions** (a `question` payload with no `answer` of the same `questionId`):

# %%
qa = question_answers(payloads)
qa.filter(~pl.col("answered")).select("question_id", "asked_by", "asked_to", "asked")

# %% [markdown]
# The slowest answers, and answers whose question is not in the log as a *valid* question
# payload (the question was sent as free text or failed validation):

# %%
qa.filter(pl.col("answered") & pl.col("asked_time").is_not_null()).select(
    "question_id",
    "asked_by",
    "answered_by",
    (pl.col("answer_latency_s") / 60).round(1).alias("answer_min"),
).sort(["answer_min", "question_id"], descending=[True, False]).head(5)

# %%
qa.filter(pl.col("asked_time").is_null()).select("question_id", "answered_by", "answers")

# %% [markdown]
# **Delegations and their status reports** (linked by `taskId`): the last status, progress and
# the blockers reported on the way. A task delegated twice is a duplicate (the taskId is the
# retry dedupe key).

# %%
delegations = delegation_reports(payloads)
delegations.select(
    "task_id",
    "delegated_by",
    "delegated_to",
    "delegations",
    "reports",
    "last_status",
    "last_progress",
    "blockers",
    "duplicate",
).head(10)

# %%
timeline = status_timeline(payloads).filter(pl.col("progress").is_not_null())
# aggregated, not one unlabelled line per task: how many reports, at what progress, when
if timeline.height:
    n_tasks = timeline["task_id"].n_unique()
    # hours over a day or two, days over a longer log: a few dozen columns either way
    span = timeline["report_time"].max() - timeline["report_time"].min()
    unit, unit_name, unit_format = (
        ("utcyearmonthdatehours", "hour", "%m-%d %H:00")
        if span.days < 3
        else ("utcyearmonthdate", "day", "%m-%d")
    )
    display(
        alt.Chart(
            timeline,
            title=f"Progress reports of {n_tasks} delegated tasks: how many, when, how far",
        )
        .mark_rect()
        .encode(
            x=alt.X(
                f"{unit}(report_time):T",
                title=f"{unit_name} (UTC)",
                axis=alt.Axis(format=unit_format),
            ),
            y=alt.Y(
                "progress:Q",
                bin=alt.Bin(step=10, extent=[0, 100]),
                title="reported progress %",
                axis=alt.Axis(values=list(range(0, 101, 10))),
            ),
            color=alt.Color(
                "count():Q", title="reports", scale=alt.Scale(scheme="blues", domainMin=0)
            ),
            tooltip=[
                alt.Tooltip("count():Q", title="reports"),
                alt.Tooltip("distinct(task_id):Q", title="tasks"),
            ],
        )
        .properties(width=480, height=220)
    )
else:
    display(Markdown("**Nothing to show:** the log has no status report with a progress."))

# %% [markdown]
# ## 4. Who talks to whom
#
# A graph of a few agents and edges is drawn as nodes and arrows: agents on a circle (blue:
# configured main agents, orange: agents that only run as spawned sub-agents), an arrow per
# requester → target, as wide as its messages and as red as its no-reply share, dashed for
# delegations (`a2a.spawn`). Past 40 edges between agents, or 3 per agent, arrows cross
# everywhere and no edge can be followed (`plots.legible_as_node_link`), so the graph is
# shown as a requester × target matrix instead: every edge is a cell, agents are ordered
# by community (networkx's greedy modularity: groups with more traffic among themselves than
# chance would give), each community a shaded block on the diagonal. `plots.graph_view` chooses; the sentence under the
# chart says which one this log got.

# %%
main_agents = (
    al.main_agents_from_openclaw(LOGS / "openclaw.json")
    if (LOGS / "openclaw.json").exists()
    else None
)
g = interaction_graph(events, main_agents=main_agents)
between = sum(1 for a, b in g.edges if a != b)
print(
    f"{g.number_of_nodes()} agents, {g.number_of_edges()} directed edges ({between} between two agents)"
)
if g.number_of_edges():
    display(plots.graph_view(g, top_edges=40))
    if plots.legible_as_node_link(g):
        display(
            Markdown(
                f"A node-link drawing: {between} edges between {g.number_of_nodes()} agents "
                f"stay legible (at most {plots.LEGIBLE_EDGES}, and "
                f"{plots.LEGIBLE_EDGES_PER_AGENT:g} per agent)."
            )
        )
    else:
        groups = [c for c in plots.graph_communities(g) if len(c) > 1]

        def inside_share(members: list[str]) -> float:
            # of the messages a community's agents send or receive (self-loops aside), the
            # share exchanged among themselves
            touching = [
                (a, b, d["messages"])
                for a, b, d in g.edges(data=True)
                if a != b and (a in members or b in members)
            ]
            total = sum(w for _, _, w in touching)
            return sum(w for a, b, w in touching if a in members and b in members) / total

        described = "; ".join(
            f"{len(c)} agents ({', '.join(c[:4])}{', …' if len(c) > 4 else ''}), "
            f"{inside_share(c):.0%} of their messages among themselves"
            for c in groups
        )
        display(
            Markdown(
                f"A matrix: {between} edges between {g.number_of_nodes()} agents are more than "
                f"a drawing keeps apart (at most {plots.LEGIBLE_EDGES}, and "
                f"{plots.LEGIBLE_EDGES_PER_AGENT:g} per agent). Rows and columns follow "
                f"{len(groups)} communities of more than one agent (shaded; greedy modularity: "
                f"more traffic inside than chance would give, not necessarily most of it): "
                f"{described}."
            )
        )
else:
    display(
        Markdown(f"**Nothing to show:** {g.number_of_nodes()} agents and no exchange between them.")
    )

# %%
graph_metrics(g).select(
    "agent",
    "kind",
    "in_degree",
    "out_degree",
    "in_weight",
    "out_weight",
    pl.col("betweenness").round(3),
    pl.col("reciprocity").round(2),
    pl.col("hub").round(3),
    pl.col("authority").round(3),
    "role",
)

# %% [markdown]
# Activity over time per agent (A2A events per 3 hours):

# %%
a2a_events = events.filter(pl.col("type").str.starts_with("a2a."))
if a2a_events.height:
    display(plots.swimlane(events, every="3h"))
else:
    display(Markdown("**Nothing to show:** the log has no A2A event."))

# %% [markdown]
# ## What to look at next
#
# * **Pairs with a high p95 and a high no-reply rate** point at a saturated target session:
#   `05_capacity_whatif` simulates what more session concurrency would change.
# * **Unanswered questions and stalled delegations** are work that fell through; open the
#   work session in `02_work_sessions` to read the thread.
# * **Brokers** (high betweenness) relay work between others; if one is slow, everything behind
#   it is slow.
# * Export the graph for Gephi or d3: `a2a-lab graph LOGS -o agents.graphml`.
