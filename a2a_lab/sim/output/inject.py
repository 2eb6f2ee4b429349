"""What a recorded log holds and the simulator does not write, added to its written lines.

The simulator writes the current runtime's events, one clean JSON line each, in time order
(:func:`a2a_lab.io.write_events`). A log from a real gateway also holds the older runtime's
wording, lines the loader must reject or count (rules §10) and timestamps in the other
fields rules §2 reads. Each function here takes such lines (a :class:`polars.Series`, one
line each, without its newline) and returns an :class:`Injected`: the new lines and where it
put what. Where a function draws (which lines, which kinds where), the draws come from its
``seed`` argument (an integer or a :class:`numpy.random.SeedSequence`): the same lines and
seed give the same bytes.

Apply :func:`orchestration` first (it reads the simulated tasks and sends), then
:func:`legacy_wording` and :func:`odd_timestamps`, and :func:`malformed` last: its output is
bytes (an invalid UTF-8 line is not a string).

Examples
--------
>>> import polars as pl
>>> from a2a_lab.io import write_events
>>> from a2a_lab.sim import simulate
>>> from a2a_lab.sim.workload.presets import sample_like
>>> lines = pl.Series(write_events(simulate(sample_like(n_messages=60), seed=1).events).splitlines())
>>> bad = malformed(lines, ["not_json", "blank", "crlf"], seed=7)
>>> bad.lines.len() - lines.len(), bad.marks["kind"].to_list()
(2, ['blank', 'crlf', 'not_json'])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

import numpy as np
import polars as pl

from a2a_lab.reference.runtime.outcome import LEGACY_NO_REPLY_TEXT, NO_REPLY_TEXT
from a2a_lab.sim.workload import texts

__all__ = [
    "MALFORMED_KINDS",
    "REJECT_REASONS",
    "TIMESTAMP_KINDS",
    "Injected",
    "MalformedKind",
    "TimestampKind",
    "legacy_wording",
    "malformed",
    "odd_timestamps",
    "orchestration",
    "payload_errors",
    "payload_links",
]

MalformedKind = Literal[
    "not_json",
    "truncated",
    "non_object",
    "nan",
    "missing_type",
    "blank_type",
    "blank",
    "crlf",
    "invalid_utf8",
]
#: Every kind of :func:`malformed`.
MALFORMED_KINDS: Final[tuple[MalformedKind, ...]] = get_args(MalformedKind)
#: The kinds the loader rejects, with the start of the reason its load report gives (the rest
#: of a ``not JSON`` reason is the parser's message, which depends on where the line breaks).
#: ``blank`` lines are counted, not rejected; ``crlf`` and ``invalid_utf8`` lines stay events.
REJECT_REASONS: Final[Mapping[MalformedKind, str]] = {
    "not_json": "not JSON: ",
    "truncated": "not JSON: ",
    "nan": "not JSON: ",
    "non_object": "not an object: JSON array",
    "missing_type": "no type field",
    "blank_type": "type is blank",
}
TimestampKind = Literal["timestamp_ms", "iso_timestamp", "out_of_order"]
#: Every kind of :func:`odd_timestamps`.
TIMESTAMP_KINDS: Final[tuple[TimestampKind, ...]] = get_args(TimestampKind)

#: Lines a process shares the log with sometimes writes into it (stderr, a supervisor).
_STRAY_LINES: Final = (
    "Error: EPIPE: broken pipe, write",
    "[gateway] restarting after SIGTERM",
    "<<< truncated by logrotate >>>",
)
# The event time written by the simulator: `"ts":<ms>`, the first such field of the line (the
# top-level one, written before `data`; inside a string value a quote is escaped).
_TS: Final = r'"ts":(-?\d+)'
_HANGUL_MESSAGE: Final = r'"message":"(?:[^"\\]|\\.)*?[\x{AC00}-\x{D7A3}]'


@dataclass(frozen=True)
class Injected:
    """Lines after an injection, and what was injected where.

    Attributes
    ----------
    lines
        The log's lines, without newlines: ``String``, or ``Binary`` after :func:`malformed`.
    marks
        ``line`` (1-based, in ``lines``) and ``kind`` of every injected or changed line,
        ordered by line.
    """

    lines: pl.Series
    marks: pl.DataFrame


def _marks(lines: Sequence[int] | np.ndarray, kinds: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"line": np.asarray(lines, dtype=np.int64) + 1, "kind": list(kinds)},
        schema={"line": pl.Int64, "kind": pl.String},
    ).sort("line")


def _event_ms(lines: pl.Series) -> pl.Series:
    return lines.str.extract(_TS, 1).cast(pl.Int64)


def legacy_wording(lines: pl.Series, until_ms: int) -> Injected:
    """Rewrite the events before ``until_ms`` as the older runtime wrote them.

    The older runtime called an exchange without reply ``outcome: "blocked"`` with the text
    ``[outcome] blocked: 응답을 받지 못했습니다 (…)`` (the reason in parentheses unchanged), and
    its spawn results said ``status: "ok"`` where today's say ``"accepted"``. Nothing is
    drawn.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them (with a numeric ``ts``).
    until_ms
        Epoch ms at which the current runtime took over.

    Examples
    --------
    >>> line = '{"type":"a2a.response","agentId":"a","ts":5,"data":{"message":"[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다","outcome":"no_reply"}}'
    >>> out = legacy_wording(pl.Series([line, line.replace('"ts":5', '"ts":9')]), until_ms=9)
    >>> out.lines[0]
    '{"type":"a2a.response","agentId":"a","ts":5,"data":{"message":"[outcome] blocked: 응답을 받지 못했습니다","outcome":"blocked"}}'
    >>> out.lines[1] == line.replace('"ts":5', '"ts":9'), out.marks.rows()
    (True, [(1, 'legacy_no_reply')])
    """
    frame = pl.DataFrame({"line": lines.cast(pl.String)}).with_columns(
        before=pl.col("line").str.extract(_TS, 1).cast(pl.Int64) < until_ms,
        spawn=pl.col("line").str.starts_with('{"type":"a2a.spawn_result"'),
    )
    no_reply = pl.col("before") & pl.col("line").str.contains('"outcome":"no_reply"', literal=True)
    spawn_ok = (
        pl.col("before")
        & pl.col("spawn")
        & pl.col("line").str.contains('"status":"accepted"', literal=True)
    )
    frame = frame.with_columns(
        kind=pl.when(no_reply)
        .then(pl.lit("legacy_no_reply"))
        .when(spawn_ok)
        .then(pl.lit("legacy_spawn_ok"))
    ).with_columns(
        line=pl.when(no_reply)
        .then(
            pl.col("line")
            .str.replace('"outcome":"no_reply"', '"outcome":"blocked"', literal=True)
            .str.replace_all(NO_REPLY_TEXT, LEGACY_NO_REPLY_TEXT, literal=True)
        )
        .when(spawn_ok)
        .then(pl.col("line").str.replace('"status":"accepted"', '"status":"ok"', literal=True))
        .otherwise(pl.col("line"))
    )
    changed = frame.with_row_index("index").filter(pl.col("kind").is_not_null())
    return Injected(
        frame["line"].alias(lines.name),
        _marks(changed["index"].to_numpy(), changed["kind"].to_list()),
    )


def _iso(ms: pl.Expr) -> pl.Expr:
    """JavaScript ``new Date(ms).toISOString()``."""
    return ms.cast(pl.Datetime("ms")).dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def odd_timestamps(
    lines: pl.Series, counts: Mapping[TimestampKind, int], seed: int | np.random.SeedSequence
) -> Injected:
    """Give some events their time in the other fields rules §2 reads, or out of order.

    ``timestamp_ms`` renames ``ts`` to ``timestampMs`` and ``iso_timestamp`` replaces it by an
    ISO ``timestamp`` (``toISOString()``, milliseconds and ``Z``): the event time stays what it
    was, read by the rule's first and last choice. ``out_of_order`` swaps an event with the
    next one of a later time, as two writers racing for the file do (the mark is on the
    event that now follows a later one). Lines are drawn without
    replacement.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them (with a numeric ``ts``).
    counts
        How many lines of each kind.
    seed
        Seed of the draws.

    Examples
    --------
    >>> lines = pl.Series([f'{{"type":"x","agentId":"a","ts":{t},"data":{{}}}}' for t in (1000, 2000, 3000)])
    >>> out = odd_timestamps(lines, {"timestamp_ms": 1, "iso_timestamp": 1}, seed=2)
    >>> out.lines.to_list()
    ['{"type":"x","agentId":"a","timestamp":"1970-01-01T00:00:01.000Z","data":{}}', '{"type":"x","agentId":"a","ts":2000,"data":{}}', '{"type":"x","agentId":"a","timestampMs":3000,"data":{}}']
    >>> out.marks.rows()
    [(1, 'iso_timestamp'), (3, 'timestamp_ms')]
    """
    for kind in counts:
        if kind not in TIMESTAMP_KINDS:
            raise ValueError(f"counts: unknown kind {kind!r} (one of {', '.join(TIMESTAMP_KINDS)})")
    rng = np.random.default_rng(seed)
    ms = _event_ms(lines)
    has_ts = ms.is_not_null().to_numpy()
    # an event can move forward only if the next line is an event of a later time
    swappable = np.zeros(len(lines), dtype=bool)
    if len(lines) > 1:
        values = ms.to_numpy()
        swappable[:-1] = has_ts[:-1] & has_ts[1:] & (values[1:] > values[:-1])
    taken = np.zeros(len(lines), dtype=bool)
    chosen: dict[str, np.ndarray] = {}
    for kind in TIMESTAMP_KINDS:
        n = counts.get(kind, 0)
        if n < 0:
            raise ValueError(f"counts.{kind}: must be at least 0")
        ok = (swappable if kind == "out_of_order" else has_ts) & ~taken
        if kind == "out_of_order":
            # a swap moves two lines: the next one must be free too
            ok[:-1] &= ~taken[1:]
            # one by one, so that no two swaps share a line
            drawn: list[int] = []
            for _ in range(n):
                left = np.flatnonzero(ok)
                if left.size == 0:
                    raise ValueError(f"counts.{kind}: {n} lines asked, {len(drawn)} available")
                p = int(left[rng.integers(left.size)])
                drawn.append(p)
                ok[max(p - 1, 0) : p + 2] = False
            picks = np.sort(np.asarray(drawn, dtype=np.int64))
            taken[picks + 1] = True
        else:
            candidates = np.flatnonzero(ok)
            if n > candidates.size:
                raise ValueError(f"counts.{kind}: {n} lines asked, {candidates.size} available")
            picks = np.sort(rng.choice(candidates, size=n, replace=False))
        taken[picks] = True
        chosen[kind] = picks
    kinds = np.full(len(lines), "", dtype=object)
    for name, picks in chosen.items():
        kinds[picks] = name
    frame = pl.DataFrame(
        {"line": lines.cast(pl.String), "kind": pl.Series(kinds, dtype=pl.String), "ms": ms}
    )
    frame = frame.with_columns(
        line=pl.when(pl.col("kind") == "timestamp_ms")
        .then(pl.col("line").str.replace(_TS, '"timestampMs":$1'))
        .when(pl.col("kind") == "iso_timestamp")
        .then(
            pl.col("line").str.replace(
                _TS, pl.concat_str(pl.lit('"timestamp":"'), _iso(pl.col("ms")), pl.lit('"'))
            )
        )
        .otherwise(pl.col("line"))
    )
    order = np.arange(len(lines))
    swaps = chosen.get("out_of_order", np.empty(0, np.int64))
    order[swaps], order[swaps + 1] = swaps + 1, swaps
    out = frame[order]
    marked = np.flatnonzero(out["kind"].to_numpy() != "")
    return Injected(
        out["line"].alias(lines.name), _marks(marked, out["kind"].gather(marked).to_list())
    )


def _malformed_line(kind: MalformedKind, line: bytes, rng: np.random.Generator) -> bytes:
    """The line inserted before ``line`` (an event) for an inserting kind."""
    if kind == "not_json":
        return _STRAY_LINES[int(rng.integers(len(_STRAY_LINES)))].encode()
    if kind == "non_object":
        return b"[1,2,3]"
    if kind == "missing_type":
        return b"{" + line[line.index(b",") + 1 :]
    if kind == "blank_type":
        return b'{"type":"  "' + line[line.index(b",") :]
    if kind == "nan":
        start = line.index(b'"ts":') + 5
        end = start + len(line[start:]) - len(line[start:].lstrip(b"-0123456789"))
        return line[:start] + b"NaN" + line[end:]
    if kind == "truncated":
        # a torn write: the process died three fifths into the line (cut at a character)
        return line[: len(line) * 3 // 5].decode("utf-8", errors="ignore").encode()
    return b""


def _cut_hangul(line: bytes) -> bytes:
    """The line with the first Hangul syllable of its message cut to 2 of its 3 UTF-8 bytes."""
    start = line.index(b'"message":"')
    for i in range(start, len(line)):
        if 0xEA <= line[i] <= 0xED:
            return line[: i + 2] + line[i + 3 :]
    raise ValueError("no Hangul syllable in the message")


def _positions(
    text: pl.Series, kinds: Sequence[MalformedKind], rng: np.random.Generator
) -> np.ndarray:
    """A distinct event line for each of ``kinds``, drawn among the lines it can take."""
    eligible = {
        "nan": text.str.contains(_TS).to_numpy(),
        "invalid_utf8": text.str.contains(_HANGUL_MESSAGE).to_numpy(),
        "missing_type": text.str.starts_with('{"type":').to_numpy(),
    }
    eligible["blank_type"] = eligible["missing_type"]
    anywhere = np.ones(len(text), dtype=bool)
    taken = np.zeros(len(text), dtype=bool)
    # the kinds that need particular lines draw first, so the others cannot use them up
    order = sorted(range(len(kinds)), key=lambda i: (kinds[i] not in eligible, i))
    position = np.empty(len(kinds), dtype=np.int64)
    for i in order:
        kind = kinds[i]
        candidates = np.flatnonzero(eligible.get(kind, anywhere) & ~taken)
        if candidates.size == 0:
            raise ValueError(
                f"kinds: no line left for {kind!r} ({len(kinds)} lines asked of {len(text)})"
            )
        position[i] = candidates[rng.integers(candidates.size)]
        taken[position[i]] = True
    return position


def _mark_changed(
    frame: pl.DataFrame, changed_at: list[int], kinds: Sequence[MalformedKind]
) -> pl.DataFrame:
    """``frame`` (``key`` order) with the kind of each changed event line, and its row index."""
    changed_kinds = dict(
        zip(changed_at, (k for k in kinds if k in ("crlf", "invalid_utf8")), strict=True)
    )
    return frame.with_columns(
        kind=pl.col("kind").fill_null(
            pl.col("key").replace_strict(
                {2 * p + 1: k for p, k in changed_kinds.items()},
                default=None,
                return_dtype=pl.String,
            )
        )
    ).with_row_index("index")


def malformed(
    lines: pl.Series, kinds: Sequence[MalformedKind], seed: int | np.random.SeedSequence
) -> Injected:
    """Add the lines a loader must reject or count, and events written oddly.

    One line per entry of ``kinds``, each at a distinct event line drawn without replacement:

    - inserted BEFORE that event: ``not_json`` (a stray stderr line), ``truncated`` (the
      first three fifths of the event, a torn write), ``non_object`` (``[1,2,3]``), ``nan``
      (a copy of the event with ``"ts":NaN``), ``missing_type`` (a copy without ``type``),
      ``blank_type`` (a copy with ``type`` all blanks), ``blank`` (an empty line);
    - the event itself changed, still an event: ``crlf`` (ends in CR LF), ``invalid_utf8``
      (the first Hangul syllable of its message cut to 2 of its 3 bytes).

    Parameters
    ----------
    lines
        Event lines as :func:`a2a_lab.io.write_events` writes them.
    kinds
        The lines to add, one per entry (a kind may repeat).
    seed
        Seed of the draws.

    Returns
    -------
    Injected
        ``Binary`` lines; ``marks`` gives each injected or changed line.

    Raises
    ------
    ValueError
        On an unknown kind, or more lines asked than there are events to place them at.

    Examples
    --------
    >>> lines = pl.Series(['{"type":"x","agentId":"a","ts":1,"data":{"message":"한국어"}}'] * 3)
    >>> out = malformed(lines, ["nan", "invalid_utf8"], seed=1)
    >>> out.marks.rows()
    [(2, 'nan'), (4, 'invalid_utf8')]
    >>> out.lines[1][30:], out.lines[3][52:]
    (b':NaN,"data":{"message":"\\xed\\x95\\x9c\\xea\\xb5\\xad\\xec\\x96\\xb4"}}', b'\\xed\\x95\\xea\\xb5\\xad\\xec\\x96\\xb4"}}')
    """
    for kind in kinds:
        if kind not in MALFORMED_KINDS:
            raise ValueError(f"kinds: unknown kind {kind!r} (one of {', '.join(MALFORMED_KINDS)})")
    rng = np.random.default_rng(seed)
    text = lines.cast(pl.String)
    position = _positions(text, kinds, rng)
    binary = text.cast(pl.Binary)
    at = [int(p) for p in position]
    originals = binary.gather(at).to_list() if at else []
    inserted_keys: list[int] = []
    inserted: list[bytes] = []
    changed_at: list[int] = []
    changed: list[bytes] = []
    for kind, p, line in zip(kinds, at, originals, strict=True):
        if kind == "crlf":
            changed_at.append(p)
            changed.append(line + b"\r")
        elif kind == "invalid_utf8":
            changed_at.append(p)
            changed.append(_cut_hangul(line))
        else:
            inserted_keys.append(2 * p)
            inserted.append(_malformed_line(kind, line, rng))
    if changed_at:
        binary = binary.scatter(changed_at, pl.Series(changed, dtype=pl.Binary))
    frame = pl.concat(
        [
            pl.DataFrame(
                {
                    "key": np.arange(len(lines), dtype=np.int64) * 2 + 1,
                    "line": binary,
                    "kind": None,
                },
                schema={"key": pl.Int64, "line": pl.Binary, "kind": pl.String},
            ),
            pl.DataFrame(
                {
                    "key": inserted_keys,
                    "line": inserted,
                    "kind": [k for k in kinds if k not in ("crlf", "invalid_utf8")],
                },
                schema={"key": pl.Int64, "line": pl.Binary, "kind": pl.String},
            ),
        ]
    ).sort("key")
    frame = _mark_changed(frame, changed_at, kinds)
    marked = frame.filter(pl.col("kind").is_not_null())
    return Injected(
        frame["line"].alias(lines.name),
        _marks(marked["index"].to_numpy(), marked["kind"].to_list()),
    )


# --------------------------------------------------------------------------------------------
# orchestration: the task, plan, spawn and auto-route events around the simulated exchanges
# --------------------------------------------------------------------------------------------
#: Discord ids of the channels auto-routed mentions come from, and of the user approving plans.
_CHANNELS: Final = ("1468291038471023616", "1468291038471023617", "1468291038471023618")
_APPROVER: Final = "512093847561029384"
_MINUTE: Final = 60_000


#: A task's events that say it is being worked on: none while it is blocked.
_WORKING: Final = frozenset({"task.updated", "continuation.sent", "continuation.backoff"})


@dataclass
class _Row:
    """One event to add: its time, order key, type, writing agent and ``data``."""

    ms: int
    key: int
    kind: str
    agent: str
    data: dict[str, object]

    def line(self) -> str:
        """The event as the reference writes it (``JSON.stringify``: compact, non-ASCII as is)."""
        body = {k: v for k, v in self.data.items() if v is not None}
        event = {"type": self.kind, "agentId": self.agent, "ts": self.ms, "data": body}
        return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _Added:
    """Events to add and the kinds and new lines of the simulated lines changed."""

    rows: list[_Row] = field(default_factory=list)
    changed: dict[int, tuple[str, str]] = field(default_factory=dict)

    #: Events of a task are dropped at or after this time (its end).
    until: int | None = None

    def add(self, ms: int, key: int, kind: str, agent: str, data: dict[str, object]) -> None:
        if self.until is None or ms < self.until:
            self.rows.append(_Row(int(ms), key, kind, agent, data))

    def unblock(self, first: int, blocked: tuple[int, int]) -> None:
        """Drop the working events of ``rows[first:]`` (one task) in ``blocked``; renumber progress."""
        low, high = blocked
        kept = [r for r in self.rows[first:] if not (r.kind in _WORKING and low <= r.ms <= high)]
        updates = sorted((r for r in kept if r.kind == "task.updated"), key=lambda r: r.ms)
        for n, row in enumerate(updates, start=1):
            row.data["progressCount"] = n
        self.rows[first:] = kept


def _columns(lines: pl.Series) -> pl.DataFrame:
    """The fields of each simulated line :func:`orchestration` reads."""

    def text(name: str) -> pl.Expr:
        return pl.col("line").str.extract(f'"{name}":"([^"]*)"', 1).alias(name)

    return (
        pl.DataFrame({"line": lines.cast(pl.String)})
        .with_row_index("index")
        .with_columns(
            pl.col("line").str.extract(r'^\{"type":"([^"]*)"', 1).alias("type"),
            text("agentId"),
            _event_ms(lines.cast(pl.String)).alias("ms"),
            *(text(n) for n in ("taskId", "workSessionId", "targetSessionKey", "fromAgent")),
            *(text(n) for n in ("toAgent", "conversationId", "runId")),
        )
    )


def _task_events(
    added: _Added, task: dict[str, Any], rng: np.random.Generator, others: Sequence[str]
) -> None:
    """Backlog pick-up, plan, progress, a block, nudges and the end of one simulated task."""
    agent, task_id, ws = str(task["agentId"]), task["taskId"], task["workSessionId"]
    start, end = int(task["start"]), int(task["end"])
    key, ids = 4 * int(task["index"]) + 1, {"taskId": task_id, "workSessionId": ws}
    if rng.random() < 0.15:
        picked = "backlog.auto_picked" if rng.random() < 0.6 else "task.backlog_picked"
        priority = str(rng.choice(["medium", "high", "low", "urgent"]))
        added.add(
            start - int(rng.integers(10, 120)) * _MINUTE,
            key,
            "task.backlog_added",
            agent,
            {"taskId": task_id, "priority": priority, "workSessionId": ws},
        )
        added.add(start - int(rng.integers(1_000, 60_000)), key, picked, agent, ids)
    added.until = end
    first = len(added.rows)
    span = max(end - start, 1)
    t = start + int(rng.integers(5_000, 120_000))
    if rng.random() < 0.5 and t < end:
        summary = str(rng.choice(texts.ORCHESTRATION["plan_summary"]))
        title = str(rng.choice(texts.ORCHESTRATION["plan_title"]))
        added.add(t, key, "plan.submitted", agent, {**ids, "title": title, "summary": summary})
        t += int(rng.integers(1, 20)) * _MINUTE
        if rng.random() < 0.15:
            reason = str(rng.choice(texts.ORCHESTRATION["plan_rejection"]))
            added.add(t, key, "plan.rejected", agent, {**ids, "reason": reason})
            t += int(rng.integers(1, 10)) * _MINUTE
            added.add(
                t,
                key,
                "plan.submitted",
                agent,
                {**ids, "title": title, "summary": summary},
            )
            t += int(rng.integers(1, 10)) * _MINUTE
        added.add(t, key, "plan.approved", agent, {**ids, "approvedBy": _APPROVER})
        added.add(t + int(rng.integers(200, 3_000)), key, "task.approved", agent, ids)
    updates = np.sort(rng.uniform(start, end, size=min(8, 1 + span // (30 * _MINUTE))))
    for n, at in enumerate(updates, start=1):
        added.add(
            int(at),
            key,
            "task.updated",
            agent,
            {"taskId": task_id, "status": "in_progress", "progressCount": n, "workSessionId": ws},
        )
        if rng.random() < 0.5:
            added.add(
                int(at) + int(rng.integers(1, 5)) * _MINUTE,
                key,
                "continuation.sent",
                agent,
                {"taskId": task_id},
            )
            if rng.random() < 0.1:
                # the nudge failed: the hub backs off before the next one
                fails = int(rng.integers(1, 4))
                backoff = {"reason": "context_overflow", "consecutiveFailures": fails}
                backoff |= {"backoffMs": fails * _MINUTE}
                at_ms = int(at) + 6 * _MINUTE
                added.add(at_ms, key, "continuation.backoff", agent, {"taskId": task_id, **backoff})
    if rng.random() < 0.3 and span > 20 * _MINUTE:
        blocked = _block(
            added,
            (agent, task_id, ws, key),
            int(rng.uniform(start, end - 15 * _MINUTE)),
            rng,
            others,
        )
        added.unblock(first, blocked)
    if rng.random() < 0.1:
        added.add(
            start + span // 2, key, "resume_reminder.sent", agent, {**ids, "reminderCount": 1}
        )
    added.until = None


def _block(
    added: _Added,
    task: tuple[str, object, object, int],
    at: int,
    rng: np.random.Generator,
    others: Sequence[str],
) -> tuple[int, int]:
    """``task.blocked``, the unblock requests (one may fail), ``task.resumed``; their times."""
    agent, task_id, ws, key = task
    at0 = at
    helper = str(rng.choice([a for a in others if a != agent]))
    reason = str(rng.choice(texts.ORCHESTRATION["block_reason"]))
    added.add(
        at,
        key,
        "task.blocked",
        agent,
        {"taskId": task_id, "reason": reason, "unblockedBy": [helper], "workSessionId": ws},
    )
    requests = int(rng.integers(1, 4))
    for n in range(1, requests + 1):
        at += int(rng.integers(1, 4)) * _MINUTE
        added.add(
            at,
            key,
            "unblock.requested",
            agent,
            {"taskId": task_id, "targetAgentId": helper, "requestCount": n},
        )
        if n < requests and rng.random() < 0.5:
            error = str(rng.choice(texts.ORCHESTRATION["unblock_error"]))
            added.add(
                at + 30_000,
                key,
                "unblock.failed",
                agent,
                {
                    "taskId": task_id,
                    "targetAgentId": helper,
                    "consecutiveFailures": n,
                    "error": error,
                },
            )
    blocked_at = at0
    resumed_at = at + int(rng.integers(1, 5)) * _MINUTE
    added.add(resumed_at, key, "task.resumed", agent, {"taskId": task_id, "workSessionId": ws})
    return blocked_at, resumed_at


def _task_end(added: _Added, row: dict[str, Any], rng: np.random.Generator) -> None:
    """A simulated ``task.completed``: cancelled instead, or followed by the continuation's end."""
    index, ms, agent = int(row["index"]), int(row["ms"]), str(row["agentId"])
    ids = {"taskId": row["taskId"], "workSessionId": row["workSessionId"]}
    if rng.random() < 0.12:
        reason = json.dumps(
            str(rng.choice(texts.ORCHESTRATION["cancel_reason"])), ensure_ascii=False
        )
        line = str(row["line"]).replace('{"type":"task.completed"', '{"type":"task.cancelled"', 1)
        added.changed[index] = ("task_cancelled", line[:-2] + f',"reason":{reason}}}}}')
        return
    added.add(
        ms + int(rng.integers(2_000, 30_000)), 4 * index + 3, "continuation.complete", agent, ids
    )
    if rng.random() < 0.08:
        added.add(
            ms + int(rng.integers(30_000, 120_000)),
            4 * index + 3,
            "milestone.sync_failed",
            agent,
            {**ids, "milestoneId": f"ms-{int(rng.integers(10, 99))}"},
        )


def _spawns(added: _Added, sends: pl.DataFrame, rng: np.random.Generator, refused: float) -> None:
    """``a2a.spawn`` before the first send to each sub-agent session, ``a2a.spawn_result`` after."""
    for row in sends.iter_rows(named=True):
        send = json.loads(row["line"])["data"]
        key, index, ms = row["targetSessionKey"], row["index"], row["ms"]
        preview = send.get("message", "")[:200]
        fields = {k: send.get(k) for k in ("fromAgent", "toAgent", "targetSessionKey")}
        fields |= {"message": preview, "replyPreview": preview}
        fields |= {k: send.get(k) for k in ("conversationId", "taskId", "workSessionId")}
        fields |= {"depth": 0, "hop": 0}
        result = {k: v for k, v in fields.items() if k not in ("message", "replyPreview")}
        if rng.random() < refused:
            # a spawn refused first (limits), then spawned again
            failed = {**fields, "targetSessionKey": key.rsplit(":", 1)[0] + ":" + _uuid(rng)}
            error = str(rng.choice(texts.ORCHESTRATION["spawn_error"]))
            added.add(ms - 9_000, 4 * index + 1, "a2a.spawn", row["fromAgent"], failed)
            added.add(
                ms - 8_500,
                4 * index + 1,
                "a2a.spawn_result",
                row["fromAgent"],
                {
                    **{k: v for k, v in failed.items() if k not in ("message", "replyPreview")},
                    "status": "error",
                    "error": error,
                    "replyPreview": f"spawn failed: {error}",
                },
            )
        label = f"{row['toAgent']}-{rng.bytes(3).hex()}" if rng.random() < 0.6 else None
        added.add(
            ms - int(rng.integers(1, 7)),
            4 * index + 1,
            "a2a.spawn",
            row["fromAgent"],
            {**fields, "label": label},
        )
        added.add(
            ms + int(rng.integers(40, 900)),
            4 * index + 3,
            "a2a.spawn_result",
            row["fromAgent"],
            {
                **result,
                "runId": send.get("runId"),
                "status": "accepted",
                "label": label,
                "replyPreview": f"spawn accepted · run {send.get('runId')}",
            },
        )


def _uuid(rng: np.random.Generator) -> str:
    """A version 4 UUID drawn from ``rng``."""
    h = rng.bytes(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"


def _auto_routes(added: _Added, sends: pl.DataFrame, rng: np.random.Generator) -> None:
    """``a2a.auto_route`` before a main-to-main send: the sender was mentioned in Discord."""
    for row in sends.iter_rows(named=True):
        send = json.loads(row["line"])["data"]
        # an agent without a known Discord user gets a made-up one, the same in every run
        digest = int(hashlib.sha256(row["toAgent"].encode()).hexdigest(), 16)
        user = texts.DISCORD_USER_IDS.get(row["toAgent"], f"1{digest % 10**17:017d}")
        mention = f"<@{user}> "
        added.add(
            row["ms"] - int(rng.integers(300, 2_500)),
            4 * row["index"] + 1,
            "a2a.auto_route",
            row["fromAgent"],
            {
                "senderAgentId": row["fromAgent"],
                "targetAgentId": row["toAgent"],
                "channelId": str(rng.choice(_CHANNELS)),
                "maxTurns": 5,
                "message": (mention + send.get("message", ""))[:200],
                "conversationId": row["conversationId"],
            },
        )


def orchestration(
    lines: pl.Series,
    seed: int | np.random.SeedSequence,
    *,
    auto_route_share: float = 0.05,
    refused_spawn_share: float = 0.06,
) -> Injected:
    """Add the orchestration events a gateway writes around the exchanges the simulator models.

    The simulator writes exchanges and the start and end of each task; a recorded log also
    holds what the task hub and the spawn tool write around them (rules §1). For each
    simulated task: sometimes a backlog pick-up before its start, a plan (sometimes rejected
    once, then approved), ``task.updated`` progress with ``continuation.sent`` nudges (some
    fail: ``continuation.backoff``), a block with unblock requests (one may fail) and its
    resume, a reminder; at its end ``continuation.complete`` (rarely a
    ``milestone.sync_failed``), or the ``task.completed`` becomes a ``task.cancelled`` with a
    reason. Before the first send to each sub-agent session an ``a2a.spawn`` and after it the
    ``a2a.spawn_result`` (``refused_spawn_share`` of them are refused first and spawned
    again); before ``auto_route_share`` of the main-to-main sends outside tasks an
    ``a2a.auto_route`` with the Discord mention. The simulated lines are kept (bar the
    cancelled ones) and every event is placed in time order.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them (with a numeric ``ts``), in time
        order.
    seed
        Seed of the draws.
    auto_route_share
        Share of the main-to-main sends outside tasks that were auto-routed from Discord.
    refused_spawn_share
        Share of the spawns refused once (``status: "error"``) before the one that ran.

    Returns
    -------
    Injected
        ``String`` lines; ``marks`` gives each added line (its event type) and each
        ``task.completed`` turned ``task_cancelled``.

    Examples
    --------
    >>> from a2a_lab.io import write_events
    >>> from a2a_lab.sim import simulate
    >>> from a2a_lab.sim.workload.presets import sample_like
    >>> lines = pl.Series(write_events(simulate(sample_like(n_messages=80), seed=1).events).splitlines())
    >>> out = orchestration(lines, seed=3)
    >>> out.lines.len() - lines.len() == out.marks.filter(pl.col("kind") != "task_cancelled").height
    True
    >>> "a2a.spawn" in set(out.marks["kind"])
    True
    """
    rng = np.random.default_rng(seed)
    frame = _columns(lines)
    added = _Added()
    ends = frame.filter(pl.col("type") == "task.completed")
    tasks = (
        frame.filter(pl.col("type") == "task.started")
        .join(ends.select("taskId", end="ms"), on="taskId", how="left")
        .with_columns(start=pl.col("ms"), end=pl.col("end").fill_null(frame["ms"].max()))
    )
    mains = sorted(set(frame.filter(pl.col("type") == "task.started")["agentId"]))
    for task in tasks.iter_rows(named=True):
        _task_events(added, task, rng, mains)
    for row in ends.iter_rows(named=True):
        _task_end(added, row, rng)
    sends = frame.filter(pl.col("type") == "a2a.send")
    first = sends.filter(pl.col("targetSessionKey").str.contains(":subagent:"))
    first = first.unique("targetSessionKey", keep="first", maintain_order=True)
    _spawns(added, first, rng, refused_spawn_share)
    to_main = sends.filter(
        pl.col("targetSessionKey").str.ends_with(":main")
        & pl.col("taskId").is_null()
        & pl.col("fromAgent").is_in(mains)
    )
    _auto_routes(added, to_main.filter(pl.lit(rng.random(to_main.height)) < auto_route_share), rng)
    return _placed(frame, added, lines.name)


def _placed(frame: pl.DataFrame, added: _Added, name: str) -> Injected:
    """The simulated and added lines in time order, ties kept in their order key."""
    changed = pl.DataFrame(
        {
            "index": list(added.changed),
            "new": [line for _, line in added.changed.values()],
            "new_kind": [kind for kind, _ in added.changed.values()],
        },
        schema={"index": pl.UInt32, "new": pl.String, "new_kind": pl.String},
    )
    own = frame.join(changed, on="index", how="left").select(
        "ms",
        key=pl.col("index").cast(pl.Int64) * 4 + 2,
        line=pl.coalesce("new", "line"),
        kind="new_kind",
    )
    extra = pl.DataFrame(
        [(r.ms, r.key, r.line(), r.kind) for r in added.rows],
        schema={"ms": pl.Int64, "key": pl.Int64, "line": pl.String, "kind": pl.String},
        orient="row",
    )
    out = pl.concat([own, extra]).sort("ms", "key", maintain_order=True)
    marked = out.with_row_index("at").filter(pl.col("kind").is_not_null())
    return Injected(
        out["line"].alias(name), _marks(marked["at"].to_numpy(), marked["kind"].to_list())
    )


#: How :func:`payload_errors` breaks a structured payload.
PAYLOAD_ERRORS: Final = ("bad_json", "missing_fields", "type_mismatch")


def _broken_payload(line: str, error: str) -> str:
    """The line with its ``payloadJson`` broken as ``error`` says."""
    event = json.loads(line)
    data = event["data"]
    body = json.loads(data["payloadJson"])
    if error == "bad_json":
        # cut mid-way, as a model that ran out of tokens writes it
        text = data["payloadJson"][: len(data["payloadJson"]) // 2]
    elif error == "missing_fields":
        text = json.dumps({"type": body["type"]}, ensure_ascii=False, separators=(",", ":"))
    else:
        other = "answer" if body["type"] == "question" else "question"
        text = json.dumps({**body, "type": other}, ensure_ascii=False, separators=(",", ":"))
    data["payloadJson"] = text
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def payload_errors(lines: pl.Series, share: float, seed: int | np.random.SeedSequence) -> Injected:
    """Break the structured payload (runtime §8) of ``share`` of the lines that carry one.

    The simulator writes valid payloads; agents write broken ones too, which the reference
    reads as free text: ``bad_json`` (the JSON cut mid-way), ``missing_fields`` (only the
    ``type`` left) or ``type_mismatch`` (the JSON's ``type`` disagrees with ``payloadType``).
    Each broken line draws its kind.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them.
    share
        Share of the payload lines to break, in ``[0, 1]``.
    seed
        Seed of the draws.

    Examples
    --------
    >>> body = json.dumps({"type": "question", "questionId": "q", "question": "Why?"})
    >>> line = json.dumps({"type": "a2a.send", "agentId": "a", "ts": 1, "data": {"payloadType": "question", "payloadJson": body}}, separators=(",", ":"))
    >>> out = payload_errors(pl.Series([line]), 1.0, seed=1)
    >>> out.marks.rows(), out.lines[0] != line
    ([(1, 'type_mismatch')], True)
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share: must be in [0, 1], got {share}")
    rng = np.random.default_rng(seed)
    text = lines.cast(pl.String)
    carriers = np.flatnonzero(text.str.contains('"payloadJson":"', literal=True).to_numpy())
    picks = np.sort(carriers[rng.random(carriers.size) < share])
    kinds = [PAYLOAD_ERRORS[int(k)] for k in rng.integers(len(PAYLOAD_ERRORS), size=picks.size)]
    broken = [_broken_payload(text[int(i)], k) for i, k in zip(picks, kinds, strict=True)]
    out = text.scatter(picks.tolist(), pl.Series(broken, dtype=pl.String)) if broken else text
    return Injected(out.alias(lines.name), _marks(picks, kinds))


#: The payload an answer or a status report refers to, and the field that links them.
_LINKS: Final = {
    "answer": ("question", "questionId"),
    "status_report": ("task_delegation", "taskId"),
}


def payload_links(lines: pl.Series) -> Injected:
    """Make answers answer earlier questions and status reports report on earlier delegations.

    The simulator gives every payload its own id, so no answer names a question that was
    asked. Here an ``answer`` takes the ``questionId`` of the latest question sent to its
    sender, preferably by the agent it answers, and a ``status_report`` the ``taskId`` of the
    latest delegation to its sender, likewise (runtime §8: the dashboard pairs them by these
    ids). A payload with nothing to refer to keeps its id. Nothing is drawn.

    Parameters
    ----------
    lines
        Lines as :func:`a2a_lab.io.write_events` writes them, in time order.

    Returns
    -------
    Injected
        ``String`` lines; ``marks`` gives each relinked line (``answer`` or ``status_report``).

    Examples
    --------
    >>> def send(sender, to, body):
    ...     data = {"fromAgent": sender, "toAgent": to, "payloadType": body["type"], "payloadJson": json.dumps(body, separators=(",", ":"))}
    ...     return json.dumps({"type": "a2a.send", "agentId": sender, "ts": 1, "data": data}, separators=(",", ":"))
    >>> asked = send("a", "b", {"type": "question", "questionId": "q1", "question": "Why?"})
    >>> out = payload_links(pl.Series([asked, send("b", "a", {"type": "answer", "questionId": "q9", "answer": "So."})]))
    >>> out.marks.rows(), json.loads(json.loads(out.lines[1])["data"]["payloadJson"])["questionId"]
    ([(2, 'answer')], 'q1')
    """
    text = lines.cast(pl.String)
    latest: dict[tuple[str, str, str], str] = {}  # (kind, from, to) -> id
    changed: dict[int, str] = {}
    kinds: dict[int, str] = {}
    for index in np.flatnonzero(text.str.contains('"payloadJson":"', literal=True).to_numpy()):
        event = json.loads(text[int(index)])
        data = event["data"]
        body = json.loads(data["payloadJson"])
        sender, to, kind = data.get("fromAgent"), data.get("toAgent"), body.get("type")
        if kind in ("question", "task_delegation"):
            latest[(kind, sender, to)] = body[
                _LINKS["answer" if kind == "question" else "status_report"][1]
            ]
            continue
        if kind not in _LINKS:
            continue
        wanted, key = _LINKS[kind]
        asked = latest.get((wanted, to, sender)) or next(
            (v for (k, _, t), v in reversed(latest.items()) if k == wanted and t == sender), None
        )
        if asked is None or body.get(key) == asked:
            continue
        data["payloadJson"] = json.dumps(
            {**body, key: asked}, ensure_ascii=False, separators=(",", ":")
        )
        changed[int(index)] = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        kinds[int(index)] = kind
    out = (
        text.scatter(list(changed), pl.Series(list(changed.values()), dtype=pl.String))
        if changed
        else text
    )
    return Injected(out.alias(lines.name), _marks(list(kinds), list(kinds.values())))
