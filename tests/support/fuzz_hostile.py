"""Hostile coordination-log lines and the invariants every analysis must keep on them.

Shared by ``tests/hostile/test_fuzz_hostile.py`` (hypothesis + the seeded corpus, in ``make test``)
and ``tools/fuzz.py`` (a long campaign). A generator returns raw ``bytes`` lines so that
invalid UTF-8, NUL, BOM and CRLF reach the loader exactly as a broken writer would leave them.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl

import a2a_lab as al
from a2a_lab._deep import deep_call
from a2a_lab.analysis import checks, pm
from a2a_lab.analysis.graph import conversation_tree, graph_metrics, interaction_graph
from a2a_lab.reference.jsstr import js_trim, js_well_formed_json
from a2a_lab.reference.strict_json import parse_int
from a2a_lab.views import plots, threads
from a2a_lab.views.report import ReportOptions
from tests.support.event_types import REFERENCE_EVENT_TYPES

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
# Extremes for EVERY numeric field (issue 24 §4, issue 27): zeros, the double's ends, the
# Date edge ±1, the safe-integer edge ±1, 2**63, NaN-like strings and integer literals of
# more than 4,300 digits (Python's int refuses them; JSON.parse reads Infinity)
EXTREME_NUMBERS = [
    "0",
    "-0",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "8.64e15",
    "8640000000000001",
    "8639999999999999",
    "-8.64e15",
    "-8640000000000001",
    "9007199254740991",
    "9007199254740993",
    "9223372036854775808",
    "-9223372036854775809",
    "1e-300",
    "5e-324",
    '"NaN"',
    '"Infinity"',
    '"-Infinity"',
    '"1e309"',
    "9" * 4400,
    "-" + "9" * 4400,
]
#: Every numeric field of the event model (top level, then ``data``).
TOP_NUMBERS = ("ts", "timestampMs")
DATA_NUMBERS = (
    "depth",
    "hop",
    "categoryConfidence",
    "turn",
    "maxTurns",
    "configuredMaxTurns",
    "effectiveTurns",
    "actualTurns",
    "timeoutSeconds",
    "attempt",
    "maxAttempts",
    "backoffMs",
    "elapsedMs",
)
# Times at JavaScript's Date edge (8.64e15 ms = +275760-09-13) and beyond (issue 14 §3)
EDGE_TS = [
    "8.2e15",
    "8200000000000000",
    "8.5e15",
    "8.6e15",
    "8639999999999999",
    "8639999999999999.5",
    "8.64e15",
    "8640000000000000",
    "8640000000000001",
    "8.7e15",
    "9e15",
    "1e16",
    "8.64e18",
    "-8.2e15",
    "-8.64e15",
    "-8640000000000001",
]
EDGE_DATES = [
    "+275760-09-13T00:00:00.000Z",
    "+275760-09-12T23:59:59.999Z",
    "+275760-09-13T00:00:00.001Z",
    "+259843-01-01T00:00:00Z",
    "+262000-06-30T12:00:00+14:00",
    "-271821-04-20T00:00:00.000Z",
    "-271821-04-19T23:59:59.999Z",
]
DATES = [
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "2026-01-01T25:61:61Z",
    "+275760-09-13T00:00:00.001Z",
    *EDGE_DATES,
    "2026-01-01T00:00:00.000Z",
    "0000-00-00",
    "2026-03-01T10:00:00+99:00",
    "\ud800",
    "9999999999",
]


def _edge_ms(rng: random.Random) -> str:
    """A time in ms between 8.2e15 and a little beyond JavaScript's largest (8.64e15), either sign."""
    ms = rng.randrange(8_200_000_000_000_000, 8_650_000_000_000_000)
    return str(ms if rng.random() < 0.9 else -ms)


def _js(value: Any) -> str:
    """JSON text of a value (lone surrogates kept as escapes, as a JS writer would)."""
    return json.dumps(value, ensure_ascii=True)


def _hostile_value(rng: random.Random, depth: int = 0) -> str:
    """Raw JSON text of one hostile value: any JSON type, numbers beyond every range, deep nesting."""
    k = rng.randrange(10)
    if k == 0:
        return rng.choice(HOSTILE_NUMBERS + EXTREME_NUMBERS)
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
            [
                str(1767225600000 + rng.randrange(10**8)),
                *HOSTILE_NUMBERS,
                rng.choice(EXTREME_NUMBERS),
                _js(rng.choice(DATES)),
                rng.choice(EDGE_TS),
                _edge_ms(rng),
            ]
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
    if rng.random() < 0.3:
        # an extreme in any numeric field, sometimes as a duplicate key
        top, pairs = _extremes(rng, "", [])
        if top:
            parts.append(top.lstrip(","))
        if pairs:
            parts.append('"data":{' + ",".join(f'"{k}":{v}' for k, v in pairs) + "}")
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


# The reference's own event types (rules §1) and agents, for lines the analyses take up
REAL_TYPES = list(REFERENCE_EVENT_TYPES)
AGENTS = ["main", "ruda", "eden", "bada", "sori", "\u202eevil", "<b>x</b>", "a\u0001b"]
TEXTS = [
    "ok, on it",
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "\u202e\u2066gnp.exe\u2069",
    "bell\u0007 esc\u001b[31m nul\u0000",
    "\ud800 lone",
    "@<@512093847561029384> **bold** [link](javascript:alert(1))",
    "```\n</script>\n```",
    "회귀 테스트",
    "",
]


def event_line(rng: random.Random, base_ms: int, i: int, spice: float = 1.0) -> bytes:
    """An event-shaped line of a real type (the kind the analyses take up), fields sometimes hostile.

    ``base_ms`` + ``i`` seconds is its time, unless it draws an edge time (≈ 8.2e15–8.65e15
    ms or a date beyond ``Date``'s range) or a hostile number. ``spice``: the chance that the
    line draws hostile values at all (else plain values: names, times, HTML-hostile texts
    that are valid JSON strings and decode on the fast path).
    """
    if rng.random() >= spice:
        conv = rng.randrange(40)
        frm, to = rng.sample(AGENTS[:5], 2)
        msg = rng.choice(TEXTS[:4] + TEXTS[6:])
        return (
            f'{{"type":{_js(rng.choice(REAL_TYPES))},"agentId":{_js(frm)},'
            f'"ts":{base_ms + i * 1000 + rng.randrange(1000)},"data":{{"fromAgent":{_js(frm)},'
            f'"toAgent":{_js(to)},"conversationId":"conv-{conv}","workSessionId":"ws_{conv % 12}",'
            f'"taskId":"task_{conv % 17}","turn":{rng.randrange(1, 6)},"maxTurns":5,'
            f'"message":{_js(msg)}}}}}'
        ).encode("utf-8", "surrogatepass")
    conv = rng.randrange(40)
    frm, to = rng.sample(AGENTS[:5], 2) if rng.random() < 0.9 else rng.sample(AGENTS, 2)
    r = rng.random()
    if r < 0.9:
        ts = str(base_ms + i * 1000 + rng.randrange(1000))
    elif r < 0.95:
        ts = rng.choice([rng.choice(EDGE_TS), _edge_ms(rng)])
    else:
        ts = rng.choice(HOSTILE_NUMBERS)
    data: dict[str, str] = {
        "fromAgent": _js(frm),
        "toAgent": _js(to),
        "conversationId": _js(f"conv-{conv}"),
        "workSessionId": _js(f"ws_{conv % 12}"),
        "taskId": _js(f"task_{conv % 17}"),
    }
    if rng.random() < 0.7:
        data["message"] = _js(rng.choice(TEXTS))
    if rng.random() < 0.4:
        data["turn"] = (
            str(rng.randrange(1, 6)) if rng.random() < 0.9 else rng.choice(HOSTILE_NUMBERS)
        )
        data["maxTurns"] = "5"
    if rng.random() < 0.1:
        data["title"] = _js(rng.choice(TEXTS))
    if rng.random() < 0.05:
        data["depth"] = rng.choice(["1", "2", *HOSTILE_NUMBERS])
    if rng.random() < 0.05:
        data["durationMs"] = rng.choice([*HOSTILE_NUMBERS, *EDGE_TS])
    if rng.random() < 0.03:
        data["start"] = rng.choice([*EDGE_TS, _edge_ms(rng)])
    if rng.random() < 0.03:
        data["extra"] = _hostile_value(rng)  # an unknown field: any JSON, deep nesting included
    top = f'"type":{_js(rng.choice(REAL_TYPES))},"agentId":{_js(frm)},"ts":{ts}'
    if rng.random() < 0.03:
        top += f',"timestamp":{_js(rng.choice([*EDGE_DATES, *DATES]))}'
    pairs = list(data.items())
    if rng.random() < 0.15:
        top, pairs = _extremes(rng, top, pairs)
    body = ",".join(f'"{k}":{v}' for k, v in pairs)
    line = ("{" + top + ',"data":{' + body + "}}").encode("utf-8", "surrogatepass")
    return line + b"\r" if rng.random() < 0.01 else line


def _extremes(
    rng: random.Random, top: str, pairs: list[tuple[str, str]]
) -> tuple[str, list[tuple[str, str]]]:
    """Extreme values (:data:`EXTREME_NUMBERS`) in one to three numeric fields of a line,
    top level or ``data``; a third of them written as a duplicate key (JSON.parse keeps the
    last), the extreme first or last."""
    for _ in range(rng.randint(1, 3)):
        value = rng.choice(EXTREME_NUMBERS)
        dup = rng.random() < 1 / 3
        if rng.random() < 0.3:
            key = rng.choice(TOP_NUMBERS)
            plain = str(1_767_225_600_000 + rng.randrange(10**8))
            if dup:
                first, last = (plain, value) if rng.random() < 0.5 else (value, plain)
                top += f',"{key}":{first},"{key}":{last}'
            else:
                top += f',"{key}":{value}'
        else:
            key = rng.choice(DATA_NUMBERS)
            if dup:
                first, last = ("1", value) if rng.random() < 0.5 else (value, "1")
                pairs += [(key, first), (key, last)]
            else:
                pairs.append((key, value))
    return top, pairs


def write_scale_dir(
    directory: Path,
    rng: random.Random,
    *,
    files: int = 20,
    lines_per_file: int = 5000,
    hostile: float = 0.05,
    spice: float = 1.0,
) -> tuple[Path, int]:
    """A log directory of ``files`` bounded files (``files - 1`` rotated months + the live file).

    Each line is, with probability ``hostile``, a fully hostile line (:func:`hostile_line`:
    garbage, invalid UTF-8, truncation, deep nesting, …), else an event-shaped line of a
    real type (:func:`event_line`, hostile values with probability ``spice``). One file in five lives near JavaScript's largest time, so
    whole conversations, sessions and findings sit at 8.2e15–8.65e15 ms. Every fifth rotated
    file is gzipped; every tenth of those is truncated. Returns the directory and the number
    of physical lines written (each line ends with LF; the last line of a file may not).
    """
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    for f in range(files):
        base = (
            rng.randrange(8_200_000_000_000_000, 8_640_000_000_000_000 - 10**9)
            if f % 5 == 4
            else 1_767_225_600_000 + f * 86_400_000
        )
        lines = [
            hostile_line(rng) if rng.random() < hostile else event_line(rng, base, i, spice)
            for i in range(lines_per_file)
        ]
        body = b"\n".join(lines) + (b"\n" if rng.random() < 0.9 else b"")
        if f == files - 1:
            name = "coordination-events.ndjson"
        else:
            name = f"coordination-events-{2000 + f // 12:04d}-{f % 12 + 1:02d}.ndjson"
        if f % 5 == 2:
            blob = gzip.compress(body)
            if f % 10 == 2:
                blob = blob[: len(blob) * 3 // 4]  # a truncated member: its tail is lost
            (directory / (name + ".gz")).write_bytes(blob)
        else:
            (directory / name).write_bytes(body)
        total += len(lines)
    return directory, total


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


def check_source(
    source: Path,
    *,
    raw: bool = False,
    views: int = 3,
    stats: dict[str, int] | None = None,
    lean: bool = False,
    every: bool = False,
) -> list[str]:
    """Load ``source`` and run every analysis on it; return the invariant breaches (empty = fine).

    ``raw``: load with the original lines and check that ``write_events`` reproduces them byte
    for byte. ``views``: thread views rendered (those of the earliest and the latest sessions,
    so sessions at the edge of ``Date``'s range are among them). ``stats`` (if given) gets the
    physical lines, events, rejects and blank lines of the load added to it. ``lean`` (for
    100,000-line directories within a minute): ``work_sessions.to_api`` with summary thread
    events, no second ``check`` on the raw frame and no pm (the full set runs on the batches).
    ``every``: also the public analyses and writers the views do not use
    (:func:`_every_other_analysis`).
    """
    failures: list[str] = []
    res = _each("load", lambda: al.load(source, raw=raw), failures)
    if res is None:
        return failures
    rep = res.report
    if stats is not None:
        for key, value in (
            ("lines", rep.total_lines),
            ("events", rep.events),
            ("rejects", rep.rejects.height),
            ("blank", rep.total_blank),
        ):
            stats[key] = stats.get(key, 0) + value
    accounted = rep.events + rep.rejects.height + rep.total_blank
    if accounted != rep.total_lines or res.events.height != rep.events:
        failures.append(
            f"accounting: {rep.total_lines} lines != {rep.events} events ({res.events.height} rows)"
            f" + {rep.rejects.height} rejects + {rep.total_blank} blank"
        )
    if rep.rejects.height:
        unnamed = rep.rejects.filter(
            pl.col("file").is_null() | pl.col("line").is_null() | pl.col("reason").is_null()
        )
        if unnamed.height:
            failures.append(f"{unnamed.height} rejects without file, line or reason")
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
            json.dumps(al.events_query(enriched).to_api(), ensure_ascii=False)
        ).encode(),
        failures,
    )
    if ws is not None:
        _each(
            "work_sessions.to_api",
            lambda: js_well_formed_json(
                json.dumps(
                    ws.to_api(thread_events="summary" if lean else "full"), ensure_ascii=False
                )
            ).encode(),
            failures,
        )
        table = _each("sessions_table", lambda: threads.sessions_table(ws, enriched), failures)
        if table is not None:
            _each(
                "sessions_table.html",
                lambda: _safe_html(table._repr_html_(), "sessions_table"),
                failures,
            )
        ids = (
            ws.sessions.sort("start_time", nulls_last=True).get_column("id").to_list()
            if ws.sessions.height
            else []
        )
        for s in list(
            dict.fromkeys(ids[: (views + 1) // 2] + ids[-(views // 2) :] if views else [])
        ):
            _each(
                "thread_messages",
                lambda s=s: threads.thread_messages(ws, enriched, s, tz="Asia/Seoul"),
                failures,
            )
            view = _each("thread_view", lambda s=s: threads.thread_view(ws, enriched, s), failures)
            if view is not None:
                _each(
                    "thread_view.html",
                    lambda v=view: _safe_html(v._repr_html_(), "thread_view"),
                    failures,
                )
    conv = _each("conversations", lambda: al.conversations(enriched), failures)
    if conv is not None:
        _each("pair_stats", lambda: al.pair_stats(conv), failures)
        for name, chart in (
            ("latency_by_pair", lambda: plots.latency_by_pair(conv, min_exchanges=1)),
            ("pair_heatmap", lambda: plots.pair_heatmap(conv)),
            ("outcome_bars", lambda: plots.outcome_bars(conv)),
            ("category_bars", lambda: plots.category_bars(enriched)),
        ):
            spec = _each(name, lambda chart=chart: chart().to_dict(), failures)
            if spec is not None:
                _each(
                    name + ".json", lambda spec=spec, name=name: _chart_json(spec, name), failures
                )
    graph = _each("interaction_graph", lambda: interaction_graph(enriched), failures)
    if graph is not None:
        _each("graph_metrics", lambda: graph_metrics(graph), failures)
        _each("graph_chart", lambda: plots.graph_chart(graph).to_dict(), failures)
        _each("graph_matrix", lambda: plots.graph_matrix(graph).to_dict(), failures)
    _each("conversation_tree", lambda: conversation_tree(enriched), failures)
    for name, chart in (
        ("family_timeline", lambda: plots.family_timeline(enriched, tz="Asia/Seoul")),
        ("swimlane", lambda: plots.swimlane(enriched, tz="America/New_York")),
    ):
        spec = _each(name, lambda chart=chart: chart().to_dict(), failures)
        if spec is not None:
            _each(name + ".json", lambda spec=spec, name=name: _chart_json(spec, name), failures)
    found = _each("check", lambda: checks.check(enriched, report=rep), failures)
    if found is not None:
        _each("check.messages", lambda: _finding_texts(found), failures)
        _each("findings_chart", lambda: plots.findings_chart(found).to_dict(), failures)
    if not lean:
        _each("check(raw events)", lambda: checks.check(ev), failures)
        dfg = _each("pm.directly_follows", lambda: pm.directly_follows(enriched), failures)
        if dfg is not None:
            _each("dfg_chart", lambda: plots.dfg_chart(dfg).to_dict(), failures)
        _each("pm.variants", lambda: pm.variants(enriched), failures)
        _each("pm.to_ocel2", lambda: json.dumps(pm.to_ocel2(enriched)), failures)
    _each("write_events", lambda: _roundtrip(ev, source, raw, failures), failures)
    if every:
        _every_other_analysis(source, res, enriched, conv, graph, failures)
    return failures


def _every_other_analysis(
    source: Path,
    res: al.LoadResult,
    enriched: pl.DataFrame,
    conv: pl.DataFrame | None,
    graph: Any,
    failures: list[str],
) -> None:
    """The rest of the public API on the same frames: scans, payload tables, exchanges,
    calibration, the writers (OCEL, OTLP, GraphML, frames) and the HTML report."""
    out = source.parent / (source.name + "-out")
    out.mkdir(exist_ok=True)
    _each("scan", lambda: al.scan(source).collect(), failures)
    _each("load_findings", lambda: al.load_findings(res.report), failures)
    _each("message_counts", lambda: al.message_counts(enriched), failures)
    _each("exchange_events", lambda: al.exchange_events(enriched), failures)
    if conv is not None:
        _each("exchange_summary", lambda: al.exchange_summary(conv), failures)
        _each("target_stats", lambda: al.target_stats(conv), failures)
        _each("target_stats(by_hour)", lambda: al.target_stats(conv, by_hour=True), failures)
    payloads = _each("payload_events", lambda: al.payload_events(enriched), failures)
    if payloads is not None:
        for name, fn in (
            ("question_answers", al.question_answers),
            ("status_timeline", al.status_timeline),
            ("delegation_reports", al.delegation_reports),
        ):
            _each(name, lambda fn=fn: fn(payloads), failures)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fit's warnings (saturation, few samples) are findings
        _each("fit_log", lambda: al.fit_log(res.events), failures)
        _each("compare", lambda: al.compare(res.events, res.events).chart().to_dict(), failures)
    if graph is not None:
        _each("to_node_link", lambda: json.dumps(al.to_node_link(graph)), failures)
        _each("write_graph", lambda: al.write_graph(graph, out / "g.graphml"), failures)
        _each("graph_overview", lambda: plots.graph_overview(graph).to_dict(), failures)
    _each("to_ocel2", lambda: json.dumps(al.to_ocel2(enriched)), failures)
    _each("write_ocel2", lambda: al.write_ocel2(enriched, out / "o.json"), failures)
    _each(
        "to_otlp",
        lambda: al.to_otlp(enriched, output=out / "t.otlp.json", progress=False),
        failures,
    )
    _each("flatten", lambda: al.flatten(enriched), failures)
    for suffix in ("csv", "parquet", "json", "ndjson"):
        _each(
            f"write_frame.{suffix}",
            lambda suffix=suffix: al.write_frame(enriched, out / f"f.{suffix}"),
            failures,
        )
    report = _each(
        "report", lambda: al.report(res, ReportOptions(embed_font=False), tz="Asia/Seoul"), failures
    )
    if report is not None:
        _each("report.html", lambda: _safe_html(str(report.html), "report"), failures)


def _chart_json(spec: dict[str, Any], where: str) -> None:
    """A chart spec is valid JSON (no NaN) and shows no raw control or bidi character."""
    text = json.dumps(spec, ensure_ascii=False, allow_nan=False)
    bad = re.findall(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u202a-\u202e\u2066-\u2069]", text)
    if bad:
        raise AssertionError(
            f"{where}: raw control/bidi characters {sorted(set(bad))!r} in the spec"
        )


def _finding_texts(found: pl.DataFrame) -> None:
    """Every finding has a message; times in it are dates, never an error text or a null."""
    if found.height and found["message"].null_count():
        raise AssertionError(f"{found['message'].null_count()} findings without a message")


# Characters a rendered text must not carry: C0/C1 controls (but tab and newline) and the
# bidi overrides and isolates that let a message disguise how it reads (issue 14 §8)
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class _LiveScripts(HTMLParser):
    """Counts what a browser would run: planted ``<script>`` bodies, ``on*`` handlers and
    ``javascript:`` links (the package's own search-box script calls no ``alert``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.live: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # a script a browser runs: no type or a JavaScript one (JSON data blocks are inert)
        kind = (dict(attrs).get("type") or "").strip().lower()
        self._in_script = tag == "script" and (kind in ("", "module") or "javascript" in kind)
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") and "alert" in v:
                self.live.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action") and v.startswith("javascript:"):
                self.live.append(f"<{tag} {name}=javascript:...>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and "alert(" in data:
            self.live.append("<script>alert(…)")


def live_scripts(html: str) -> list[str]:
    """The planted scripts a browser would run in ``html`` (empty = none)."""
    parser = _LiveScripts()
    parser.feed(html)
    parser.close()
    return parser.live


def _safe_html(html: str, where: str) -> None:
    """No planted script or handler is live, and no control or bidi character is displayed."""
    live = live_scripts(html)
    if live:
        raise AssertionError(f"{where}: planted script is live in the HTML: {live[:3]}")
    bad = _UNSAFE_CHARS.search(html)
    if bad:
        raise AssertionError(f"{where}: displays the control/bidi character {bad.group()!r}")


def _roundtrip(events: pl.DataFrame, source: Path, raw: bool, failures: list[str]) -> None:
    """write_events writes valid JSON that reloads to the same events (byte for byte with ``raw``)."""
    text = al.write_events(events)
    assert isinstance(text, str)
    lines = text.split("\n")[:-1]
    if len(lines) != events.height:
        failures.append(f"write_events: {len(lines)} lines for {events.height} events")
        return
    if raw:
        originals = events.get_column("raw").to_list()
        differ = sum(1 for a, b in zip(lines, originals, strict=True) if b is not None and a != b)
        if differ:
            failures.append(f"write_events: {differ} original lines not reproduced byte for byte")
    for i, line in enumerate(lines):
        # an original line is written as read: JSON after the trim the loader (and the
        # reference's String.trim) applies, e.g. of a BOM or a CR
        deep_call(
            json.loads,
            js_trim(line),
            parse_constant=_reject_constant,
            parse_int=parse_int,  # integers of any length, as JSON.parse reads them
            depth=len(line),
        )
        if i > 2000:
            break
    target = source.parent / (source.name + "-roundtrip") / "coordination-events.ndjson"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8", errors="surrogatepass", newline="")
    back = al.load(target)
    if back.report.events != events.height or back.report.rejects.height:
        failures.append(
            f"write_events round trip: {events.height} events -> {back.report.events} events"
            f" + {back.report.rejects.height} rejects on reload"
        )
    elif sorted(back.events["type"].to_list()) != sorted(events["type"].to_list()):
        # (the order may differ: load orders by time, and a time write_events cannot write
        # exactly, e.g. a ts beyond every instant, is left out and said in its report)
        failures.append("write_events round trip: the types differ on reload")


def _reject_constant(name: str) -> None:
    raise ValueError(f"write_events wrote the non-JSON constant {name}")
