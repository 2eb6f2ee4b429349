"""Render a run as a coordination log: the event frame of :func:`a2a_lab.load`, vectorised.

The model records facts (times, outcomes, which replies were logged); this module writes
the events the reference would have emitted for them (runtime §2, the field sets of
``runSessionsSendA2AFlow``), all with Polars over whole columns: ``a2a.send`` at the send;
for a refused flow ``a2a.response {outcome: "blocked"}`` and ``a2a.complete
{concurrencyBlocked: true}``; for an unanswered one ``a2a.response {outcome: "no_reply",
waitStatus}`` with the reference's outcome text and ``a2a.complete``; otherwise the reply,
one ``a2a.response {turn, maxTurns, messageIntent, terminationReason?}`` per logged
ping-pong reply, and ``a2a.complete`` with the turn and announce fields. Tasks add
``task.started`` / ``task.completed`` with their work-session id. What the policies add:

- ``a2a.retry {attempt, maxAttempts, errorCategory, errorCode, reason, backoffMs,
  elapsedMs}`` per retry (agent: the target, as the reference emits it), between the send
  and the response;
- a no-reply ``a2a.response`` / ``a2a.complete`` with the reference's ``waitStatus``,
  ``waitError`` and outcome text (``(<waitError>)``, ``(실행 상태를 찾을 수 없음)``, ...);
- for a send a safety limit blocked with ``blocked_as="logged"``: ``a2a.response
  {outcome: "blocked", reason}`` with an ``[outcome] blocked: …`` text, then
  ``a2a.complete {announced: false}`` (a concurrency-blocked complete it is NOT);
- nothing at all for an exchange that is not logged: a dropped send, or a synchronous call
  that timed out under the known bug;
- ``depth`` on every event of an exchange when relay depths are drawn.

Identifiers are uuid4 strings drawn from the plan's ``ids`` stream (per message: its
``runId`` and the id its conversation gets if it starts one; per task: its work session and
task id; per agent: its sub-agent session), so a seed gives the same ids every time.
Conversation ids follow runtime §6: a message with a work session reuses the id of the
first message of that work session and (lower-cased, sorted) agent pair; one without gets
a new id (the reference's cache is keyed by work session only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final, NamedTuple, cast

import numpy as np
import polars as pl

from a2a_lab.reference.runtime.outcome import build_no_reply_outcome_message
from a2a_lab.reference.runtime.termination import TERMINATION_REASONS
from a2a_lab.schema import data_dtype, polars_schema
from a2a_lab.sim.config import INTENTS, PAYLOAD_TYPES, SimConfig
from a2a_lab.sim.engine.trace import BLOCKED, GUARD_BLOCKED, NO_REPLY, REPLIED, Trace
from a2a_lab.sim.output.ids import Identifiers, identifiers, session_keys
from a2a_lab.sim.policies.failures import ERROR_KINDS
from a2a_lab.sim.policies.limits import BLOCK_REASONS
from a2a_lab.sim.workload.plan import REPLY_TEXTS, SESSION_KINDS, Plan
from a2a_lab.time import event_ms_expr

__all__ = [
    "BLOCKED_TEXTS",
    "SIM_FILE",
    "Identifiers",
    "identifiers",
    "render_event_chunks",
    "render_events",
    "session_keys",
]

#: The ``file`` column of simulated events (they come from no file).
SIM_FILE: Final = "<simulation>"
MESSAGE_LIMIT: Final = 4000
PREVIEW_LIMIT: Final = 200
#: The reference's text of a refused flow.
BLOCKED_TEXT: Final = "[outcome] blocked: 동시 처리 한도 초과 (agent: {agent})"
_SESSION_TYPE: Final = {
    "main": "main",
    "subagent": "subagent",
    "channel": "unknown",
    "a2a": "unknown",
}
#: The ``[outcome] blocked`` text of a logged refusal, per reason of :data:`BLOCK_REASONS`
#: (``{}`` is the pair ``a::b``, or the depth); the reference drops such a message silently.
BLOCKED_TEXTS: Final = {
    "relay_depth": "[outcome] blocked: 릴레이 깊이 초과 (depth: {})",
    "collaborate_limit": "[outcome] blocked: 협업 호출 한도 초과 ({})",
    "loop_guard": "[outcome] blocked: 루프 가드 한도 초과 ({})",
}
_RETRY_STEP_BASE: Final = 1.0  # retries sort between the send (step 0) and the response (1)
#: Events rendered at a time: bounds the rendering's temporaries, and the writer's (it
#: writes a frame in slices of ``a2a_lab.io``'s ``WRITE_CHUNK_ROWS``, 100,000; a smaller
#: chunk is one smaller slice); see :func:`render_event_chunks`.
RENDER_CHUNK_EVENTS: Final = 50_000
#: Events rendered at a time by :func:`render_events`, which holds them all.
FRAME_CHUNK_EVENTS: Final = 250_000
#: The sort keys of an event: time, group (0 task start, 1 exchange, 2 task end), message
#: (or task) and step within the exchange.
_KEYS: Final = ("_t", "_group", "_i", "_step")
#: The columns of the messages frame every event of an exchange reads (its message, both
#: agents and the shared context), as codes (:func:`_decoders`).
_BY_MESSAGE: Final = ("i", "from", "to", "_task", "depth")
#: ``eventRole`` by code: 1 when either side is a sub-agent session.
_ROLES: Final = ("conversation.main", "delegation.subagent")


class _Part(NamedTuple):
    """Events of one kind: a frame with a row per event, and the expressions of their
    columns (the sort keys :data:`_KEYS` among them), evaluated a chunk at a time."""

    frame: pl.DataFrame
    exprs: list[pl.Expr]
    #: the rows of ``frame`` that are events (None: all): a filter, not a copy of the rows
    where: pl.Expr | None = None


def _head(t: str, group: int, step: int | pl.Expr, type_: str, agent: str) -> list[pl.Expr]:
    """The sort keys, type and agent of a part's events (``i``: its message or task)."""
    step_expr = step if isinstance(step, pl.Expr) else pl.lit(step, pl.Int64)
    return [
        pl.col(t).alias("_t"),
        pl.lit(group, pl.Int8).alias("_group"),
        pl.col("i").alias("_i"),
        step_expr.alias("_step"),
        pl.lit(type_).alias("_type"),
        pl.col(agent).alias("_agent"),
    ]


_ID: Final = "\ue000"
_TEXT: Final = "\ue001"
#: Payload templates per type (runtime §8, every required field): ``_ID`` becomes an id made
#: from the message index, ``_TEXT`` the message text.
_PAYLOADS: Final = {
    "task_delegation": (
        "task_sim_",
        {
            "type": "task_delegation",
            "taskId": _ID,
            "taskTitle": _TEXT,
            "taskDescription": _TEXT,
            "priority": "medium",
        },
    ),
    "status_report": (
        "task_sim_",
        {
            "type": "status_report",
            "taskId": _ID,
            "status": "in_progress",
            "completedWork": _TEXT,
            "progressPercent": 50,
        },
    ),
    "question": (
        "q_sim_",
        {"type": "question", "questionId": _ID, "question": _TEXT, "urgency": "normal"},
    ),
    "answer": ("q_sim_", {"type": "answer", "questionId": _ID, "answer": _TEXT, "confidence": 0.8}),
}


def _payload_json(payload: pl.Expr, escaped_text: pl.Expr, index: pl.Expr) -> pl.Expr:
    """A valid structured payload (runtime §8) of the message's type, its ids from its index.

    ``escaped_text`` is the message text as the inside of a JSON string literal.
    """
    expr = pl.lit(None, pl.String)
    for k, name in enumerate(PAYLOAD_TYPES):
        prefix, body = _PAYLOADS[name]
        # private-use placeholders survive json.dumps verbatim; split on them and splice
        pieces = re.split(
            f"({_ID}|{_TEXT})", json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        )
        values = {_ID: pl.lit(prefix) + index.cast(pl.String), _TEXT: escaped_text}
        filled = pl.concat_str([values.get(piece, pl.lit(piece)) for piece in pieces if piece])
        expr = pl.when(payload == k).then(filled).otherwise(expr)
    return expr


def _gather(values: list[str] | list[str | None] | tuple[str, ...], index: np.ndarray) -> pl.Series:
    """``values[index]`` as a String series, null where ``index`` is negative."""
    return _strings(values).gather(_non_negative(pl.Series(index, dtype=pl.Int64)))


def _strings(values: Iterable[str | None]) -> pl.Series:
    return pl.Series(list(values), dtype=pl.String)


def _non_negative(codes: pl.Series) -> pl.Series:
    """The codes, null where negative."""
    return pl.select(pl.when(codes >= 0).then(codes)).to_series()


class _Decoder(NamedTuple):
    """How a string column is made from a column of codes: a table to gather from (a
    negative code gives null), or a function of the codes."""

    code: str
    values: pl.Series | Callable[[np.ndarray], pl.Series]


def _decoders(plan: Plan, ids: Identifiers, keys: list[str]) -> dict[str, _Decoder]:
    """The string columns of the events' frames, by name: the frames hold integer codes
    (4 bytes or less a row where a string is 16 or more), the strings of a chunk of events
    are made when it is rendered (:func:`_decoded`); a name that is also its code column is
    replaced by its strings."""
    agents = _strings(plan.agents)
    session_type = _strings(_SESSION_TYPE[SESSION_KINDS[k]] for k in plan.session_kind.tolist())
    replies, reasons = _strings(REPLY_TEXTS), _strings(TERMINATION_REASONS)
    texts_json = (json.dumps(t, ensure_ascii=False)[1:-1] for t in plan.texts)
    return {
        **{name: _Decoder(name, agents) for name in ("from", "to", "_speaker", "_listener")},
        "from_key": _Decoder("_req", _strings(keys)),
        "to_key": _Decoder("_tgt", _strings(keys)),
        "from_type": _Decoder("_req", session_type),
        "to_type": _Decoder("_tgt", session_type),
        "text": _Decoder("_text", _strings(plan.texts)),
        # the inside of a JSON string literal of the text, for payloadJson
        "text_json": _Decoder("_text", _strings(texts_json)),
        "payloadType": _Decoder("payload", _strings(PAYLOAD_TYPES)),
        "intent": _Decoder("intent", _strings(INTENTS)),
        "reply": _Decoder("reply", replies),
        "termination": _Decoder("termination", reasons),
        "role": _Decoder("role", _strings(_ROLES)),
        "ws": _Decoder("_task", _strings(ids.work_session_id)),
        "task": _Decoder("_task", _strings(ids.task_id)),
        # the message ids, from their random bytes (no string per message is held)
        "run_id": _Decoder("i", ids.run_ids),
        "conversation": _Decoder("i", ids.conversation_ids),
        "turn_text": _Decoder("turn_text", replies),
        "turn_reason": _Decoder("turn_reason", reasons),
    }


def _decoded(
    frame: pl.DataFrame, decoders: dict[str, _Decoder], names: Iterable[str]
) -> pl.DataFrame:
    """``frame`` with the string columns ``names`` made from their codes (those it has the
    codes of and not the strings yet)."""
    columns = []
    for name in names:
        decoder = decoders.get(name)
        if (
            decoder is None
            or decoder.code not in frame.columns
            or frame.schema.get(name) == pl.String
        ):
            continue
        codes = frame.get_column(decoder.code)
        values = (
            decoder.values.gather(_non_negative(codes))
            if isinstance(decoder.values, pl.Series)
            else decoder.values(codes.to_numpy())
        )
        columns.append(values.alias(name))
    return frame.with_columns(columns) if columns else frame


def _messages_frame(plan: Plan, trace: Trace) -> pl.DataFrame:
    """One row per message with every value its events need, strings as codes (see
    :func:`_decoders`)."""
    req, tgt = plan.requester_session, plan.target_session
    subagent = plan.session_kind == SESSION_KINDS.index("subagent")
    frame = pl.DataFrame(
        {
            "i": np.arange(plan.n, dtype=np.int64),
            "from": plan.sender,
            "to": plan.target,
            "_req": req,
            "_tgt": tgt,
            "_text": plan.text,
            "payload": plan.payload,
            "intent": plan.intent,
            "effective": plan.effective_turns.astype(np.float64),
            "_task": plan.task,
            "reply": plan.first_reply,
            "t_send": trace.send_s,
            "t_gate": trace.gate_s,
            "t_reply": trace.reply_s,
            "t_complete": trace.complete_s,
            "outcome": trace.outcome,
            "wait_status": pl.Series(trace.wait_status, dtype=pl.String),
            "wait_error": pl.Series(trace.wait_error, dtype=pl.String),
            "_exceeded": trace.max_wait_exceeded,
            "depth": pl.Series(trace.depth, dtype=pl.Float64).fill_nan(None),
            "turns": trace.turns.astype(np.float64),
            "termination": trace.termination,
            "announced": trace.announced,
            "announce_skipped": ~plan.announce_runs,
            "role": (subagent[req] | subagent[tgt]).astype(np.int8),
        }
    )
    return frame


def _shared() -> list[pl.Expr]:
    """The ``sharedContext`` every event of the flow repeats (absent fields stay null)."""
    return [
        pl.col("task").alias("taskId"),
        pl.col("ws").alias("workSessionId"),
        pl.col("conversation").alias("conversationId"),
        pl.col("depth"),
    ]


def _sides(writer: str) -> list[pl.Expr]:
    """``fromAgent``/``toAgent``, ``eventRole`` and both session types of an event whose
    ``fromAgent`` is ``writer`` (``"from"``: the requester; ``"to"``: the target)."""
    other = "to" if writer == "from" else "from"
    return [
        pl.col(writer).alias("fromAgent"),
        pl.col(other).alias("toAgent"),
        pl.col("role").alias("eventRole"),
        pl.col(f"{writer}_type").alias("fromSessionType"),
        pl.col(f"{other}_type").alias("toSessionType"),
    ]


def render_events(
    plan: Plan, trace: Trace, config: SimConfig, ids: Identifiers | None = None
) -> pl.DataFrame:
    """The run's coordination log as one event frame (:func:`render_event_chunks`, joined;
    the frame is held whole anyway: in chunks of :data:`FRAME_CHUNK_EVENTS`, fewer of them)."""
    chunks = list(render_event_chunks(plan, trace, config, ids, FRAME_CHUNK_EVENTS))
    return chunks[0] if len(chunks) == 1 else pl.concat(chunks, rechunk=False)


def render_event_chunks(
    plan: Plan,
    trace: Trace,
    config: SimConfig,
    ids: Identifiers | None = None,
    chunk_events: int = RENDER_CHUNK_EVENTS,
) -> Iterator[pl.DataFrame]:
    """The run's coordination log as event frames (:func:`a2a_lab.schema.polars_schema`),
    ``chunk_events`` events at a time in log order (the last chunk may be shorter; a run
    without events gives one empty frame).

    Only one chunk's events are rendered at a time (the sort keys of every event are built
    first), so writing the chunks one by one never holds the whole log. Events are ordered by simulated time (ties: task starts, then the exchanges by message
    and step, then task ends); ``line`` is the position in that order, ``file`` is
    :data:`SIM_FILE` and ``raw`` is null. ``ts`` is ``config.start`` plus the simulated time,
    truncated to the millisecond (JavaScript's ``Date.now()``). The policies' events
    (retries, logged refusals) and omissions (exchanges not logged) are rendered the same
    way, from the same trace.
    """
    ids = ids or identifiers(plan)
    decoders = _decoders(plan, ids, session_keys(plan, ids, config))
    m = _messages_frame(plan, trace)
    if not trace.logged.all():
        m = m.filter(pl.Series(trace.logged))
    m, decoders["no_reply_text"] = _no_reply_texts(m, config)
    extra = [*_retry_events(m, trace), *_blocked_events(m, trace, decoders)]
    parts = [
        *_sent_parts(m),
        *_refused_parts(m),
        *_replied_parts(m, trace, config),
        *extra,
        *_task_events(plan, trace, ids),
    ]
    yield from _render_in_order(
        [p for p in parts if p.frame.height], config, chunk_events, decoders
    )


#: The step number of ``a2a.complete`` (after every ping-pong turn).
_LAST_STEP: Final = 10_000


def _part(
    source: pl.DataFrame | tuple[pl.DataFrame, pl.Expr], head: list[pl.Expr], *fields: pl.Expr
) -> _Part:
    """Events with ``head`` (:func:`_head`) and ``fields`` for the rows of ``source`` (a frame,
    or a frame and the rows' filter)."""
    frame, where = source if isinstance(source, tuple) else (source, None)
    return _Part(frame, [*head, *fields], where)


def _complete_part(
    source: pl.DataFrame | tuple[pl.DataFrame, pl.Expr], announced: pl.Expr, *fields: pl.Expr
) -> _Part:
    """The requester's ``a2a.complete`` of an exchange that was sent (after every turn):
    its sides, ``announced``, the target's session key, then ``fields``."""
    return _part(
        source,
        _head("t_complete", 1, _LAST_STEP, "a2a.complete", "from"),
        *_sides("from"),
        announced.alias("announced"),
        pl.col("to_key").alias("targetSessionKey"),
        *fields,
        *_shared(),
    )


def _sent_parts(m: pl.DataFrame) -> list[_Part]:
    """The ``a2a.send`` of every logged message."""
    parts: list[_Part] = []
    parts.append(
        _part(
            m,
            _head("t_send", 1, 0, "a2a.send", "from"),
            *_sides("from"),
            pl.col("to_key").alias("targetSessionKey"),
            # the texts are rendered a chunk at a time, not held per message
            pl.col("text").str.slice(0, MESSAGE_LIMIT).alias("message"),
            pl.col("run_id").alias("runId"),
            pl.col("payloadType"),
            _payload_json(pl.col("payload"), pl.col("text_json"), pl.col("i")).alias("payloadJson"),
            *_shared(),
        )
    )
    return parts


def _refused_parts(m: pl.DataFrame) -> list[_Part]:
    """The response and complete of the exchanges a gate refused or that got no reply."""
    parts: list[_Part] = []
    blocked = (m, pl.col("outcome") == BLOCKED)
    blocked_text = pl.lit(BLOCKED_TEXT.split("{")[0]) + pl.col("to") + pl.lit(")")
    parts.append(
        _part(
            blocked,
            _head("t_gate", 1, 1, "a2a.response", "to"),
            pl.col("from").alias("fromAgent"),
            pl.col("to").alias("toAgent"),
            blocked_text.alias("message"),
            blocked_text.str.slice(0, PREVIEW_LIMIT).alias("replyPreview"),
            pl.lit("blocked").alias("outcome"),
            *_shared(),
        )
    )
    parts.append(
        _part(
            blocked,
            _head("t_complete", 1, _LAST_STEP, "a2a.complete", "from"),
            pl.col("from").alias("fromAgent"),
            pl.col("to").alias("toAgent"),
            pl.lit(False).alias("announced"),
            pl.col("to_key").alias("targetSessionKey"),
            pl.lit(True).alias("concurrencyBlocked"),
            *_shared(),
        )
    )
    unanswered = (m, pl.col("outcome") == NO_REPLY)
    parts.append(
        _part(
            unanswered,
            _head("t_complete", 1, 1, "a2a.response", "to"),
            *_sides("to"),
            pl.col("no_reply_text").alias("message"),
            pl.col("no_reply_text").str.slice(0, PREVIEW_LIMIT).alias("replyPreview"),
            pl.lit("no_reply").alias("outcome"),
            pl.col("wait_status").alias("waitStatus"),
            pl.col("wait_error").alias("waitError"),
            *_shared(),
        )
    )
    parts.append(
        _complete_part(
            unanswered,
            pl.lit(False),
            pl.col("wait_status").alias("waitStatus"),
            pl.col("wait_error").alias("waitError"),
        )
    )
    return parts


def _replied_parts(m: pl.DataFrame, trace: Trace, config: SimConfig) -> list[_Part]:
    """The reply, every logged ping-pong turn and the complete of the answered exchanges."""
    parts: list[_Part] = []
    replied = (m, pl.col("outcome") == REPLIED)
    parts.append(
        _part(
            replied,
            _head("t_reply", 1, 1, "a2a.response", "to"),
            *_sides("to"),
            pl.col("reply").str.slice(0, MESSAGE_LIMIT).alias("message"),
            pl.col("reply").str.slice(0, PREVIEW_LIMIT).alias("replyPreview"),
            *_shared(),
        )
    )
    turns = pl.DataFrame(
        {
            "i": trace.turn_message,
            "turn": trace.turn_number.astype(np.float64),
            "t_turn": trace.turn_s,
            "turn_text": trace.turn_text,
            "turn_reason": trace.turn_reason,
        }
    ).join(
        m.select(*_BY_MESSAGE, "effective", "intent", "role", "_req", "_tgt"),
        on="i",
        how="left",
    )
    odd = (pl.col("turn") % 2) == 1  # odd turns: the requester speaks
    parts.append(
        _part(
            turns.with_columns(
                pl.when(odd).then(pl.col("from")).otherwise(pl.col("to")).alias("_speaker"),
                pl.when(odd).then(pl.col("to")).otherwise(pl.col("from")).alias("_listener"),
            ),
            _head("t_turn", 1, pl.col("turn").cast(pl.Int64) + 1, "a2a.response", "_speaker"),
            pl.col("_speaker").alias("fromAgent"),
            pl.col("_listener").alias("toAgent"),
            pl.col("turn"),
            pl.col("effective").alias("maxTurns"),
            pl.col("turn_text").str.slice(0, MESSAGE_LIMIT).alias("message"),
            pl.col("turn_text").str.slice(0, PREVIEW_LIMIT).alias("replyPreview"),
            pl.col("role").alias("eventRole"),
            pl.when(odd)
            .then(pl.col("from_type"))
            .otherwise(pl.col("to_type"))
            .alias("fromSessionType"),
            pl.when(odd)
            .then(pl.col("to_type"))
            .otherwise(pl.col("from_type"))
            .alias("toSessionType"),
            pl.col("intent").alias("messageIntent"),
            pl.col("turn_reason").alias("terminationReason"),
            *_shared(),
        )
    )
    parts.append(
        _complete_part(
            replied,
            pl.col("announced"),
            pl.col("intent").alias("messageIntent"),
            pl.lit(float(config.ping_pong.max_turns)).alias("configuredMaxTurns"),
            pl.col("effective").alias("effectiveTurns"),
            pl.col("turns").alias("actualTurns"),
            pl.col("termination").is_not_null().alias("earlyTermination"),
            pl.col("termination").alias("terminationReason"),
            pl.col("announce_skipped").alias("announceSkipped"),
        )
    )
    return parts


def _render_in_order(
    parts: list[_Part], config: SimConfig, chunk_events: int, decoders: dict[str, _Decoder]
) -> Iterator[pl.DataFrame]:
    """The parts' events in log order, ``chunk_events`` at a time.

    The sort keys of every event are sorted once (ties, if any, keep the parts' order);
    then each chunk renders only its own rows of each part.
    """
    if not parts:
        yield pl.DataFrame(schema=polars_schema())
        return
    # the sort keys of every event as contiguous numpy arrays; "_id" numbers the rows of
    # all parts in order (part, row): the last key, so ties keep the parts' order
    columns: dict[str, list[np.ndarray]] = {name: [] for name in (*_KEYS, "_id")}
    offsets = np.zeros(len(parts), dtype=np.int64)
    for k, p in enumerate(parts):
        offsets[k] = offsets[k - 1] + parts[k - 1].frame.height if k else 0
        keys = p.frame.select(
            (pl.int_range(pl.len(), dtype=pl.Int64) + offsets[k]).alias("_id"),
            *(e for e in p.exprs if e.meta.output_name() in _KEYS),
            (pl.lit(True) if p.where is None else p.where).alias("_keep"),
        ).filter("_keep")
        for name, values in columns.items():
            values.append(keys.get_column(name).to_numpy())
    arrays = {name: np.concatenate(values) for name, values in columns.items()}
    del columns, keys
    # numpy's lexsort (last key first) keeps an index, where a multi-column sort of a frame
    # would encode whole rows: the same order, for a fraction of the memory
    ordered = arrays["_id"][np.lexsort([arrays[name] for name in ("_id", *_KEYS[::-1])])]
    del arrays
    part = np.searchsorted(offsets, ordered, side="right") - 1
    order = pl.DataFrame(
        {"_part": part.astype(np.uint32), "_row": (ordered - offsets[part]).astype(np.uint32)}
    )
    del ordered, part
    if order.height == 0:
        yield pl.DataFrame(schema=polars_schema())
    # a chunk gathers only the columns its events read (or the codes of those), and makes
    # the strings of its own rows only
    inputs, reads = [], []
    for p in parts:
        read = {name for e in p.exprs for name in e.meta.root_names()}
        codes = {decoders[name].code for name in read if name in decoders}
        inputs.append(p.frame.select(c for c in p.frame.columns if c in read | codes))
        reads.append(read)
    for start in range(0, order.height, chunk_events):
        chunk = order.slice(start, chunk_events).with_row_index("_pos")
        pieces = []
        for (k,), rows in chunk.group_by("_part"):
            p = parts[cast(int, k)]
            rendered = inputs[cast(int, k)][rows.get_column("_row")]
            pieces.append(
                _decoded(rendered, decoders, reads[cast(int, k)])
                .select(p.exprs)
                .with_columns(rows.get_column("_pos"))
            )
        events = pl.concat(pieces, how="diagonal_relaxed").sort("_pos")
        yield _finish(events, config, first_line=start + 1)


def _no_reply_texts(m: pl.DataFrame, config: SimConfig) -> tuple[pl.DataFrame, _Decoder]:
    """The reference's outcome text of each no-reply, by its ``(waitStatus, waitError,
    exceeded)``: the frame with the code of its text, and the decoder of the codes."""
    max_wait_ms = (config.wait.max_wait_s if config.wait else 300.0) * 1000.0
    keys = ["wait_status", "wait_error", "_exceeded"]
    combos = m.filter(pl.col("outcome") == NO_REPLY).select(keys).unique()
    texts = _strings(
        build_no_reply_outcome_message(s, e, max_wait_exceeded=x, max_wait_ms=max_wait_ms)
        for s, e, x in combos.iter_rows()
    )
    # the frame gets the index of its text (the join reads the key columns only)
    code = (
        m.select(keys)
        .join(
            combos.with_row_index("_no_reply"),
            on=keys,
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        .get_column("_no_reply")
    )
    return m.with_columns(code).drop("_exceeded"), _Decoder("_no_reply", texts)


def _retry_events(m: pl.DataFrame, trace: Trace) -> list[_Part]:
    """``a2a.retry`` per retry of a logged exchange, in attempt order after the send."""
    if trace.retry_message.shape[0] == 0:
        return []
    kinds = [k.info for k in ERROR_KINDS]
    rows = pl.DataFrame(
        {
            "i": trace.retry_message,
            "_t": trace.retry_s,
            "attempt": trace.retry_attempt.astype(np.float64),
            "errorCategory": _gather([str(k.category) for k in kinds], trace.retry_kind),
            "errorCode": _gather([k.code for k in kinds], trace.retry_kind),
            "reason": _gather([k.reason for k in kinds], trace.retry_kind),
            "backoffMs": trace.retry_backoff_ms.astype(np.float64),
            "elapsedMs": trace.retry_elapsed_ms,
        }
    ).join(m.select(*_BY_MESSAGE), on="i", how="inner")
    # attempt k sorts at 1 - 1/(k+1): after the send, before the response, in order
    step = pl.lit(_RETRY_STEP_BASE) - pl.lit(1.0) / (pl.col("attempt") + 1.0)
    return [
        _Part(
            rows,
            [
                *_head("_t", 1, step, "a2a.retry", "to"),
                pl.col("from").alias("fromAgent"),
                pl.col("to").alias("toAgent"),
                pl.col("run_id").alias("runId"),
                pl.col("attempt"),
                pl.lit(float(trace.max_retries)).alias("maxAttempts"),
                pl.col("errorCategory"),
                pl.col("errorCode"),
                pl.col("reason"),
                pl.col("backoffMs"),
                pl.col("elapsedMs"),
                *_shared(),
            ],
        )
    ]


def _blocked_events(m: pl.DataFrame, trace: Trace, decoders: dict[str, _Decoder]) -> list[_Part]:
    """The ``[outcome] blocked`` exchange of a send a safety limit refused (``blocked_as="logged"``)."""
    blocked = _decoded(m.filter(pl.col("outcome") == GUARD_BLOCKED), decoders, decoders)
    if blocked.height == 0:
        return []
    reason = _gather(BLOCK_REASONS, trace.blocked_by)
    pair = pl.concat_str(
        pl.min_horizontal("from", "to"), pl.lit("::"), pl.max_horizontal("from", "to")
    )
    detail = (
        pl.when(pl.col("_reason") == "relay_depth")
        .then(pl.col("depth").cast(pl.Int64).cast(pl.String))
        .otherwise(pair)
    )
    text = pl.col("_reason").replace_strict(BLOCKED_TEXTS, return_dtype=pl.String)
    blocked = blocked.with_columns(reason.gather(blocked["i"]).alias("_reason")).with_columns(
        pl.concat_str(text.str.extract(r"^(.*)\{\}", 1), detail, pl.lit(")")).alias("_text")
    )
    response = [
        *_head("t_gate", 1, 1, "a2a.response", "to"),
        pl.col("from").alias("fromAgent"),
        pl.col("to").alias("toAgent"),
        pl.col("_text").str.slice(0, MESSAGE_LIMIT).alias("message"),
        pl.col("_text").str.slice(0, PREVIEW_LIMIT).alias("replyPreview"),
        pl.lit("blocked").alias("outcome"),
        pl.col("_reason").alias("reason"),
        *_shared(),
    ]
    complete = [
        *_head("t_complete", 1, 10_000, "a2a.complete", "from"),
        pl.col("from").alias("fromAgent"),
        pl.col("to").alias("toAgent"),
        pl.lit(False).alias("announced"),
        pl.col("to_key").alias("targetSessionKey"),
        pl.col("role").alias("eventRole"),
        pl.col("from_type").alias("fromSessionType"),
        pl.col("to_type").alias("toSessionType"),
        *_shared(),
    ]
    return [_Part(blocked, response), _Part(blocked, complete)]


def _task_events(plan: Plan, trace: Trace, ids: Identifiers) -> list[_Part]:
    """``task.started`` for every task, ``task.completed`` for those ending within the run."""
    if plan.task_agent.shape[0] == 0:
        return []
    tasks = pl.DataFrame(
        {
            "i": np.arange(plan.task_agent.shape[0], dtype=np.int64),
            "agent": pl.Series(plan.agents, dtype=pl.String).gather(plan.task_agent),
            "start": plan.task_start_s,
            "end": plan.task_end_s,
            "taskId": pl.Series(ids.task_id, dtype=pl.String),
            "workSessionId": pl.Series(ids.work_session_id, dtype=pl.String),
        }
    )
    ids_ = [pl.col("taskId"), pl.col("workSessionId")]
    started = _Part(tasks, [*_head("start", 0, 0, "task.started", "agent"), *ids_])
    completed = _Part(
        tasks.filter(pl.col("end") <= trace.end_s),
        [*_head("end", 2, 0, "task.completed", "agent"), *ids_],
    )
    return [started, completed]


def _finish(events: pl.DataFrame, config: SimConfig, first_line: int) -> pl.DataFrame:
    """Stamp and shape events in log order into the event-frame schema (``line`` from
    ``first_line``)."""
    schema = polars_schema()
    data = data_dtype()
    start_ms = int(config.start.timestamp() * 1000)
    fields = []
    for f in data.fields:
        if f.name in events.columns:
            fields.append(pl.col(f.name).cast(f.dtype))
        else:
            fields.append(pl.lit(None, f.dtype).alias(f.name))
    out = events.select(
        pl.lit(SIM_FILE).alias("file"),
        pl.int_range(first_line, first_line + pl.len(), dtype=pl.Int64).alias("line"),
        pl.col("_type").alias("type"),
        pl.col("_agent").alias("agent_id"),
        (pl.col("_t") * 1000.0).floor().add(start_ms).alias("ts"),
        pl.lit(None, pl.Float64).alias("timestamp_ms"),
        pl.lit(None, pl.String).alias("timestamp"),
        pl.lit(None, pl.String).alias("status"),
        pl.struct(fields).alias("data"),
    ).with_columns(event_ms_expr())
    out = out.with_columns(
        pl.col("event_ms")
        .cast(pl.Int64)
        .cast(pl.Datetime("ms"))
        .dt.replace_time_zone("UTC")
        .alias("event_time"),
        pl.lit(None, pl.String).alias("raw"),
    )
    return out.select(list(schema)).cast(schema)
