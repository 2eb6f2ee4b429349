"""Readable work-session threads: mentions, markdown, outcome labels, titles, search, HTML."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import a2a_lab as al
from a2a_lab.io import from_records
from a2a_lab.reference.runtime.outcome import build_no_reply_outcome_message
from a2a_lab.views.safe_html import NEUTRALIZED, escape_html
from a2a_lab.views.threads import (
    MESSAGE_COLUMNS,
    markdown_html_expr,
    mentions_expr,
    render_markdown,
    search_chart,
    session_titles,
    sessions_table,
    task_titles,
    thread_messages,
    thread_view,
)

T0 = 1_771_500_000_000  # 2026-02-19T11:20:00Z
WS = "ws_1"


def ev(
    i: int, type_: str, frm: str | None, to: str | None, conv: str | None = "c1", **data: Any
) -> dict:
    """An event of session ``ws_1`` at ``T0 + i`` seconds."""
    fields: dict[str, Any] = {"workSessionId": WS, **data}
    if conv is not None:
        fields["conversationId"] = conv
    if frm is not None:
        fields["fromAgent"] = frm
    if to is not None:
        fields["toAgent"] = to
    return {"type": type_, "agentId": frm, "ts": T0 + i * 1000, "data": fields}


def build(records: list[dict], **options: Any) -> tuple[al.WorkSessionsResult, pl.DataFrame]:
    enriched = al.enrich(from_records(records))
    return al.work_sessions(enriched, now=T0, **options), enriched


def messages(records: list[dict], session: str = WS, **options: Any) -> pl.DataFrame:
    result, enriched = build(records)
    return thread_messages(result, enriched, session, **options)


def labels(records: list[dict], **options: Any) -> list[tuple[str, str]]:
    """(kind, label) of every message, in time order (threads are in last-activity order)."""
    return messages(records, **options).sort("time", "line").select("kind", "label").rows()


# ---- mentions ----------------------------------------------------------------------------

USERS = {"130050000004821007": "main", "130150079194821017": "ruda"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@130050000004821007> 배포 부탁해", "@main 배포 부탁해"),
        ("cc <@!130150079194821017>, <@130050000004821007>", "cc @ruda, @main"),
        (
            "<@284019573310226433> who owns this?",
            "<@284019573310226433> who owns this?",
        ),  # unknown: as-is
        (
            "<@1300500000048210070> longer id",
            "<@1300500000048210070> longer id",
        ),  # not a prefix match
        ("<#1187423365011234816> is a channel", "<#1187423365011234816> is a channel"),
        ("no mention", "no mention"),
    ],
)
def test_mentions_resolve_known_ids_and_leave_unknown_ones(text: str, expected: str) -> None:
    assert pl.select(mentions_expr(pl.lit(text), USERS)).item() == expected


def test_mentions_without_a_mapping_leave_the_text_unchanged() -> None:
    text = "<@130050000004821007> hi"
    assert pl.select(mentions_expr(pl.lit(text), None)).item() == text
    assert pl.select(mentions_expr(pl.lit(text), {})).item() == text


def test_thread_messages_resolve_mentions_in_text_and_html() -> None:
    out = messages(
        [ev(0, "a2a.send", "ruda", "main", message="<@130050000004821007> see <@999>")],
        discord_users=USERS,
    )
    assert out["text"].to_list() == ["@main see <@999>"]
    assert out["html"].to_list() == ["@main see &lt;@999&gt;"]


# ---- outcome labels (runtime §3b) ----------------------------------------------------------


def no_reply_response(i: int, **fields: Any) -> dict:
    """The no-reply ``a2a.response`` the reference writes, text built by the runtime module."""
    legacy = fields.pop("legacy", False)
    text = build_no_reply_outcome_message(
        fields.get("waitStatus"), fields.get("waitError"), legacy=legacy
    )
    return ev(i, "a2a.response", "ruda", "eden", message=text, replyPreview=text, **fields)


@pytest.mark.parametrize(
    ("fields", "label"),
    [
        ({"outcome": "no_reply", "waitStatus": "timeout"}, "no reply: waited more than 300 s"),
        ({"outcome": "no_reply", "waitStatus": "not_found"}, "no reply: run not found"),
        ({"outcome": "no_reply", "waitStatus": "error"}, "no reply: run error"),
        (
            {"outcome": "no_reply", "waitStatus": "error", "waitError": " LLM request rejected "},
            "no reply: LLM request rejected",
        ),
        ({"outcome": "no_reply"}, "no reply"),
        # the older runtime: outcome "blocked" WITH wait fields is a no-reply
        (
            {"outcome": "blocked", "waitStatus": "timeout", "legacy": True},
            "no reply: waited more than 300 s",
        ),
        (
            {"outcome": "blocked", "waitStatus": "not_found", "legacy": True},
            "no reply: run not found",
        ),
        (
            {"outcome": "blocked", "waitError": "rate_limit exceeded", "legacy": True},
            "no reply: rate_limit exceeded",
        ),
        # only the [outcome] text, no outcome field: parsed the same way
        ({"waitStatus": "not_found"}, "no reply: run not found"),
        ({"waitStatus": "error", "legacy": True}, "no reply: run error"),
    ],
)
def test_no_reply_labels(fields: dict, label: str) -> None:
    out = labels([ev(0, "a2a.send", "ruda", "eden", message="hi"), no_reply_response(1, **fields)])
    assert out == [("message", "message"), ("no_reply", label)]


def test_timeout_label_names_the_seconds_of_the_text_else_the_ceiling() -> None:
    text = "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다 (대기 시간 120초 초과)"
    from_text = ev(0, "a2a.response", "ruda", "eden", message=text, outcome="no_reply")
    assert labels([from_text]) == [("no_reply", "no reply: waited more than 120 s")]
    fields_only = ev(0, "a2a.response", "ruda", "eden", outcome="no_reply", waitStatus="timeout")
    assert labels([fields_only]) == [("no_reply", "no reply: waited more than 300 s")]
    assert labels([fields_only], max_wait_ms=600_000) == [
        ("no_reply", "no reply: waited more than 600 s")
    ]


def test_blocked_then_concurrency_blocked_complete_is_a_refusal() -> None:
    text = "[outcome] blocked: 동시 처리 한도 초과 (agent: eden)"
    out = labels(
        [
            ev(0, "a2a.response", "ruda", "eden", message=text, outcome="blocked"),
            ev(1, "a2a.complete", "ruda", "eden", announced=False, concurrencyBlocked=True),
        ]
    )
    assert out == [("refused", "refused: concurrency limit")] * 2


def test_a_concurrency_blocked_complete_wins_over_wait_fields() -> None:
    out = labels(
        [
            ev(0, "a2a.response", "ruda", "eden", outcome="blocked", waitStatus="timeout"),
            ev(1, "a2a.complete", "ruda", "eden", concurrencyBlocked=True),
        ]
    )
    assert out[0] == ("refused", "refused: concurrency limit")


def test_blocked_without_wait_fields_or_refusal_is_a_legacy_no_reply() -> None:
    out = labels(
        [
            ev(0, "a2a.response", "ruda", "eden", outcome="blocked"),
            ev(1, "a2a.complete", "ruda", "eden", announced=False),
        ]
    )
    assert out == [("no_reply", "no reply"), ("complete", "exchange complete")]


def test_a_refusal_of_another_pair_in_the_same_thread_does_not_count() -> None:
    out = labels(
        [
            ev(0, "a2a.response", "ruda", "eden", outcome="blocked"),
            ev(1, "a2a.complete", "ruda", "seum", concurrencyBlocked=True),
            ev(2, "a2a.complete", "ruda", "eden"),
        ]
    )
    assert [kind for kind, _ in out] == ["no_reply", "refused", "complete"]


def test_other_outcomes_replies_turns_and_exchange_events() -> None:
    out = labels(
        [
            ev(0, "a2a.send", "ruda", "eden", message="배포 해줘"),
            ev(1, "a2a.retry", "ruda", "eden", attempt=1, maxAttempts=3, errorCode="rate_limit"),
            ev(2, "a2a.response", "eden", "ruda", replyPreview="ok"),
            ev(3, "a2a.response", "ruda", "eden", turn=1, maxTurns=3, message="q?"),
            ev(
                4,
                "a2a.response",
                "eden",
                "ruda",
                turn=2,
                maxTurns=3,
                message="done",
                terminationReason="conclusion_detected",
            ),
            ev(5, "a2a.response", "eden", "ruda", message="[outcome] success: merged"),
            ev(
                6,
                "a2a.complete",
                "ruda",
                "eden",
                actualTurns=2,
                terminationReason="conclusion_detected",
            ),
            ev(7, "a2a.complete", "ruda", "eden", actualTurns=1),
        ]
    )
    assert out == [
        ("message", "message"),
        ("retry", "retry 1/3: rate_limit"),
        ("reply", "reply"),
        ("turn", "turn 1/3"),
        ("turn", "turn 2/3 · ended: conclusion_detected"),
        ("outcome", "outcome: success: merged"),
        ("complete", "exchange complete · 2 turns · ended: conclusion_detected"),
        ("complete", "exchange complete · 1 turn"),
    ]


def test_spawn_payload_and_orchestration_labels() -> None:
    delegation = (
        '{"type":"task_delegation","taskId":"t9","taskTitle":"Fix CI","taskDescription":"x"}'
    )
    report = '{"type":"status_report","taskId":"t9","status":"blocked","progressPercent":40}'
    out = labels(
        [
            ev(0, "a2a.spawn", "eden", "nuri", message="Draft it"),
            ev(1, "a2a.spawn_result", "eden", "nuri", status="error"),
            ev(
                2,
                "a2a.send",
                "ruda",
                "eden",
                payloadType="task_delegation",
                payloadJson=delegation,
                message="m",
            ),
            ev(
                3,
                "a2a.send",
                "eden",
                "ruda",
                payloadType="status_report",
                payloadJson=report,
                message="m",
            ),
            ev(
                4,
                "a2a.send",
                "eden",
                "ruda",
                payloadType="question",
                payloadJson="not json",
                message="m",
            ),
            ev(5, "task.updated", "ruda", None, conv=None, taskId="t1", status="in_progress"),
            ev(6, "task.backlog_added", "ruda", None, conv=None, taskId="t1"),
        ]
    )
    assert out == [
        ("spawn", "spawned a sub-agent"),
        ("spawn_result", "sub-agent run: error"),
        ("message", "task delegation: Fix CI"),
        ("message", "status report: blocked, 40 %"),
        ("message", "question"),
        ("task", "task updated: in_progress"),
        ("task", "task backlog added"),
    ]


# ---- markdown ----------------------------------------------------------------------------

LINK = '<a href="{0}" target="_blank" rel="noopener noreferrer">{1}</a>'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
        ("**bold** and *it*", "<strong>bold</strong> and <em>it</em>"),
        ("**<b>**", "<strong>&lt;b&gt;</strong>"),
        ("`**not bold**` `<i>`", "<code>**not bold**</code> <code>&lt;i&gt;</code>"),
        ("```python\nif a < b:\n    x()\n```", "<pre><code>if a &lt; b:\n    x()\n</code></pre>"),
        ("```x```", "<pre><code>x</code></pre>"),
        ("a\nb", "a<br>b"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("an `unclosed code", "an `unclosed code"),
        ("[docs](https://e.com/a?b=1&c=2)", LINK.format("https://e.com/a?b=1&amp;c=2", "docs")),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
        ("[x](data:text/html,hi)", "[x](data:text/html,hi)"),
        ("see https://e.com/x.", "see " + LINK.format("https://e.com/x", "https://e.com/x") + "."),
        ("(https://e.com/y)", "(" + LINK.format("https://e.com/y", "https://e.com/y") + ")"),
        (
            'https://e.com/"onclick="x',
            LINK.format("https://e.com/", "https://e.com/") + "&quot;onclick=&quot;x",
        ),
        ("mail [me](mailto:a@b.c)", "mail " + LINK.format("mailto:a@b.c", "me")),
        ("abc\u202edcba\u2066x\u2069 \x07", "abc⟨U+202E⟩dcba⟨U+2066⟩x⟨U+2069⟩ ⟨U+0007⟩"),
        ("hello there", "hello there"),
        ("", ""),
    ],
)
def test_markdown_subset(text: str, expected: str) -> None:
    assert render_markdown(text) == expected


def test_markdown_of_null_is_null_and_render_of_none_is_empty() -> None:
    assert pl.select(markdown_html_expr(pl.lit(None, dtype=pl.String))).item() is None
    assert render_markdown(None) == ""


# every tag the renderer writes, exactly
_OWN_TAGS = re.compile(
    r'<a href="[^"<>]*" target="_blank" rel="noopener noreferrer">|</a>|</?(?:strong|em|code|pre)>|<br>'
)


# texts made of markup fragments, so links, code spans and broken markup are frequent
_PIECES = [
    *"ab <>&\"'`*[]()\n/:.h",
    "http://",
    "https://",
    "mailto:",
    "javascript:",
    "```",
    "**",
    "script",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_markdown_never_emits_markup_of_its_input(text: str) -> None:
    out = render_markdown(text)
    rest = _OWN_TAGS.sub("", out)
    assert "<" not in rest and ">" not in rest and '"' not in rest
    for href in re.findall(r'href="([^"]*)"', out):
        assert href.startswith(("http://", "https://", "mailto:"))


@given(
    st.text(
        alphabet=st.characters(blacklist_characters="`*[\nh", blacklist_categories=("Cs",)),
        max_size=40,
    )
)
def test_plain_text_is_exactly_html_escaped(text: str) -> None:
    assert render_markdown(text) == escape_html(text)  # html.escape after neutralising controls
    assert not set(render_markdown(text)) & set(NEUTRALIZED)


# ---- titles ------------------------------------------------------------------------------


def test_task_titles_prefer_events_then_payloads_earliest_first() -> None:
    payload = '{{"type":"task_delegation","taskId":"{0}","taskTitle":"{1}"}}'.format
    frame = from_records(
        [
            {"type": "a2a.send", "ts": 1, "data": {"payloadJson": payload("t1", "from payload")}},
            {"type": "plan.submitted", "ts": 3, "data": {"taskId": "t1", "title": "later plan"}},
            {"type": "task.started", "ts": 2, "data": {"taskId": "t1", "title": " first plan "}},
            {"type": "a2a.send", "ts": 4, "data": {"payloadJson": payload("t2", "delegated")}},
            {
                "type": "a2a.send",
                "ts": 5,
                "data": {"payloadJson": payload("t2", "second delegation")},
            },
            {
                "type": "a2a.send",
                "ts": 6,
                "data": {"payloadJson": '{"type":"question","taskId":"t3","taskTitle":"q"}'},
            },
            {"type": "a2a.send", "ts": 7, "data": {"payloadJson": "{not json"}},
            {"type": "task.started", "ts": 8, "data": {"taskId": "t4", "title": "   "}},
        ]
    )
    assert task_titles(frame).rows() == [
        ("t1", "first plan", "event"),
        ("t2", "delegated", "payload"),
    ]


def test_thread_and_session_titles_come_from_tasks_else_agents() -> None:
    delegation = '{"type":"task_delegation","taskId":"t9","taskTitle":"Fix CI"}'
    records = [
        ev(0, "task.started", "ruda", None, conv=None, taskId="t1"),
        ev(1, "plan.submitted", "ruda", None, conv=None, taskId="t1", title="Rollback plan"),
        ev(
            2,
            "a2a.send",
            "ruda",
            "eden",
            conv="c1",
            payloadType="task_delegation",
            payloadJson=delegation,
        ),
        ev(3, "a2a.send", "ruda", "seum", conv="c2", message="hi"),
        {"type": "milestone.sync_failed", "ts": T0 + 4000, "data": {"workSessionId": WS}},
    ]
    result, enriched = build(records)
    out = thread_messages(result, enriched, WS)
    titles = dict(out.select("thread_id", "thread_title").unique().iter_rows())
    assert titles == {
        "pair:ruda_unknown": "Rollback plan",
        "conv:c1": "Fix CI",
        "conv:c2": "ruda ↔ seum",
        "event:milestone.sync_failed:5905000": "milestone sync failed events from 02-19 11:20",
    }
    assert out.filter(pl.col("thread_id") == "conv:c1")["title"].to_list() == ["Fix CI"]
    assert thread_view(result, enriched, WS).session["title"] == "Rollback plan"
    assert session_titles(enriched).rows() == [(WS, "t1", "Rollback plan", "hi")]


def test_a_session_without_a_task_title_is_shown_by_its_first_message() -> None:
    records = [
        ev(0, "task.started", "ruda", None, conv=None, taskId="t1"),
        ev(1, "a2a.send", "ruda", "eden", message="<@130050000004821007> check the <b>logs</b>"),
        ev(2, "a2a.send", "ruda", "eden", message="second"),
    ]
    result, enriched = build(records)
    assert session_titles(enriched).rows() == [
        (WS, "t1", None, "<@130050000004821007> check the <b>logs</b>")
    ]
    view = thread_view(result, enriched, WS, discord_users=USERS)
    assert (view.session["title"], view.session["about"]) == (None, "@main check the <b>logs</b>")
    assert "“@main check the &lt;b&gt;logs&lt;/b&gt;”</em>" in view.to_html()
    table = sessions_table(result, enriched, discord_users=USERS)
    assert table.frame["about"].to_list() == ["@main check the <b>logs</b>"]
    assert "“@main check the &lt;b&gt;logs&lt;/b&gt;”</em>" in table.to_html()


def test_one_agent_threads_are_named_by_agent_and_event_families() -> None:
    out = messages(
        [
            ev(0, "task.started", "ruda", None, conv=None, taskId="t1"),
            ev(1, "resume_reminder.sent", "ruda", None, conv=None, taskId="t1"),
            ev(2, "task.updated", "ruda", None, conv=None, taskId="t1"),
        ]
    )
    assert out["thread_title"].unique().to_list() == ["ruda · task, resume reminder events"]


# ---- rows, order, selection --------------------------------------------------------------


def test_rows_are_the_sessions_thread_events_in_order_with_numbers() -> None:
    records = [
        ev(0, "a2a.send", "ruda", "eden", conv="c1", message="one"),
        ev(1, "a2a.send", "ruda", "seum", conv="c2", message="two"),
        ev(2, "a2a.response", "eden", "ruda", conv="c1", replyPreview="three"),
        {
            "type": "a2a.send",
            "ts": T0,
            "data": {"workSessionId": "ws_other", "fromAgent": "a", "toAgent": "b"},
        },
    ]
    result, enriched = build(records)
    out = thread_messages(result, enriched, "ws:" + WS)
    assert out.columns == list(MESSAGE_COLUMNS)
    members = result.thread_events.filter(pl.col("work_session_id") == WS)
    assert out.select("thread_id", "file", "line").equals(
        members.select("thread_id", "file", "line")
    )
    assert out.select("thread_id", "n", "sender", "receiver", "text").rows() == [
        ("conv:c1", 1, "ruda", "eden", "one"),
        ("conv:c1", 2, "eden", "ruda", "three"),
        ("conv:c2", 1, "ruda", "seum", "two"),
    ]
    assert thread_messages(result, enriched, WS, threads=["conv:c2"])["text"].to_list() == ["two"]


def test_unknown_session_raises_and_unassigned_events_are_a_session() -> None:
    records = [
        ev(0, "a2a.send", "ruda", "eden", message="in ws"),
        {
            "type": "a2a.send",
            "ts": T0,
            "data": {"fromAgent": "a", "toAgent": "b", "message": "loose"},
        },
    ]
    result, enriched = build(records)
    with pytest.raises(KeyError, match="ws_nope"):
        thread_messages(result, enriched, "ws_nope")
    with pytest.raises(KeyError):
        thread_messages(result, enriched, "unassigned")
    result, enriched = build(records, unassigned=True)
    assert thread_messages(result, enriched, "unassigned")["text"].to_list() == ["loose"]
    assert (
        thread_view(result, enriched, "unassigned").session["title"]
        == "events without a work session"
    )
    titles = dict(sessions_table(result, enriched).frame.select("id", "title").iter_rows())
    assert titles == {"unassigned": "events without a work session", "ws:" + WS: None}


# ---- search ------------------------------------------------------------------------------

SEARCHABLE = [
    ev(0, "a2a.send", "ruda", "eden", message="Please DEPLOY the build"),
    ev(1, "a2a.response", "eden", "ruda", replyPreview="deployed to staging"),
    ev(2, "a2a.response", "ruda", "eden", outcome="no_reply", waitStatus="not_found"),
    ev(3, "a2a.send", "ruda", "seum", conv="c2", message="Anything (else)?"),
]


@pytest.mark.parametrize(
    ("search", "regex", "texts"),
    [
        ("deploy", False, ["Please DEPLOY the build", "deployed to staging"]),
        ("DEPLOYED", False, ["deployed to staging"]),
        ("no reply", False, [None]),  # the label matches
        ("seum", False, ["Anything (else)?"]),  # the receiver matches
        ("(else)", False, ["Anything (else)?"]),  # literal, not a regex
        (r"\bdeploy\w+", True, ["deployed to staging"]),
        (r"build$|staging$", True, ["Please DEPLOY the build", "deployed to staging"]),
        ("nothing like this", False, []),
        ("", False, ["Anything (else)?", "Please DEPLOY the build", "deployed to staging", None]),
    ],
)
def test_search_filters_case_insensitively(search: str, regex: bool, texts: list) -> None:
    assert messages(SEARCHABLE, search=search, regex=regex)["text"].to_list() == texts


def test_search_keeps_message_numbers_and_rejects_bad_regex() -> None:
    out = messages(SEARCHABLE, search="staging")
    assert out.select("thread_id", "n").rows() == [("conv:c1", 2)]
    with pytest.raises(ValueError, match="invalid search regex"):
        messages(SEARCHABLE, search="(unclosed", regex=True)


def test_search_chart_filters_as_the_search_parameter_does() -> None:
    everything = messages(SEARCHABLE)
    spec = search_chart(everything).to_dict()
    (param,) = spec["params"]
    assert param["name"] == "search" and param["bind"]["input"] == "search" and param["value"] == ""
    layer = spec["layer"][1]
    assert {"filter": "indexof(datum.haystack, lower(search)) >= 0"} in layer["transform"]
    rows = spec["datasets"][spec["data"]["name"]]
    for query in ("deploy", "NO REPLY", "seum", "zzz"):
        in_chart = [row["num"] for row in rows if query.lower() in row["haystack"]]
        in_frame = [f"#{n}" for n in messages(SEARCHABLE, search=query)["n"]]
        assert in_chart == in_frame, query


def test_search_chart_filters_in_vega_as_the_search_parameter_does() -> None:
    vl_convert = pytest.importorskip("vl_convert")
    everything = messages(SEARCHABLE)
    spec = search_chart(everything).to_dict()
    for query in ("DEPLOY", "no reply", "zzz"):
        spec["params"][0]["value"] = query  # what a reader types in the box
        shown = re.findall(r">(#\d+)<", vl_convert.vegalite_to_svg(spec))
        assert shown == [f"#{n}" for n in messages(SEARCHABLE, search=query)["n"]], query


def test_search_chart_refuses_too_many_rows() -> None:
    many = messages(SEARCHABLE).sample(6000, with_replacement=True, seed=1)
    with pytest.raises(ValueError, match="at most"):
        search_chart(many)


# ---- HTML --------------------------------------------------------------------------------

VIEW_RECORDS = [
    ev(0, "plan.submitted", "ruda", None, conv=None, taskId="t1", title="Rollback <plan>"),
    ev(1, "a2a.send", "ruda", "eden", message="<@130050000004821007> **go** <script>x()</script>"),
    no_reply_response(2, outcome="no_reply", waitStatus="timeout"),
]


def test_view_is_deterministic_and_escapes_everything() -> None:
    first = thread_view(*build(VIEW_RECORDS), WS, discord_users=USERS).to_html()
    again = thread_view(*build(VIEW_RECORDS), WS, discord_users=USERS)
    assert again.to_html() == first and again._repr_html_() == first
    assert "<script" not in first and "&lt;script&gt;x()&lt;/script&gt;" in first
    assert "Rollback &lt;plan&gt;" in first and "@main <strong>go</strong>" in first
    assert "no reply: waited more than 300 s" in first
    assert re.search(r'\sid="', first) is None  # no generated element ids


def test_view_shows_times_in_the_display_time_zone() -> None:
    result, enriched = build(VIEW_RECORDS)
    utc = thread_view(result, enriched, WS)
    seoul = thread_view(result, enriched, WS, tz="Asia/Seoul")
    assert '<time datetime="2026-02-19T11:20:01.000+00:00"' in utc.to_html()
    assert '<time datetime="2026-02-19T20:20:01.000+09:00"' in seoul.to_html()
    assert ">02-19 20:20:01</time>" in seoul.to_html() and "times in Asia/Seoul" in seoul.to_html()
    frame = thread_messages(result, enriched, WS, tz="Asia/Seoul")
    assert frame.schema["time"] == pl.Datetime("ms", "Asia/Seoul")
    assert frame["time"][0].hour == 20


def test_view_search_counts_limit_and_search_box() -> None:
    result, enriched = build(VIEW_RECORDS)
    view = thread_view(result, enriched, WS, search="go")
    assert (view.matched, view.total, view.messages.height) == (1, 3, 1)
    assert "1 of 3 messages match <code>go</code>" in view.to_html()
    assert 'type="search"' in view.to_html()
    assert 'type="search"' not in thread_view(result, enriched, WS, search_box=False).to_html()
    limited = thread_view(result, enriched, WS, max_messages=2)
    assert limited.messages.height == 2 and "showing the first 2 of 3 messages" in limited.to_html()
    assert "no message matches" in thread_view(result, enriched, WS, search="zzz").to_html()


# ---- sessions table ----------------------------------------------------------------------


def test_sessions_table_badges_titles_and_durations() -> None:
    records = [
        ev(0, "task.started", "ruda", None, conv=None, taskId="t1"),
        ev(1, "plan.submitted", "ruda", None, conv=None, taskId="t1", title="Rollback plan"),
        ev(3725, "task.updated", "ruda", None, conv=None, taskId="t1", status="completed"),
        {
            "type": "a2a.send",
            "ts": T0 - 3 * 86_400_000,
            "data": {"workSessionId": "ws_old", "fromAgent": "a"},
        },
    ]
    enriched = al.enrich(from_records(records))
    result = al.work_sessions(
        enriched, now=T0 + 3_726_000, overrides={"ws_old": {"collabCategory": "infra_ops"}}
    )
    table = sessions_table(result, enriched, tz="Asia/Seoul")
    assert table.frame.select("work_session_id", "status", "title", "duration", "start").rows() == [
        (WS, "QUIET", "Rollback plan", "1 h 02 min", "2026-02-19 20:20"),
        ("ws_old", "ARCHIVED", None, "0 s", "2026-02-16 20:20"),
    ]
    page = table.to_html()
    assert page == sessions_table(result, enriched, tz="Asia/Seoul").to_html()
    assert ">QUIET</span>" in page and ">ARCHIVED</span>" in page and "infra_ops ✎" in page
    assert sessions_table(result, enriched, limit=1).frame.height == 1
