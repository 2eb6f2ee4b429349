"""Logs for the report tests: a generated log with hostile text planted in it.

The hostile records form the most recent work session, so the report shows them first.
Every planted payload would set ``window.__pwned`` (or call ``alert``) if it ever ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from a2a_lab.app.report import ReportData
from a2a_lab.samples import write_log
from a2a_lab.views.titles import task_titles

#: Agent ids, titles and messages that try to run script in a page that shows them.
EVIL_AGENT = "evil\"'><svg onload=window.__pwned='agent'>"
EVIL_TITLE = "</title><script>window.__pwned='title'</script>배포 계획"
EVIL_MESSAGES = (
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "</script><script>window.__pwned='breakout'</script>",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:alert('href')\">raw link</a>",
    "**bold** 안녕하세요 \u202eexe.txt\u202c and \u2066isolate\u2069 \x07bell",
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "\u2028line<!-- comment --> & ampersand </style><style>body{display:none}</style>",
)
HOSTILE_SESSION = "ws_hostile</script>"
#: A Discord mention the CLI test resolves with ``--discord-users``.
MENTION = ("130050000004821007", "<@130050000004821007> 배포 확인 부탁해요")
BIDI_AND_CONTROLS = ("\u202e", "\u202c", "\u2066", "\u2069", "\x07")
#: A message with ordinary links: the report shows them as links, opened on click, never fetched.
#: (The simulated sample log holds no links since main's samples change, so one is planted.)
LINKS = "runbook: [the PR](https://github.com/example/a2a/pull/7) and https://example.com/runbook"


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def hostile_records(t0_ms: int) -> list[dict[str, Any]]:
    """The planted events, from ``t0_ms`` on, one second apart."""
    conv = "conv-</script><script>window.__pwned='id'</script>"
    base = {"workSessionId": HOSTILE_SESSION, "conversationId": conv}
    records: list[dict[str, Any]] = [
        {
            "type": "plan.submitted",
            "agentId": "main",
            "ts": t0_ms,
            "data": {**base, "taskId": "task-evil", "title": EVIL_TITLE},
        },
    ]
    for i, text in enumerate(EVIL_MESSAGES, start=1):
        records.append(
            {
                "type": "a2a.send",
                "agentId": EVIL_AGENT,
                "ts": t0_ms + 1000 * i,
                "data": {
                    **base,
                    "taskId": "task-evil",
                    "fromAgent": EVIL_AGENT,
                    "toAgent": "main",
                    "message": text,
                },
            }
        )
    records.append(
        {
            "type": "a2a.send",
            "agentId": "main",
            "ts": t0_ms + 500,
            "data": {**base, "fromAgent": "main", "toAgent": "ruda", "message": MENTION[1]},
        }
    )
    records.append(
        {
            "type": "a2a.send",
            "agentId": "main",
            "ts": t0_ms + 250,
            "data": {**base, "fromAgent": "main", "toAgent": "ruda", "message": LINKS},
        }
    )
    records.append(
        {
            "type": "a2a.response",
            "agentId": "main",
            "ts": t0_ms + 1000 * (len(EVIL_MESSAGES) + 1),
            "data": {
                **base,
                "fromAgent": EVIL_AGENT,
                "toAgent": "main",
                "message": EVIL_MESSAGES[2],
            },
        }
    )
    return records


def write_hostile_log(path: Path, n_events: int = 3000, seed: int = 7) -> Path:
    """A generated log of ``n_events`` lines plus the hostile session after its last event."""
    write_log(path, n_events, seed=seed)
    lines = path.read_text(encoding="utf-8").splitlines()
    last = max(json.loads(line).get("ts") or 0 for line in lines[-50:])
    with path.open("a", encoding="utf-8") as out:
        for record in hostile_records(int(last) + 60_000):
            out.write(_line(record) + "\n")
        out.write("{not json</script><script>window.__pwned='reject'</script>\n")
    return path


def report_frames(data: ReportData) -> dict[str, pl.DataFrame]:
    """Everything a report's page is rendered from, but the event frames each path holds
    (the whole load, the log read a bucket at a time, the store's tables)."""
    return {
        "conversations": data.conversations,
        "pairs": data.pairs,
        "traffic": data.traffic,
        "findings": data.findings,
        "guards": data.guards,
        "messages": data.messages,
        "sessions": data.sessions.sessions,
        "threads": data.sessions.threads,
        "thread_events": data.sessions.thread_events,
        "rejects": data.load.report.rejects,
        "issues": data.load.report.issues,
        "titles": task_titles(data.enriched if data.title_events is None else data.title_events),
    }
