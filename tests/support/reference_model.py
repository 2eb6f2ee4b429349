"""A held-out model of the reference gateway's A2A traffic (issue 22), for scoring the matcher.

Written independently of :mod:`a2a_lab.sim` and :mod:`a2a_lab.exchanges` (neither was read):
only from the runtime spec (``shared/spec/a2a-runtime.md``), the exchange conformance cases
(``shared/conformance/exchanges/``), the peer logs (``shared/conformance/peer/*.ndjson``) and
the reference source (Pronto-Lab/prontoclaw, checked out at ``/work/ref/src``). It is a SimPy
discrete-event model (the project's locked simulation library; no hand-rolled event loop) that
writes the NDJSON lines the reference writes and, beside them, the truth of every exchange:
which line is its send, first reply, each turn and its complete.

Facts used, and where each comes from
-------------------------------------
Lanes and queueing
  - Every run is queued twice: first on its session lane ``session:<sessionKey>`` (one run at a
    time, FIFO), then on a gateway-wide lane with a concurrency limit
    (``src/agents/pi-embedded-runner/lanes.ts`` ``resolveSessionLane`` / ``resolveGlobalLane``;
    spec §1). The session lane is held while the run waits for its global lane (nested
    enqueue, spec §1 "queued twice").
  - Global limits: ``main`` = ``agents.defaults.maxConcurrent``, default 4; ``subagent`` 8
    (``src/config/agent-limits.ts`` ``DEFAULT_AGENT_MAX_CONCURRENT`` /
    ``DEFAULT_SUBAGENT_MAX_CONCURRENT``, applied in ``src/gateway/server-lanes.ts``);
    ``nested`` 8 (spec §1, ``DEFAULT_NESTED_MAX_CONCURRENT``; not set in server-lanes.ts of this
    checkout, so taken from the spec). ``cron`` 1 is not modelled (no cron traffic here).
  - The target's first run of a ``sessions_send`` is submitted with ``lane: AGENT_LANE_NESTED``
    on the resolved target session (``src/agents/tools/sessions-send-tool.ts`` ``sendParams``),
    which for a cross-agent send is ``agent:<target>:a2a:<conversationId>`` (spec §1, the
    conformance logs' ``targetSessionKey``).
  - Ping-pong steps and the announce step are ``runAgentStep(..., lane: AGENT_LANE_NESTED)``
    (``src/agents/tools/sessions-send-tool.a2a.ts``). The loop starts with
    ``currentSessionKey = requesterSessionKey`` and swaps after every turn, so turn 1 runs on
    the requester's own session, turn 2 on the target session, ... (same file; the
    conformance case ``alternating-directions`` shows turn 1 spoken by the requester). The
    announce step runs on ``targetSessionKey`` (same file).
  - The asynchronous path (``timeoutSeconds = 0``) submits the target run, returns
    ``accepted`` and starts the flow in the background (``sessions-send-tool.ts``); the tool
    call itself happens inside the requester's own run, which goes on after the call (so the
    requester's turn 1 queues behind it on the requester's session lane).
Concurrency gate (``src/agents/a2a-concurrency.ts``)
  - Per agent, at most ``maxConcurrentFlows`` = 3 flows, FIFO wait queue, refused after
    ``queueTimeoutMs`` = 30,000 ms. The gate is keyed by the TARGET agent (spec §1). A refused
    flow emits ``a2a.response {outcome: "blocked"}`` then ``a2a.complete {concurrencyBlocked:
    true, announced: false}`` and runs no agent step
    (``sessions-send-tool.a2a.test.ts`` "handles concurrency gate timeout as blocked outcome";
    spec §1). The target's run was already submitted before the flow started, so it still
    occupies its lanes (``sessions-send-tool.ts``: the ``agent`` call precedes
    ``startA2AFlow``).
Synchronous path (``src/agents/tools/sessions-send-tool.ts``, spec §2)
  - ``timeoutSeconds`` defaults to 30; with it > 0 the tool waits for the target run inside
    the requester's run; on ``timeout`` or ``error`` it returns without starting the flow,
    so no event is written at all (spec §2 and ``/work/ref/src``; the event-writing commit
    298c5ad5f starts the flow there instead, the later fix the project's simulator offers
    as ``SyncPath.emit_on_timeout``); on success it starts the flow with ``roundOneReply``
    and NO ``waitRunId`` (``startA2AFlow(reply ?? undefined)``), so ``a2a.send`` is written
    after the target has replied, with ``runId: "unknown"`` (``sessions-send-tool.a2a.ts``
    at 298c5ad5f: ``runId: runContextId``, ``runContextId = params.waitRunId ??
    "unknown"``), and the flow calls no ``agent.wait`` (``if (!primaryReply &&
    params.waitRunId)``): the reply is written at once (after the gate).
Waiting, turns, announce (spec §2-§3, ``sessions-send-tool.a2a.test.ts``)
  - ``agent.wait`` in 30 s chunks up to 300 s in total; a chunk timeout is not a retry
    (spec §2.2, §4 and the later test: no ``a2a.retry`` on a timed-out wait; at 298c5ad5f
    ``classifyA2AError`` still called it retriable); a retriable error is retried at most 3
    times after ``floor(min(60000, 2000 * 2^attempt) * U(0.5, 1))`` ms, each retry an
    ``a2a.retry``, a non-retriable one stops the wait (spec §2.2, §4). The budget is the
    loop's counter, not the clock (``sessions-send-tool.a2a.ts`` at 298c5ad5f): every
    ``agent.wait`` call adds 30 s to ``elapsed`` however soon it returned, a retry adds its
    backoff first, and the loop ends once ``elapsed`` reaches 300 s. The retry is written
    as that file writes it: ``agentId`` the TARGET, ``data {fromAgent: requester, toAgent:
    target, runId: <the waited run id>, attempt (1-based), maxAttempts: 3, errorCategory,
    errorCode, reason, backoffMs, elapsedMs (the counter), conversationId,
    workSessionId}`` (no ``eventRole`` or session types). The complete after a no-reply is
    ``{fromAgent, toAgent, announced: false, targetSessionKey, conversationId, eventRole,
    fromSessionType, toSessionType, waitStatus, waitError, workSessionId}`` (no intent or
    turn fields: same file, the ``!latestReply`` branch); no
    reply → ``a2a.response {outcome: "no_reply", waitStatus, waitError?}`` whose ``message``
    is ``[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다`` plus the reason
    suffix, then ``a2a.complete`` (spec §2.3; the test "emits outcome A2A_RESPONSE when
    waitRunId path times out without reply" checks the text and ``outcome``).
  - The reply: ``a2a.response`` from the target to the requester with ``message`` (full) and
    ``replyPreview`` (cut to 200 characters) (test "keeps full response text in message while
    clipping preview"; initial response ``fromAgent`` = target, ``toAgent`` = requester: test
    "emits initial A2A_RESPONSE even when ping-pong is skipped").
  - Each ping-pong turn emits ``a2a.response {turn, maxTurns, messageIntent,
    terminationReason?}`` (spec §2.4); a turn times out after 120 s (test "uses per-turn
    timeout for ping-pong": ``timeoutMs`` 120,000) and ends the loop with ``turn_timeout``;
    a failing step ends it with ``agent_error``, an empty one with ``empty_reply``, a
    ``REPLY_SKIP`` with ``explicit_skip`` (tests "ping-pong terminates with ..."), and the
    complete then carries ``terminationReason`` and the ``actualTurns`` done.
  - The announce step runs, also when ping-pong is skipped, unless ``shouldRunAnnounce``
    says no (``sessions-send-tool.a2a.ts`` and ``a2a-intent-classifier.ts`` at 298c5ad5f,
    spec §2.5): both session keys agent-internal (``/^agent:[^:]+:(main|a2a:|subagent:)/``),
    so only a requester on a channel session (``agent:<id>:discord:group:<g>``) is ever
    announced; the later test "uses per-turn timeout for ping-pong and keeps announce
    timeout" makes its requester ``ext:requester`` to get one (its sibling "announce always
    runs even with skipPingPong" uses two ``agent:…:main`` keys, which that code skips).
    A skipped announce runs no step: the complete follows the loop at once with
    ``announced: false, announceSkipped: true``; a run one writes ``announceSkipped: false``
    (``!shouldRunAnnounce``) and ``announced`` unless it replied ``ANNOUNCE_SKIP`` or timed
    out. Its timeout is ``announceTimeoutMs`` = 30 s on the asynchronous path
    (``sessions-send-tool.ts``: ``timeoutSeconds === 0 ? 30_000``).
  - ``a2a.complete`` is emitted by the requester's flow, ``fromAgent`` = requester
    (test "emits A2A_COMPLETE event at end"), with ``announced, messageIntent,
    configuredMaxTurns, effectiveTurns, actualTurns, earlyTermination, terminationReason,
    announceSkipped`` (spec §2.5; the conformance case ``overlapping-same-direction``).
  - Intents and effective turns (spec §3): notification 0, escalation 0, result_report 1,
    request 3, collaboration -1 (= configured maximum, 5), question 1; effective =
    min(suggested, configured) or configured for -1. Early termination reasons and their
    textual triggers (repetition > 0.85 Jaccard, under 20 characters without ``?``,
    conclusion openers) from spec §3; the generated turn texts really trigger them.
Ids and line shape
  - ``conversationId``: one per ``workSessionId::sorted lower-cased pair`` (spec §6,
    ``src/infra/events/a2a-index.ts`` ``buildRouteKeyFromEvent``), shared by both
    directions. ``workSessionId = "ws_" + uuid`` (spec §6).
  - Line shape ``{"type", "agentId", "ts" (epoch ms), "data": {...}}`` and field order as in
    the conformance logs; ``runId`` only on ``a2a.send`` and ``a2a.retry`` (no response or
    complete in the conformance logs carries one); ``targetSessionKey`` on the send and the complete
    (``overlapping-same-direction``); session types swap with the speaking side on responses
    (``overlapping-same-direction``: the reply's ``toSessionType`` is the requester's).
  - Session types as ``sessionTypeFromSessionKey`` derives them (``sessions-send-tool.a2a.ts``
    at 298c5ad5f; the project's simulator writes the same): ``main`` only for
    ``agent:<id>:main``, ``subagent`` for a key with ``:subagent:``, else ``unknown`` (the
    conversation-scoped ``agent:<id>:a2a:<conversationId>``, a channel session). So the
    target side of every exchange is ``unknown``, and so is a requester that sends back from
    its conversation lane. (The exchange conformance logs write ``main`` for the target
    side: hand-made, they do not follow that derivation.)

Assumptions (no source decides them; each is a parameter or stated here)
  - A turn whose reply triggers an early-termination rule is emitted (with
    ``terminationReason``) and counted in ``actualTurns``; the loop then stops.
  - A normal end of the loop writes ``earlyTermination: false`` and no ``terminationReason``.
  - A no-reply or blocked ``a2a.response`` is written ``target → requester`` like the reply.
  - A retry repeats the ``agent.wait`` call on the same run id (the retried call is the
    wait, ``callGateway``), inside the same 300 s budget: a run that ended with a retriable
    error status is found in error again; a failed wait call (connection error) finds the
    run still going. ``waitStatus``/``waitError`` are set by a wait that returned (an
    exception sets neither, as at 298c5ad5f), and ``waitStatus`` becomes ``timeout`` when
    the budget ran out with none.
  - The per-target gate is taken at the start of the flow, after ``a2a.send`` and before the
    first reply is read (the gate test sees the ``blocked`` response as the flow's first
    response, also when a ``roundOneReply`` is in hand).
  - A target may call ``sessions_send`` back to its requester from inside its run on the
    conversation lane (the reverse direction, same work session, so the same id), and a
    requester run may call it several times; how often is a parameter.

Public entry point: :func:`simulate`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import simpy

__all__ = [
    "EFFECTIVE_TURNS",
    "ModelConfig",
    "ModelRun",
    "classify_intent",
    "simulate",
]

#: Suggested turns per intent (spec §3); -1 means the configured maximum.
SUGGESTED_TURNS: dict[str, int] = {
    "notification": 0,
    "escalation": 0,
    "result_report": 1,
    "request": 3,
    "collaboration": -1,
    "question": 1,
}

#: Effective turns per intent under the default configured maximum of 5 (spec §3).
EFFECTIVE_TURNS: dict[str, int] = {
    k: (5 if v == -1 else min(v, 5)) for k, v in SUGGESTED_TURNS.items()
}

# The intent classifier of spec §3, first rule wins, case-insensitive. Used only to check
# that the generated messages carry the intent the model says they do.
_INTENT_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "notification",
        (r"\[NO_REPLY_NEEDED\]", r"\[NOTIFICATION\]", "전달합니다", "공유합니다", "알림:"),
    ),
    ("escalation", (r"\[URGENT\]", r"\[ESCALATION\]")),
    (
        "result_report",
        (
            r"\[outcome\]",
            r"\[result\]",
            "작업.*완료",
            "결과.*보고",
            "분석.*결과",
            "completed",
            "finished",
            "done",
        ),
    ),
    (
        "request",
        (
            "해줘",
            "해주세요",
            "해줄래",
            "봐줘",
            "봐주세요",
            "처리해",
            "부탁해",
            "부탁드",
            "진행해줘",
            "작성해줘",
            "분석해줘",
            "검토해줘",
            "수정해줘",
            "생성해줘",
            "만들어줘",
            "보내줘",
            "알아봐줘",
        ),
    ),
    (
        "collaboration",
        (
            "논의",
            "토론",
            "설계하자",
            "같이",
            "함께",
            "의견.*줘",
            "의견.*들려",
            "의견.*말해",
            "피드백",
            "리뷰",
            "검토",
            "합의",
            "조율",
            "상의",
            "브레인스토밍",
            "let'?s discuss",
            "review together",
            "brainstorm",
            "collaborate",
            "work together",
            "let'?s figure out",
            "what do you think",
        ),
    ),
    ("question", (r"\?$", "어떻게", "어디에", "뭐가", "알려줘", "can you", "could you", "please")),
)


def classify_intent(message: str) -> str:
    """The message intent by the rules of spec §3 (first rule wins; default collaboration).

    Parameters
    ----------
    message
        The sent text.

    Returns
    -------
    str
        One of the keys of :data:`SUGGESTED_TURNS`.
    """
    for intent, patterns in _INTENT_RULES:
        if any(re.search(p, message, flags=re.IGNORECASE) for p in patterns):
            return intent
    return "collaboration"


# Message templates per intent; each classifies to its intent (checked by the tests).
_MESSAGES: dict[str, tuple[str, ...]] = {
    "notification": (
        "[NOTIFICATION] 빌드 상태 공유합니다",
        "알림: 배포 창이 오늘 저녁으로 옮겨졌어요",
    ),
    "escalation": ("[URGENT] 결제 서버 응답이 느려졌어요", "[ESCALATION] 고객 문의가 급증했어요"),
    "result_report": ("[result] 로그 정리 작업 완료", "회귀 테스트 결과 보고 드려요"),
    "request": ("회귀 테스트 정리해줘", "API 문서 초안 작성해줘", "이 PR 검토해줘"),
    "collaboration": ("API 설계 같이 논의해봐요", "릴리스 일정 조율이 필요해요"),
    "question": ("배포 일정이 어떻게 되나요", "스테이징 서버 주소 알려줘"),
}

# Turn texts: long, mutually dissimilar sentences (word Jaccard well below 0.85), none
# starting with a conclusion opener, so they never end the loop by themselves.
_TURN_TEXTS: tuple[str, ...] = (
    "첫 번째 항목은 지금 구조로 두고 두 번째 항목만 나눠서 정리하면 될 것 같습니다",
    "로그를 다시 보니 타임아웃은 게이트웨이 쪽에서 먼저 난 걸로 보여요 확인 부탁해요",
    "테스트 케이스 세 개를 추가했고 남은 건 문서화와 릴리스 노트 정리입니다",
    "지난주 지표와 비교하면 오류율이 절반으로 줄었는데 원인은 재시도 정책 같아요",
    "배포 전에 스키마 변경을 먼저 반영해야 해서 순서를 바꾸는 게 좋겠습니다",
    "고객 문의 분류 기준을 제품 영역별로 나누면 청구 관련 문의가 가장 많습니다",
)
_REPLY_FIRST = "응답: 확인 후 정리해서 드릴게요, 필요한 자료가 있으면 말씀해 주세요"

_NO_REPLY_PREFIX = "[outcome] no_reply: 메시지가 전달되었으나 응답을 수신하지 못했습니다"
_BLOCKED_TEXT = "[outcome] blocked: 동시 처리 한도를 초과해 요청이 거절되었습니다"


@dataclass(frozen=True)
class ModelConfig:
    """Parameters of one held-out run (every policy number is a parameter).

    Parameters
    ----------
    agents
        Agent ids; every ordered pair of distinct agents sends.
    load
        Load factor multiplying every pair's send rate (1x .. 3x in the issue).
    sends_per_hour
        Mean rate of requester runs of one ordered pair at load 1, per hour (pair rates are
        drawn around it from a gamma of shape 2); each run makes one or more sends.
    pair_rates
        Explicit requester-run rates per hour at load 1, keyed ``(requester, target)``
        (replaces ``sends_per_hour`` and the drawn spread).
    n_sends
        Requester runs start until this many sends were made (a few more may follow from
        runs already going).
    work_sessions
        Work sessions active at a time; each send picks one (so one conversation id carries
        both directions of a pair, and several exchanges of a pair overlap).
    work_session_life_s
        Mean life of a work session (exponential); an expired one is replaced by a new id.
    background_runs_per_hour
        Channel runs per agent on its ``main`` session (lane ``main``): load on the session
        the requester's ping-pong turns queue on.
    p_subagent_requester
        Share of requester runs on a sub-agent session (``agent:<id>:subagent:<uuid>``).
    p_channel_requester
        Share of requester runs on a channel session (``agent:<id>:discord:group:<id>-team``,
        lane ``main``, session type ``unknown`` as ``sessionTypeFromSessionKey`` reads it):
        the only exchanges whose announce step runs.
    p_extra_send
        A requester run makes 1 + Geometric more ``sessions_send`` calls to its target:
        the chance of each further call (same work session, so same conversation id).
    p_send_back
        Chance that the target's run, on the conversation lane, calls ``sessions_send``
        back to the requester (the reverse direction under the same conversation id).
    service
        Mean service time, seconds, per step kind: ``first`` (target's run), ``turn``,
        ``announce``, ``requester`` (the requester's own run around the tool call),
        ``background``.
    family
        Service-time distribution: ``"gamma"``, ``"lognormal"`` or ``"exponential"``.
    cv
        Coefficient of variation of the service times (gamma and lognormal).
    nested_limit, main_limit, subagent_limit
        Gateway-wide lane limits (8, 4, 8).
    gate_flows, gate_timeout_s
        Per-target concurrency gate (3 flows, 30 s).
    wait_limit_s, wait_chunk_s, turn_timeout_s, announce_timeout_s
        Wait for the first reply (300 s budget, 30 s ``agent.wait`` chunks), one ping-pong
        turn (120 s), the announce step (30 s).
    configured_max_turns
        ``maxPingPongTurns`` (5).
    intent_mix
        Probability of each intent of the sent message.
    p_wait_error
        Chance that a target run ends in an error (``waitStatus: "error"``).
    p_retriable, max_retries
        Share of those errors that are retriable (a rate limit: the wait is retried up to 3
        times with the spec's backoff, each retry an ``a2a.retry``, and still finds the
        error).
    p_wait_call_error
        Chance that one ``agent.wait`` call fails by itself (a gateway connection error):
        retried on the same run, which goes on meanwhile.
    p_sync, sync_timeout_s
        Share of ``sessions_send`` calls made on the synchronous path, and their
        ``timeoutSeconds`` (30, the tool's default).
    p_step_error, p_step_empty, p_step_skip
        Chance that a ping-pong step fails, replies nothing, or replies ``REPLY_SKIP``.
    p_early
        Chance that a turn's reply triggers an early-termination rule.
    p_announce_skip
        Chance that the announce step replies ``ANNOUNCE_SKIP``.
    line_shape
        ``"full"`` (every field the current reference writes) or ``"minimal"`` (the older
        shape of the ``alternating-directions`` conformance log: completes with only
        ``announced``/``actualTurns``, no ``messageIntent`` or ``message`` on replies).
    tail_s
        The log is cut this long after the last send; exchanges still running are incomplete.
    start_ms
        Epoch ms of simulation time 0.
    """

    agents: tuple[str, ...] = ("hana", "ieum", "eden", "ruda", "bada")
    load: float = 1.0
    sends_per_hour: float = 1.5
    pair_rates: dict[tuple[str, str], float] | None = None
    n_sends: int = 1000
    work_sessions: int = 3
    work_session_life_s: float = 3600.0
    background_runs_per_hour: float = 12.0
    p_subagent_requester: float = 0.1
    p_channel_requester: float = 0.25
    p_extra_send: float = 0.25
    p_send_back: float = 0.2
    service: dict[str, float] = field(
        default_factory=lambda: {
            "first": 45.0,
            "turn": 20.0,
            "announce": 6.0,
            "requester": 30.0,
            "background": 40.0,
        }
    )
    family: str = "gamma"
    cv: float = 0.8
    nested_limit: int = 8
    main_limit: int = 4
    subagent_limit: int = 8
    gate_flows: int = 3
    gate_timeout_s: float = 30.0
    wait_limit_s: float = 300.0
    wait_chunk_s: float = 30.0
    turn_timeout_s: float = 120.0
    announce_timeout_s: float = 30.0
    configured_max_turns: int = 5
    intent_mix: dict[str, float] = field(
        default_factory=lambda: {
            "notification": 0.12,
            "escalation": 0.05,
            "result_report": 0.15,
            "request": 0.35,
            "collaboration": 0.18,
            "question": 0.15,
        }
    )
    p_wait_error: float = 0.02
    p_retriable: float = 0.5
    p_wait_call_error: float = 0.03
    max_retries: int = 3
    p_sync: float = 0.1
    sync_timeout_s: float = 30.0
    p_step_error: float = 0.01
    p_step_empty: float = 0.01
    p_step_skip: float = 0.03
    p_early: float = 0.12
    p_announce_skip: float = 0.3
    tail_s: float = 90.0
    line_shape: str = "full"
    start_ms: int = 1_771_286_400_000


@dataclass
class ModelRun:
    """What :func:`simulate` returns.

    Attributes
    ----------
    lines
        The NDJSON lines, in file (= emission = time) order.
    truth
        One row per exchange whose ``a2a.send`` is in the log (see :func:`simulate`).
    invisible
        Synchronous sends that timed out or failed: they ran, and left no event at all.
    """

    lines: list[str]
    truth: pl.DataFrame
    invisible: int = 0

    def write(self, path: Any) -> None:
        """Write the lines to ``path`` (one event per line)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(self.lines) + "\n")


@dataclass
class _Exchange:
    run_id: str
    conversation_id: str
    requester: str
    target: str
    work_session_id: str
    intent: str
    actual_turns: int = 0
    sync: bool = False


#: The fields a complete of the minimal line shape keeps (:func:`_minimal`).
MINIMAL_COMPLETE_FIELDS = frozenset(
    {
        "fromAgent",
        "toAgent",
        "conversationId",
        "workSessionId",
        "eventRole",
        "fromSessionType",
        "toSessionType",
        "announced",
        "actualTurns",
        "concurrencyBlocked",
    }
)


def _minimal(type_: str, data: dict[str, Any]) -> dict[str, Any]:
    """The older line shape of the ``alternating-directions`` conformance log: a complete
    with ``announced`` and ``actualTurns`` only, responses with ``replyPreview`` (and the
    outcome fields) but no ``message``, ``messageIntent`` or ``terminationReason``."""
    if type_ == "a2a.complete":
        return {k: v for k, v in data.items() if k in MINIMAL_COMPLETE_FIELDS}
    if type_ == "a2a.response":
        drop = {"messageIntent", "terminationReason"}
        if "outcome" not in data:
            drop.add("message")
        return {k: v for k, v in data.items() if k not in drop}
    return data


@dataclass
class _Call:
    """One ``sessions_send`` call as the flow sees it."""

    ex: int
    req: str
    tgt: str
    req_key: str
    req_type: str
    ws: str
    conv: str
    tkey: str
    intent: str
    message: str
    eff: int
    run_id: str
    first: simpy.Event | None = None
    sync: bool = False


#: shouldRunAnnounce's agent-internal session keys (a2a-intent-classifier.ts, 298c5ad5f).
_AGENT_KEY = re.compile(r"^agent:[^:]+:(main|a2a:|subagent:)", re.IGNORECASE)

_STEP_END = {"error": "agent_error", "empty": "empty_reply", "skip": "explicit_skip"}
# early-termination reasons and texts that trigger them (spec §3); repetition repeats the
# previous reply word for word (Jaccard 1.0 > 0.85)
_EARLY: dict[str, tuple[str, ...]] = {
    "repetition_detected": (),
    "minimal_content": ("네 좋아요", "ok 진행"),
    "conclusion_detected": (
        "알겠습니다, 그렇게 진행하겠습니다 감사해요",
        "확인했습니다. 말씀하신 대로 반영할게요",
    ),
}


class _Gateway:
    """The lanes, the gate and the event log of one simulated gateway."""

    def __init__(self, cfg: ModelConfig, rng: np.random.Generator) -> None:
        self.cfg = cfg
        self.rng = rng
        self.env = simpy.Environment()
        self.pools = {
            "nested": simpy.Resource(self.env, cfg.nested_limit),
            "main": simpy.Resource(self.env, cfg.main_limit),
            "subagent": simpy.Resource(self.env, cfg.subagent_limit),
        }
        self.sessions: dict[str, simpy.Resource] = {}
        self.gates = {a: simpy.Resource(self.env, cfg.gate_flows) for a in cfg.agents}
        self.log: list[tuple[int, dict[str, Any]]] = []  # (ts ms, event), emission order
        self.exchanges: list[_Exchange] = []
        self.roles: list[tuple[int, str] | None] = []  # per emitted event: (exchange idx, role)
        self.ws_slots: list[tuple[str, float]] = []
        self.conv_cache: dict[str, str] = {}
        self.last_send_s = 0.0
        self.cut_s = 0.0
        self.invisible = 0  # synchronous sends that timed out: no event at all

    # ----------------------------------------------------------------------------- helpers
    def uid(self) -> str:
        return str(uuid.UUID(bytes=self.rng.bytes(16), version=4))

    def service(self, kind: str) -> float:
        mean = self.cfg.service[kind]
        fam, cv = self.cfg.family, self.cfg.cv
        if fam == "exponential":
            return float(self.rng.exponential(mean))
        if fam == "gamma":
            shape = 1.0 / cv**2
            return float(self.rng.gamma(shape, mean / shape))
        if fam == "lognormal":
            sigma2 = np.log1p(cv**2)
            return float(self.rng.lognormal(np.log(mean) - sigma2 / 2, np.sqrt(sigma2)))
        raise ValueError(f"unknown service family {fam!r}")

    def session(self, key: str) -> simpy.Resource:
        if key not in self.sessions:
            self.sessions[key] = simpy.Resource(self.env, 1)
        return self.sessions[key]

    def ts(self) -> int:
        return self.cfg.start_ms + round(self.env.now * 1000.0)

    def emit(
        self, type_: str, agent: str, data: dict[str, Any], ex: int | None = None, role: str = ""
    ) -> None:
        clean = {k: v for k, v in data.items() if v is not None}
        if self.cfg.line_shape == "minimal":
            clean = _minimal(type_, clean)
        self.log.append(
            (self.ts(), {"type": type_, "agentId": agent, "ts": self.ts(), "data": clean})
        )
        self.roles.append((ex, role) if ex is not None else None)

    def work_session(self) -> str:
        now = self.env.now
        if not self.ws_slots:
            self.ws_slots = [
                ("ws_" + self.uid(), now + self.rng.exponential(self.cfg.work_session_life_s))
                for _ in range(self.cfg.work_sessions)
            ]
        i = int(self.rng.integers(len(self.ws_slots)))
        ws, expiry = self.ws_slots[i]
        if expiry < now:
            ws = "ws_" + self.uid()
            self.ws_slots[i] = (ws, now + self.rng.exponential(self.cfg.work_session_life_s))
        return ws

    def conversation(self, ws: str, a: str, b: str) -> str:
        # spec §6 / a2a-index.ts: workSessionId::sorted lower-cased pair, both directions
        key = ws + "::" + "|".join(sorted((a.lower(), b.lower())))
        if key not in self.conv_cache:
            self.conv_cache[key] = self.uid()
        return self.conv_cache[key]

    # ----------------------------------------------------------------------------- runs
    def lane_run(
        self,
        key: str,
        lane: str,
        kind: str,
        done: simpy.Event | None,
        outcome: str = "ok",
        during: Callable[[], None] | None = None,
    ) -> Generator[simpy.Event, Any, None]:
        """One agent run: session lane (FIFO, one at a time), then the global lane.

        ``during`` is called at a uniform point of the run's service (a tool call the run
        makes, e.g. a ``sessions_send`` back to its requester).
        """
        with self.session(key).request() as s:
            yield s
            with self.pools[lane].request() as p:
                yield p
                total = self.service(kind)
                if during is None:
                    yield self.env.timeout(total)
                else:
                    before = total * float(self.rng.uniform(0.1, 0.9))
                    yield self.env.timeout(before)
                    during()
                    yield self.env.timeout(total - before)
        if done is not None:
            done.succeed(outcome)

    def background(self, agent: str) -> Generator[simpy.Event, Any, None]:
        rate = self.cfg.background_runs_per_hour / 3600.0
        if rate <= 0:
            return
        while True:
            yield self.env.timeout(self.rng.exponential(1.0 / rate))
            self.env.process(self.lane_run(f"agent:{agent}:main", "main", "background", None))

    def arrivals(self) -> Generator[simpy.Event, Any, None]:
        cfg = self.cfg
        if cfg.pair_rates is not None:
            pairs = list(cfg.pair_rates)
            rates = np.array([cfg.pair_rates[p] for p in pairs], dtype=float)
        else:
            # every ordered pair, rates spread around the mean (gamma, shape 2)
            pairs = [(a, b) for a in cfg.agents for b in cfg.agents if a != b]
            rates = self.rng.gamma(2.0, 0.5, size=len(pairs)) * cfg.sends_per_hour
        # requester runs form one Poisson stream, each run's pair drawn by rate
        w = rates / rates.sum()
        total = float(rates.sum()) * cfg.load / 3600.0
        while len(self.exchanges) < cfg.n_sends:
            yield self.env.timeout(self.rng.exponential(1.0 / total))
            req, tgt = pairs[int(self.rng.choice(len(pairs), p=w))]
            self.env.process(self.requester_run(req, tgt))

    def requester_run(self, req: str, tgt: str) -> Generator[simpy.Event, Any, None]:
        """The requester's own run in which it calls ``sessions_send`` one or more times."""
        u = self.rng.random()
        if u < self.cfg.p_subagent_requester:
            key, lane, stype = f"agent:{req}:subagent:{self.uid()}", "subagent", "subagent"
        elif u < self.cfg.p_subagent_requester + self.cfg.p_channel_requester:
            key, lane, stype = f"agent:{req}:discord:group:{req}-team", "main", "unknown"
        else:
            key, lane, stype = f"agent:{req}:main", "main", "main"
        ws = self.work_session()
        with self.session(key).request() as s:
            yield s
            with self.pools[lane].request() as p:
                yield p
                total = self.service("requester")
                # the tool calls fall inside the run; a run may send more than once
                calls = int(self.rng.geometric(1.0 - self.cfg.p_extra_send))
                points = np.sort(self.rng.uniform(0.1, 0.9, size=calls)) * total
                elapsed = 0.0
                for at in points:
                    yield self.env.timeout(float(at) - elapsed)
                    elapsed = float(at)
                    if self.rng.random() < self.cfg.p_sync:
                        # synchronous path: the requester's run blocks on the wait
                        yield from self.send_sync(req, tgt, key, stype, ws)
                    else:
                        self.env.process(self.flow(self.submit(req, tgt, key, stype, ws)))
                yield self.env.timeout(total - elapsed)

    def step(
        self, key: str, kind: str, p_error: float, p_empty: float, p_skip: float
    ) -> tuple[simpy.Event, str]:
        """Submit a ping-pong / announce step on ``key`` (lane nested); its result event."""
        done = self.env.event()
        u = self.rng.random()
        status = (
            "error"
            if u < p_error
            else "empty"
            if u < p_error + p_empty
            else "skip"
            if u < p_error + p_empty + p_skip
            else "ok"
        )
        self.env.process(self.lane_run(key, "nested", kind, done, status))
        return done, status

    def target_run(self, call: _Call) -> simpy.Event:
        """Submit the target's run on the conversation lane (lane nested); its done event,
        whose value is ``ok``, ``retriable`` (e.g. a rate limit) or ``fatal``."""
        cfg, rng = self.cfg, self.rng
        done = self.env.event()
        u = rng.random()
        status = (
            "retriable"
            if u < cfg.p_wait_error * cfg.p_retriable
            else "fatal"
            if u < cfg.p_wait_error
            else "ok"
        )
        # the target, inside this run (on the conversation lane), may send back to the
        # requester: same work session and pair, so the same conversation id (spec §6)
        back = None
        if rng.random() < cfg.p_send_back:
            ws, tkey, req, tgt = call.ws, call.tkey, call.req, call.tgt

            def back() -> None:
                self.env.process(self.flow(self.submit(tgt, req, tkey, "unknown", ws)))

        self.env.process(self.lane_run(call.tkey, "nested", "first", done, status, back))
        return done

    def submit(self, req: str, tgt: str, req_key: str, req_type: str, ws: str) -> _Call:
        """The ``agent`` call of ``sessions_send``: the target's run is queued at once."""
        cfg, rng = self.cfg, self.rng
        conv = self.conversation(ws, req, tgt)
        intent = str(rng.choice(list(cfg.intent_mix), p=np.array(list(cfg.intent_mix.values()))))
        suggested = SUGGESTED_TURNS[intent]
        call = _Call(
            ex=len(self.exchanges),
            req=req,
            tgt=tgt,
            req_key=req_key,
            req_type=req_type,
            ws=ws,
            conv=conv,
            tkey=f"agent:{tgt}:a2a:{conv}",
            intent=intent,
            message=str(rng.choice(_MESSAGES[intent])),
            eff=cfg.configured_max_turns
            if suggested == -1
            else min(suggested, cfg.configured_max_turns),
            run_id=self.uid(),
        )
        self.exchanges.append(_Exchange(call.run_id, conv, req, tgt, ws, intent))
        call.first = self.target_run(call)
        return call

    def send_sync(
        self, req: str, tgt: str, req_key: str, req_type: str, ws: str
    ) -> Generator[simpy.Event, Any, None]:
        """The synchronous path (``timeoutSeconds`` > 0): wait inside the requester's run;
        a timeout or an error emits NOTHING (spec §2, the known observability loss); on
        success the flow starts with the reply in hand."""
        call = self.submit(req, tgt, req_key, req_type, ws)
        first = call.first
        assert first is not None  # submit() queues the run
        yield first | self.env.timeout(self.cfg.sync_timeout_s)
        if not first.triggered or first.value != "ok":
            self.invisible += 1
            return
        call.sync = True
        self.exchanges[call.ex].sync = True
        self.env.process(self.flow(call))

    # ----------------------------------------------------------------------------- flow
    def _say(self, call: _Call, speaker: str, **d: Any) -> dict[str, Any]:
        """An event's data as ``speaker`` (requester or target) writes it to the other."""
        by_target = speaker == call.tgt
        tgt_type = "unknown"  # sessionTypeFromSessionKey of agent:<id>:a2a:<conversationId>
        return {
            "fromAgent": speaker,
            "toAgent": call.req if by_target else call.tgt,
            "conversationId": call.conv,
            "workSessionId": call.ws,
            "eventRole": "conversation.main",
            "fromSessionType": tgt_type if by_target else call.req_type,
            "toSessionType": call.req_type if by_target else tgt_type,
            **d,
        }

    def _complete(self, call: _Call, **d: Any) -> None:
        data = self._say(
            call,
            call.req,
            targetSessionKey=call.tkey,
            messageIntent=call.intent,
            configuredMaxTurns=self.cfg.configured_max_turns,
            effectiveTurns=call.eff,
            **d,
        )
        self.emit("a2a.complete", call.req, data, call.ex, "complete")

    def _jitter(self) -> simpy.Event:
        # an event follows what caused it by a few ms (a gateway call, a log write)
        return self.env.timeout(float(self.rng.uniform(0.005, 0.05)))

    def flow(self, call: _Call) -> Generator[simpy.Event, Any, None]:
        """The background A2A flow (``runSessionsSendA2AFlow``) of one exchange."""
        cfg, env = self.cfg, self.env
        self.last_send_s = env.now
        # the synchronous path passes the reply and no waitRunId: runId "unknown" (298c5ad5f)
        run_id = "unknown" if call.sync else call.run_id
        send = self._say(
            call, call.req, message=call.message, targetSessionKey=call.tkey, runId=run_id
        )
        self.emit("a2a.send", call.req, send, call.ex, "send")
        gate = self.gates[call.tgt]
        permit = gate.request()
        yield permit | env.timeout(cfg.gate_timeout_s)
        if not permit.triggered:
            permit.cancel()
            said = self._say(
                call, call.tgt, message=_BLOCKED_TEXT, replyPreview="", outcome="blocked"
            )
            self.emit("a2a.response", call.tgt, said, call.ex, "blocked")
            self._complete(call, announced=False, actualTurns=0, concurrencyBlocked=True)
            return
        try:
            if call.sync:
                # the reply is in hand: no agent.wait, the reply is written at once
                yield self._jitter()
                self._reply(call)
                replied = True
            else:
                replied = yield from self._wait_reply(call)
            if replied:
                yield from self._ping_pong_and_announce(call)
        finally:
            gate.release(permit)

    def _reply(self, call: _Call) -> None:
        said = self._say(call, call.tgt, message=_REPLY_FIRST, replyPreview=_REPLY_FIRST[:200])
        self.emit("a2a.response", call.tgt, said, call.ex, "reply")

    def _wait_call(
        self, call: _Call
    ) -> Generator[simpy.Event, Any, tuple[str, str | None, str | None, tuple[str, str] | None]]:
        """One ``agent.wait`` call of at most one chunk: ``(result, waitStatus, waitError,
        error)`` with result ``ok``, ``timeout`` (the chunk ran out: not an error), ``error``
        (the run ended in error, or the call failed) and ``error`` its (code, reason) when
        retriable, else None."""
        cfg, env, rng = self.cfg, self.env, self.rng
        done = call.first
        assert done is not None
        if rng.random() < cfg.p_wait_call_error:
            # the wait call itself fails (socket hang up) after a while: an exception,
            # which sets neither waitStatus nor waitError
            yield env.timeout(float(rng.uniform(0.5, 10.0)))
            return "error", None, None, ("gateway_connection", "socket hang up")
        yield done | env.timeout(cfg.wait_chunk_s)
        yield self._jitter()
        if not done.triggered:
            return "timeout", "timeout", None, None
        if done.value == "ok":
            return "ok", "ok", None, None
        if done.value == "fatal":
            return "error", "error", "context length exceeded", None
        return "error", "error", "rate limit exceeded", ("rate_limit", "rate limit exceeded")

    def _wait_reply(self, call: _Call) -> Generator[simpy.Event, Any, bool]:
        """``agent.wait`` on the target's run with retries (spec §2.2-2.3, §4), as the loop of
        ``sessions-send-tool.a2a.ts`` (298c5ad5f) counts: each call adds a 30 s chunk to
        ``elapsed`` however soon it returned, a retry its backoff; the wait ends when
        ``elapsed`` reaches the 300 s budget. A chunk timeout is not a retry (spec §2.2).

        A retry repeats the WAIT on the same run id: a gateway connection error of the wait
        call (the run goes on meanwhile), or a run that ended with a retriable error status
        (a rate limit: it is still in error when waited on again). A non-retriable status
        stops at once; so do exhausted retries.
        """
        cfg, env, rng = self.cfg, self.env, self.rng
        chunk_ms, limit_ms = round(cfg.wait_chunk_s * 1000), round(cfg.wait_limit_s * 1000)
        elapsed, attempt = 0, 0
        status: str | None = None
        err: str | None = None
        while elapsed < limit_ms:
            result, st, er, retriable = yield from self._wait_call(call)
            if result == "ok":
                self._reply(call)
                return True
            if st is not None:
                status, err = st, er
            if result == "error":
                if retriable is None:
                    break
                attempt += 1
                if attempt > cfg.max_retries:
                    break
                backoff_ms = int(min(60_000, 2000 * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0))
                self._retry(call, attempt, retriable, backoff_ms, elapsed)
                yield env.timeout(backoff_ms / 1000.0)
                elapsed += backoff_ms
            elapsed += chunk_ms
        if elapsed >= limit_ms:
            status = status or "timeout"
        yield from self._no_reply(call, status, err, elapsed >= limit_ms)
        return False

    def _retry(
        self, call: _Call, attempt: int, error: tuple[str, str], backoff_ms: int, elapsed: int
    ) -> None:
        """``a2a.retry`` as 298c5ad5f writes it: by the target, with the waited run id."""
        code, reason = error
        data = {
            "fromAgent": call.req,
            "toAgent": call.tgt,
            "runId": call.run_id,
            "attempt": attempt,
            "maxAttempts": self.cfg.max_retries,
            "errorCategory": "transient",
            "errorCode": code,
            "reason": reason,
            "backoffMs": backoff_ms,
            "elapsedMs": elapsed,
            "conversationId": call.conv,
            "workSessionId": call.ws,
        }
        self.emit("a2a.retry", call.tgt, data, call.ex, "retry")

    def _no_reply(
        self, call: _Call, status: str | None, err: str | None, exceeded: bool
    ) -> Generator[simpy.Event, Any, None]:
        """The no-reply response (spec §2.3 wording) and the complete of that branch."""
        if err:
            suffix = f" ({err})"
        elif status == "error":
            suffix = " (실행 오류)"
        elif exceeded or status == "timeout":
            suffix = " (대기 시간 300초 초과)"
        else:
            suffix = ""
        said = self._say(
            call,
            call.tgt,
            message=_NO_REPLY_PREFIX + suffix,
            replyPreview="",
            outcome="no_reply",
            waitStatus=status,
            waitError=err,
        )
        self.emit("a2a.response", call.tgt, said, call.ex, "no_reply")
        yield self._jitter()
        # the !latestReply branch's complete: wait fields, no intent or turn fields
        done = self._say(
            call,
            call.req,
            announced=False,
            targetSessionKey=call.tkey,
            waitStatus=status,
            waitError=err,
        )
        self.emit("a2a.complete", call.req, done, call.ex, "complete")

    def _ping_pong_and_announce(self, call: _Call) -> Generator[simpy.Event, Any, None]:
        cfg, env, rng = self.cfg, self.env, self.rng
        actual, reason = 0, None
        # turn 1 is the requester's, on its own session; then the target's, on the
        # conversation lane; and so on (sessions-send-tool.a2a.ts)
        keys = {call.req: call.req_key, call.tgt: call.tkey}
        speaker = call.req
        previous = _REPLY_FIRST
        for turn in range(1, call.eff + 1):
            done, status = self.step(
                keys[speaker], "turn", cfg.p_step_error, cfg.p_step_empty, cfg.p_step_skip
            )
            yield done | env.timeout(cfg.turn_timeout_s)
            if not done.triggered:
                reason = "turn_timeout"
                break
            if status != "ok":
                reason = _STEP_END[status]
                break
            yield self._jitter()
            early = None
            if rng.random() < cfg.p_early:
                early = str(rng.choice(list(_EARLY)))
            text = (
                previous
                if early == "repetition_detected"
                else str(rng.choice(_EARLY[early]))
                if early is not None
                else str(rng.choice([t for t in _TURN_TEXTS if t != previous]))
            )
            actual += 1
            data = self._say(
                call,
                speaker,
                message=text,
                replyPreview=text[:200],
                turn=turn,
                maxTurns=call.eff,
                messageIntent=call.intent,
                terminationReason=early,
            )
            self.emit("a2a.response", speaker, data, call.ex, "turn")
            previous = text
            if early is not None:
                reason = early
                break
            speaker = call.tgt if speaker == call.req else call.req
        self.exchanges[call.ex].actual_turns = actual
        announced, runs = False, not _AGENT_KEY.match(call.req_key)
        if runs:
            # shouldRunAnnounce: only a requester outside the agent sessions is announced
            done, status = self.step(call.tkey, "announce", 0.0, 0.0, cfg.p_announce_skip)
            yield done | env.timeout(cfg.announce_timeout_s)
            announced = done.triggered and status != "skip"
        yield self._jitter()
        self._complete(
            call,
            announced=announced,
            announceSkipped=not runs,
            actualTurns=actual,
            earlyTermination=reason is not None,
            terminationReason=reason,
        )

    # ----------------------------------------------------------------------------- run
    def run(self) -> ModelRun:
        for a in self.cfg.agents:
            self.env.process(self.background(a))
        arrivals = self.env.process(self.arrivals())
        self.env.run(until=arrivals)
        cut = self.last_send_s + self.cfg.tail_s
        self.cut_s = cut
        self.env.run(until=max(cut, self.env.now) + 1e-9)
        cut_ms = self.cfg.start_ms + round(cut * 1000.0)
        kept = [i for i, (ts, _) in enumerate(self.log) if ts <= cut_ms]
        lines = [
            json.dumps(self.log[i][1], ensure_ascii=False, separators=(",", ":")) for i in kept
        ]
        return ModelRun(lines, self._truth(kept), self.invisible)

    def _truth(self, kept: list[int]) -> pl.DataFrame:
        per: dict[int, dict[str, list[tuple[int, int]]]] = {}
        for line, i in enumerate(kept, start=1):
            tag = self.roles[i]
            if tag is None:
                continue
            ex, role = tag
            per.setdefault(ex, {}).setdefault(role, []).append((line, self.log[i][0]))
        rows = []
        for ex, roles in sorted(per.items()):
            if "send" not in roles:
                continue
            xc = self.exchanges[ex]
            ((send_line, send_ts),) = roles["send"]
            reply = roles.get("reply", [(None, None)])[0]
            comp = roles.get("complete", [(None, None)])[0]
            turns = roles.get("turn", [])
            said = roles.get("no_reply") or roles.get("blocked")
            if "blocked" in roles and comp[0] is not None:
                outcome = "concurrency_blocked"
            elif "no_reply" in roles or "blocked" in roles:
                # spec §3b: a blocked response with no concurrency-blocked complete (log cut)
                # reads as a legacy no_reply
                outcome = "no_reply"
            elif comp[0] is None:
                outcome = "incomplete"
            elif reply[0] is not None:
                outcome = "replied"
            else:
                outcome = "incomplete"
            rows.append(
                {
                    "run_id": xc.run_id,
                    "conversation_id": xc.conversation_id,
                    "requester": xc.requester,
                    "target": xc.target,
                    "work_session_id": xc.work_session_id,
                    "intent": xc.intent,
                    "sync": xc.sync,
                    "send_line": send_line,
                    "first_reply_line": reply[0],
                    "outcome_line": said[0][0] if said else None,
                    "turn_lines": [t[0] for t in turns],
                    "retry_lines": [t[0] for t in roles.get("retry", [])],
                    "complete_line": comp[0],
                    "outcome": outcome,
                    "first_reply_s": None if reply[1] is None else (reply[1] - send_ts) / 1000.0,
                    "duration_s": None if comp[1] is None else (comp[1] - send_ts) / 1000.0,
                    "actual_turns": len(turns),
                    "_send_ts": send_ts,
                    "_end_ts": comp[1],
                }
            )
        schema = pl.Schema(
            {
                "run_id": pl.String(),
                "conversation_id": pl.String(),
                "requester": pl.String(),
                "target": pl.String(),
                "work_session_id": pl.String(),
                "intent": pl.String(),
                "sync": pl.Boolean(),
                "send_line": pl.Int64(),
                "first_reply_line": pl.Int64(),
                "outcome_line": pl.Int64(),
                "turn_lines": pl.List(pl.Int64()),
                "retry_lines": pl.List(pl.Int64()),
                "complete_line": pl.Int64(),
                "outcome": pl.String(),
                "first_reply_s": pl.Float64(),
                "duration_s": pl.Float64(),
                "actual_turns": pl.Int64(),
                "_send_ts": pl.Int64(),
                "_end_ts": pl.Int64(),
            }
        )
        end = pl.col("_end_ts").fill_null(self.cfg.start_ms + round(self.cut_s * 1000.0))
        frame = pl.DataFrame(rows, schema=schema).with_columns(end.alias("_end_ts"))
        # another exchange of the same conversation id is in flight during this one
        pairs = frame.select("conversation_id", "run_id", "_send_ts", "_end_ts").join(
            frame.select("conversation_id", "run_id", "_send_ts", "_end_ts"),
            on="conversation_id",
            suffix="_o",
        )
        busy = (
            pairs.filter(
                (pl.col("run_id") != pl.col("run_id_o"))
                & (pl.col("_send_ts_o") <= pl.col("_end_ts"))
                & (pl.col("_send_ts") <= pl.col("_end_ts_o"))
            )
            .select("run_id")
            .unique()
        )
        return frame.with_columns(
            pl.col("run_id").is_in(busy["run_id"].implode()).alias("overlapped")
        ).drop("_send_ts", "_end_ts")


def simulate(cfg: ModelConfig | None = None, *, seed: int = 0) -> ModelRun:
    """Run the held-out model once.

    Parameters
    ----------
    cfg
        The parameters (default :class:`ModelConfig`).
    seed
        Seed of the run's ``numpy.random.Generator`` (nothing global is used).

    Returns
    -------
    ModelRun
        ``lines`` (NDJSON, file order) and ``truth``: one row per exchange whose send is in
        the log, with ``run_id, conversation_id, requester, target, work_session_id, intent, sync``
        (made on the synchronous path: its send is written after the reply),
        send_line, first_reply_line, outcome_line`` (a no-reply or blocked response),
        ``turn_lines`` (in turn order), ``retry_lines``, ``complete_line`` (null when the log was cut first),
        ``outcome`` (replied, no_reply, concurrency_blocked, incomplete — as spec §3b reads
        the cut log), ``first_reply_s``, ``duration_s`` (send → complete) and
        ``actual_turns`` (turn events in the log), ``overlapped`` (another exchange of the same
        conversation id is in flight at some time between this one's send and its complete,
        or the end of the log). Lines are 1-based.
    """
    cfg = cfg or ModelConfig()
    return _Gateway(cfg, np.random.default_rng(seed)).run()
