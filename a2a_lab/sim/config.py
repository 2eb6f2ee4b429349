"""The simulator's configuration: one pydantic :class:`SimConfig`, loadable from JSON or TOML.

A configuration describes the deployment (agents, their sessions and service times), the
workload (who sends to whom and when, and what the messages say) and the policies of the
reference gateway (a2a-runtime.md §1-§3). Every policy is a field whose default is TODAY's
behaviour; ``None`` (``false`` in TOML, which has no null) switches it off:

- ``gate``: the per-target concurrency gate (3 flows, 30 s permit timeout);
- ``wait``: the requester's wait, 30 s chunks up to 300 s;
- ``ping_pong``: up to 5 turns, 120 s per turn, early-termination chances (``max_turns=0``
  switches ping-pong off);
- ``announce``: the announce step;
- ``tasks``: task contexts, which give messages their work-session ids;
- the policies of :mod:`~a2a_lab.sim.policies`: ``failures``, ``retry`` (today's: the
  reference's 3 retries), ``loop_guard``, ``collaborate_limit``, ``queue_capacity``,
  ``rate_limit``, ``idempotency`` (on), ``sync`` (the synchronous path) and ``relays``; the
  safety and rate limits do not act on ``sessions_send`` today, so they are off until set.

Validation errors are pydantic's: each names the offending field by its path, e.g.
``agents.0.service.mean_s``.

Examples
--------
>>> cfg = SimConfig.from_toml('''
... n_messages = 500
... gate = false
... [[agents]]
... id = "ruda"
... [[agents]]
... id = "eden"
... service = {kind = "deterministic", value_s = 60}
... [workload]
... kind = "poisson"
... pairs = [{from = "ruda", to = "eden", rate_per_s = 0.01}]
... ''')
>>> cfg.gate is None, cfg.wait.max_wait_s, cfg.agents[1].service.mean
(True, 300.0, 60.0)
>>> SimConfig.model_validate({"agents": [{"id": "a", "service": {"kind": "exponential", "mean_s": -1}}]})
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for SimConfig
agents.0.service.exponential.mean_s
  Input should be greater than 0 ...
"""

from __future__ import annotations

import json
import math
import tomllib
from datetime import datetime, timedelta, timezone
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from a2a_lab.reference.runtime.concurrency import ConcurrencyConfig
from a2a_lab.reference.runtime.intent import (
    PING_PONG_LIMITS_0B3325A28,
    PING_PONG_LIMITS_MAIN,
    Intent,
)
from a2a_lab.reference.runtime.retry import REFERENCE_RETRY
from a2a_lab.sim._strict import STRICT_ALIASED, Off, Probability, iso_datetime
from a2a_lab.sim.budget import MAX_CV, MAX_SIM_S, BudgetExceeded, RunBudget, check_runnable
from a2a_lab.sim.distributions import Lognormal, ServiceTime
from a2a_lab.sim.policies import IdempotencyPolicy, RelayPolicy, SyncPath
from a2a_lab.sim.policies.failures import FailurePolicy
from a2a_lab.sim.policies.limits import CollaborateLimit, LoopGuardPolicy, RateLimitPolicy
from a2a_lab.sim.policies.retry import ReferenceRetry, RetryField

__all__ = [
    "ENDINGS",
    "INTENTS",
    "MAX_CV",
    "MAX_SIM_S",
    "PAYLOAD_TYPES",
    "TOPOLOGIES",
    "AgentConfig",
    "AgentRate",
    "AnnouncePolicy",
    "BudgetExceeded",
    "GatePolicy",
    "LanePools",
    "MessageMix",
    "PairRate",
    "PingPongPolicy",
    "PoissonArrivals",
    "RunBudget",
    "SimConfig",
    "TaskPolicy",
    "TraceArrivals",
    "TraceSend",
    "WaitPolicy",
    "Workload",
]

_CONFIG = STRICT_ALIASED

_PayloadType = Literal["task_delegation", "status_report", "question", "answer"]

#: The six intents of the reference classifier (runtime §3), in its rule order.
INTENTS: Final[tuple[Intent, ...]] = get_args(Intent)
#: Structured payload types (runtime §8).
PAYLOAD_TYPES: Final[tuple[_PayloadType, ...]] = get_args(_PayloadType)
#: Default relative weights of the intents and of the payload types (:class:`MessageMix`).
_INTENT_WEIGHTS: Final[dict[Intent, float]] = {
    "request": 35.0,
    "question": 22.0,
    "collaboration": 20.0,
    "notification": 9.0,
    "result_report": 9.0,
    "escalation": 5.0,
}
_PAYLOAD_WEIGHTS: Final[dict[_PayloadType, float]] = {
    "task_delegation": 40.0,
    "status_report": 25.0,
    "question": 20.0,
    "answer": 15.0,
}
Ending = Literal[
    "conclusion", "minimal", "repetition", "explicit_skip", "empty_reply", "agent_error"
]
#: How a ping-pong turn can end early, besides the timeout (runtime §3): the reply concludes,
#: is minimal, repeats the previous one, is ``REPLY_SKIP``, is empty, or the run fails.
ENDINGS: Final[tuple[Ending, ...]] = get_args(Ending)

#: Where the reference runs (KST): the default simulated clock starts on a Monday morning there.
KST: Final = timezone(timedelta(hours=9))
DEFAULT_START: Final = datetime(2026, 3, 2, 9, 0, tzinfo=KST)
#: Discord channel snowflakes the default deployment's agents talk in.
DEFAULT_CHANNELS: Final = ("1187423365011234816", "1187423365011234817", "1201958237465019283")


def _false_is_unlimited(value: Any) -> Any:
    return None if value is False else value


_Unlimited = BeforeValidator(_false_is_unlimited)
_AgentId = Annotated[str, Field(min_length=1, pattern=r"^[^:\s]+$")]


# ----------------------------------------------------------------------------------------
# deployment
# ----------------------------------------------------------------------------------------


class AgentConfig(BaseModel):
    """One agent: its kind, its sessions' concurrency and its service times.

    A ``main`` agent's session is ``agent:<id>:main``; a ``subagent`` runs in one spawned
    session ``agent:<id>:subagent:<uuid>``. A main agent may also send from a Discord channel
    session (``agent:<id>:discord:group:<channel>``, see :attr:`SimConfig.channel_share`).

    Attributes
    ----------
    id
        The agent id (no ``:``, no white space).
    kind
        ``main`` or ``subagent``.
    service
        Time the agent's run takes for a received message.
    turn_service
        Time one ping-pong turn takes on this agent (default: ``service``).
    announce_service
        Time the announce step takes on this agent (default: ``turn_service``).
    session_concurrency
        Messages one session of this agent processes at once (the reference: 1, FIFO).
    """

    model_config = _CONFIG

    id: _AgentId
    kind: Literal["main", "subagent"] = "main"
    service: ServiceTime = Lognormal(mean_s=40.0, cv=1.0)
    turn_service: ServiceTime | None = None
    announce_service: ServiceTime | None = None
    session_concurrency: PositiveInt = 1

    @property
    def turn_time(self) -> ServiceTime:
        """The ping-pong turn distribution in effect."""
        return self.turn_service or self.service

    @property
    def announce_time(self) -> ServiceTime:
        """The announce-step distribution in effect."""
        return self.announce_service or self.turn_time


def _default_agents() -> list[AgentConfig]:
    sub = Lognormal(mean_s=90.0, cv=0.8)
    mains = [AgentConfig(id=a) for a in ("main", "ruda", "eden", "seum", "bada")]
    subs = [AgentConfig(id=a, kind="subagent", service=sub) for a in ("jiwoo", "hana")]
    return [*mains, *subs]


# ----------------------------------------------------------------------------------------
# workload
# ----------------------------------------------------------------------------------------


class PairRate(BaseModel):
    """Poisson arrivals on one directed pair (``from`` sends to ``to``)."""

    # STRICT_ALIASED spelled out: pydantic's mypy plugin reads populate_by_name only here
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True
    )

    from_agent: _AgentId = Field(alias="from")
    to_agent: _AgentId = Field(alias="to")
    rate_per_s: PositiveFloat


class AgentRate(BaseModel):
    """Poisson arrivals from one agent, spread over targets by weight.

    Attributes
    ----------
    agent
        The sender.
    rate_per_s
        Its sending rate.
    targets
        Weights per target agent; default: every other agent, equally.
    """

    model_config = _CONFIG

    agent: _AgentId
    rate_per_s: PositiveFloat
    targets: dict[str, NonNegativeFloat] | None = None

    @field_validator("targets")
    @classmethod
    def _some_weight(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None and not any(w > 0 for w in value.values()):
            raise ValueError("at least one target needs a positive weight")
        return value


class PoissonArrivals(BaseModel):
    """Poisson arrivals per directed pair and/or per agent, optionally by time of day.

    Attributes
    ----------
    pairs, agents
        The streams (their superposition is one Poisson stream of the total rate).
    hourly_profile
        24 multipliers of every rate by local hour of :attr:`SimConfig.start`'s time zone
        (a non-homogeneous Poisson process, drawn as a time change of a unit-rate one);
        None: constant rates.
    """

    model_config = _CONFIG

    kind: Literal["poisson"] = "poisson"
    pairs: list[PairRate] = Field(default_factory=list)
    agents: list[AgentRate] = Field(default_factory=list)
    hourly_profile: list[NonNegativeFloat] | None = Field(None, min_length=24, max_length=24)

    @model_validator(mode="after")
    def _has_streams(self) -> Self:
        if not self.pairs and not self.agents:
            raise ValueError("give at least one entry in `pairs` or `agents`")
        if self.hourly_profile is not None and not any(self.hourly_profile):
            raise ValueError("hourly_profile: at least one hour needs a positive multiplier")
        return self


class TraceSend(BaseModel):
    """One recorded send to replay: when (seconds from the first), who to whom, what."""

    # STRICT_ALIASED spelled out: pydantic's mypy plugin reads populate_by_name only here
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True
    )

    at_s: NonNegativeFloat
    from_agent: _AgentId = Field(alias="from")
    to_agent: _AgentId = Field(alias="to")
    message: str | None = None


class TraceArrivals(BaseModel):
    """Replay the send times (and senders, targets, texts) of a recorded log.

    Attributes
    ----------
    path
        A log that :func:`a2a_lab.load` reads (file, glob or directory); its ``a2a.send``
        events are replayed.
    sends
        Inline sends instead of a path.
    time_scale
        Multiplies the recorded gaps (0.5 replays twice as fast).

    Agents of the trace that :attr:`SimConfig.agents` does not list run with the defaults of
    :class:`AgentConfig`.
    """

    model_config = _CONFIG

    kind: Literal["trace"] = "trace"
    path: str | None = None
    sends: list[TraceSend] | None = None
    time_scale: PositiveFloat = 1.0

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.sends is None):
            raise ValueError("give exactly one of `path` and `sends`")
        if self.sends is not None and not self.sends:
            raise ValueError("sends: give at least one send")
        return self


Workload = Annotated[PoissonArrivals | TraceArrivals, Field(discriminator="kind")]


def _default_workload() -> PoissonArrivals:
    mains = ("main", "ruda", "eden", "seum", "bada")
    return PoissonArrivals(
        agents=[
            *(AgentRate(agent=a, rate_per_s=1 / 600) for a in mains),
            *(
                AgentRate(agent=s, rate_per_s=1 / 1800, targets=dict.fromkeys(mains, 1.0))
                for s in ("jiwoo", "hana")
            ),
        ]
    )


class MessageMix(BaseModel):
    """What the messages say: their intents and how many carry a structured payload.

    The intent of a message decides its ping-pong budget (runtime §3). Each message gets a
    text of its intent (the classifier of :mod:`a2a_lab.reference.runtime.intent` reads it back), or,
    with probability ``payload_share``, a structured payload whose type replaces the
    classifier.

    Attributes
    ----------
    intents
        Relative weights of the intents.
    payload_share
        Share of messages with a ``payloadJson``.
    payload_types
        Relative weights of the payload types.
    payload_turns
        ``"reference_caller"`` (today): a payload's intent runs the configured maximum of
        turns, as the reference caller passes ``suggestedTurns = -1``; ``"intent"``: the
        intent's own suggested turns (runtime §3's table).
    suggested_turns
        Override the classifier's suggested turns per intent (``-1`` = the maximum).
    """

    model_config = _CONFIG

    intents: dict[Intent, NonNegativeFloat] = Field(default_factory=_INTENT_WEIGHTS.copy)
    payload_share: float = Field(0.2, ge=0, le=1)
    payload_types: dict[_PayloadType, NonNegativeFloat] = Field(
        default_factory=_PAYLOAD_WEIGHTS.copy
    )
    payload_turns: Literal["reference_caller", "intent"] = "reference_caller"
    suggested_turns: dict[Intent, Annotated[int, Field(ge=-1)]] | None = None

    @model_validator(mode="after")
    def _weights(self) -> Self:
        if not any(self.intents.values()):
            raise ValueError("intents: at least one intent needs a positive weight")
        if self.payload_share > 0 and not any(self.payload_types.values()):
            raise ValueError("payload_types: at least one type needs a positive weight")
        return self


# ----------------------------------------------------------------------------------------
# policies
# ----------------------------------------------------------------------------------------


class GatePolicy(BaseModel):
    """The per-target concurrency gate (runtime §1; :class:`~a2a_lab.reference.runtime.ConcurrencyGate`).

    Attributes
    ----------
    max_concurrent_flows
        A2A flows one target agent may have at once.
    queue_timeout_s
        A flow waiting longer for a permit is refused (``concurrency_blocked``).
    corrected_release
        False (today): the reference's release quirk, a permit can go to a newcomer before
        the woken waiter runs; True: the permit passes straight to the waiter.
    """

    model_config = _CONFIG

    max_concurrent_flows: PositiveInt = 3
    queue_timeout_s: NonNegativeFloat = 30.0
    corrected_release: bool = False

    def concurrency_config(self) -> ConcurrencyConfig:
        """The runtime gate's configuration (milliseconds)."""
        return ConcurrencyConfig(
            max_concurrent_flows=self.max_concurrent_flows,
            queue_timeout_ms=self.queue_timeout_s * 1000.0,
        )


#: The simulator's queueing topologies (:attr:`SimConfig.topology`).
TOPOLOGIES: Final = ("lanes", "agent_main")


class LanePools(BaseModel):
    """The gateway-wide lane pools (runtime §1): how many runs of each lane run at once.

    The reference queues every agent run twice: first on its session lane
    (``session:<sessionKey>``, one run at a time, FIFO), then on a gateway-wide command lane
    with a concurrency limit, also FIFO. A run holds its session lane while it waits for a
    slot of its pool. ``sessions_send`` runs, ping-pong steps and announce steps all run on
    the ``nested`` lane, so in the simulator (which models A2A runs only) every job queues
    on ``nested``; the other limits are kept so that a configuration states the whole
    policy (channel runs use ``main``, ``agents.defaults.maxConcurrent``; spawned
    sub-agent runs ``subagent``; cron jobs ``cron``).

    Attributes
    ----------
    nested, main, subagent, cron
        The concurrency limit of each lane (the spec's defaults: 8, 4, 8, 1).

    Examples
    --------
    >>> LanePools().nested, LanePools(nested=2).main
    (8, 4)
    """

    model_config = _CONFIG

    nested: PositiveInt = 8
    main: PositiveInt = 4
    subagent: PositiveInt = 8
    cron: PositiveInt = 1


class WaitPolicy(BaseModel):
    """How long the requester waits for the target's run (runtime §2 step 2).

    The wait runs in chunks; a chunk that ends without a reply is not an error and the wait
    goes on, until ``max_wait_s`` in total have passed since the permit (then
    ``no_reply``, reason ``timeout``). A run that completes at the very instant a chunk
    or the whole wait ends counts as completed.
    """

    model_config = _CONFIG

    chunk_s: PositiveFloat = REFERENCE_RETRY.chunk_ms / 1000.0
    max_wait_s: PositiveFloat = REFERENCE_RETRY.max_wait_ms / 1000.0


def _default_endings() -> dict[Ending, float]:
    return {
        "conclusion": 0.12,
        "minimal": 0.05,
        "repetition": 0.03,
        "explicit_skip": 0.05,
        "empty_reply": 0.02,
        "agent_error": 0.01,
    }


class PingPongPolicy(BaseModel):
    """Ping-pong turns after the first reply (runtime §2 step 4, §3).

    Attributes
    ----------
    max_turns
        The configured ``maxPingPongTurns`` (reference ``main``: default and hard maximum
        5; ``0b3325a28``: 30). 0 switches ping-pong off.
    turn_timeout_s
        A turn whose run has not finished after this long ends the loop (``turn_timeout``).
    endings
        Per turn, the chance of each early ending (:data:`ENDINGS`); the reply text drawn
        for it is judged by the reference rules, so e.g. a repetition is only detected when
        there is a previous ping-pong reply to repeat.
    """

    model_config = _CONFIG

    max_turns: int = Field(
        PING_PONG_LIMITS_MAIN.default, ge=0, le=PING_PONG_LIMITS_0B3325A28.maximum
    )
    turn_timeout_s: PositiveFloat = 120.0
    endings: dict[Ending, Probability] = Field(default_factory=_default_endings)

    @field_validator("endings")
    @classmethod
    def _probabilities(cls, value: dict[str, float]) -> dict[str, float]:
        if sum(value.values()) > 1 + 1e-12:
            raise ValueError("the probabilities must add up to at most 1")
        return value


class AnnouncePolicy(BaseModel):
    """The announce step (runtime §2 step 5).

    It runs on the target's session unless the reference skips it: when the announce
    target channel is ``internal`` or both session keys are agent sessions (so only messages
    sent from a channel session are ever announced).

    Attributes
    ----------
    internal_share
        Share of announce targets that are the ``internal`` channel.
    skip_probability
        Chance the announce reply is ``ANNOUNCE_SKIP`` (nothing is posted).
    timeout_s
        The announce step's timeout (the reference: 30 s on the asynchronous path).
    """

    model_config = _CONFIG

    internal_share: float = Field(0.1, ge=0, le=1)
    skip_probability: float = Field(0.12, ge=0, le=1)
    timeout_s: PositiveFloat = 30.0


class TaskPolicy(BaseModel):
    """Task contexts: which messages carry a ``taskId`` and ``workSessionId`` (runtime §6).

    Each agent of ``agents`` works through tasks one after another: a task lasts a lognormal
    time, then the agent is idle for an exponential gap. A ``task.started`` event creates
    the task's work session (``ws_<uuid>``); every message the agent sends during the task
    carries its ids (``sessions_send`` never creates one); ``task.completed`` ends it.
    """

    model_config = _CONFIG

    mean_duration_s: PositiveFloat = 3600.0
    duration_cv: PositiveFloat = 1.0
    mean_gap_s: PositiveFloat = 900.0
    agents: Literal["main", "all"] = "main"


# ----------------------------------------------------------------------------------------
# the whole configuration
# ----------------------------------------------------------------------------------------


class SimConfig(BaseModel):
    """A complete simulator configuration; ``SimConfig()`` is today's deployment.

    Attributes
    ----------
    agents
        The agents (default: five main agents, two sub-agents).
    workload
        Arrivals: :class:`PoissonArrivals` or :class:`TraceArrivals`.
    n_messages, duration_s
        Stop generating arrivals after this many messages / seconds (None: no limit; at
        least one is needed for Poisson arrivals). Every started exchange runs to its end.
    mix
        Message intents and payloads.
    channel_share
        Share of a main agent's messages sent from one of its Discord channel sessions
        instead of its main session (such exchanges can be announced).
    channels
        The channel ids of those sessions.
    gate, wait, ping_pong, announce, tasks
        The policies (None: off).
    failures, retry, loop_guard, collaborate_limit, rate_limit, idempotency, sync, relays
        The policies of :mod:`~a2a_lab.sim.policies` (None: off): injected failures, the
        retry policy (default: the reference's), the loop guard and the collaborate limit,
        Discord's rate limits, idempotency keys (default: on), the synchronous path and
        relay depths.
    queue_capacity
        The most runs a session holds, queued or running (None: unlimited); an arrival that
        finds it full is refused as ``concurrency_blocked``.
    topology
        How runs queue (runtime §1). ``"lanes"`` (default: the reference gateway today):
        a cross-agent send runs on the conversation-scoped session
        ``agent:<target>:a2a:<conversationId>``; every run queues on its session lane, then
        for a slot of the gateway-wide ``nested`` lane (:attr:`lanes`); one conversation id
        serves a work session and an UNORDERED pair in both directions (a requester without
        a task of its own sends in its peer's work session). ``"agent_main"`` (older
        gateways, the design notes' picture): a message queues on the target's main session
        (messages from different senders add up), no gateway-wide limit, and a work session
        is always the requester's own.
    lanes
        The lane pools' limits (used by the ``"lanes"`` topology).
    target_session
        Deprecated, use :attr:`topology`. None (default): the topology's own (``"a2a"``
        under ``"lanes"``, ``"main"`` under ``"agent_main"``). A configuration that sets it
        without a ``topology`` gets ``topology="agent_main"``, so it runs as before
        (``"a2a"`` there: per-conversation sessions without lane pools, commit
        ``0b3325a28``).
    start
        Wall-clock time of simulated time 0 (time-zone aware).
    budget
        How large the run may get (:class:`RunBudget`): validation refuses a configuration
        whose expected size exceeds it, and the run stops with :class:`BudgetExceeded`
        beyond its steps or wall time. Every number is bounded too (times by
        ``budget.max_sim_s``, cv by :data:`MAX_CV`, ...), so a configuration that validates
        also runs: no overflow, no dimension error, no hang.
    """

    model_config = _CONFIG

    agents: list[AgentConfig] = Field(default_factory=_default_agents)
    workload: Workload = Field(default_factory=_default_workload)
    n_messages: Annotated[PositiveInt | None, _Unlimited] = 2000
    duration_s: Annotated[PositiveFloat | None, _Unlimited] = None
    mix: MessageMix = Field(default_factory=MessageMix)
    channel_share: float = Field(0.25, ge=0, le=1)
    channels: list[Annotated[str, Field(min_length=1, pattern=r"^[^:\s]+$")]] = Field(
        default_factory=lambda: list(DEFAULT_CHANNELS), min_length=1
    )
    gate: Annotated[GatePolicy | None, Off] = Field(default_factory=GatePolicy)
    wait: Annotated[WaitPolicy | None, Off] = Field(default_factory=WaitPolicy)
    ping_pong: PingPongPolicy = Field(default_factory=PingPongPolicy)
    announce: Annotated[AnnouncePolicy | None, Off] = Field(default_factory=AnnouncePolicy)
    tasks: Annotated[TaskPolicy | None, Off] = Field(default_factory=TaskPolicy)
    failures: Annotated[FailurePolicy | None, Off] = None
    retry: RetryField = Field(default_factory=ReferenceRetry)
    loop_guard: Annotated[LoopGuardPolicy | None, Off] = None
    collaborate_limit: Annotated[CollaborateLimit | None, Off] = None
    queue_capacity: Annotated[PositiveInt | None, _Unlimited] = None
    rate_limit: Annotated[RateLimitPolicy | None, Off] = None
    idempotency: Annotated[IdempotencyPolicy | None, Off] = Field(default_factory=IdempotencyPolicy)
    sync: Annotated[SyncPath | None, Off] = None
    relays: Annotated[RelayPolicy | None, Off] = None
    topology: Literal["lanes", "agent_main"] = "lanes"
    lanes: LanePools = Field(default_factory=LanePools)
    target_session: Literal["main", "a2a"] | None = None
    start: Annotated[AwareDatetime, BeforeValidator(iso_datetime)] = DEFAULT_START
    budget: RunBudget = Field(default_factory=RunBudget)

    @model_validator(mode="after")
    def _runnable(self) -> Self:
        """Bound every number and the expected size of the run by :attr:`budget`."""
        check_runnable(self)
        return self

    @model_validator(mode="before")
    @classmethod
    def _legacy_target_session(cls, data: Any) -> Any:
        # the deprecation path: a configuration written before `topology` existed names
        # only `target_session`; it meant the per-agent model, so it keeps running as it did
        if (
            isinstance(data, dict)
            and data.get("target_session") is not None
            and "topology" not in data
        ):
            return {**data, "topology": "agent_main"}
        return data

    @property
    def target_session_kind(self) -> Literal["main", "a2a"]:
        """Where a cross-agent send runs: the target's ``main`` session or an ``a2a`` one."""
        if self.target_session is not None:
            return self.target_session
        return "a2a" if self.topology == "lanes" else "main"

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        ids = [a.id for a in self.agents]
        duplicates = sorted({a for a in ids if ids.count(a) > 1})
        if duplicates:
            raise ValueError(f"agents: duplicate id(s) {', '.join(duplicates)}")
        known = set(ids)
        wl = self.workload
        if isinstance(wl, PoissonArrivals):
            if self.n_messages is None and self.duration_s is None:
                raise ValueError("Poisson arrivals need `n_messages` or `duration_s`")
            names = [
                (f"workload.pairs.{i}.{side}", getattr(p, f"{side}_agent"))
                for i, p in enumerate(wl.pairs)
                for side in ("from", "to")
            ]
            names += [(f"workload.agents.{i}.agent", r.agent) for i, r in enumerate(wl.agents)]
            names += [
                (f"workload.agents.{i}.targets.{t}", t)
                for i, r in enumerate(wl.agents)
                for t in (r.targets or {})
            ]
            for where, agent in names:
                if agent not in known:
                    raise ValueError(f"{where}: unknown agent {agent!r}")
            for i, r in enumerate(wl.agents):
                if r.targets is None and len(ids) < 2:
                    raise ValueError(f"workload.agents.{i}.targets: no other agent to send to")
        elif wl.sends is not None:
            known |= {a for send in wl.sends for a in (send.from_agent, send.to_agent)}
        # a trace read from a file names its agents only when it is read: they are checked then
        if not (isinstance(wl, TraceArrivals) and wl.path is not None):
            for agent in self.failures.agents if self.failures is not None else ():
                if agent not in known:
                    raise ValueError(f"failures.agents.{agent}: unknown agent {agent!r}")
        if self.loop_guard is not None:
            for a, b in self.loop_guard.pairs():
                for agent in (a, b):
                    if agent not in known:
                        raise ValueError(f"loop_guard.overrides.{a}::{b}: unknown agent {agent!r}")
        return self

    # -- loading -------------------------------------------------------------------------

    @classmethod
    def from_json(cls, text: str | bytes) -> SimConfig:
        """Validate a JSON document."""
        return cls.model_validate_json(text)

    @classmethod
    def from_toml(cls, text: str) -> SimConfig:
        """Validate a TOML document (``false`` switches a policy off)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"invalid TOML: {exc}") from exc
        return cls.model_validate(data)

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> SimConfig:
        """Load a ``.json`` or ``.toml`` file.

        Raises
        ------
        ValueError
            On an unknown suffix, invalid syntax or an invalid field (pydantic's
            :class:`~pydantic.ValidationError` names the field by its path).
        """
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        if p.suffix.lower() == ".json":
            return cls.from_json(text)
        if p.suffix.lower() == ".toml":
            return cls.from_toml(text)
        raise ValueError(f"{p}: a configuration file must end in .json or .toml")

    def to_json(self) -> str:
        """The configuration as JSON (:meth:`from_json` reads it back to an equal config)."""
        return json.dumps(self.model_dump(mode="json", by_alias=True), ensure_ascii=False, indent=2)

    def agent(self, agent_id: str) -> AgentConfig:
        """The agent ``agent_id`` (an unlisted one gets the :class:`AgentConfig` defaults)."""
        for a in self.agents:
            if a.id == agent_id:
                return a
        return AgentConfig(id=agent_id)

    @property
    def total_rate_per_s(self) -> float:
        """The total arrival rate of Poisson arrivals (NaN for a trace)."""
        if isinstance(self.workload, PoissonArrivals):
            return math.fsum(
                [p.rate_per_s for p in self.workload.pairs]
                + [r.rate_per_s for r in self.workload.agents]
            )
        return math.nan
