"""Seeded generator of the bundled sample log (``a2a_lab/samples/data``): a development tool.

The installed package ships the sample it made, not the generator: large logs come from the
simulator (:func:`a2a_lab.samples.write_log`, backed by :func:`a2a_lab.sim.workload.presets.sample_like`
and :mod:`a2a_lab.sim.output.inject`). This script stays so the committed sample can be regenerated
byte for byte (``tests/samples/test_samples.py`` does so) or deliberately changed.

The events follow ``a2a-runtime.md`` and the reference emitters it describes: the same event
types, the same ``data`` fields in the same order (``JSON.stringify`` of the reference's
object literals, ``undefined`` fields omitted), the same outcome texts, retry and backoff
arithmetic, ping-pong intent classification and early termination, conversation-id reuse per
work session and agent pair, and plausible latencies. Randomness comes only from a
:class:`numpy.random.Generator` seeded by an argument: the same seed gives the same bytes.
:func:`write_sample` writes the log DIRECTORY: live file, rotated siblings named as the
reference names them, ``openclaw.json`` and a ``README.md`` that documents the data,
including every deliberately malformed line.

Command line (from the repository root)::

    python tools/generate_sample.py --out a2a_lab/samples/data --seed 20260205
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import sample_texts as tx

from a2a_lab.reference.jsstr import js_slice
from a2a_lab.reference.runtime import (
    DEFAULT_CONCURRENCY,
    GATE_BLOCKED_TEXT,
    MESSAGE_LIMIT,
    PING_PONG_LIMITS_MAIN,
    PREVIEW_LIMIT,
    REFERENCE_RETRY,
    AnnounceTarget,
    build_no_reply_outcome_message,
    classify_error,
    classify_intent,
    effective_turns,
    is_agent_session_key,
    payload_intent,
    should_run_announce,
    should_terminate_ping_pong,
)
from a2a_lab.reference.runtime import backoff_ms as reference_backoff_ms
from a2a_lab.sim.workload.presets import SAMPLE_WORKER_AGENTS

__all__ = [
    "DEFAULT_SEED",
    "MalformedLine",
    "SampleManifest",
    "generate_events",
    "main",
    "write_sample",
]

#: Seed of the bundled sample.
DEFAULT_SEED = 20260205

#: The reference host runs in Korea: local month and working hours are in KST.
KST = timezone(timedelta(hours=9))
SAMPLE_START = datetime(2026, 1, 29, tzinfo=KST)
SAMPLE_DAYS = 7
#: The first days of the sample are written by the older runtime (legacy ``blocked`` wording,
#: chunk timeouts counted as retries, no concurrency gate, no structured payloads).
LEGACY_DAYS = 2
#: Size rotation threshold of the sample. The reference rotates at 10 MiB; a sample this small
#: needs a smaller threshold to show both rotation kinds (rules §9).
SAMPLE_ROTATE_BYTES = 640 * 1024

# Runtime constants (a2a-runtime.md §1-§3); the wait loop's come from REFERENCE_RETRY.
CHUNK_MS = REFERENCE_RETRY.chunk_ms
MAX_WAIT_MS = REFERENCE_RETRY.max_wait_ms
MAX_RETRIES = REFERENCE_RETRY.max_retries
TURN_TIMEOUT_MS = 120_000
CONFIGURED_MAX_TURNS = PING_PONG_LIMITS_MAIN.default
GATE_QUEUE_TIMEOUT_MS = int(DEFAULT_CONCURRENCY.queue_timeout_ms)
GATE_LIMIT = DEFAULT_CONCURRENCY.max_concurrent_flows


@dataclass(frozen=True)
class _Agent:
    id: str
    name: str
    emoji: str
    role: str
    categories: tuple[str, ...]
    workers: tuple[str, ...] = ()


#: Configured agents, one a row: id | name | emoji | role | categories | sub-agent workers.
#: Every one is a main agent (listed in ``openclaw.json``).
_AGENT_TABLE = """
main   | 메인 | 🦞 | coordinator          | planning_decision biz_strategy engineering_build     | jiwoo hana maru
ruda   | 루다 | 🧭 | product manager      | planning_decision growth_marketing customer_community | hana dana sori
eden   | 이든 | 🛠️ | engineering lead     | engineering_build qa_validation docs_knowledge       | jiwoo nuri maru
seum   | 세움 | 🚀 | infrastructure       | infra_ops engineering_build qa_validation            | gaon nuri
bada   | 바다 | 🔎 | research             | research_analysis biz_strategy docs_knowledge        | hana iseul
haneul | 하늘 | 📣 | growth and customers | growth_marketing customer_community legal_compliance | dana sori yoon
"""


def _agent(row: str) -> _Agent:
    agent_id, name, emoji, role, categories, workers = (cell.strip() for cell in row.split("|"))
    return _Agent(agent_id, name, emoji, role, tuple(categories.split()), tuple(workers.split()))


MAIN_AGENTS: tuple[_Agent, ...] = tuple(_agent(row) for row in _AGENT_TABLE.strip().splitlines())
#: Agents that only ever run as spawned sub-agent sessions (``agent:<id>:subagent:<uuid>``).
WORKER_AGENTS: tuple[str, ...] = SAMPLE_WORKER_AGENTS
#: Discord snowflakes: people who mention agents, the agents' bot users, and channels.
HUMANS: tuple[str, ...] = ("284019573310226433", "391847562019283746", "512093847561029384")
BOT_USER_IDS: dict[str, str] = {
    a.id: f"13{index:02d}5{index * 7919:06d}4821{index:02d}7" for index, a in enumerate(MAIN_AGENTS)
}
CHANNELS: tuple[str, ...] = ("1187423365011234816", "1187423365011234817", "1201958237465019283")

#: Relative activity by KST hour of day (00-05, 06-11, 12-17, 18-23).
# fmt: off
_HOUR_WEIGHTS = np.array([
    0.3, 0.2, 0.1, 0.1, 0.1, 0.1,
    0.2, 0.5, 1.2, 2.0, 2.4, 2.3,
    1.6, 2.2, 2.5, 2.5, 2.3, 2.0,
    1.5, 1.2, 1.1, 1.0, 0.8, 0.5,
])
# fmt: on
_HOUR_P = _HOUR_WEIGHTS / _HOUR_WEIGHTS.sum()


def _termination(reply: str, previous: Sequence[str]) -> str | None:
    """The early-termination reason of a ping-pong reply, if it ends the loop."""
    result = should_terminate_ping_pong(reply, previous)
    return result.reason if result.terminate else None


def _no_reply_text(
    legacy: bool, wait_status: str | None, wait_error: str | None, exceeded: bool
) -> str:
    """The ``[outcome]`` text of an exchange without reply (runtime §2.3)."""
    return build_no_reply_outcome_message(
        wait_status, wait_error, max_wait_exceeded=exceeded, max_wait_ms=MAX_WAIT_MS, legacy=legacy
    )


def _session_type(key: str | None) -> str:
    if not key:
        return "unknown"
    if ":subagent:" in key:
        return "subagent"
    if re.fullmatch(r"agent:[^:]+:main", key, re.I):
        return "main"
    return "unknown"


def _event_role(from_type: str, to_type: str) -> str:
    return "delegation.subagent" if "subagent" in (from_type, to_type) else "conversation.main"


def _reply_fields(text: str) -> dict[str, str]:
    """``message`` and its ``replyPreview``, as every reply event writes them."""
    return {"message": text, "replyPreview": js_slice(text, PREVIEW_LIMIT)}


def _dumps(value: Any) -> str:
    """``JSON.stringify`` of a value: compact, non-ASCII kept, lone surrogates escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if re.search("[\ud800-\udfff]", text):
        text = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _iso_utc(ms: int) -> str:
    """JavaScript ``new Date(ms).toISOString()``."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# --------------------------------------------------------------------------------------------
# Event builder
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Session:
    agent: str
    key: str

    @property
    def kind(self) -> str:
        return _session_type(self.key)

    @classmethod
    def main(cls, agent: str) -> _Session:
        """The agent's main session (``agent:<id>:main``)."""
        return cls(agent, f"agent:{agent}:main")

    def roles(self, to: _Session) -> dict[str, str]:
        """``eventRole`` and both session types of an event from this session to ``to``."""
        return {
            "eventRole": _event_role(self.kind, to.kind),
            "fromSessionType": self.kind,
            "toSessionType": to.kind,
        }


@dataclass(frozen=True)
class _Ctx:
    """The ``sharedContext`` of an exchange: fields every event of the flow repeats."""

    task: str | None = None
    ws: str | None = None
    parent: str | None = None
    depth: int | None = None
    hop: int | None = None

    def fields(self) -> dict[str, Any]:
        return {
            "taskId": self.task,
            "workSessionId": self.ws,
            "parentConversationId": self.parent,
            "depth": self.depth,
            "hop": self.hop,
        }


@dataclass(frozen=True)
class _Payload:
    type: str
    json: str
    valid: bool


class _Ids:
    """Identifiers, unique within one generation."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._seen: set[str] = set()

    def _hex(self, digits: int) -> str:
        return self._rng.bytes((digits + 1) // 2).hex()[:digits]

    def _unique(self, make: Any) -> str:
        while True:
            value = make()
            if value not in self._seen:
                self._seen.add(value)
                return str(value)

    def uuid(self) -> str:
        def make() -> str:
            raw = bytearray(self._rng.bytes(16))
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
            h = raw.hex()
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

        return self._unique(make)

    def short(self, prefix: str) -> str:
        """``prefix`` + 12 hex digits (task ids and the like)."""
        return self._unique(lambda: prefix + self._hex(12))


class _Builder:
    """Emits the events of whole episodes (work sessions, conversations, spawns) in memory."""

    def __init__(self, rng: np.random.Generator, *, legacy_until: int = 0) -> None:
        self.rng = rng
        self.ids = _Ids(rng)
        self.legacy_until = legacy_until
        self.events: list[tuple[int, int, dict[str, Any]]] = []
        #: Validity of every payload made, keyed by its ``payloadJson`` text.
        self.payload_valid: dict[str, bool] = {}
        self._seq = 0
        self._conversations: dict[tuple[str, str, str], str] = {}

    # -- randomness helpers ------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, items: Sequence[Any]) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def other_main(self, agent: _Agent) -> _Agent:
        """A main agent other than ``agent``, picked at random."""
        chosen: _Agent = self.pick([a for a in MAIN_AGENTS if a.id != agent.id])
        return chosen

    def weighted(self, options: dict[str, float]) -> str:
        names = list(options)
        weights = np.array([options[n] for n in names], dtype=float)
        return names[int(self.rng.choice(len(names), p=weights / weights.sum()))]

    def ms(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def lognormal_ms(self, median_s: float, sigma: float, lo_s: float, hi_s: float) -> int:
        value = float(np.exp(np.log(median_s) + sigma * self.rng.standard_normal()))
        return int(min(max(value, lo_s), hi_s) * 1000)

    def legacy(self, t: int) -> bool:
        return t < self.legacy_until

    # -- output ------------------------------------------------------------------------------
    def emit(self, ts: int, type_: str, agent: str, data: dict[str, Any]) -> None:
        """Record one event; ``None`` values are dropped as ``JSON.stringify`` drops undefined."""
        clean = {k: v for k, v in data.items() if v is not None}
        self.events.append(
            (ts, self._seq, {"type": type_, "agentId": agent, "ts": ts, "data": clean})
        )
        self._seq += 1

    # -- text --------------------------------------------------------------------------------
    def fill(self, template: str, lang: str, topic: str, **extra: str) -> str:
        """Fill a text template; unused placeholders are drawn from the text banks."""
        n = str(self.ms(100, 2400))
        first, second = (
            int(i) for i in self.rng.choice(len(tx.POINTS[lang]), size=2, replace=False)
        )
        values = {
            "topic": topic,
            "mention": "",
            "detail": self.pick(tx.DETAILS[lang]),
            "when": self.pick(tx.WHEN[lang]),
            "eta": self.pick(tx.ETA[lang]),
            "opinion": self.pick(tx.OPINIONS[lang]),
            "finding": self.pick(tx.FINDINGS[lang]),
            "point": tx.POINTS[lang][first],
            "point2": tx.POINTS[lang][second],
            "pct": str(self.ms(2, 19) * 5),
            "link": self.pick(tx.LINKS),
            "file": self.pick(tx.FILES),
        }
        values.update(extra)
        # Nested placeholders in details/links/findings ({n}, {link}, {file}) get a second pass.
        text = template.format(**values)
        text = text.format(n=n, link=values["link"].format(n=n), file=values["file"])
        text = re.sub(r" {2,}", " ", text).strip()
        if lang == "en":
            text = re.sub(r"(^|[.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
        return text

    def topic(self, categories: Sequence[str]) -> tuple[str, str, str]:
        wanted = self.pick(categories) if self.chance(0.8) else self.pick(tx.TOPICS)[0]
        return self.pick([t for t in tx.TOPICS if t[0] == wanted])

    def language(self) -> str:
        return "ko" if self.chance(0.65) else "en"

    def mention(self, target: str | None = None) -> str:
        if target is not None and target in BOT_USER_IDS and self.chance(0.5):
            return f"<@{BOT_USER_IDS[target]}> "
        return f"<@{self.pick(HUMANS)}> "

    def message(self, intent: str, lang: str, topic: str, *, mention: str = "") -> str:
        return self.fill(self.pick(tx.MESSAGES[intent][lang]), lang, topic, mention=mention)

    def intent(self) -> str:
        return self.weighted(
            {
                "request": 35,
                "question": 22,
                "collaboration": 20,
                "notification": 9,
                "result_report": 9,
                "escalation": 5,
            }
        )

    # -- ids ---------------------------------------------------------------------------------
    def conversation_id(self, ctx: _Ctx, a: str, b: str) -> str:
        """Conversation id when none is given (runtime §6): parent, else cached per ws and pair."""
        if ctx.parent:
            return ctx.parent
        if ctx.ws is None:
            return self.ids.uuid()
        pair = tuple(sorted((a.lower(), b.lower())))
        key = (ctx.ws, pair[0], pair[1])
        if key not in self._conversations:
            self._conversations[key] = self.ids.uuid()
        return self._conversations[key]

    # -- payloads (runtime §8) ---------------------------------------------------------------
    def payload(self, kind: str, fields: dict[str, Any], invalid_p: float = 0.22) -> _Payload:
        """A structured payload of ``kind``, invalid (realistically broken) with ``invalid_p``."""
        body: dict[str, Any] = {"type": kind, **{k: v for k, v in fields.items() if v is not None}}
        valid = not self.chance(invalid_p)
        text = _dumps(body)
        if not valid:
            breakage = self.pick(_PAYLOAD_BREAKAGES[kind])
            if breakage == "bad_json":
                text = text[: len(text) * 2 // 3]
            else:
                if breakage == "type_mismatch":
                    body["type"] = "answer" if kind == "question" else "task_delegation"
                elif breakage[1] is _MISSING:
                    body.pop(breakage[0], None)
                else:
                    body[breakage[0]] = breakage[1]
                text = _dumps(body)
        self.payload_valid[text] = valid
        return _Payload(kind, text, valid)

    # -- one sessions_send exchange (runtime §2) ---------------------------------------------
    def exchange(
        self,
        t0: int,
        sender: _Session,
        target: _Session,
        message: str,
        lang: str,
        *,
        ctx: _Ctx | None = None,
        topic: str = "",
        conversation: str | None = None,
        payload: _Payload | None = None,
        reply: str | None = None,
        reply_payload: _Payload | None = None,
        run_ms: int | None = None,
        gate_blocked: bool = False,
        announce_channel: str | None = None,
    ) -> int:
        """Emit the events of one asynchronous ``sessions_send`` flow; return its end (ms)."""
        legacy = self.legacy(t0)
        ctx = ctx or _Ctx()
        conv = conversation or self.conversation_id(ctx, sender.agent, target.agent)
        shared = ctx.fields()
        from_type, to_type = sender.kind, target.kind
        role = _event_role(from_type, to_type)
        message = js_slice(message.strip(), MESSAGE_LIMIT)
        run_id = self.ids.uuid()
        if legacy:
            payload = None
        self.emit(
            t0,
            "a2a.send",
            sender.agent,
            {
                "fromAgent": sender.agent,
                "toAgent": target.agent,
                "targetSessionKey": target.key,
                "requesterSessionKey": sender.key if legacy else None,
                "message": message,
                "runId": run_id,
                "conversationId": conv,
                "eventRole": role,
                "payloadType": payload.type if payload else None,
                "payloadJson": payload.json if payload else None,
                "fromSessionType": from_type,
                "toSessionType": to_type,
                **shared,
            },
        )
        if gate_blocked and not legacy:
            return self._gate_blocked(t0, sender, target, conv, shared)

        replied, waited_until, wait_status, wait_error, exceeded = self._wait(
            t0, sender, target, run_id, conv, shared, legacy, run_ms
        )
        if not replied:
            return self._no_reply(
                waited_until,
                sender,
                target,
                conv,
                shared,
                legacy,
                wait_status,
                wait_error,
                exceeded,
            )

        t = waited_until
        if reply is None:
            intent_of_message = classify_intent(message).intent
            reply = self.fill(self.pick(tx.FIRST_REPLIES[intent_of_message][lang]), lang, topic)
            if self.chance(0.15):
                reply = f"{reply} {self.fill('{point}. {point2}. {opinion}', lang, topic)}"
        reply = js_slice(reply.strip(), MESSAGE_LIMIT)
        if legacy:
            reply_payload = None
        self.emit(
            t,
            "a2a.response",
            target.agent,
            {
                "fromAgent": target.agent,
                "toAgent": sender.agent,
                **_reply_fields(reply),
                "conversationId": conv,
                "eventRole": _event_role(to_type, from_type),
                "payloadType": reply_payload.type if reply_payload else None,
                "payloadJson": reply_payload.json if reply_payload else None,
                "fromSessionType": to_type,
                "toSessionType": from_type,
                **shared,
            },
        )

        # The reference caller gives a valid payload's intent the configured turns (-1).
        result = (
            payload_intent(payload.type, reference_caller=True)
            if payload and payload.valid
            else None
        ) or classify_intent(message)
        intent = result.intent
        effective = effective_turns(CONFIGURED_MAX_TURNS, result)

        t, actual, reason, latest = self._ping_pong(
            t, sender, target, conv, shared, lang, reply, intent, effective
        )

        channel = announce_channel or ("discord" if self.chance(0.9) else "internal")
        run_announce = should_run_announce(
            AnnounceTarget(channel, self.pick(CHANNELS)), latest, sender.key, target.key
        )
        announced = False
        if run_announce:
            t += self.lognormal_ms(7.0, 0.5, 2.0, 40.0)
            announced = self.chance(0.88)
        else:
            t += self.ms(120, 1500)
        self.complete(
            t,
            sender,
            target,
            conv,
            {
                "announced": announced,
                **sender.roles(target),
                "messageIntent": intent,
                "configuredMaxTurns": CONFIGURED_MAX_TURNS,
                "effectiveTurns": effective,
                "actualTurns": actual,
                "earlyTermination": reason is not None,
                "terminationReason": reason,
                "announceSkipped": not run_announce,
                **shared,
            },
        )
        return t

    def complete(
        self, t: int, sender: _Session, target: _Session, conv: str, fields: dict[str, Any]
    ) -> None:
        """The ``a2a.complete`` of a flow: its head fields, then ``fields``."""
        self.emit(
            t,
            "a2a.complete",
            sender.agent,
            {
                "fromAgent": sender.agent,
                "toAgent": target.agent,
                "announced": fields.pop("announced", False),
                "targetSessionKey": target.key,
                "conversationId": conv,
                **fields,
            },
        )

    def _gate_blocked(
        self, t0: int, sender: _Session, target: _Session, conv: str, shared: dict[str, Any]
    ) -> int:
        t = t0 + GATE_QUEUE_TIMEOUT_MS + self.ms(2, 60)
        text = GATE_BLOCKED_TEXT.format(agent=target.agent)
        self.emit(
            t,
            "a2a.response",
            target.agent,
            {
                "fromAgent": sender.agent,
                "toAgent": target.agent,
                **_reply_fields(text),
                "outcome": "blocked",
                "conversationId": conv,
                **shared,
            },
        )
        t += self.ms(0, 3)
        self.complete(t, sender, target, conv, {"concurrencyBlocked": True, **shared})
        return t

    def _error_plan(self) -> dict[int, tuple[str, str, str]]:
        """Which ``agent.wait`` calls fail, and how: ``{call index: (kind, status, message)}``."""
        roll = self.rng.random()
        if roll < 0.08:
            first = self.ms(0, 2)
            spec = self.pick(_TRANSIENT_ERRORS)
            return {first + i: spec for i in range(self.ms(1, 2))}
        if roll < 0.10:
            spec = self.pick(_TRANSIENT_ERRORS)
            return {i: spec for i in range(4)}
        if roll < 0.12:
            return {self.ms(0, 2): self.pick(_PERMANENT_ERRORS)}
        return {}

    def _wait(
        self,
        t0: int,
        sender: _Session,
        target: _Session,
        run_id: str,
        conv: str,
        shared: dict[str, Any],
        legacy: bool,
        run_ms: int | None,
    ) -> tuple[bool, int, str | None, str | None, bool]:
        """Simulate the reference's ``agent.wait`` loop (runtime §2.2), emitting ``a2a.retry``.

        Returns ``(replied, time the loop ended, waitStatus, waitError, maxWaitExceeded)``.
        """
        if run_ms is None:
            run_ms = (
                self.lognormal_ms(400.0, 0.4, 301.0, 1800.0)
                if self.chance(0.02)
                else self.lognormal_ms(32.0, 0.85, 3.0, 900.0)
            )
        done_at = t0 + run_ms
        errors = self._error_plan()
        real = t0 + self.ms(40, 400)
        elapsed = retries = call = 0
        wait_status: str | None = None
        wait_error: str | None = None
        while elapsed < MAX_WAIT_MS:
            spec = errors.get(call)
            call += 1
            if spec is None:
                if done_at <= real + CHUNK_MS:
                    return True, max(real, done_at) + self.ms(80, 900), "ok", None, False
                real += CHUNK_MS
                wait_status, wait_error = "timeout", None
                if not legacy:
                    elapsed += CHUNK_MS
                    continue
                spec = ("status", "timeout", "")
            elif spec[0] == "status":
                real += self.ms(50, 1500)
                wait_status, wait_error = spec[1], spec[2] or None
            else:
                real += CHUNK_MS + 5_000 if "timeout" in spec[2].lower() else self.ms(20, 2500)
            kind, status, text = spec
            info = classify_error(
                ConnectionError(text)
                if kind == "exception"
                else {"status": status, **({"error": text} if text else {})}
            )
            if not info.retriable:
                break
            retries += 1
            if retries > MAX_RETRIES:
                break
            backoff = reference_backoff_ms(retries - 1, float(self.rng.random()))
            self.emit(
                real,
                "a2a.retry",
                target.agent,
                {
                    "fromAgent": sender.agent,
                    "toAgent": target.agent,
                    "runId": run_id,
                    "attempt": retries,
                    "maxAttempts": MAX_RETRIES,
                    "errorCategory": info.category.value,
                    "errorCode": info.code,
                    "reason": info.reason,
                    "backoffMs": backoff,
                    "elapsedMs": elapsed,
                    "conversationId": conv,
                    **shared,
                },
            )
            real += backoff
            elapsed += backoff + CHUNK_MS
        exceeded = elapsed >= MAX_WAIT_MS
        if exceeded:
            wait_status = wait_status or "timeout"
        return False, real, wait_status, wait_error, exceeded

    def _no_reply(
        self,
        waited_until: int,
        sender: _Session,
        target: _Session,
        conv: str,
        shared: dict[str, Any],
        legacy: bool,
        wait_status: str | None,
        wait_error: str | None,
        exceeded: bool,
    ) -> int:
        t = waited_until + self.ms(30, 1200)
        text = _no_reply_text(legacy, wait_status, wait_error, exceeded)
        self.emit(
            t,
            "a2a.response",
            target.agent,
            {
                "fromAgent": target.agent,
                "toAgent": sender.agent,
                **_reply_fields(text),
                "outcome": "blocked" if legacy else "no_reply",
                "waitStatus": wait_status,
                "waitError": wait_error,
                "conversationId": conv,
                **target.roles(sender),
                **shared,
            },
        )
        t += self.ms(1, 40)
        wait = {"waitStatus": wait_status, "waitError": wait_error}
        self.complete(t, sender, target, conv, {**sender.roles(target), **wait, **shared})
        return t

    def _ping_pong(
        self,
        t: int,
        sender: _Session,
        target: _Session,
        conv: str,
        shared: dict[str, Any],
        lang: str,
        first_reply: str,
        intent: str,
        effective: int,
    ) -> tuple[int, int, str | None, str]:
        """Ping-pong turns (runtime §3).

        Returns ``(time, actual turns, termination reason, latest reply)``; the latest reply is
        the last one that did not end the loop, as in the reference.
        """
        if effective <= 0 or sender.key == target.key:
            return t, 0, None, first_reply
        ending = self.weighted(
            {
                "full": 18,
                "conclusion": 30,
                "minimal": 16,
                "repetition": 7,
                "skip": 9,
                "empty": 5,
                "timeout": 4,
                "error": 3,
            }
        )
        end_turn = self.ms(1, effective)
        current, other = sender, target
        previous: list[str] = []
        latest = first_reply
        actual = 0
        for turn in range(1, effective + 1):
            at_end = ending != "full" and turn == end_turn
            step = self.lognormal_ms(18.0, 0.6, 3.0, 110.0)
            if at_end and ending == "timeout":
                return t + TURN_TIMEOUT_MS, actual, "turn_timeout", latest
            if at_end and ending == "error":
                return t + self.ms(500, 20_000), actual, "agent_error", latest
            if at_end and ending == "empty":
                return t + step, actual, "empty_reply", latest
            t += step
            if at_end and ending == "skip":
                return t, actual, "explicit_skip", latest
            if at_end and ending == "conclusion":
                text = self.pick(tx.CONCLUSIONS[lang])
            elif at_end and ending == "minimal":
                text = self.pick(tx.MINIMAL[lang])
            elif at_end and ending == "repetition":
                # An agent echoing the last turn (the first reply is not compared).
                text = previous[-1] if previous else latest
            else:
                text = self.fill("{point}." if self.chance(0.7) else "{point}. {point2}.", lang, "")
                if self.chance(0.3):
                    text = f"{text} {self.fill('{point}?', lang, '')}"
            reason = _termination(text, previous)
            actual = turn
            self.emit(
                t,
                "a2a.response",
                current.agent,
                {
                    "fromAgent": current.agent,
                    "toAgent": other.agent,
                    "turn": turn,
                    "maxTurns": effective,
                    **_reply_fields(text),
                    "conversationId": conv,
                    **current.roles(other),
                    "messageIntent": intent,
                    "terminationReason": reason,
                    **shared,
                },
            )
            if reason is not None:
                return t, actual, reason, latest
            previous.append(text)
            latest = text
            current, other = other, current
        return t, actual, None, latest

    # -- sub-agents --------------------------------------------------------------------------
    def spawn(
        self,
        t0: int,
        requester: _Session,
        worker: str,
        lang: str,
        topic: str,
        *,
        ctx: _Ctx,
        parent: str | None = None,
        depth: int = 0,
    ) -> int:
        """A ``sessions_spawn`` (runtime §1, §6) and the sub-agent's run; returns when it ended."""
        legacy = self.legacy(t0)
        child = _Session(worker, f"agent:{worker}:subagent:{self.ids.uuid()}")
        ws = ctx.ws or "ws_" + self.ids.uuid()
        conv = parent or self.ids.uuid()
        task_text = self.fill(self.pick(tx.SPAWN_TASKS[lang]), lang, topic)
        preview = js_slice(task_text, PREVIEW_LIMIT)
        label = f"{worker}-{self.rng.bytes(3).hex()}" if self.chance(0.6) else None
        hop = depth
        spawn_fields = {
            "fromAgent": requester.agent,
            "toAgent": worker,
            "targetSessionKey": child.key,
            "message": preview,
            "replyPreview": preview,
            "conversationId": conv,
            "parentConversationId": parent,
            "taskId": ctx.task,
            "workSessionId": ws,
            "depth": depth,
            "hop": hop,
        }
        self.emit(t0, "a2a.spawn", requester.agent, {**spawn_fields, "label": label})
        t = t0 + self.ms(1, 6)
        self.emit(t, "a2a.send", requester.agent, spawn_fields)
        t += self.ms(40, 900)
        # the spawn result repeats the spawn's fields but its texts
        result_fields = {
            k: v for k, v in spawn_fields.items() if k not in ("message", "replyPreview")
        }
        if self.chance(0.06):
            error = self.pick(tx.SPAWN_ERRORS)
            self.emit(
                t,
                "a2a.spawn_result",
                requester.agent,
                {
                    **result_fields,
                    "status": "error",
                    "error": error,
                    "replyPreview": js_slice(f"spawn failed: {error}", PREVIEW_LIMIT),
                },
            )
            return t
        child_run = self.ids.uuid()
        self.emit(
            t,
            "a2a.spawn_result",
            requester.agent,
            {
                **result_fields,
                "runId": child_run,
                "status": "ok" if legacy else "accepted",
                "label": label,
                "replyPreview": js_slice(f"spawn accepted · run {child_run}", PREVIEW_LIMIT),
            },
        )
        end = t + self.lognormal_ms(300.0, 0.8, 40.0, 2400.0)
        child_ctx = _Ctx(task=ctx.task, ws=ws, parent=conv, depth=depth + 1, hop=hop + 1)
        if self.chance(0.35):
            # The sub-agent asks a main agent something while it works.
            asked = self.pick([a for a in MAIN_AGENTS if a.id != worker])
            question = self.message(
                self.pick(("question", "request", "collaboration")), lang, topic
            )
            outcome_end = self.exchange(
                t + self.ms(20_000, max(20_001, end - t - 30_000)),
                child,
                _Session.main(asked.id),
                question,
                lang,
                ctx=child_ctx,
                topic=topic,
            )
            end = max(end, outcome_end + self.ms(5_000, 60_000))
        if depth == 0 and self.chance(0.1):
            nested = self.pick([w for w in WORKER_AGENTS if w != worker])
            nested_end = self.spawn(
                t + self.ms(30_000, 90_000),
                child,
                nested,
                lang,
                topic,
                ctx=child_ctx,
                parent=conv,
                depth=1,
            )
            end = max(end, nested_end + self.ms(2_000, 30_000))
        result_kind = self.weighted({"ok": 88, "error": 7, "timeout": 5})
        text: str
        outcome_fields: dict[str, Any] = {}
        if result_kind == "ok":
            text = self.fill(self.pick(tx.SUBAGENT_RESULTS[lang]), lang, topic)
        elif result_kind == "error":
            error = self.pick(tx.SUBAGENT_ERRORS)
            text = _no_reply_text(legacy, "error", error, False)
            outcome_fields = {
                "outcome": "blocked" if legacy else "no_reply",
                "waitStatus": "error",
                "waitError": error,
            }
        else:
            text = _no_reply_text(legacy, "timeout", None, True)
            outcome_fields = {
                "outcome": "blocked" if legacy else "no_reply",
                "waitStatus": "timeout",
            }
        shared = _Ctx(task=ctx.task, ws=ws, parent=parent, depth=depth, hop=hop).fields()
        # Older runtimes leave roles to the dashboard and give session keys instead (rules §4.2).
        roles: dict[str, Any] = (
            {"sourceSessionKey": child.key, "targetSessionKey": requester.key}
            if legacy
            else child.roles(requester)
        )
        self.emit(
            end,
            "a2a.response",
            worker,
            {
                "fromAgent": worker,
                "toAgent": requester.agent,
                **_reply_fields(text),
                **outcome_fields,
                "conversationId": conv,
                **roles,
                **shared,
            },
        )
        end += self.ms(200, 4_000)
        announced = result_kind == "ok" and not is_agent_session_key(requester.key)
        self.complete(
            end,
            requester,
            child,
            conv,
            {"announced": announced, **requester.roles(child), **shared},
        )
        return end

    # -- episodes ----------------------------------------------------------------------------
    def work_session(self, t0: int, owner: _Agent) -> int:
        """A task and its work session: start or backlog pick-up, talks, spawns, blocks, end."""
        me = _Session.main(owner.id)
        ws = "ws_" + self.ids.uuid()
        task = self.ids.short("task_")
        ctx = _Ctx(task=task, ws=ws)
        _, topic_ko, topic_en = self.topic(owner.categories)
        lang = self.language()
        topic = topic_ko if lang == "ko" else topic_en
        priority = self.weighted({"medium": 45, "high": 30, "low": 15, "urgent": 10})
        legacy = self.legacy(t0)
        t = t0
        progress = 1
        if self.chance(0.15):
            self.emit(
                t,
                "task.backlog_added",
                owner.id,
                {"taskId": task, "priority": priority, "workSessionId": ws},
            )
            t += self.lognormal_ms(2400.0, 0.9, 180.0, 21_600.0)
            picked = "backlog.auto_picked" if self.chance(0.6) else "task.backlog_picked"
            self.emit(t, picked, owner.id, {"taskId": task, "workSessionId": ws})
            t += self.ms(200, 3_000)
            self.emit(
                t,
                "task.updated",
                owner.id,
                {
                    "taskId": task,
                    "status": "in_progress",
                    "progressCount": progress,
                    "workSessionId": ws,
                },
            )
        else:
            approval = self.chance(0.2)
            self.emit(
                t,
                "task.started",
                owner.id,
                {
                    "taskId": task,
                    "priority": priority,
                    "requiresApproval": approval,
                    "workSessionId": ws,
                },
            )
            if approval:
                t = self._plan(t, owner, ctx, lang, topic)
        pending: list[int] = []
        for _ in range(min(9, 2 + int(self.rng.poisson(3.0)))):
            gap = self.lognormal_ms(360.0, 0.9, 20.0, 5400.0)
            self._nudges(t, gap, owner, task)
            t += gap
            action = self.weighted(
                {
                    "update": 22,
                    "talk": 30,
                    "delegate": 7,
                    "ask": 5,
                    "spawn": 18,
                    "block": 7,
                    "continue": 8,
                    "remind": 3,
                }
            )
            if legacy and action in ("delegate", "ask"):
                action = "talk"
            if action == "update":
                progress += 1
                status = "in_progress" if not legacy and self.chance(0.3) else None
                self.emit(
                    t,
                    "task.updated",
                    owner.id,
                    {
                        "taskId": task,
                        "status": status,
                        "progressCount": progress,
                        "workSessionId": ws,
                    },
                )
            elif action == "talk":
                peer = self.other_main(owner)
                text = self.message(
                    self.intent(),
                    lang,
                    topic,
                    mention=self.mention(peer.id) if self.chance(0.2) else "",
                )
                outcome_end = self.exchange(
                    t,
                    me,
                    _Session.main(peer.id),
                    text,
                    lang,
                    ctx=ctx,
                    topic=topic,
                )
                t = outcome_end if self.chance(0.5) else t
            elif action == "delegate":
                pending.append(self._delegate(t, owner, ctx, lang, topic))
            elif action == "ask":
                pending.append(self._ask(t, owner, ctx, lang, topic))
            elif action == "spawn":
                worker = owner.id if self.chance(0.2) else self.pick(owner.workers)
                pending.append(self.spawn(t, me, worker, lang, topic, ctx=ctx))
            elif action == "block":
                t = self._block(t, owner, ctx, lang, topic)
            elif action == "continue":
                if self.chance(0.25):
                    self.emit(
                        t,
                        "continuation.backoff",
                        owner.id,
                        {
                            "taskId": task,
                            "reason": self.pick(("context_overflow", "rate_limit", "timeout")),
                            "consecutiveFailures": self.ms(1, 3),
                            "backoffMs": self.pick((60_000, 120_000, 300_000)),
                        },
                    )
                    t += self.ms(60_000, 400_000)
                self.emit(t, "continuation.sent", owner.id, {"taskId": task})
            else:
                self.emit(
                    t,
                    "resume_reminder.sent",
                    owner.id,
                    {"taskId": task, "workSessionId": ws, "reminderCount": self.ms(1, 3)},
                )
        t = max([t, *pending]) + self.lognormal_ms(180.0, 0.8, 10.0, 3600.0)
        return self._finish(t, owner, ctx, legacy, progress)

    def _nudges(self, t: int, idle: int, owner: _Agent, task: str) -> None:
        """The continuation runner nudging an idle agent with an active task every few minutes."""
        interval = self.ms(150_000, 420_000)
        for k in range(1, min(12, idle // interval) + 1):
            if self.chance(0.85):
                self.emit(
                    t + k * interval + self.ms(0, 4_000),
                    "continuation.sent",
                    owner.id,
                    {"taskId": task},
                )

    def _plan(self, t: int, owner: _Agent, ctx: _Ctx, lang: str, topic: str) -> int:
        fields = {"taskId": ctx.task, "workSessionId": ctx.ws}
        for attempt in range(2):
            t += self.lognormal_ms(150.0, 0.7, 20.0, 1800.0)
            self.emit(
                t,
                "plan.submitted",
                owner.id,
                {**fields, "title": topic, "summary": self.pick(tx.PLAN_SUMMARIES[lang])},
            )
            t += self.lognormal_ms(600.0, 0.9, 30.0, 7200.0)
            if attempt == 0 and self.chance(0.2):
                self.emit(
                    t,
                    "plan.rejected",
                    owner.id,
                    {**fields, "reason": self.pick(tx.PLAN_REJECTIONS)},
                )
                continue
            break
        self.emit(
            t,
            "plan.approved",
            owner.id,
            {**fields, "approvedBy": self.pick(("main", "ruda", *HUMANS))},
        )
        t += self.ms(200, 5_000)
        self.emit(t, "task.approved", owner.id, fields)
        return t

    def _delegate(self, t: int, owner: _Agent, ctx: _Ctx, lang: str, topic: str) -> int:
        """A task_delegation payload, then status reports on the same taskId (runtime §8)."""
        me, them = _Session.main(owner.id), _Session.main(self.other_main(owner).id)
        delegated = self.ids.short("task_")
        deadline = _iso_utc(t + self.ms(4, 72) * 3_600_000)
        payload = self.payload(
            "task_delegation",
            {
                "taskId": delegated,
                "taskTitle": topic,
                "taskDescription": self.fill("{point}. {point2}.", lang, ""),
                "context": self.fill("{detail}", lang, "") or None,
                "deadline": deadline,
                "priority": self.pick(("critical", "high", "medium", "low")),
                "acceptanceCriteria": [
                    self.fill("{point}", lang, "") for _ in range(self.ms(1, 3))
                ],
            },
        )
        text = self.message("request", lang, topic)
        end = self.exchange(t, me, them, text, lang, ctx=ctx, topic=topic, payload=payload)
        for percent in [*sorted({self.ms(2, 9) * 10 for _ in range(self.ms(1, 2))}), 100]:
            end += self.lognormal_ms(1200.0, 0.8, 60.0, 14_400.0)
            status = (
                "completed"
                if percent == 100
                else self.pick(("in_progress", "in_progress", "blocked"))
            )
            report = self.payload(
                "status_report",
                {
                    "taskId": delegated,
                    "status": status,
                    "completedWork": self.fill("{finding}", lang, ""),
                    "remainingWork": None
                    if status == "completed"
                    else self.fill("{point}", lang, ""),
                    "blockers": [self.pick(tx.BLOCK_REASONS[lang])]
                    if status == "blocked"
                    else None,
                    "progressPercent": percent,
                    "artifacts": [self.fill("{link}", lang, "")] if status == "completed" else None,
                },
            )
            report_text = self.message("result_report", lang, topic)
            end = self.exchange(
                end, them, me, report_text, lang, ctx=ctx, topic=topic, payload=report
            )
        return end

    def _ask(self, t: int, owner: _Agent, ctx: _Ctx, lang: str, topic: str) -> int:
        """A question payload answered by questionId, in the reply or in a later send."""
        me, them = _Session.main(owner.id), _Session.main(self.other_main(owner).id)
        question_id = self.ids.short("q-")
        question_text = self.message("question", lang, topic)
        question = self.payload(
            "question",
            {
                "questionId": question_id,
                "question": question_text,
                "context": self.fill("{detail}", lang, "") or None,
                "urgency": self.pick(("urgent", "normal", "normal", "low")),
                "options": [self.fill("{opinion}", lang, "") for _ in range(2)]
                if self.chance(0.4)
                else None,
            },
        )
        answer_text = self.fill(self.pick(tx.FIRST_REPLIES["question"][lang]), lang, topic)
        answer = self.payload(
            "answer",
            {
                "questionId": question_id,
                "answer": answer_text,
                "confidence": self.pick((0.6, 0.75, 0.8, 0.9, 0.95)),
                "references": [self.fill("{link}", lang, "")] if self.chance(0.5) else None,
            },
        )
        ask = functools.partial(self.exchange, ctx=ctx, topic=topic, payload=question)
        if self.chance(0.7):  # the answer is the reply
            return ask(t, me, them, question_text, lang, reply=answer_text, reply_payload=answer)
        # the answer comes later, as a message of its own
        end = ask(t, me, them, question_text, lang) + self.lognormal_ms(900.0, 0.8, 60.0, 7200.0)
        return self.exchange(end, them, me, answer_text, lang, ctx=ctx, topic=topic, payload=answer)

    def _block(self, t: int, owner: _Agent, ctx: _Ctx, lang: str, topic: str) -> int:
        helper = self.other_main(owner)
        self.emit(
            t,
            "task.blocked",
            owner.id,
            {
                "taskId": ctx.task,
                "reason": self.pick(tx.BLOCK_REASONS[lang]),
                "unblockedBy": [helper.id],
                "workSessionId": ctx.ws,
            },
        )
        for request in range(1, self.ms(1, 3) + 1):
            t += self.lognormal_ms(300.0 if request == 1 else 1500.0, 0.7, 20.0, 7200.0)
            if self.chance(0.15):
                self.emit(
                    t,
                    "unblock.failed",
                    owner.id,
                    {
                        "taskId": ctx.task,
                        "targetAgentId": helper.id,
                        "consecutiveFailures": request,
                        "error": "agent session busy",
                    },
                )
                continue
            self.emit(
                t,
                "unblock.requested",
                owner.id,
                {"taskId": ctx.task, "targetAgentId": helper.id, "requestCount": request},
            )
        t += self.lognormal_ms(600.0, 0.8, 30.0, 7200.0)
        reply_text = self.pick(tx.UNBLOCK_REPLIES[lang])
        me = _Session.main(owner.id)
        t = self.exchange(
            t,
            _Session.main(helper.id),
            me,
            reply_text,
            lang,
            ctx=ctx,
            topic=topic,
        )
        t += self.ms(5_000, 120_000)
        self.emit(t, "task.resumed", owner.id, {"taskId": ctx.task, "workSessionId": ctx.ws})
        return t

    def _finish(self, t: int, owner: _Agent, ctx: _Ctx, legacy: bool, progress: int) -> int:
        fields = {"taskId": ctx.task, "workSessionId": ctx.ws}
        ending = self.weighted(
            {"completed": 66, "cancelled": 10, "failed": 5, "abandoned": 4, "open": 15}
        )
        if ending == "completed":
            self.emit(t, "task.completed", owner.id, fields)
            if self.chance(0.3):
                t += self.ms(500, 30_000)
                self.emit(t, "continuation.complete", owner.id, fields)
            if self.chance(0.1):
                t += self.ms(2_000, 9_000)
                error = {"error": "Milestone sync HTTP 502"} if legacy else {}
                self.emit(
                    t,
                    "milestone.sync_failed",
                    owner.id,
                    {
                        "taskId": ctx.task,
                        "milestoneId": f"ms-{self.ms(10, 99)}",
                        "workSessionId": ctx.ws,
                        **error,
                    },
                )
        elif ending == "cancelled":
            self.emit(
                t,
                "task.cancelled",
                owner.id,
                {
                    "taskId": ctx.task,
                    "reason": self.pick(tx.CANCEL_REASONS),
                    "workSessionId": ctx.ws,
                },
            )
        elif ending == "failed":
            self.emit(
                t,
                "task.updated",
                owner.id,
                {
                    "taskId": ctx.task,
                    "status": "failed",
                    "progressCount": progress + 1,
                    "workSessionId": ctx.ws,
                },
            )
        elif ending == "abandoned":
            t += self.ms(3, 6) * 3_600_000
            self.emit(
                t, "zombie.abandoned", owner.id, {**fields, "idleMs": self.ms(3, 6) * 3_600_000}
            )
            if self.chance(0.5):
                self.emit(
                    t + self.ms(5, 500),
                    "task.updated",
                    owner.id,
                    {
                        "taskId": ctx.task,
                        "status": "abandoned",
                        "progressCount": progress,
                        "workSessionId": ctx.ws,
                    },
                )
        return t

    def long_task(self, t0: int, owner: _Agent) -> int:
        """A long, quiet task (a batch job): hours of progress updates and continuation nudges."""
        ws = "ws_" + self.ids.uuid()
        ctx = _Ctx(task=self.ids.short("task_"), ws=ws)
        _, topic_ko, topic_en = self.topic(owner.categories)
        lang = self.language()
        topic = topic_ko if lang == "ko" else topic_en
        legacy = self.legacy(t0)
        self.emit(
            t0,
            "task.started",
            owner.id,
            {"taskId": ctx.task, "priority": "low", "requiresApproval": False, "workSessionId": ws},
        )
        t, progress = t0, 1
        until = t0 + self.lognormal_ms(14_400.0, 0.5, 3_600.0, 43_200.0)
        while t < until:
            t += self.ms(240_000, 900_000)
            roll = self.rng.random()
            if roll < 0.45:
                progress += 1
                status = "in_progress" if not legacy and self.chance(0.3) else None
                self.emit(
                    t,
                    "task.updated",
                    owner.id,
                    {
                        "taskId": ctx.task,
                        "status": status,
                        "progressCount": progress,
                        "workSessionId": ws,
                    },
                )
            elif roll < 0.92:
                self.emit(t, "continuation.sent", owner.id, {"taskId": ctx.task})
            elif roll < 0.97:
                self.emit(
                    t,
                    "resume_reminder.sent",
                    owner.id,
                    {"taskId": ctx.task, "workSessionId": ws, "reminderCount": self.ms(1, 3)},
                )
            else:
                text = self.fill(
                    "[NOTIFICATION] {topic} 진행률 {pct}% 공유합니다."
                    if lang == "ko"
                    else "[NOTIFICATION] {topic} is {pct}% done.",
                    lang,
                    topic,
                )
                t = (
                    self.exchange(
                        t,
                        _Session.main(owner.id),
                        _Session("main", "agent:main:main"),
                        text,
                        lang,
                        ctx=ctx,
                        topic=topic,
                    )
                    if owner.id != "main"
                    else t
                )
        return self._finish(t + self.ms(10_000, 600_000), owner, ctx, legacy, progress)

    def adhoc_talk(self, t0: int, agent: _Agent) -> int:
        """A conversation started from Discord, a DM or the main session: no work session."""
        peer = self.pick([a for a in MAIN_AGENTS if a.id != agent.id])
        origin = self.weighted({"discord": 55, "direct": 20, "main": 25})
        key = {
            "discord": f"agent:{agent.id}:discord:group:{self.pick(CHANNELS)}",
            "direct": f"agent:{agent.id}:direct:{self.pick(HUMANS)}",
            "main": f"agent:{agent.id}:main",
        }[origin]
        conversation = None
        target_key = f"agent:{peer.id}:main"
        if not self.legacy(t0) and self.chance(0.3):
            conversation = self.ids.uuid()
            target_key = f"agent:{peer.id}:a2a:{conversation}"
        _, topic_ko, topic_en = self.topic(agent.categories)
        lang = self.language()
        topic = topic_ko if lang == "ko" else topic_en
        mention = self.mention(peer.id) if origin != "main" and self.chance(0.7) else ""
        text = self.message(self.intent(), lang, topic, mention=mention)
        return self.exchange(
            t0,
            _Session(agent.id, key),
            _Session(peer.id, target_key),
            text,
            lang,
            topic=topic,
            conversation=conversation,
        )

    def incident_report(self, t0: int) -> int:
        """An escalation with a pasted stack trace longer than the 4,000-character send limit."""
        trace = "\n".join(self.pick(tx.STACK_TRACE_LINES) for _ in range(80))
        text = f"[URGENT] 결제 서버 장애 — 스택 트레이스 첨부:\n{trace}"
        sender = _Session("seum", f"agent:seum:discord:group:{CHANNELS[0]}")
        return self.exchange(
            t0, sender, _Session("eden", "agent:eden:main"), text, "ko", topic="결제 모듈 버그 수정"
        )

    def auto_route(self, t0: int, agent: _Agent) -> int:
        """A sibling bot mentioned in Discord: ``a2a.auto_route`` then the A2A flow."""
        peer = self.pick([a for a in MAIN_AGENTS if a.id != agent.id])
        channel = self.pick(CHANNELS)
        _, topic_ko, topic_en = self.topic(peer.categories)
        lang = self.language()
        topic = topic_ko if lang == "ko" else topic_en
        text = self.message(self.intent(), lang, topic)
        legacy = self.legacy(t0)
        conversation = None if legacy else self.ids.uuid()
        self.emit(
            t0,
            "a2a.auto_route",
            agent.id,
            {
                "senderAgentId": agent.id,
                "targetAgentId": peer.id,
                "channelId": channel,
                "maxTurns": CONFIGURED_MAX_TURNS,
                "message": js_slice(text, PREVIEW_LIMIT),
                "conversationId": conversation,
            },
        )
        # The mention arrived in a Discord channel: both agents' sessions are that channel's.
        sender = _Session(agent.id, f"agent:{agent.id}:discord:group:{channel}")
        target = _Session(peer.id, f"agent:{peer.id}:discord:group:{channel}")
        return self.exchange(
            t0 + self.ms(300, 2_500),
            sender,
            target,
            text,
            lang,
            topic=topic,
            conversation=conversation,
            announce_channel="discord",
        )

    def adhoc_spawn(self, t0: int, agent: _Agent) -> int:
        """A spawn outside any task: the spawn creates its own work session (runtime §6)."""
        _, topic_ko, topic_en = self.topic(agent.categories)
        lang = self.language()
        origin = (
            f"agent:{agent.id}:discord:group:{self.pick(CHANNELS)}"
            if self.chance(0.4)
            else f"agent:{agent.id}:main"
        )
        worker = self.pick(agent.workers)
        return self.spawn(
            t0,
            _Session(agent.id, origin),
            worker,
            lang,
            topic_ko if lang == "ko" else topic_en,
            ctx=_Ctx(),
        )

    def burst(self, t0: int, target: _Agent) -> int:
        """Several agents message one agent at once: beyond 3 concurrent flows the gate refuses."""
        senders = [a for a in MAIN_AGENTS if a.id != target.id]
        order = self.rng.permutation(len(senders))[: self.ms(4, 5)]
        _, topic_ko, topic_en = self.topic(target.categories)
        end = t0
        for rank, index in enumerate(order):
            sender = senders[int(index)]
            lang = self.language()
            topic = topic_ko if lang == "ko" else topic_en
            text = self.message(self.pick(("escalation", "request", "question")), lang, topic)
            start = t0 + rank * self.ms(150, 900)
            outcome_end = self.exchange(
                start,
                _Session.main(sender.id),
                _Session.main(target.id),
                text,
                lang,
                topic=topic,
                run_ms=self.ms(45_000, 150_000) if rank < GATE_LIMIT else None,
                gate_blocked=rank >= GATE_LIMIT,
            )
            end = max(end, outcome_end)
        return end

    def episode(self, t0: int, kind: str) -> int:
        """One top-level episode of ``kind`` started by a random main agent."""
        agent = self.pick(MAIN_AGENTS)
        if kind == "work_session":
            return self.work_session(t0, agent)
        if kind == "long_task":
            return self.long_task(t0, agent)
        if kind == "talk":
            return self.adhoc_talk(t0, agent)
        if kind == "auto_route":
            return self.auto_route(t0, agent)
        if kind == "spawn":
            return self.adhoc_spawn(t0, agent)
        return self.burst(t0, agent)


_MISSING = object()
_PAYLOAD_BREAKAGES: dict[str, tuple[Any, ...]] = {
    "task_delegation": (
        ("taskDescription", _MISSING),
        ("priority", "ultra"),
        ("acceptanceCriteria", [1, 2]),
        ("deadline", None),
        "bad_json",
    ),
    "status_report": (
        ("status", "done"),
        ("progressPercent", 150),
        ("blockers", [42]),
        ("taskId", _MISSING),
        "type_mismatch",
    ),
    "question": (
        ("urgency", "super"),
        ("question", _MISSING),
        ("options", "A or B"),
        "type_mismatch",
    ),
    "answer": (
        ("confidence", 1.5),
        ("questionId", _MISSING),
        ("references", [1]),
        ("answer", ""),
        "bad_json",
    ),
}
_TRANSIENT_ERRORS: tuple[tuple[str, str, str], ...] = (
    ("status", "error", "429 Too Many Requests"),
    ("status", "error", "rate_limit exceeded"),
    ("status", "error", "503 Service Unavailable"),
    ("status", "error", "overloaded"),
    ("status", "error", "502 Bad Gateway"),
    ("status", "error", "something weird"),
    ("exception", "", "read ECONNRESET"),
    ("exception", "", "socket hang up"),
    ("exception", "", "fetch failed"),
    ("exception", "", "connect ECONNREFUSED 127.0.0.1:18789"),
)
_PERMANENT_ERRORS: tuple[tuple[str, str, str], ...] = (
    ("status", "not_found", ""),
    ("status", "not_found", ""),
    ("status", "error", "context_length_exceeded: maximum context window"),
    ("status", "error", "token_limit_exceeded"),
    ("exception", "", "401 Unauthorized"),
)


# --------------------------------------------------------------------------------------------
# The sample
# --------------------------------------------------------------------------------------------
_EPISODES_PER_DAY: dict[str, float] = {
    "work_session": 20.0,
    "long_task": 1.5,
    "talk": 12.0,
    "auto_route": 3.5,
    "spawn": 4.0,
    "burst": 0.7,
}


def _sorted_events(builder: _Builder, end_ms: int) -> list[dict[str, Any]]:
    """Events in write order (time, then emission order), cut at ``end_ms`` (the sample's now)."""
    return [
        event for ts, _, event in sorted(builder.events, key=lambda e: (e[0], e[1])) if ts < end_ms
    ]


def generate_events(
    seed: int = DEFAULT_SEED, *, start: datetime = SAMPLE_START, days: int = SAMPLE_DAYS
) -> list[dict[str, Any]]:
    """Generate the sample's coordination events, in the order the reference would write them.

    Episodes (work sessions, ad-hoc conversations, auto-routes, spawns, concurrency bursts)
    start at random times with a KST working-day profile and quieter weekends; the first
    ``LEGACY_DAYS`` days are written by the older runtime. Events after ``start + days`` are
    cut off, so flows still running at the end stay incomplete, as in a live log.

    Parameters
    ----------
    seed
        Seed of the :class:`numpy.random.Generator`; the same seed gives the same events.
    start
        First day (timezone-aware).
    days
        Number of days.

    Returns
    -------
    list[dict]
        Events as ``{"type", "agentId", "ts", "data"}`` dictionaries, in time order.

    Examples
    --------
    >>> events = generate_events(7, days=1)
    >>> list(events[0])
    ['type', 'agentId', 'ts', 'data']
    >>> events == generate_events(7, days=1)
    True
    """
    return _sample(seed, start, days)[0]


def _sample(seed: int, start: datetime, days: int) -> tuple[list[dict[str, Any]], dict[str, bool]]:
    """The sample's events and the validity of every payload made for it."""
    rng = np.random.default_rng(seed)
    start_ms = _epoch_ms(start)
    end_ms = start_ms + days * 86_400_000
    builder = _Builder(rng, legacy_until=start_ms + LEGACY_DAYS * 86_400_000)
    builder.incident_report(
        start_ms + (days - 3) * 86_400_000 + 14 * 3_600_000 + builder.ms(0, 3_599_999)
    )
    for day in range(days):
        weekend = (start + timedelta(days=day)).weekday() >= 5
        for kind, rate in _EPISODES_PER_DAY.items():
            legacy_day = day < LEGACY_DAYS
            if kind == "burst" and legacy_day:
                continue
            count = int(rng.poisson(rate * (0.45 if weekend else 1.0)))
            if kind == "burst" and day in (LEGACY_DAYS, days - 2):
                count = max(count, 1)
            hours = rng.choice(24, size=count, p=_HOUR_P)
            for hour in hours:
                t0 = start_ms + day * 86_400_000 + int(hour) * 3_600_000 + builder.ms(0, 3_599_999)
                builder.episode(t0, kind)
    return _sorted_events(builder, end_ms), builder.payload_valid


@dataclass(frozen=True)
class MalformedLine:
    """A deliberately malformed line of the sample.

    ``kind`` is one of ``not_json``, ``non_object``, ``missing_type``, ``blank_type``, ``nan``,
    ``truncated`` (the loader rejects these), ``blank`` (counted as blank), ``crlf`` and
    ``invalid_utf8`` (still events).
    """

    file: str
    line: int
    kind: str
    note: str


@dataclass(frozen=True)
class SampleManifest:
    """What :func:`write_sample` wrote."""

    directory: Path
    #: ``(file name, physical lines, events)`` per log file, oldest first, live file last.
    files: tuple[tuple[str, int, int], ...]
    events: int
    malformed: tuple[MalformedLine, ...]


_MALFORMED_KINDS = (
    "not_json",
    "non_object",
    "missing_type",
    "blank_type",
    "nan",
    "truncated",
    "blank",
    "crlf",
    "invalid_utf8",
)
_REJECT_NOTES = {
    "not_json": "a stray stderr line in the log (not JSON)",
    "non_object": "a JSON array, not an object",
    "missing_type": "a copy of the next event without its `type`",
    "blank_type": "a copy of the next event with `type` set to blanks",
    "nan": 'a copy of the next event with `"ts":NaN` (not JSON)',
    "truncated": "a torn write: the first bytes of the next line, as if the process died mid-write",
    "blank": "an empty line",
    "crlf": "a valid event whose line ends with CRLF",
    "invalid_utf8": "a valid event whose message has a Korean character cut to 2 of its 3 bytes",
}


class _LogFile:
    def __init__(self) -> None:
        self.name = "coordination-events.ndjson"
        self.chunks: list[bytes] = []
        self.size = 0
        self.lines = 0
        self.events = 0

    def write(self, line: bytes, *, event: bool) -> int:
        self.chunks.append(line)
        self.size += len(line)
        self.lines += 1
        self.events += int(event)
        return self.lines


def _malformed_line(kind: str, next_line: str, rng: np.random.Generator) -> bytes:
    if kind == "not_json":
        return (tx.NOT_JSON_LINES[int(rng.integers(len(tx.NOT_JSON_LINES)))] + "\n").encode()
    if kind == "non_object":
        return b"[1,2,3]\n"
    if kind == "missing_type":
        return (re.sub(r'^\{"type":"[^"]*",', "{", next_line) + "\n").encode()
    if kind == "blank_type":
        return (re.sub(r'^\{"type":"[^"]*"', '{"type":"  "', next_line) + "\n").encode()
    if kind == "nan":
        return (re.sub(r'"ts":\d+', '"ts":NaN', next_line, count=1) + "\n").encode()
    if kind == "truncated":
        raw = next_line.encode()
        return raw[: len(raw) * 3 // 5].decode("utf-8", errors="ignore").encode() + b"\n"
    return b"\n"


def _cut_utf8(line: str) -> bytes:
    """The line's bytes with the first Korean character of its message cut to two bytes."""
    raw = line.encode()
    start = raw.index(b'"message":"')
    for i in range(start, len(raw)):
        if 0xEA <= raw[i] <= 0xED:
            return raw[: i + 2] + raw[i + 3 :]
    raise ValueError("no Korean character in the message")


def _write_files(
    events: list[dict[str, Any]], rng: np.random.Generator
) -> tuple[list[_LogFile], list[tuple[_LogFile, int, str]]]:
    """Write events through the reference's rotation (rules §9), inserting the malformed lines."""
    lines = [_dumps(e) for e in events]
    korean = [
        i for i, e in enumerate(events) if re.search("[가-힣]", str(e["data"].get("message", "")))
    ]
    positions = np.sort(
        rng.choice(np.arange(40, len(events) - 40), size=len(_MALFORMED_KINDS) - 1, replace=False)
    )
    kinds = [str(k) for k in rng.permutation([k for k in _MALFORMED_KINDS if k != "invalid_utf8"])]
    inserted = {int(p): k for p, k in zip(positions, kinds, strict=True)}
    candidates = [i for i in korean[len(korean) // 3 : 2 * len(korean) // 3] if i not in inserted]
    cut_at = candidates[int(rng.integers(len(candidates)))]
    files: list[_LogFile] = []
    live = _LogFile()
    month = _month(events[0]["ts"])
    marks: list[tuple[_LogFile, int, str]] = []
    for index, (event, line) in enumerate(zip(events, lines, strict=True)):
        now = event["ts"]
        if _month(now) != month:
            live.name = f"coordination-events-{month}.ndjson"
            files.append(live)
            live = _LogFile()
            month = _month(now)
        elif live.size > SAMPLE_ROTATE_BYTES:
            live.name = "coordination-events-" + re.sub(r"[:.]", "-", _iso_utc(now)) + ".ndjson"
            files.append(live)
            live = _LogFile()
        kind = inserted.get(index)
        if kind == "crlf":
            marks.append((live, live.write(line.encode() + b"\r\n", event=True), kind))
            continue
        if kind is not None:
            marks.append((live, live.write(_malformed_line(kind, line, rng), event=False), kind))
        if index == cut_at:
            marks.append((live, live.write(_cut_utf8(line) + b"\n", event=True), "invalid_utf8"))
            continue
        live.write(line.encode() + b"\n", event=True)
    files.append(live)
    return files, marks


def _month(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=KST).strftime("%Y-%m")


def _openclaw_config() -> dict[str, Any]:
    """The sample deployment's ``openclaw.json``: every configured agent is a main agent."""
    return {
        "agents": {
            "defaults": {
                "model": {"primary": "anthropic/claude-sonnet-4-5"},
                "workspace": "~/.openclaw/workspace",
                "subagents": {"maxSpawnDepth": 2, "maxChildrenPerAgent": 5},
            },
            "list": [
                {
                    "id": a.id,
                    **({"default": True} if a.id == "main" else {}),
                    "name": a.name,
                    "workspace": "~/.openclaw/workspace"
                    if a.id == "main"
                    else f"~/.openclaw/workspace-{a.id}",
                    "identity": {"name": a.name, "emoji": a.emoji, "theme": a.role},
                    "subagents": {"allowAgents": list(a.workers)},
                }
                for a in MAIN_AGENTS
            ],
        },
        "session": {"agentToAgent": {"maxPingPongTurns": CONFIGURED_MAX_TURNS}},
        "tools": {"agentToAgent": {"enabled": True, "allow": [a.id for a in MAIN_AGENTS]}},
    }


def write_sample(out_dir: str | Path, seed: int = DEFAULT_SEED) -> SampleManifest:
    """Write the sample log directory: log files, ``openclaw.json`` and ``README.md``.

    Existing ``coordination-events*.ndjson`` files in ``out_dir`` are removed first, so the
    directory holds exactly one generation.

    Parameters
    ----------
    out_dir
        Directory to write (created if missing).
    seed
        Generator seed; the same seed gives byte-identical files.

    Returns
    -------
    SampleManifest
        The files written, the event count and the deliberately malformed lines.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     manifest = write_sample(tmp, seed=3)
    ...     names = sorted(p.name for p in Path(tmp).iterdir())
    >>> "coordination-events.ndjson" in names and "openclaw.json" in names
    True
    >>> len(manifest.malformed)
    9
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("coordination-events*.ndjson"):
        old.unlink()
    events, payload_valid = _sample(seed, SAMPLE_START, SAMPLE_DAYS)
    # A second stream, derived from the seed, places the malformed lines.
    files, marks = _write_files(events, np.random.default_rng([seed, 1]))
    for log in files:
        (out / log.name).write_bytes(b"".join(log.chunks))
    (out / "openclaw.json").write_text(
        json.dumps(_openclaw_config(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    malformed = tuple(
        MalformedLine(log.name, line, kind, _REJECT_NOTES[kind]) for log, line, kind in marks
    )
    manifest = SampleManifest(
        directory=out,
        files=tuple((f.name, f.lines, f.events) for f in files),
        events=sum(f.events for f in files),
        malformed=malformed,
    )
    (out / "README.md").write_text(_readme(manifest, events, payload_valid, seed), encoding="utf-8")
    return manifest


def _readme(
    manifest: SampleManifest,
    events: list[dict[str, Any]],
    payload_valid: dict[str, bool],
    seed: int,
) -> str:
    """The sample's README: how it was made, what is in it, where the malformed lines are."""
    by_type = Counter(e["type"] for e in events)
    outcomes = Counter(str(e["data"].get("outcome")) for e in events if e["type"] == "a2a.response")
    concurrency = sum(1 for e in events if e["data"].get("concurrencyBlocked") is True)
    legacy_blocked = sum(
        1
        for e in events
        if e["data"].get("outcome") == "blocked"
        and ("waitStatus" in e["data"] or "waitError" in e["data"])
    )
    turns = sum(1 for e in events if "turn" in e["data"])
    subagent_keys = len(
        {
            e["data"]["targetSessionKey"]
            for e in events
            if ":subagent:" in str(e["data"].get("targetSessionKey", ""))
        }
    )
    work_sessions = len(
        {e["data"]["workSessionId"] for e in events if "workSessionId" in e["data"]}
    )
    agents = sorted({e["agentId"] for e in events})
    payloads = Counter(
        (e["data"]["payloadType"], payload_valid[e["data"]["payloadJson"]])
        for e in events
        if "payloadJson" in e["data"]
    )
    first = _iso_utc(events[0]["ts"])
    last = _iso_utc(events[-1]["ts"])
    rows = "\n".join(f"| `{name}` | {lines} | {count} |" for name, lines, count in manifest.files)
    type_rows = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(by_type.items()))
    payload_rows = "\n".join(
        f"| `{kind}` | {payloads[(kind, True)]} | {payloads[(kind, False)]} |"
        for kind in ("task_delegation", "status_report", "question", "answer")
    )
    bad_rows = "\n".join(
        f"| `{m.file}` | {m.line} | `{m.kind}` | {m.note} |" for m in manifest.malformed
    )
    mains = ", ".join(f"`{a.id}`" for a in MAIN_AGENTS)
    workers = ", ".join(f"`{w}`" for w in WORKER_AGENTS)
    return f"""# Bundled sample coordination log

Synthetic data made by a seeded generator, not recorded from a real deployment:

```
python tools/generate_sample.py --out a2a_lab/samples/data --seed {seed}
```

`data/samples` in the repository is a symlink to this directory, which is also installed as
package data (`a2a_lab.samples.sample_dir()`). The same seed with the same numpy version gives
byte-identical files (a test regenerates the sample and compares bytes). Do not edit the files
by hand: change the generator (`tools/generate_sample.py`, text banks in `tools/sample_texts.py`)
and regenerate.

## What it is

A log directory as the reference writes it (`rules §9`): the live `coordination-events.ndjson`
and its rotated siblings, {manifest.events} events from {first} to {last} (7 days starting
2026-01-29 KST, quieter at night and on the weekend), written by {len(agents)} agents.

- Main agents (configured in `openclaw.json`): {mains}. Worker agents {workers} are not
  configured; they only run as spawned sub-agent sessions `agent:<id>:subagent:<uuid>`
  ({subagent_keys} such sessions).
- Until 2026-01-31 00:00 KST the older runtime wrote the log: no-reply outcomes say
  `outcome: "blocked"` with `[outcome] blocked: 응답을 받지 못했습니다 …`, a 30 s wait chunk
  that times out counts as a retry (`errorCode: wait_chunk_timeout`), there is no concurrency
  gate and no structured payload, a spawn result says `status: "ok"`, `a2a.send` also names
  the `requesterSessionKey`, and sub-agent results carry session keys instead of roles. From
  then on the current runtime writes `outcome: "no_reply"`, `status: "accepted"`, gate
  refusals and payloads.
- Session keys (runtime §1): `agent:<id>:main`, `agent:<id>:subagent:<uuid>`,
  `agent:<id>:direct:<peer>`, `agent:<id>:discord:group:<channel>` (conversations started
  from Discord, auto-routed mentions) and `agent:<id>:a2a:<conversationId>`.
- Rotation: month rotation at the KST month change (`coordination-events-2026-01.ndjson`);
  size rotation when the live file exceeds {SAMPLE_ROTATE_BYTES // 1024} KiB (scaled down from the
  reference's 10 MiB so a small sample shows it), named with the UTC time of the write that
  triggered it (`:` and `.` replaced by `-`).
- {work_sessions} work sessions (`ws_<uuid>`) created by task start, backlog pick-up or a spawn
  outside any task; tasks go through plans, updates, blocks and unblock requests,
  continuations, reminders, and end completed, cancelled, failed, abandoned or still open.
- Exchanges: `a2a.send` → `a2a.response` → ping-pong turns ({turns} turn responses with
  `turn, maxTurns, messageIntent, terminationReason`) → `a2a.complete`. Conversation ids are
  reused per work session and agent pair, and by sub-agents through `parentConversationId`.
- Outcomes of `a2a.response`: {outcomes.get("no_reply", 0)} `no_reply`, {legacy_blocked} legacy
  `blocked` with wait fields, {concurrency} concurrency-blocked (`outcome: "blocked"` then
  `a2a.complete {{concurrencyBlocked: true, announced: false}}`); some waits last 300 s.
- Retries (`a2a.retry`) follow the reference's loop and backoff; send → reply latencies are
  seconds to minutes.
- Korean and English text that hits the category keywords of `rules §6`; Discord mentions
  such as `<@{HUMANS[0]}>`; one message longer than 4,000 characters cut to 4,000 when sent.

## Files (oldest first, live file last)

| file | lines | events |
|---|---|---|
{rows}

## Events by type

| type | events |
|---|---|
{type_rows}

## Structured payloads (`payloadType` + `payloadJson`, runtime §8)

Valid or invalid as `validateA2APayload` judges them (bad JSON, missing required fields,
values outside an enum or range, non-string list items, a type that disagrees with
`payloadType`). Answers carry the question's `questionId`; status reports carry the
delegated `taskId`.

| payloadType | valid | invalid |
|---|---|---|
{payload_rows}

## Deliberately malformed lines

Line numbers are 1-based physical lines of the named file.

| file | line | kind | what it is |
|---|---|---|---|
{bad_rows}
"""


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python tools/generate_sample.py``: write the sample directory."""
    parser = argparse.ArgumentParser(
        prog="python tools/generate_sample.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"generator seed (default {DEFAULT_SEED})"
    )
    args = parser.parse_args(argv)
    manifest = write_sample(args.out, args.seed)
    print(f"wrote {manifest.events} events in {len(manifest.files)} files to {manifest.directory}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
