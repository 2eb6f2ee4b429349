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
# # 02 · Work sessions, number for number — and readable
#
# The Task-Monitor dashboard groups coordination events into **work sessions** (one per
# `workSessionId`: a task, a backlog pick-up or a sub-agent spawn) and, inside each, into
# **threads** (one per conversation, else per agent pair). This notebook rebuilds exactly
# what the dashboard serves — same sessions, statuses, categories, filters and JSON
# (rules §7–§8) — and then does what its web UI does not: it shows one session's threads as a
# conversation you can read and search.
#
# **Where the logs come from.** As in every notebook, `setup()` reads `A2A_LAB_LOGS` (else the
# bundled sample) and `A2A_LAB_TZ` (the time zone times are shown in, default UTC).

# %%
import json
import subprocess
import sys

import altair as alt
import polars as pl
from IPython.display import Markdown, display

import a2a_lab as al
from a2a_lab import plots
from a2a_lab.views.notebook import display_timezone, setup
from a2a_lab.views.palette import MESSAGE_KIND_COLORS
from a2a_lab.views.threads import (
    MessageOptions,
    search_chart,
    sessions_table,
    thread_messages,
    thread_view,
)

LOGS = setup()
TZ = display_timezone()
LOGS, TZ

# %% [markdown]
# ## 1. Load, enrich, and fix the clock
#
# Enrichment (rules §1–§6) gives every event its role, session types and collaboration
# category. Which agents are *main* agents changes the session types, so they are read from the
# deployment's `openclaw.json` when the log directory has one, as the dashboard does.
#
# A session is ARCHIVED when its last event is more than 24 h older than **now**. The
# dashboard uses the wall clock; a notebook must not, or its statuses would change every day.
# `NOW` is therefore explicit and computed from the data: one hour after the last event.

# %%
openclaw = LOGS / "openclaw.json"
main_agents = al.main_agents_from_openclaw(openclaw) if openclaw.exists() else None
events = al.enrich(al.load(LOGS).events, main_agents=main_agents)
# (a log without events has no last event: then the clock starts at 0)
NOW = int(events["event_ms"].max() or 0) + 3_600_000
print(f"{events.height} events; main agents: {sorted(main_agents or [])}")
print(f"NOW = {NOW} ms = {pl.select(pl.lit(NOW).cast(pl.Datetime('ms', 'UTC'))).item()} UTC")

# %% [markdown]
# Discord mentions in messages are user ids (`<@1302…>`). Which Discord user is which agent
# is recorded neither in the log nor in `openclaw.json`, so the mapping is a parameter. These
# are the sample's bot users (made up by its generator); for a real deployment copy each
# bot's user id in Discord (Developer Mode → Copy User ID). Ids not in the mapping — the
# people who mention agents, here — stay as they are.

# %%
DISCORD_USERS = {
    "130050000004821007": "main",
    "130150079194821017": "ruda",
    "130250158384821027": "eden",
    "130350237574821037": "seum",
    "130450316764821047": "bada",
    "130550395954821057": "haneul",
}

# %% [markdown]
# ## 2. The sessions
#
# `al.work_sessions` returns the sessions, their threads and the thread → event membership as
# frames. Status, per rules §7:
#
# * **ARCHIVED** — no event for more than 24 h before `NOW`;
# * **QUIET** — the session's latest event is terminal (`a2a.complete`, a failed spawn,
#   `continuation.complete`, or a `task.*` event whose status is completed / cancelled /
#   abandoned / failed);
# * **ACTIVE** — everything else.

# %%
ws = al.work_sessions(events, now=NOW)
if ws.sessions.is_empty():
    display(
        Markdown(
            "**Nothing to show** in sections 2–7: no event of this log carries a `workSessionId`, "
            "so the dashboard would list no work session (the tables below stay empty)."
        )
    )
status_order = pl.Enum(["ACTIVE", "QUIET", "ARCHIVED"])
ws.sessions.group_by(pl.col("status").cast(status_order)).len("sessions").sort("status")

# %% [markdown]
# The dashboard's list, newest activity first, with what each session works on instead of its
# `ws_…` id: the title of its task (from the task's plan, else from a delegation payload) or,
# as most tasks in this log never get a plan, its first message in quotes. ✎ would mark a
# category set by hand (an overrides file).

# %%
sessions_table(ws, events, tz=TZ, limit=12, discord_users=DISCORD_USERS)

# %% [markdown]
# ## 3. Categories
#
# A session's category is the category of its **first event that is not
# `engineering_build`** (rules §7). The counts are those of the dashboard's category chips:

# %%
assert (
    dict(ws.sessions.group_by("collab_category", maintain_order=True).len().iter_rows())
    == ws.category_counts
)
if ws.sessions.height:
    top_category, top_sessions = max(ws.category_counts.items(), key=lambda kv: (kv[1], kv[0]))
    display(plots.category_bars(ws.sessions, title="Work sessions per category"))
    display(
        Markdown(
            f"On this log `{top_category}` is the largest category: {top_sessions} of "
            f"{ws.sessions.height} sessions ({top_sessions / ws.sessions.height:.0%})."
        )
    )
else:
    display(Markdown("**Nothing to show:** no work session, so no category."))

# %% [markdown]
# Why does one category dominate? Look at the event that decided each session's category
# (the first event of the session that is not an engineering build): an event whose text
# hits no keyword gets its role's *fallback* category (orchestration → `planning_decision`,
# rules §6), and being first, it wins. The table counts, per deciding event type and
# category source, how many sessions it decided; the sentence under it reads the table.
# Keep that in mind before reading much into the category mix, or set categories by hand
# (`overrides=`).

# %%
ws_id = pl.col("data").struct.field("workSessionId")
deciding = (
    events.filter(ws_id.is_not_null() & (pl.col("collab_category") != "engineering_build"))
    .sort("event_ms", maintain_order=True)
    .group_by(ws_id.alias("work_session_id"), maintain_order=True)
    .agg(
        pl.col("type").first(), pl.col("category_source").first(), pl.col("collab_category").first()
    )
)
decided_by = (
    deciding.group_by("category_source", "type")
    .len("sessions")
    .sort(["sessions", "type", "category_source"], descending=[True, False, False])
)
display(decided_by)
if decided_by.height:
    by_type = (
        decided_by.group_by("type")
        .agg(pl.col("sessions").sum())
        .sort(["sessions", "type"], descending=[True, False])
    )
    lead = by_type.row(0, named=True)
    fallback = int(decided_by.filter(pl.col("category_source") == "fallback")["sessions"].sum())
    display(
        Markdown(
            f"`{lead['type']}` decides the most sessions: {lead['sessions']} of "
            f"{int(by_type['sessions'].sum())}"
            + (
                f" (next: `{by_type['type'][1]}`, {by_type['sessions'][1]})"
                if by_type.height > 1
                else ""
            )
            + f"; {fallback} session(s) got their role's fallback category."
        )
    )
else:
    display(Markdown("**Nothing to show:** no event carries a work session id."))

# %% [markdown]
# ## 4. The dashboard's filters
#
# `GET /api/work-sessions` takes `role`, `type`, `status`, `viewCategory`, `subTag` and `limit`;
# `al.work_sessions` takes the same (`roles=`, `types=`, `status=`, `view_category=`,
# `sub_tag=`, `limit=`, lists or comma-separated strings). They act at two different moments:
#
# * **role** and **type** filter *events* before sessions are built: sessions lose events, so
#   counts, threads, categories and even statuses change (`totalSessions` too);
# * **status**, **viewCategory** and **subTag** filter the *built* sessions: `totalSessions`
#   stays, `totalMatched` and the category counts follow the filter;
# * **limit** only cuts the returned page (default 100): `totalMatched` is unchanged.

# %%
top_tag = (
    ws.sessions.explode("collab_sub_tags")
    .drop_nulls("collab_sub_tags")
    .group_by("collab_sub_tags")
    .len()
    .sort(["len", "collab_sub_tags"], descending=[True, False])
    .get_column("collab_sub_tags")
)
# A log whose sessions carry no sub-tag has no subTag filter to show.
top_tag = top_tag[0] if top_tag.len() else None
variants = {
    "(none)": {},
    "status=ACTIVE": {"status": "ACTIVE"},
    "status=QUIET,ARCHIVED": {"status": "QUIET,ARCHIVED"},
    "role=conversation.main": {"roles": "conversation.main"},
    "type=a2a.send,a2a.response": {"types": "a2a.send,a2a.response"},
    "viewCategory=qa_validation": {"view_category": "qa_validation"},
    **({f"subTag={top_tag}": {"sub_tag": top_tag}} if top_tag is not None else {}),
    "limit=5": {"limit": 5},
}
rows = []
for name, options in variants.items():
    res = al.work_sessions(events, al.SessionQuery(**options), now=NOW)
    statuses = res.sessions.get_column("status")
    rows.append(
        {
            "filter": name,
            "totalSessions": res.total_sessions,
            "totalMatched": res.total_matched,
            "count": res.total_matched
            if res.limit_count is None
            else min(res.total_matched, res.limit_count),
            "events": int(res.sessions.get_column("event_count").sum()),
            **{s: int((statuses == s).sum()) for s in ("ACTIVE", "QUIET", "ARCHIVED")},
            "categories": len(res.category_counts),
        }
    )
pl.DataFrame(rows)

# %% [markdown]
# The role filter changes more than counts. Keeping only `conversation.main` events, sessions
# without any such event disappear (`null` below), and (*in the sample*) most ACTIVE sessions
# that remain become QUIET: their latest *conversation* event is an `a2a.complete` (terminal),
# while their latest event of any role came from the task hub (a progress update, a
# cancellation, a reminder). A session's category changes whenever the event that decided it is
# filtered out:

# %%
by_role = al.work_sessions(events, al.SessionQuery(roles="conversation.main"), now=NOW)
compared = ws.sessions.select("id", "status", "collab_category").join(
    by_role.sessions.select("id", "status", "collab_category"), on="id", how="left", suffix="_role"
)
print(
    f"{(compared['collab_category'] != compared['collab_category_role']).sum()} sessions change category"
)
compared.group_by("status", "status_role").len("sessions").sort(
    ["sessions", "status", "status_role"], descending=[True, False, False]
)

# %% [markdown]
# ## 5. Two corrections the dashboard does not make
#
# The defaults reproduce the reference exactly, quirks included. Two documented options
# correct what analysts usually want corrected:
#
# * `SessionQuery(lifecycle_terminal=True)`: `task.completed` and `task.cancelled` end a session (QUIET). The
#   reference only reads a `status` field, and real `task.completed` events carry none — so a
#   finished task whose last event is its completion stays ACTIVE on the dashboard.

# %%
lifecycle = al.work_sessions(events, al.SessionQuery(lifecycle_terminal=True), now=NOW)
(
    ws.sessions.select("id", "status")
    .join(lifecycle.sessions.select("id", "status"), on="id", suffix="_lifecycle")
    .group_by("status", "status_lifecycle")
    .len("sessions")
    .sort(["sessions", "status", "status_lifecycle"], descending=[True, False, False])
)

# %% [markdown]
# *In the sample*, several sessions the dashboard shows as ACTIVE are in fact finished tasks
# (ACTIVE → QUIET above): their last event is the task's completion or cancellation.
#
# * `SessionQuery(unassigned=True)`: events without a `workSessionId` — which the reference leaves out of
#   every session — form one extra session, `id = "unassigned"`. In the sample these are
#   the exchanges outside any task (auto-routed Discord mentions and gate refusals among
#   them) and the task hub's nudges and unblock requests, which name their task but not its
#   work session: a large share of the traffic that the dashboard's session view never
#   shows.

# %%
with_unassigned = al.work_sessions(events, al.SessionQuery(unassigned=True), now=NOW)
unassigned_events = int(
    with_unassigned.sessions.filter(pl.col("id") == "unassigned").get_column("event_count").sum()
)
share = unassigned_events / events.height if events.height else 0.0
print(f"sessions: {ws.total_sessions} → {with_unassigned.total_sessions}")
print(f"events without a work session: {unassigned_events} of {events.height} ({share:.0%})")
with_unassigned.sessions.filter(pl.col("id") == "unassigned").select(
    "id", "status", "thread_count", "event_count", "role_counts"
)

# %% [markdown]
# ## 6. The JSON the dashboard serves
#
# `to_api()` returns the body of `GET /api/work-sessions`, key for key (rules §8.1): the
# conformance tests compare it with the reference handler's own outputs. Here with `limit=2`;
# each thread lists its enriched events in full (`thread_events="summary"` keeps
# `{line, ts, type}` only).

# %%
api = al.work_sessions(events, al.SessionQuery(limit=2), now=NOW).to_api()
print({k: v for k, v in api.items() if k != "sessions"})
if api["sessions"]:
    first = api["sessions"][0]
    excerpt = {
        **first,
        "threads": [{**first["threads"][0], "events": first["threads"][0]["events"][:1]}],
    }
    print(json.dumps(excerpt, ensure_ascii=False, indent=1)[:2500])
else:
    print("Nothing to show: the log has no work session.")

# %% [markdown]
# The command line prints the same body — a quick way to feed another tool:

# %%
command = [
    sys.executable,
    "-m",
    "a2a_lab",
    "work-sessions",
    str(LOGS),
    "--now-ms",
    str(NOW),
    "--limit",
    "2",
    "--format",
    "json",
]
if openclaw.exists():
    command += ["--openclaw-config", str(openclaw)]
served = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
served == api

# %% [markdown]
# ## 7. One session, as a conversation
#
# The dashboard shows a thread as a list of raw events. Reading one there is hard: Discord
# mentions are bare ids (`<@1302…>`), markdown is shown as source, a failed exchange reads
# `[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 300초 초과)`,
# threads are named `conv:<uuid>` and there is no search. `a2a_lab.views.threads` fixes each:
#
# | the dashboard shows | here |
# |---|---|
# | `<@130250158384821027> Please take care…` | `@eden Please take care…` |
# | `**bold**`, `` `code` ``, bare URLs as text | rendered (a safe subset; HTML in a message is escaped) |
# | `[outcome] no_reply: … (대기 시간 300초 초과)` | **no reply: waited more than 300 s** (runtime §3b) |
# | `[outcome] blocked: …` + `concurrencyBlocked` | **refused: concurrency limit** |
# | `conv:724c0a5f-…`, `task_…` ids | the task's title (its plan, else a delegation payload) |
# | event type and epoch ms | `#n`, time in `A2A_LAB_TZ`, sender → receiver, a label |
# | — | a search box, and `MessageOptions(search=…)` in the kernel |
#
# Which session to read? One where several things happen: a no-reply, a Discord mention, a
# structured payload and a retry — found from the events, not picked by hand. A log without
# such a session gives the one where most of these happen (then the largest).

# %%
d = pl.col("data").struct
candidates = (
    events.filter(ws_id.is_not_null())
    .group_by(ws_id.alias("work_session_id"))
    .agg(
        d.field("outcome").is_in(["no_reply", "blocked"]).sum().alias("no_replies"),
        d.field("message").str.contains("<@").sum().alias("mentions"),
        d.field("payloadType").is_not_null().sum().alias("payloads"),
        (pl.col("type") == "a2a.retry").sum().alias("retries"),
        pl.len().alias("events"),
    )
    .with_columns(
        pl.sum_horizontal(
            (pl.col(c) > 0).cast(pl.Int32)
            for c in ("no_replies", "mentions", "payloads", "retries")
        ).alias("kinds")
    )
    .sort(["kinds", "events", "work_session_id"], descending=[True, False, False])
    .filter(pl.col("kinds") == pl.col("kinds").max())
)
SESSION = candidates.get_column("work_session_id").first()
if SESSION is None:
    display(Markdown("**Nothing to show:** the log has no work session to read."))
candidates

# %% [markdown]
# Each box is a thread, titled by its task; each message shows its number in the thread, its
# time, sender → receiver, a coloured label saying what happened, and the rendered text. The
# search box filters the messages in the browser (it needs the notebook's outputs to be
# trusted, as they are once you run it; on GitHub every message stays shown).

# %%
(
    thread_view(ws, events, SESSION, MessageOptions(discord_users=DISCORD_USERS), tz=TZ)
    if SESSION
    else None
)

# %% [markdown]
# The same rows as a frame, one per message — here searched in the kernel.
# `MessageOptions(search=…)` matches the sender, receiver, label and text,
# case-insensitively; `regex=True` reads it as a regular expression. What went wrong in
# this session?

# %%
if SESSION:
    trouble = thread_messages(
        ws,
        events,
        SESSION,
        MessageOptions(discord_users=DISCORD_USERS, search=r"no reply|refused|retry", regex=True),
        tz=TZ,
    ).select("thread_title", "n", "time", "sender", "receiver", "label", "text")
    display(
        Markdown(
            f"{trouble.height} messages of `{SESSION}` report a no-reply, a refusal or a retry."
        )
    )
    display(trouble)

# %% [markdown]
# Message numbers are counted before the search, so `n` points at the place in the thread.
# *In the sample* one exchange hit the rate limit (HTTP 429): it was retried three times, the
# most the runtime allows, and ended without a reply, written in the older runtime's words
# (`[outcome] blocked: …`) — the label carries the wait error. Open the thread above at those
# numbers to see what the agents did next.
#
# A compact index of every message of the session, with a search box that runs in the
# browser without a kernel (a Vega-Lite parameter: type in it where the chart is rendered
# interactively; the PNG preview is static). Hover a line for the full text.

# %%
if SESSION:
    messages = thread_messages(
        ws, events, SESSION, MessageOptions(discord_users=DISCORD_USERS), tz=TZ
    )
    display(search_chart(messages, title=f"{messages.height} messages of {SESSION}"))

# %% [markdown]
# How the session's messages split by kind, per thread:

# %%
if SESSION:
    by_kind = messages.group_by("thread_title", "kind").len("messages").sort("thread_title", "kind")
    display(
        alt.Chart(by_kind, title="Messages per thread and kind")
        .mark_bar()
        .encode(
            x=alt.X("messages:Q", stack=True),
            y=alt.Y("thread_title:N", title=None, sort="-x"),
            color=alt.Color(
                "kind:N",
                title="message kind",
                scale=plots.color_scale(MESSAGE_KIND_COLORS, by_kind["kind"].unique().to_list()),
            ),
            tooltip=["thread_title", "kind", "messages"],
        )
    )

# %% [markdown]
# ## Next
#
# * `03_conversations_and_graph` measures every exchange of the log (latency, no-reply rate,
#   who talks to whom) — including the unassigned conversations section 5 found.
# * Pass `threads=[...]` to `thread_view` to read one thread of a large session, and
#   `max_messages=` to render more than the first 300 messages.
# * `a2a-lab work-sessions LOGS --status ACTIVE --limit 20` prints the dashboard's JSON for a
#   script or another tool.
