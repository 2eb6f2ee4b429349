"""Hostile coordination-log lines and the invariants every analysis must keep on them.

Shared by ``tests/test_fuzz_hostile.py`` (hypothesis + the seeded corpus, in ``make test``)
and ``tools/fuzz.py`` (a long campaign). A generator returns raw ``bytes`` lines so that
invalid UTF-8, NUL, BOM and CRLF reach the loader exactly as a broken writer would leave them.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

import a2a_lab as al
from a2a_lab._deep import deep_call
from a2a_lab.analysis import checks, pm
from a2a_lab.analysis.graph import interaction_graph
from a2a_lab.reference.jsstr import js_well_formed_json
from a2a_lab.views import threads

TYPES = [
    "a2a_send",
    "a2a_response",
    "a2a_complete",
    "a2a_timeout",
    "task_start",
    "task_end",
    "x",
    "session_start",
]
FIELDS = [
    "fromAgent",
    "toAgent",
    "conversationId",
    "turn",
    "maxTurns",
    "message",
    "reply",
    "start",
    "status",
    "sessionKey",
    "taskId",
    "error",
    "durationMs",
    "depth",
]
HOSTILE_NUMBERS = [
    "8.3e15",
    "1e400",
    "-1e400",
    "-0",
    "1e19",
    "8.64e15",
    "8640000000000001",
    "-8.64e16",
    "9.5e15",
    "1e-400",
    "4.9e-324",
    "1.7976931348623157e308",
    "18446744073709551616",
    "3.5",
    "-1",
    "0",
]
HOSTILE_STRINGS = [
    "\ud800",
    "\udfff",
    "\u202e\u2066evil",
    "\x00",
    "\x1b[31m",
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "\ufeff",
    "\r\n",
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "+275760-09-13T00:00:00.001Z",
    "-271821-04-19T00:00:00.000Z",
    "",
    " ",
    "NaN",
    "Infinity",
    "x" * 5000,
    "1e400",
]
DATES = [
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "2026-01-01T25:61:61Z",
    "+275760-09-13T00:00:00.001Z",
    "2026-01-01T00:00:00.000Z",
    "0000-00-00",
    "2026-03-01T10:00:00+99:00",
    "\ud800",
    "9999999999",
]


def _js(value: Any) -> str:
    """JSON text of a value (lone surrogates kept as escapes, as a JS writer would)."""
    return json.dumps(value, ensure_ascii=True)


def _hostile_value(rng: random.Random, depth: int = 0) -> str:
    """Raw JSON text of one hostile value: any JSON type, numbers beyond every range, deep nesting."""
    k = rng.randrange(10)
    if k == 0:
        return rng.choice(HOSTILE_NUMBERS)
    if k == 1:
        return _js(rng.choice(HOSTILE_STRINGS))
    if k == 2:
        n = rng.choice([1, 50, 500, 3000])
        return "[" * n + "1" + "]" * n
    if k == 3:
        n = rng.choice([1, 50, 500])
        return '{"a":' * n + "null" + "}" * n
    if k == 4 and depth < 2:
        return "[" + ",".join(_hostile_value(rng, depth + 1) for _ in range(rng.randrange(3))) + "]"
    if k == 5 and depth < 2:
        keys = rng.sample(FIELDS, 2)
        return "{" + ",".join(f'"{key}":{_hostile_value(rng, depth + 1)}' for key in keys) + "}"
    if k == 6:
        return rng.choice(["true", "false", "null"])
    if k == 7:
        return str(rng.randint(-(2**70), 2**70))
    if k == 8:
        return _js(rng.choice(DATES))
    return _js(rng.choice(["main", "agent-b", "c", "worker 1", "\u0001id", "a\nb"]))


def _obj_line(rng: random.Random) -> str:
    """A JSON object line shaped like an event, with hostile values in random fields."""
    parts: list[str] = []
    if rng.random() < 0.9:
        parts.append(
            f'"type":{_js(rng.choice(TYPES)) if rng.random() < 0.85 else _hostile_value(rng)}'
        )
    if rng.random() < 0.8:
        parts.append(
            f'"agentId":{_js(rng.choice(["main", "agent-b", "c"])) if rng.random() < 0.7 else _hostile_value(rng)}'
        )
    if rng.random() < 0.8:
        ts = rng.choice(
            [str(1767225600000 + rng.randrange(10**8)), *HOSTILE_NUMBERS, _js(rng.choice(DATES))]
        )
        parts.append(f'"ts":{ts}')
    if rng.random() < 0.4:
        parts.append(
            f'"timestamp":{_js(rng.choice(DATES)) if rng.random() < 0.7 else _hostile_value(rng)}'
        )
    if rng.random() < 0.85:
        data = []
        for key in rng.sample(FIELDS, rng.randrange(len(FIELDS))):
            if key in ("fromAgent", "toAgent") and rng.random() < 0.6:
                val = _js(rng.choice(["main", "agent-b", "c", "d"]))
            elif key == "conversationId" and rng.random() < 0.6:
                val = _js(f"conv-{rng.randrange(5)}")
            else:
                val = _hostile_value(rng)
            data.append(f'"{key}":{val}')
        if rng.random() < 0.1:
            data.append(f'"fromAgent":{_js("dup")}')  # duplicate key
        parts.append(
            '"data":{' + ",".join(data) + "}"
            if rng.random() < 0.9
            else f'"data":{_hostile_value(rng)}'
        )
    if rng.random() < 0.2:
        parts.append(f'"unknown{rng.randrange(3)}":{_hostile_value(rng)}')
    if rng.random() < 0.05:
        parts.append(f'"type":{_js(rng.choice(TYPES))}')  # duplicate key at top level
    rng.shuffle(parts)
    return "{" + ",".join(parts) + "}"


def hostile_line(rng: random.Random) -> bytes:
    """One raw physical line (without its newline): mostly event-like objects, some garbage."""
    k = rng.random()
    if k < 0.75:
        line = _obj_line(rng).encode("utf-8", "surrogatepass")
    elif k < 0.80:
        line = _hostile_value(rng).encode(
            "utf-8", "surrogatepass"
        )  # arrays, strings, numbers at top level
    elif k < 0.84:
        line = b""
    elif k < 0.87:
        line = _obj_line(rng).encode()[: rng.randrange(1, 40)]  # truncated
    elif k < 0.90:
        line = (
            ("{" * 100_000).encode()
            if rng.random() < 0.2
            else bytes(rng.randrange(256) for _ in range(rng.randrange(60)))
        )
    else:
        line = _obj_line(rng).encode("utf-8", "surrogatepass")
        # raw-byte damage: invalid UTF-8, NUL, BOM, CR, control and bidi characters inside the line
        pos = rng.randrange(len(line) + 1)
        junk = rng.choice(
            [
                b"\xff\xfe",
                b"\xc3",
                b"\x00",
                b"\xef\xbb\xbf",
                b"\r",
                b"\xe2\x80\xae",
                b"\x1b",
                b"\xed\xa0\x80",
            ]
        )
        line = line[:pos] + junk + line[pos:]
    if rng.random() < 0.05:
        line = line + b"\r"  # CRLF ending
    if rng.random() < 0.01:
        line = b"\xef\xbb\xbf" + line
    return line.replace(b"\n", b"\\n")


def write_batch(
    directory: Path, rng: random.Random, n_lines: int, *, gz: bool = False
) -> tuple[Path, int]:
    """Write one hostile log directory (live file + optionally a rotated, maybe truncated .gz)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [hostile_line(rng) for _ in range(n_lines)]
    body = b"\n".join(lines) + (b"\n" if rng.random() < 0.9 else b"")
    (directory / "coordination-events.ndjson").write_bytes(body)
    total = n_lines
    if gz:
        more = [hostile_line(rng) for _ in range(n_lines // 4)]
        blob = gzip.compress(b"\n".join(more) + b"\n")
        if rng.random() < 0.5:
            blob = blob[: rng.randrange(10, len(blob))]  # truncated member
        (directory / "coordination-events-2026-01.ndjson.gz").write_bytes(blob)
        total += len(more)
    return directory, total


def _each(name: str, fn: Callable[[], Any], failures: list[str]) -> Any:
    try:
        return fn()
    except Exception as exc:  # the invariant under test: nothing raises; collect every breach
        failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        return None
    except BaseException as exc:  # pyo3 PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        return None


def check_source(source: Path) -> list[str]:
    """Load ``source`` and run every analysis on it; return the invariant breaches (empty = fine)."""
    failures: list[str] = []
    res = _each("load", lambda: al.load(source), failures)
    if res is None:
        return failures
    rep = res.report
    accounted = rep.events + rep.rejects.height + rep.total_blank
    if accounted != rep.total_lines:
        failures.append(
            f"accounting: {rep.total_lines} lines != {rep.events} events + {rep.rejects.height} rejects + {rep.total_blank} blank"
        )
    own = rep.rejects.filter(
        pl.col("reason").str.contains("(?i)recursion|overflow|encod|out of range|out-of-range")
    )
    if own.height:
        failures.append(f"own-reason rejects: {own.get_column('reason').unique().to_list()[:5]}")
    ev = res.events
    now = datetime(2026, 6, 1, tzinfo=UTC)
    enriched = _each("enrich", lambda: al.enrich(ev), failures)
    if enriched is None:
        return failures
    ws = _each("work_sessions", lambda: al.work_sessions(enriched, now=now), failures)
    _each(
        "events_query.to_api",
        lambda: js_well_formed_json(
            deep_call(json.dumps, al.events_query(enriched).to_api(), ensure_ascii=False)
        ).encode(),
        failures,
    )
    if ws is not None:
        _each(
            "work_sessions.to_api",
            lambda: js_well_formed_json(
                deep_call(json.dumps, ws.to_api(), ensure_ascii=False)
            ).encode(),
            failures,
        )
        table = _each("sessions_table", lambda: threads.sessions_table(ws, enriched), failures)
        if table is not None:
            _each(
                "sessions_table.html",
                lambda: _no_live_script(table._repr_html_(), "sessions_table"),
                failures,
            )
        sessions = (
            ws.sessions.get_column(ws.sessions.columns[0]).head(2).to_list()
            if ws.sessions.height
            else []
        )
        for s in sessions:
            view = _each("thread_view", lambda s=s: threads.thread_view(ws, enriched, s), failures)
            if view is not None:
                _each(
                    "thread_view.html",
                    lambda v=view: _no_live_script(v._repr_html_(), "thread_view"),
                    failures,
                )
    _each("conversations", lambda: al.conversations(enriched), failures)
    _each("pair_stats", lambda: al.pair_stats(al.conversations(enriched)), failures)
    _each("interaction_graph", lambda: interaction_graph(enriched), failures)
    _each("check", lambda: checks.check(enriched), failures)
    _each("check(raw events)", lambda: checks.check(ev), failures)
    _each("pm.directly_follows", lambda: pm.directly_follows(enriched), failures)
    _each("pm.variants", lambda: pm.variants(enriched), failures)
    _each("pm.to_ocel2", lambda: json.dumps(pm.to_ocel2(enriched)), failures)
    _each("write_events", lambda: _roundtrip(ev, failures), failures)
    return failures


def _no_live_script(html: str, where: str) -> None:
    low = html.lower()
    if "<script>alert" in low or "onerror=alert" in low:
        raise AssertionError(f"{where}: planted script is live in the HTML")


def _roundtrip(events: pl.DataFrame, failures: list[str]) -> None:
    """write_events writes valid JSON lines that reload to the same events."""
    text = al.write_events(events)
    assert text is not None
    lines = text.split("\n")[:-1]
    if len(lines) != events.height:
        failures.append(f"write_events: {len(lines)} lines for {events.height} events")
    for i, line in enumerate(lines):
        deep_call(json.loads, line, parse_constant=_reject_constant, depth=len(line))
        if i > 2000:
            break


def _reject_constant(name: str) -> None:
    raise ValueError(f"write_events wrote the non-JSON constant {name}")
