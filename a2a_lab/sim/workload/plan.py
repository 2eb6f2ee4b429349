"""Everything random about a simulation, drawn up front per message index: the :class:`Plan`.

Randomness comes from ``numpy.random.SeedSequence(seed)``, split into one independent
stream per PURPOSE (:data:`PURPOSES`): arrival times, routing (who sends to whom, from which
session), service times, the message mix, ping-pong turns, the announce step, task
timelines and identifiers. Each stream is drawn as whole arrays indexed by message (a
ping-pong turn's draws are a column per turn number), before the model runs, so:

- two configurations that differ only in a policy (gate, wait limit, session concurrency,
  ...) see exactly the same messages, service times and replies: their differences are the
  policy's (common random numbers);
- a different arrival RATE rescales the same standard exponential gaps, and a different
  service DISTRIBUTION maps the same uniforms through its quantile function;
- the same seed gives the same plan, hence (the model being deterministic) the same run;
- the k-th message's draws do not depend on how many messages the run has: every array of
  uniforms comes from its own stream (:func:`uniforms`, keyed by purpose and use), drawn
  once in message order, so a run with more messages (a higher rate over the same
  ``duration_s``) extends each stream and leaves the first ones' draws as they were. An
  hourly arrival profile maps the same cumulated exponentials through the inverse of the
  cumulative rate, so message k stays message k under another rate too.

Purposes are only ever appended to :data:`PURPOSES`, so a new purpose never changes the
draws of an existing one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
import polars as pl

from a2a_lab.reference.rules import normalize_agent_id
from a2a_lab.reference.runtime.announce import AnnounceTarget, should_run_announce
from a2a_lab.reference.runtime.intent import (
    IntentResult,
    classify_intent,
    effective_turns,
    payload_intent,
)
from a2a_lab.sim.config import (
    ENDINGS,
    INTENTS,
    PAYLOAD_TYPES,
    AgentConfig,
    PoissonArrivals,
    SimConfig,
)
from a2a_lab.sim.distributions import Exponential, Lognormal, ServiceTime
from a2a_lab.sim.policies.failures import CALL_KINDS, ERROR_KINDS, KIND_INDEX, RUN_KINDS
from a2a_lab.sim.workload import texts as tx
from a2a_lab.sim.workload.arrivals import (
    exponential_gaps,
    poisson_routes,
    profiled_times,
    trace_sends,
)

__all__ = [
    "PURPOSES",
    "SESSION_KINDS",
    "Plan",
    "PolicyPlan",
    "child_seed",
    "draw_plan",
    "draw_policy_plan",
    "policies_active",
    "purpose_seeds",
    "uniforms",
]

#: The random streams, one per purpose (append only); the last three are the policies'
#: (:mod:`~a2a_lab.sim.workload.plan`): injected failures, backoff jitter, relay depths.
PURPOSES: Final = (
    "arrivals",
    "routing",
    "service",
    "mix",
    "turns",
    "announce",
    "tasks",
    "ids",
    "failures",
    "retries",
    "relays",
)

#: Session kinds: ``agent:<id>:main``, ``agent:<id>:subagent:<uuid>``,
#: ``agent:<id>:discord:group:<channel>``, ``agent:<id>:a2a:<conversationId>``.
SESSION_KINDS: Final = ("main", "subagent", "channel", "a2a")

#: All reply texts the model may log, in one table: first replies, ping-pong texts,
#: conclusions, minimal replies, ``REPLY_SKIP``.
REPLY_TEXTS: Final = (*tx.REPLIES, *tx.TURNS, *tx.CONCLUSIONS, *tx.MINIMAL, tx.REPLY_SKIP)
TURN_OFFSET: Final = len(tx.REPLIES)
CONCLUSION_OFFSET: Final = TURN_OFFSET + len(tx.TURNS)
MINIMAL_OFFSET: Final = CONCLUSION_OFFSET + len(tx.CONCLUSIONS)
SKIP_TEXT: Final = len(REPLY_TEXTS) - 1

#: Intent of each payload type's accompanying text (the reference maps the type the same way).
_PAYLOAD_TEXT_INTENT: Final = {
    "task_delegation": "collaboration",
    "status_report": "result_report",
    "question": "question",
    "answer": "notification",
}


def child_seed(root: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Child ``index`` of ``root``, as ``root.spawn`` would make it, without mutating ``root``."""
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, index), pool_size=root.pool_size
    )


def uniforms(seed: np.random.SeedSequence, n: int, *key: int) -> np.ndarray:
    """The first ``n`` uniforms of the stream ``key`` under ``seed``, in message order.

    The stream is the descendant of ``seed`` at spawn path ``key`` and is drawn in one go,
    so value ``k`` depends only on ``seed``, ``key`` and ``k``, never on ``n``: every
    purpose that needs several arrays of uniforms takes one key per array (common random
    numbers that survive a changed message count).

    Examples
    --------
    >>> s = purpose_seeds(3)["mix"]
    >>> bool((uniforms(s, 1000, 2)[:10] == uniforms(s, 10, 2)).all())
    True
    >>> bool((uniforms(s, 10, 1) == uniforms(s, 10, 2)).any())
    False
    """
    for k in key:
        seed = child_seed(seed, k)
    return np.random.default_rng(seed).random(n)


def purpose_seeds(seed: int | np.random.SeedSequence) -> dict[str, np.random.SeedSequence]:
    """The seed sequence of every purpose of :data:`PURPOSES`.

    Parameters
    ----------
    seed
        An integer, or a :class:`numpy.random.SeedSequence` (e.g. one of
        ``SeedSequence(seed).spawn(n)`` for independent replications).

    Examples
    --------
    >>> a, b = purpose_seeds(7), purpose_seeds(7)
    >>> np.random.default_rng(a["service"]).random() == np.random.default_rng(b["service"]).random()
    True
    >>> np.random.default_rng(a["service"]).random() == np.random.default_rng(a["arrivals"]).random()
    False
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return {name: child_seed(root, i) for i, name in enumerate(PURPOSES)}


@dataclass(frozen=True, eq=False)
class Plan:
    """The pre-drawn inputs of one run (arrays indexed by message unless said otherwise).

    Attributes
    ----------
    agents, agent_kind, agent_capacity
        Agent ids (configured ones first, then any a trace added), ``main``/``subagent``, and
        their session concurrency.
    interarrival_s, arrival_s
        Gap before each arrival and arrival times (seconds from 0).
    sender, target
        Agent index of requester and target.
    channel
        Channel index of the requester's Discord session, -1 when it sends from its own
        agent session.
    text, payload
        Index of the message text in :attr:`texts`; payload type index in
        :data:`~a2a_lab.sim.config.PAYLOAD_TYPES` or -1.
    intent, effective_turns
        Index in :data:`~a2a_lab.sim.config.INTENTS` of the intent the reference rules give
        the message (payload type, else classifier), and its effective ping-pong turns.
    service_s
        The target's run time for the message.
    first_reply
        Index in :data:`REPLY_TEXTS` of the target's reply.
    turn_service_s, turn_ending, turn_choice
        Shape ``(max_turns, n)``: row ``k`` is turn ``k + 1``'s run time (on the requester for
        odd turns, the target for even ones), its ending (index in
        :data:`~a2a_lab.sim.config.ENDINGS`, -1 = the conversation goes on) and a uniform
        choosing its text.
    announce_runs, announce_service_s, announce_skip
        Whether the reference would run the announce step, its run time, and whether its
        reply is ``ANNOUNCE_SKIP``.
    task, task_agent, task_start_s, task_end_s
        The work session the message is sent in (index into the task arrays, -1 = none):
        the sender's running task; under the ``lanes`` topology a sender without one sends
        in its target's running task (the message context it answers carries the peer's
        work session, runtime §6); and the task timelines.
    conversation
        Message index of the first message of the message's conversation (runtime §6: same
        work session and agent pair), the message's own index without a work session.
    session_agent, session_kind, session_ref, session_capacity
        The sessions (per session): agent, :data:`SESSION_KINDS` index, channel index or
        conversation (message index) of ``channel``/``a2a`` sessions (-1 otherwise), servers.
    requester_session, target_session
        Session index of each message's requester and target.
    ids_seed
        Seed of the identifiers (uuids) drawn when the log is rendered.
    """

    agents: tuple[str, ...]
    agent_kind: tuple[str, ...]
    agent_capacity: np.ndarray
    texts: tuple[str, ...]
    interarrival_s: np.ndarray
    arrival_s: np.ndarray
    sender: np.ndarray
    target: np.ndarray
    channel: np.ndarray
    text: np.ndarray
    payload: np.ndarray
    intent: np.ndarray
    effective_turns: np.ndarray
    service_s: np.ndarray
    first_reply: np.ndarray
    turn_service_s: np.ndarray
    turn_ending: np.ndarray
    turn_choice: np.ndarray
    announce_runs: np.ndarray
    announce_service_s: np.ndarray
    announce_skip: np.ndarray
    task: np.ndarray
    task_agent: np.ndarray
    task_start_s: np.ndarray
    task_end_s: np.ndarray
    conversation: np.ndarray
    session_agent: np.ndarray
    session_kind: np.ndarray
    session_ref: np.ndarray
    session_capacity: np.ndarray
    requester_session: np.ndarray
    target_session: np.ndarray
    ids_seed: np.random.SeedSequence

    @property
    def n(self) -> int:
        """Number of messages."""
        return int(self.arrival_s.shape[0])


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------


def _choice(u: np.ndarray, weights: list[float]) -> np.ndarray:
    """Categorical draws by inversion: the bin of ``u`` in the cumulative weights."""
    cum = np.cumsum(np.asarray(weights, dtype=float))
    return np.minimum(np.searchsorted(cum / cum[-1], u, side="right"), len(weights) - 1).astype(
        np.int32
    )


def _dense_codes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of non-negative integer keys, sorted, and each key's index among them.

    ``numpy.unique`` sorts; the keys here mostly span a small range, where a lookup table
    built with ``bincount`` does the same in linear time.
    """
    if key.size and int(key.max()) < 4 * key.size + 4096:
        present = np.bincount(key) > 0
        values = np.flatnonzero(present)
        lookup = np.cumsum(present) - 1
        return values, lookup[key]
    values, inverse = np.unique(key, return_inverse=True)
    return values, inverse.ravel()


def _by_agent(values: np.ndarray, agent: np.ndarray, dists: list[ServiceTime]) -> np.ndarray:
    """Map uniforms ``values`` through the distribution of each row's agent."""
    out = np.empty(values.shape, dtype=float)
    for a, dist in enumerate(dists):
        rows = agent == a
        if rows.any():
            out[rows] = dist.ppf(values[rows])
    return out


@cache
def _classified(text: str) -> IntentResult:
    return classify_intent(text)


def _intents(
    config: SimConfig, texts: tuple[str, ...], text: np.ndarray, payload: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Intent index and effective turns of every message, by the reference rules.

    Applied once per distinct (text, payload type) and gathered, so a million messages cost
    a few dozen rule evaluations.
    """
    mix = config.mix
    width = len(PAYLOAD_TYPES) + 1
    combos, inverse = _dense_codes(text.astype(np.int64) * width + payload + 1)
    intent = np.empty(combos.shape[0], dtype=np.int8)
    turns = np.empty(combos.shape[0], dtype=np.int32)
    for k, combo in enumerate(combos.tolist()):
        t, p = divmod(combo, width)
        p -= 1
        result = (
            payload_intent(
                PAYLOAD_TYPES[p], reference_caller=mix.payload_turns == "reference_caller"
            )
            if p >= 0
            else None
        )
        if result is None:  # no payload (every payload type maps to an intent)
            result = _classified(texts[t])
        if mix.suggested_turns is not None and result.intent in mix.suggested_turns:
            result = IntentResult(
                result.intent, mix.suggested_turns[result.intent], result.confidence
            )
        intent[k] = INTENTS.index(result.intent)
        turns[k] = effective_turns(config.ping_pong.max_turns, result)
    return intent[inverse], turns[inverse]


def _tasks(
    config: SimConfig, seed: np.random.SeedSequence, kinds: tuple[str, ...], horizon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Task timelines: (agent, start, end) per task, agents in order, each agent its own stream."""
    policy = config.tasks
    if policy is None:
        empty = np.empty(0)
        return empty.astype(np.int32), empty, empty
    duration = Lognormal(mean_s=policy.mean_duration_s, cv=policy.duration_cv)
    gap = Exponential(mean_s=policy.mean_gap_s)
    agent_rows, starts, ends = [], [], []
    for a, kind in enumerate(kinds):
        if policy.agents == "main" and kind != "main":
            continue
        rng = np.random.default_rng(child_seed(seed, a))
        t = 0.0
        while t <= horizon:
            u = rng.random((64, 2))
            gaps, lengths = gap.ppf(u[:, 0]), duration.ppf(u[:, 1])
            begin = t + np.cumsum(gaps + lengths) - lengths
            end = begin + lengths
            keep = begin <= horizon
            agent_rows.append(np.full(int(keep.sum()), a, dtype=np.int32))
            starts.append(begin[keep])
            ends.append(end[keep])
            t = float(end[-1])
    if not starts:
        empty = np.empty(0)
        return empty.astype(np.int32), empty, empty
    return np.concatenate(agent_rows), np.concatenate(starts), np.concatenate(ends)


def _task_of(
    sender: np.ndarray,
    arrival: np.ndarray,
    task_agent: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> np.ndarray:
    """The sender's running task at each arrival (-1 = none)."""
    task = np.full(sender.shape, -1, dtype=np.int64)
    for a in np.unique(task_agent):
        rows = np.flatnonzero(task_agent == a)
        mine = np.flatnonzero(sender == a)
        j = np.searchsorted(start[rows], arrival[mine], side="right") - 1
        ok = (j >= 0) & (arrival[mine] < end[rows][np.maximum(j, 0)])
        task[mine[ok]] = rows[j[ok]]
    return task


# ----------------------------------------------------------------------------------------
# the plan
# ----------------------------------------------------------------------------------------


def draw_plan(config: SimConfig, seed: int | np.random.SeedSequence = 0) -> Plan:
    """Draw every random input of a run.

    Parameters
    ----------
    config
        The configuration.
    seed
        An integer or a :class:`numpy.random.SeedSequence`.

    Returns
    -------
    Plan
        The arrays the model runs on.

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> plan = draw_plan(mm1(0.8, 1.0, n_messages=1000), seed=1)
    >>> plan.n, plan.agents, float(plan.arrival_s[0]) == float(plan.interarrival_s[0])
    (1000, ('client', 'server'), True)
    >>> slower = draw_plan(mm1(0.4, 1.0, n_messages=1000), seed=1)  # same gaps, rescaled
    >>> bool(np.allclose(slower.interarrival_s, 2 * plan.interarrival_s))
    True
    """
    seeds = purpose_seeds(seed)
    agents, interarrival, arrival, sender, target, trace_texts = _arrivals(config, seeds)
    n = arrival.shape[0]
    agent_cfg = [config.agent(a) for a in agents]
    target_kind = config.target_session_kind
    kinds = tuple(a.kind for a in agent_cfg)
    agent_main = np.array([k == "main" for k in kinds], dtype=bool)

    via_channel, channel = _channels(config, seeds["routing"], agent_main[sender])

    texts, text, payload, intent, turns, first_reply = _message_mix(
        config, seeds["mix"], n, trace_texts
    )
    service = _by_agent(uniforms(seeds["service"], n), target, [a.service for a in agent_cfg])
    turn_service, turn_ending, turn_choice = _turn_draws(
        config, seeds["turns"], sender, target, agent_cfg
    )

    task, task_agent, task_start, task_end = _message_tasks(
        config, seeds["tasks"], kinds, sender, target, arrival
    )
    conversation = _conversations(agents, sender, target, task)

    a2a = (sender != target) if target_kind == "a2a" else np.zeros(n, dtype=bool)
    if config.topology == "lanes":
        # a send to a spawned sub-agent addresses its sub-agent session (a delegation, its
        # events' role delegation.subagent); only agent-to-agent sends get a conversation lane
        a2a &= agent_main[target]
    (
        req_kind,
        tgt_kind,
        (sessions_agent, sessions_kind, sessions_ref, requester_session, target_session),
    ) = _routed_sessions(agent_main, sender, target, via_channel, channel, a2a, conversation)
    runs, skip, announce_service = _announce_draws(
        config, seeds["announce"], req_kind, tgt_kind, target, agent_cfg
    )

    return Plan(
        agents=tuple(agents),
        agent_kind=kinds,
        agent_capacity=np.array([a.session_concurrency for a in agent_cfg], dtype=np.int32),
        texts=tuple(texts),
        interarrival_s=interarrival,
        arrival_s=arrival,
        sender=sender.astype(np.int32),
        target=target.astype(np.int32),
        channel=channel.astype(np.int32),
        text=text,
        payload=payload,
        intent=intent,
        effective_turns=turns,
        service_s=service,
        first_reply=first_reply,
        turn_service_s=turn_service,
        turn_ending=turn_ending,
        turn_choice=turn_choice,
        announce_runs=runs,
        announce_service_s=announce_service,
        announce_skip=skip,
        task=task,
        task_agent=task_agent,
        task_start_s=task_start,
        task_end_s=task_end,
        conversation=conversation,
        session_agent=sessions_agent,
        session_kind=sessions_kind,
        session_ref=sessions_ref,
        session_capacity=np.array(
            [agent_cfg[a].session_concurrency for a in sessions_agent], dtype=np.int32
        ),
        requester_session=requester_session,
        target_session=target_session,
        ids_seed=seeds["ids"],
    )


def _channels(
    config: SimConfig, seed: np.random.SeedSequence, main_sender: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which messages a main agent sends from one of its Discord channel sessions, and which channel (-1: none)."""
    n = main_sender.shape[0]
    u_session, u_channel = uniforms(seed, n, 1), uniforms(seed, n, 2)
    via_channel = main_sender & (u_session < config.channel_share)
    channels = len(config.channels)
    channel = np.where(
        via_channel, np.minimum((u_channel * channels).astype(np.int32), channels - 1), -1
    )
    return via_channel, channel


def _message_tasks(
    config: SimConfig,
    seed: np.random.SeedSequence,
    kinds: tuple[str, ...],
    sender: np.ndarray,
    target: np.ndarray,
    arrival: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The task of each message (-1: none) and the tasks' agents, starts and ends."""
    horizon = float(arrival[-1]) if arrival.shape[0] else 0.0
    task_agent, task_start, task_end = _tasks(config, seed, kinds, horizon)
    task = _task_of(sender, arrival, task_agent, task_start, task_end)
    if config.topology == "lanes":
        # one conversation per work session and UNORDERED pair, in both directions: a
        # requester that is not in a task of its own continues its peer's work session
        task = np.where(
            task >= 0, task, _task_of(target, arrival, task_agent, task_start, task_end)
        )
    return task, task_agent, task_start, task_end


def _routed_sessions(
    agent_main: np.ndarray,
    sender: np.ndarray,
    target: np.ndarray,
    via_channel: np.ndarray,
    channel: np.ndarray,
    a2a: np.ndarray,
    conversation: np.ndarray,
) -> tuple[
    np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
]:
    """Requester and target session kinds and the sessions (:func:`_sessions`) of the messages.

    A message sent ``via_channel`` comes from its Discord ``channel``'s session (kind 2), one
    sent to an ``a2a`` session goes to its ``conversation``'s lane (kind 3).
    """
    main_kind = np.where(agent_main, 0, 1)
    req_kind = np.where(via_channel, 2, main_kind[sender])
    tgt_kind = np.where(a2a, 3, main_kind[target])
    sessions = _sessions(
        main_kind,
        sender,
        target,
        req_kind,
        tgt_kind,
        np.where(via_channel, channel, -1),
        np.where(a2a, conversation, -1),
    )
    return req_kind, tgt_kind, sessions


def _arrivals(
    config: SimConfig, seeds: dict[str, np.random.SeedSequence]
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str | None] | None]:
    """Agents (a trace may add some), gaps, arrival times, sender, target, recorded texts.

    A Poisson message's directed pair is drawn from the routing stream's first array.
    """
    wl = config.workload
    agents = [a.id for a in config.agents]
    if isinstance(wl, PoissonArrivals):
        arrivals_rng = np.random.default_rng(seeds["arrivals"])
        from_idx, to_idx, rates = poisson_routes(wl, tuple(agents))
        total = float(rates.sum())
        if wl.hourly_profile is None:
            # SimPy adds the gaps one by one, as the sequential cumulative sum does: the
            # simulated arrival times equal `arrival` to the last bit
            interarrival = exponential_gaps(
                arrivals_rng, total, config.n_messages, config.duration_s
            )
            arrival = np.cumsum(interarrival)
        else:
            offset = (
                config.start - config.start.replace(hour=0, minute=0, second=0, microsecond=0)
            ).total_seconds()
            arrival = profiled_times(
                arrivals_rng, total, wl.hourly_profile, offset, config.n_messages, config.duration_s
            )
            interarrival = np.diff(arrival, prepend=0.0)
        route = _choice(uniforms(seeds["routing"], arrival.shape[0], 0), rates.tolist())
        return agents, interarrival, arrival, from_idx[route], to_idx[route], None
    times, senders, targets, texts = trace_sends(wl)
    order = np.argsort(times, kind="stable")
    arrival = times[order] * wl.time_scale
    for a in (*senders, *targets):
        if a not in agents:
            agents.append(a)
    index = {a: i for i, a in enumerate(agents)}
    sender = np.array([index[senders[i]] for i in order], dtype=np.int32)
    target = np.array([index[targets[i]] for i in order], dtype=np.int32)
    keep = np.ones(arrival.shape[0], dtype=bool)
    if config.duration_s is not None:
        keep &= arrival <= config.duration_s
    if config.n_messages is not None:
        keep &= np.arange(arrival.shape[0]) < config.n_messages
    recorded = [texts[i] for i, k in zip(order, keep, strict=True) if k]
    arrival = arrival[keep]
    return agents, np.diff(arrival, prepend=0.0), arrival, sender[keep], target[keep], recorded


def _message_mix(
    config: SimConfig, seed: np.random.SeedSequence, n: int, recorded: list[str | None] | None
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Texts table, and per message: text, payload type, intent, effective turns, first reply.

    A recorded text (trace replay) replaces the drawn text and payload.
    """
    u_intent, u_payload, u_type, u_text, u_reply = (uniforms(seed, n, k) for k in range(5))
    mix = config.mix
    mix_intent = _choice(u_intent, [mix.intents.get(i, 0.0) for i in INTENTS])
    has_payload = u_payload < mix.payload_share
    payload = np.where(
        has_payload, _choice(u_type, [mix.payload_types.get(p, 0.0) for p in PAYLOAD_TYPES]), -1
    )
    # a payload's message says what its type means
    text_intent = mix_intent.copy()
    for p, ptype in enumerate(PAYLOAD_TYPES):
        text_intent[payload == p] = INTENTS.index(_PAYLOAD_TEXT_INTENT[ptype])
    texts: list[str] = []
    bank_offset = np.empty(len(INTENTS), dtype=np.int32)
    bank_size = np.empty(len(INTENTS), dtype=np.int32)
    for k, name in enumerate(INTENTS):
        bank_offset[k], bank_size[k] = len(texts), len(tx.MESSAGES[name])
        texts.extend(tx.MESSAGES[name])
    size = bank_size[text_intent]
    text = bank_offset[text_intent] + np.minimum((u_text * size).astype(np.int32), size - 1)
    if recorded is not None:
        has_text = np.array([m is not None and m.strip() != "" for m in recorded], dtype=bool)
        kept = dict.fromkeys(m for m in recorded if m is not None and m.strip() != "")
        distinct = {m: len(texts) + k for k, m in enumerate(kept)}
        text = np.where(has_text, [0 if m is None else distinct.get(m, 0) for m in recorded], text)
        payload = np.where(has_text, -1, payload)
        texts.extend(distinct)
    text, payload = text.astype(np.int32), payload.astype(np.int32)
    intent, turns = _intents(config, tuple(texts), text, payload)
    first_reply = np.minimum((u_reply * len(tx.REPLIES)).astype(np.int32), len(tx.REPLIES) - 1)
    return texts, text, payload, intent, turns, first_reply


def _turn_draws(
    config: SimConfig,
    seed: np.random.SeedSequence,
    sender: np.ndarray,
    target: np.ndarray,
    agent_cfg: list[AgentConfig],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per turn number (rows) and message: run time, ending (-1 = goes on), text choice.

    Every row and field has its own stream, so neither the configured maximum nor the
    number of messages changes a draw.
    """
    n = sender.shape[0]
    turns = config.ping_pong.max_turns
    service = np.empty((turns, n))
    ending = np.empty((turns, n), dtype=np.int8)
    choice = np.empty((turns, n))
    thresholds = np.cumsum([config.ping_pong.endings.get(e, 0.0) for e in ENDINGS])
    for k in range(turns):
        actor = sender if k % 2 == 0 else target  # odd turns (k even): the requester speaks
        service[k] = _by_agent(uniforms(seed, n, k, 0), actor, [a.turn_time for a in agent_cfg])
        drawn = np.searchsorted(thresholds, uniforms(seed, n, k, 1), side="right")
        ending[k] = np.where(drawn < len(ENDINGS), drawn, -1)
        choice[k] = uniforms(seed, n, k, 2)
    return service, ending, choice


def _conversations(
    agents: list[str], sender: np.ndarray, target: np.ndarray, task: np.ndarray
) -> np.ndarray:
    """Per message, the index of the first message of its conversation (runtime §6).

    The reference caches conversation ids by work session and the sorted pair of lower-cased
    agent ids; without a work session every send gets a new id.
    """
    index = np.arange(sender.shape[0], dtype=np.int64)
    if not (task >= 0).any():
        return index
    _, code = np.unique([normalize_agent_id(a) or a for a in agents], return_inverse=True)
    a_code, b_code = code[sender], code[target]
    pair = np.minimum(a_code, b_code) * len(agents) + np.maximum(a_code, b_code)
    return (
        pl.DataFrame({"task": task, "pair": pair, "i": index})
        .select(
            pl.when(pl.col("task") >= 0)
            .then(pl.col("i").first().over("task", "pair"))
            .otherwise(pl.col("i"))
        )
        .to_series()
        .to_numpy()
    )


def _sessions(
    main_kind: np.ndarray,
    sender: np.ndarray,
    target: np.ndarray,
    req_kind: np.ndarray,
    tgt_kind: np.ndarray,
    req_ref: np.ndarray,
    tgt_ref: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Enumerate the sessions: (agent, kind, ref) per session, requester and target session.

    A session is (kind, agent, ref), ref being the channel or the conversation of channel and
    a2a sessions (-1 otherwise); every agent has its own session even if it never receives.
    """
    n_agents, n = main_kind.shape[0], sender.shape[0]
    kind_all = np.concatenate([main_kind, req_kind, tgt_kind]).astype(np.int64)
    agent_all = np.concatenate([np.arange(n_agents), sender, target]).astype(np.int64)
    ref_all = np.concatenate([np.full(n_agents, -1), req_ref, tgt_ref]).astype(np.int64)
    width = int(ref_all.max()) + 2
    unique_key, session_index = _dense_codes(
        (kind_all * n_agents + agent_all) * width + (ref_all + 1)
    )
    return (
        ((unique_key // width) % n_agents).astype(np.int32),
        (unique_key // width // n_agents).astype(np.int8),
        unique_key % width - 1,
        session_index[n_agents : n_agents + n].astype(np.int32),
        session_index[n_agents + n :].astype(np.int32),
    )


def _announce_draws(
    config: SimConfig,
    seed: np.random.SeedSequence,
    req_kind: np.ndarray,
    tgt_kind: np.ndarray,
    target: np.ndarray,
    agent_cfg: list[AgentConfig],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whether the reference runs the announce step, whether its reply skips, its run time."""
    n = target.shape[0]
    u_internal, u_skip, u_announce = (uniforms(seed, n, k) for k in range(3))
    runs = np.zeros(n, dtype=bool)
    skip = np.zeros(n, dtype=bool)
    if config.announce is not None:
        internal = u_internal < config.announce.internal_share
        skip = u_skip < config.announce.skip_probability
        # the reference decision, once per distinct (requester kind, target kind, channel)
        for rk, tk, inner in itertools.product(
            range(len(SESSION_KINDS)), range(len(SESSION_KINDS)), (False, True)
        ):
            rows = (req_kind == rk) & (tgt_kind == tk) & (internal == inner)
            if rows.any():
                runs[rows] = should_run_announce(
                    AnnounceTarget("internal" if inner else "discord", "channel"),
                    tx.REPLIES[0],
                    _key_shape(SESSION_KINDS[rk]),
                    _key_shape(SESSION_KINDS[tk]),
                )
    return runs, skip, _by_agent(u_announce, target, [a.announce_time for a in agent_cfg])


def _key_shape(kind: str) -> str:
    """A representative session key of a kind (the announce rule only reads its shape)."""
    return {
        "main": "agent:x:main",
        "subagent": "agent:x:subagent:0",
        "channel": "agent:x:discord:group:0",
        "a2a": "agent:x:a2a:0",
    }[kind]


_LLM_TIMEOUT: Final = KIND_INDEX["llm_timeout"]


def policies_active(config: SimConfig) -> bool:
    """Whether a policy that changes the core behaviour is on (the model then draws a :class:`PolicyPlan`).

    The retry policy and idempotency only act on errors and re-sends, so they alone change
    nothing, unless the retry policy has an attempt timeout (which makes errors of slow
    runs).

    Examples
    --------
    >>> from a2a_lab.sim.workload.presets import mm1
    >>> policies_active(mm1(0.8, 1.0, n_messages=10)), policies_active(mm1(0.8, 1.0, n_messages=10).model_copy(update={"queue_capacity": 5}))
    (False, True)
    """
    if config.retry is not None and config.retry.attempt_timeout is not None:
        return True
    return any(
        value is not None
        for value in (
            config.failures,
            config.loop_guard,
            config.collaborate_limit,
            config.queue_capacity,
            config.rate_limit,
            config.sync,
            config.relays,
        )
    )


@dataclass(frozen=True, eq=False)
class PolicyPlan:
    """The pre-drawn inputs of the policies.

    Attributes
    ----------
    run_kind
        Shape ``(K, n)``: the error (index in :data:`~a2a_lab.sim.policies.ERROR_KINDS`)
        run ``k`` of each message ends in, -1 = none; ``K`` is 1 plus the retries of a
        re-sending policy.
    run_service
        Shape ``(K, n)``: how long run ``k`` occupies its session (cut short by a
        run-level error, ``llm_timeout_s`` for an LLM timeout); row 0 is the plan's service
        time, later rows are fresh draws of the target's service time.
    call_kind
        Shape ``(C, n)``: the error ``agent.wait`` call ``c`` fails with (-1 = none).
    jitter
        Shape ``(R, n)``: the uniform of retry ``r``'s backoff.
    depth
        Relay depth per message (None without relays).
    """

    run_kind: np.ndarray
    run_service: np.ndarray
    call_kind: np.ndarray
    jitter: np.ndarray
    depth: np.ndarray | None


def _kinds(
    u: np.ndarray, target: np.ndarray, cumulative: np.ndarray, kinds: tuple[int, ...]
) -> np.ndarray:
    """The error kind of each uniform by its target's cumulative chances (-1: none)."""
    position = (u[:, None] >= cumulative[target]).sum(axis=1)
    table = np.array([*kinds, -1], dtype=np.int8)
    out: np.ndarray = table[position]
    return out


def draw_policy_plan(
    config: SimConfig, plan: Plan, seed: int | np.random.SeedSequence = 0
) -> PolicyPlan:
    """Draw every random input of the policies (the same seed as :func:`~a2a_lab.sim.workload.plan.draw_plan`).

    Examples
    --------
    >>> from a2a_lab.sim import FailurePolicy, draw_plan, presets
    >>> cfg = presets.mm1(0.5, 1.0, n_messages=20_000).model_copy(
    ...     update={"failures": FailurePolicy(rates={"server_overload": 0.3})})
    >>> pp = draw_policy_plan(cfg, draw_plan(cfg, seed=1), seed=1)
    >>> round(float((pp.run_kind[0] >= 0).mean()), 2), pp.run_kind.shape, pp.call_kind.shape
    (0.3, (1, 20000), (4, 20000))
    """
    seeds = purpose_seeds(seed)
    n = plan.n
    policy = config.retry
    retries = policy.retries_allowed if policy is not None else 0
    runs = 1 + (retries if policy is not None and policy.resend else 0)
    wait = config.wait
    calls = math.ceil(wait.max_wait_s / wait.chunk_s) + 1 if wait is not None else 1 + retries
    agents = [config.agent(a) for a in plan.agents]
    run_service = np.empty((runs, n))
    run_service[0] = plan.service_s
    # one stream per run, call and retry (plan.uniforms): the k-th message's draws do not
    # depend on the number of messages
    for k in range(1, runs):
        run_service[k] = _by_agent(
            uniforms(seeds["failures"], n, 2, k), plan.target, [a.service for a in agents]
        )
    run_kind = np.full((runs, n), -1, dtype=np.int8)
    call_kind = np.full((0, n), -1, dtype=np.int8)
    failures = config.failures
    if failures is not None:
        known = set(plan.agents)
        unknown = sorted(set(failures.agents) - known)
        if unknown:
            raise ValueError(f"failures.agents: unknown agent(s) {', '.join(unknown)}")
        tables = [failures.table(a) for a in plan.agents]
        run_cum = np.cumsum(
            [[t.get(ERROR_KINDS[k].name, 0.0) for k in RUN_KINDS] for t in tables], axis=1
        )
        call_cum = np.cumsum(
            [[t.get(ERROR_KINDS[k].name, 0.0) for k in CALL_KINDS] for t in tables], axis=1
        )
        for k in range(runs):
            kind = _kinds(uniforms(seeds["failures"], n, 0, k), plan.target, run_cum, RUN_KINDS)
            when = uniforms(seeds["failures"], n, 1, k)
            run_kind[k] = kind
            run_service[k] = np.where(
                kind == _LLM_TIMEOUT,
                failures.llm_timeout_s,
                np.where(kind >= 0, run_service[k] * when, run_service[k]),
            )
        call_kind = np.stack(
            [
                _kinds(uniforms(seeds["failures"], n, 3, c), plan.target, call_cum, CALL_KINDS)
                for c in range(calls)
            ]
        )
    jitter = (
        np.stack([uniforms(seeds["retries"], n, r) for r in range(retries)])
        if retries
        else np.empty((0, n))
    )
    depth = None
    if config.relays is not None:
        q = config.relays.continue_probability
        u = 1.0 - uniforms(seeds["relays"], n)  # in (0, 1]
        depth = (
            np.floor(np.log(u) / math.log(q)).astype(np.int64)
            if q > 0
            else np.zeros(n, dtype=np.int64)
        )
    return PolicyPlan(
        run_kind=run_kind, run_service=run_service, call_kind=call_kind, jitter=jitter, depth=depth
    )
