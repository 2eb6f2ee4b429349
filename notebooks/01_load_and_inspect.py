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
# # 01 · Load and inspect a coordination log
#
# This notebook reads an OpenClaw-style coordination log — the live
# `coordination-events.ndjson` **and** every rotated sibling — into one Polars frame, shows
# what the loader could not read and why, and takes a first look at the traffic: which event
# types, which agents, which days, and how one conversation looks line by line.
#
# **Where the logs come from.** `setup()` reads the environment variable `A2A_LAB_LOGS`
# (a log directory, a file or a glob). Unset, it falls back to the sample bundled with
# a2a_lab, which is what CI runs. To look at your own gateway:
#
# ```bash
# A2A_LAB_LOGS=~/.openclaw/logs make lab
# ```

# %%
import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab.views.notebook import setup
from a2a_lab.views.palette import EVENT_FAMILY_COLORS
from a2a_lab.views.plots import color_scale

LOGS = setup()
LOGS

# %% [markdown]
# ## 1. Load
#
# `al.load` accepts a file, a list of files, a glob or a log directory. For a directory it
# reads the rotated files oldest first and the live file last, then sorts all events by their
# time (rules §2: `timestampMs`, else `ts`, else the ISO `timestamp`); events with the same
# time keep their file order. The reference dashboard reads only the live file, so its history
# silently stops at the last rotation — here nothing drops out.

# %%
res = al.load(LOGS)
events, report = res.events, res.report
if events.is_empty():
    display(
        Markdown(
            f"**Nothing to show** in the sections below that need events: the log has none "
            f"({report.rejects.height} rejected and {report.total_blank} blank of {report.total_lines} lines). "
            "Section 2 says why its lines were rejected."
        )
    )
report

# %% [markdown]
# Every physical line is accounted for: it is an event, a rejected line, or a blank line.

# %%
assert report.total_lines == report.events + report.rejects.height + report.total_blank
pl.DataFrame(
    {
        "file": [f.split("/")[-1] for f in report.files],
        "lines": [report.lines[f] for f in report.files],
        "blank": [report.blank[f] for f in report.files],
    }
).join(
    report.rejects.group_by("file")
    .len("rejected")
    .with_columns(pl.col("file").str.split("/").list.last()),
    on="file",
    how="left",
).with_columns(pl.col("rejected").fill_null(0))

# %% [markdown]
# ## 2. What could not be read
#
# A line is **rejected** when it is not JSON (strictly: `NaN` and `Infinity` are not JSON),
# not a JSON object, or has no usable `type`. The reason names the problem; `raw` keeps the
# first 200 characters so you can find the writer that produced it.

# %%
report.rejects.with_columns(pl.col("file").str.split("/").list.last())

# %% [markdown]
# **Warnings** are problems in events that were *kept*: a field of the wrong JSON type (the
# rules then treat the field as absent), bytes that were not valid UTF-8 (decoded to U+FFFD,
# as Node does), or an event without any usable timestamp (its time becomes 0, as in the
# reference).

# %%
report.issues.group_by("kind", "field").len("events").sort(
    ["events", "kind", "field"], descending=[True, False, False], nulls_last=True
)

# %% [markdown]
# ## 3. The event frame
#
# One row per event. `data` is a struct of every field the rules and the runtime read, each
# with its JSON type (absent or wrongly typed → null); `raw` keeps the original line, so
# unknown fields are never lost and `al.write_events` writes the log back unchanged.

# %%
events.select("file", "line", "type", "agent_id", "event_time", "data").with_columns(
    pl.col("file").str.split("/").list.last()
).head(5)

# %% [markdown]
# ## 4. Traffic at a glance
#
# Event types grouped by family (the part before the first dot): `a2a.*` are agent-to-agent
# exchanges, `task.*`, `plan.*`, `continuation.*`… are orchestration, `milestone.*` is
# observability. A family has the same colour in every chart and on every log.

# %%
by_type = (
    events.group_by("type")
    .len("events")
    .with_columns(family=pl.col("type").str.split(".").list.first())
    .sort(["events", "type"], descending=[True, False])
)
present = sorted(set(by_type["family"].drop_nulls()))
families = color_scale(EVENT_FAMILY_COLORS, present)
family_legend = alt.Legend(values=present)  # the families of this log only, in their fixed colours
alt.Chart(by_type, title="Events per type").mark_bar().encode(
    x=alt.X("events:Q", title="events"),
    y=alt.Y("type:N", sort="-x", title=None),
    color=alt.Color("family:N", title="event family", scale=families, legend=family_legend),
    tooltip=["type", "family", "events"],
).properties(width=520)

# %% [markdown]
# Who writes the log? `agent_id` (the log's `agentId`) is the agent whose gateway process wrote the line.

# %%
by_agent = (
    events.with_columns(family=pl.col("type").str.split(".").list.first())
    .group_by("agent_id", "family")
    .len("events")
    .with_columns(pl.col("agent_id").fill_null("(none)"))
    .sort("agent_id", "family")  # group_by order varies between runs; stored charts must not
)
alt.Chart(by_agent, title="Events per writing agent").mark_bar().encode(
    x=alt.X("sum(events):Q", title="events"),
    y=alt.Y("agent_id:N", sort="-x", title="agent"),
    color=alt.Color("family:N", title="event family", scale=families, legend=family_legend),
    tooltip=["agent_id", "family", "events"],
).properties(width=520)

# %% [markdown]
# Activity per day (UTC) and family: quiet days show up as dips, and so do a first and a last
# day the log covers only in part (*in the sample* the simulated deployment works weekends too).

# %%
per_day = (
    events.filter(pl.col("event_ms") > 0)
    .with_columns(
        day=pl.col("event_time").dt.truncate("1d"),
        family=pl.col("type").str.split(".").list.first(),
    )
    .group_by("day", "family")
    .len("events")
    .sort("day", "family")
)
alt.Chart(per_day, title="Events per day").mark_bar().encode(
    # short labels at an angle: dozens of days stay readable
    x=alt.X(
        "yearmonthdate(day):O", title="day (UTC)", axis=alt.Axis(format="%m-%d", labelAngle=-45)
    ),
    y=alt.Y("events:Q", stack=True),
    color=alt.Color("family:N", title="event family", scale=families, legend=family_legend),
    tooltip=[alt.Tooltip("day:T", format="%Y-%m-%d"), "family", "events"],
).properties(width=520)

# %% [markdown]
# Hour of day shows when the agents work (*in the sample* their messages follow a Korean office
# day, UTC+9, while the task hub's updates and nudges go on around the clock, so the rhythm of
# all events is weaker than that of the messages). A log rarely covers each hour of the day equally often (it starts and ends
# mid-day), so the chart shows events per hour the log covered, in the display time zone
# (`$A2A_LAB_TZ`, else UTC); the sentence under the chart is computed from this log.

# %%
from a2a_lab.time import hour_exposure
from a2a_lab.views.notebook import display_timezone

TZ = display_timezone()
timed = events.filter(pl.col("event_ms") > 0)
per_hour = (
    timed.group_by(hour=pl.col("event_time").dt.convert_time_zone(TZ).dt.hour())
    .len("events")
    .sort("hour")
)
span_ms = float(timed["event_ms"].max() - timed["event_ms"].min()) if timed.height else 0.0
if per_hour.height and span_ms >= 3_600_000:
    # an hour of the day the log covered twice holds twice the events at the same pace:
    # divide by the hours of the log spent in each hour of the day
    lo, hi = float(timed["event_ms"].min()), float(timed["event_ms"].max())
    exposure = pl.DataFrame(
        {"hour": range(24), "hours covered": hour_exposure(lo, hi, TZ).round(2)},
        schema={"hour": per_hour.schema["hour"], "hours covered": pl.Float64},
    )
    per_hour = (
        exposure.join(per_hour, on="hour", how="left")
        .with_columns(pl.col("events").fill_null(0))
        .with_columns(
            pl.when(pl.col("hours covered") > 0)
            .then(pl.col("events") / pl.col("hours covered"))
            .round(1)
            .alias("events per hour covered")
        )
    )
    rate = per_hour["events per hour covered"].fill_null(0.0).to_list()
    # the 8 consecutive hours (wrapping at midnight) with the highest rate: a working day shows up there
    start = max(range(24), key=lambda h: (sum(rate[(h + i) % 24] for i in range(8)), -h))
    busy = sum(rate[(start + i) % 24] for i in range(8)) / sum(rate)
    shape = (
        "a working day"
        if busy >= 0.6
        else "no clear working day"
        if busy < 0.45
        else "a weak daily rhythm"
    )
    local = timed.select(pl.col("event_time").dt.convert_time_zone(TZ)).to_series()
    first, last = local.min(), local.max()
    days = (last.date() - first.date()).days + 1
    display(
        alt.Chart(per_hour, title=f"Events per hour of day ({TZ}), per hour the log covered")
        .mark_bar()
        .encode(
            x=alt.X("hour:O", title=f"hour ({TZ})"),
            y=alt.Y("events per hour covered:Q"),
            tooltip=["hour", "events", "hours covered", "events per hour covered"],
        )
        .properties(width=520)
    )
    display(
        Markdown(
            f"The log runs from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} {TZ}: "
            f"{(hi - lo) / 3_600_000:.1f} hours over {days} calendar day(s), the first from "
            f"{first:%H:%M} and the last until {last:%H:%M} (partial days), so each hour of the "
            f"day was covered between {per_hour['hours covered'].min():.1f} and "
            f"{per_hour['hours covered'].max():.1f} times; the bars divide by that. "
            f"The busiest 8 hours, {start:02d}:00–{(start + 8) % 24:02d}:00 {TZ}, hold {busy:.0%} "
            f"of the rate (a flat day would give 33%): {shape}."
        )
    )
elif per_hour.height:
    display(
        Markdown(
            f"**Nothing to show:** the log's timed events span {span_ms / 60_000:.0f} minutes, "
            "less than an hour: no time of day to compare."
        )
    )
else:
    display(Markdown("**Nothing to show:** the log has no event with a time."))

# %% [markdown]
# ## 5. One conversation, line by line
#
# An A2A exchange is `a2a.send` → `a2a.response` (the reply, then one per ping-pong turn) →
# `a2a.complete`. Here is the longest conversation of the log with its provenance: you can open
# the file at that line.

# %%
conv = pl.col("data").struct.field("conversationId")
by_conversation = (
    events.filter(conv.is_not_null())
    .group_by(conv.alias("conversation_id"))
    .len("events")
    .sort(["events", "conversation_id"], descending=[True, False])
)
longest = by_conversation.row(0, named=True) if by_conversation.height else None
if longest is None:
    display(
        Markdown(
            "**Nothing to show:** the log has no event with a conversation id (no A2A exchange)."
        )
    )
longest

# %%
d = pl.col("data").struct
(
    events.filter(conv == (longest["conversation_id"] if longest else None)).select(
        pl.col("file").str.split("/").list.last(),
        "line",
        pl.col("event_time").dt.strftime("%m-%d %H:%M:%S").alias("time"),
        "type",
        d.field("fromAgent").alias("from"),
        d.field("toAgent").alias("to"),
        d.field("turn"),
        d.field("outcome"),
        pl.coalesce(d.field("message"), d.field("replyPreview")).str.slice(0, 60).alias("text"),
    )
)

# %% [markdown]
# ## Next
#
# * `02_work_sessions` groups these events exactly as the Task-Monitor dashboard does.
# * `al.LogFollower(LOGS)` reads only what was appended since the last call — useful in a
#   notebook left open next to a running gateway.
