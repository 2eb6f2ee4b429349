"""Ready-made configurations: textbook queues, and the bundled sample's deployment.

Each preset is a :class:`~a2a_lab.sim.config.SimConfig` of the same model every other
experiment runs: one requester (``client``) sends Poisson arrivals to one agent (``server``)
whose main session serves them FIFO with ``c`` servers, and every other policy is off (no
concurrency gate, no wait limit, no ping-pong, no announce step, no tasks, no channel
sessions), so each exchange is exactly one queue visit: wait, service, reply. The
simulated waits can then be held against closed-form results
(:mod:`a2a_lab.sim.experiments.theory`).

:func:`sample_like` is the other end: the deployment of the bundled sample log (fifteen
agents, tasks, failures and retries, a working day), at any traffic level; the benchmark logs
of :func:`a2a_lab.samples.write_log` are simulated from it.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Final

from a2a_lab.sim.config import (
    DEFAULT_START,
    AgentConfig,
    AgentRate,
    GatePolicy,
    PairRate,
    PingPongPolicy,
    PoissonArrivals,
    SimConfig,
    TaskPolicy,
)
from a2a_lab.sim.distributions import Deterministic, Exponential, Lognormal, ServiceTime
from a2a_lab.sim.policies import FailurePolicy

__all__ = [
    "SAMPLE_HOURLY_PROFILE",
    "SAMPLE_MAIN_AGENTS",
    "SAMPLE_WORKER_AGENTS",
    "md1",
    "mg1_lognormal",
    "mm1",
    "mmc",
    "mmc_lanes",
    "sample_like",
    "single_queue",
]


def single_queue(
    arrival_rate: float, service: ServiceTime, servers: int, n_messages: int
) -> SimConfig:
    """A single FIFO queue with Poisson arrivals: the model with every other policy off.

    Parameters
    ----------
    arrival_rate
        Messages per second.
    service
        The service-time distribution of the ``server`` agent.
    servers
        The session's concurrency ``c``.
    n_messages
        Messages to send.

    Examples
    --------
    >>> cfg = single_queue(0.5, Deterministic(value_s=1.0), 2, n_messages=100)
    >>> cfg.gate, cfg.wait, cfg.announce, cfg.tasks, cfg.ping_pong.max_turns, cfg.agents[1].session_concurrency
    (None, None, None, None, 0, 2)
    >>> cfg.topology
    'agent_main'
    """
    return SimConfig(
        agents=[
            AgentConfig(id="client"),
            AgentConfig(id="server", service=service, session_concurrency=servers),
        ],
        workload=PoissonArrivals(
            pairs=[PairRate(from_agent="client", to_agent="server", rate_per_s=arrival_rate)]
        ),
        n_messages=n_messages,
        duration_s=None,
        channel_share=0.0,
        gate=None,
        wait=None,
        ping_pong=PingPongPolicy(max_turns=0),
        announce=None,
        tasks=None,
        # one FIFO on the server's main session: the textbook queue (under the default
        # topology every send would be its own conversation, hence its own session)
        topology="agent_main",
    )


def mm1(arrival_rate: float, service_rate: float, n_messages: int) -> SimConfig:
    """M/M/1: Poisson arrivals, exponential service, one server.

    Examples
    --------
    >>> mm1(0.8, 1.0, n_messages=10).agents[1].service
    Exponential(kind='exponential', mean_s=1.0)
    """
    return single_queue(arrival_rate, Exponential(mean_s=1.0 / service_rate), 1, n_messages)


def mmc(arrival_rate: float, service_rate: float, servers: int, n_messages: int) -> SimConfig:
    """M/M/c: Poisson arrivals, exponential service, ``servers`` servers sharing one FIFO queue.

    Examples
    --------
    >>> mmc(2.4, 1.0, 3, n_messages=10).agents[1].session_concurrency
    3
    """
    return single_queue(arrival_rate, Exponential(mean_s=1.0 / service_rate), servers, n_messages)


def mmc_lanes(arrival_rate: float, service_rate: float, slots: int, n_messages: int) -> SimConfig:
    """M/M/c through the reference's lanes: every send its own conversation, ``slots`` in the pool.

    Under the ``lanes`` topology without work sessions every send gets a new conversation
    id, so its run is alone on its conversation lane and only the gateway-wide ``nested``
    pool makes it wait: a FIFO queue of ``slots`` servers.

    Examples
    --------
    >>> cfg = mmc_lanes(2.4, 1.0, 3, n_messages=10)
    >>> cfg.topology, cfg.lanes.nested, cfg.target_session_kind
    ('lanes', 3, 'a2a')
    """
    cfg = single_queue(arrival_rate, Exponential(mean_s=1.0 / service_rate), 1, n_messages)
    return cfg.model_copy(
        update={"topology": "lanes", "lanes": cfg.lanes.model_copy(update={"nested": slots})}
    )


def md1(arrival_rate: float, service_time: float, n_messages: int) -> SimConfig:
    """M/D/1: Poisson arrivals, constant service time, one server.

    Examples
    --------
    >>> md1(0.8, 1.0, n_messages=10).agents[1].service.mean
    1.0
    """
    return single_queue(arrival_rate, Deterministic(value_s=service_time), 1, n_messages)


def mg1_lognormal(arrival_rate: float, mean: float, cv: float, n_messages: int) -> SimConfig:
    """M/G/1 with lognormal service of the given mean and coefficient of variation.

    Examples
    --------
    >>> mg1_lognormal(0.5, 1.0, 2.0, n_messages=10).agents[1].service
    Lognormal(kind='lognormal', mean_s=1.0, cv=2.0)
    """
    return single_queue(arrival_rate, Lognormal(mean_s=mean, cv=cv), 1, n_messages)


#: The sample deployment's configured (main) agents and the workers they spawn as sub-agents.
SAMPLE_MAIN_AGENTS: Final = ("main", "ruda", "eden", "seum", "bada", "haneul")
SAMPLE_WORKER_AGENTS: Final = (
    "jiwoo",
    "nuri",
    "maru",
    "hana",
    "dana",
    "yoon",
    "sori",
    "gaon",
    "iseul",
)
#: Relative traffic by KST hour of the sample (quiet at night, busiest in the afternoon).
SAMPLE_HOURLY_PROFILE: Final = (
    0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.2, 0.5, 1.2, 2.0, 2.4, 2.3,
    1.6, 2.2, 2.5, 2.5, 2.3, 2.0, 1.5, 1.2, 1.1, 1.0, 0.8, 0.5,
)  # fmt: skip
#: Messages a session of the sample deployment serves per day at a comfortable load; a busier
#: configuration gets more sessions per agent instead of queues that never drain.
_MESSAGES_PER_SESSION_DAY: Final = 1000.0


def sample_like(
    messages_per_day: float = 90.0,
    *,
    n_messages: int | None = None,
    duration_s: float | None = None,
    start: datetime = DEFAULT_START,
) -> SimConfig:
    """The bundled sample's deployment as a simulator configuration, at any traffic level.

    Six configured main agents (``main``, ``ruda``, ``eden``, ``seum``, ``bada``, ``haneul``)
    talk to each other and hand work to nine workers that only run as spawned sub-agent
    sessions; traffic follows the sample's KST day (quiet at night); main agents work through
    tasks (work sessions); some runs fail (rate limits, overloads, lost runs), so the log shows
    retries and no-reply outcomes; every other policy is today's default. What the sample also
    shows but the simulator does not write (the older runtime's wording, malformed lines, odd
    timestamps) is added to the written lines by :mod:`a2a_lab.sim.output.inject`.

    Parameters
    ----------
    messages_per_day
        Average messages sent per day (the sample: about 90). Above what one session serves
        comfortably, every agent gets more concurrent sessions (and its concurrency gate lets
        as many more flows through).
    n_messages, duration_s
        When to stop sending (at least one; default: one day).
    start
        Wall-clock time of simulated time 0.

    Examples
    --------
    >>> cfg = sample_like(n_messages=50)
    >>> len(cfg.agents), sum(a.kind == "subagent" for a in cfg.agents), cfg.tasks is not None
    (15, 9, True)
    >>> round(cfg.total_rate_per_s * 86_400)
    90
    >>> busy = sample_like(20_000, duration_s=3600)
    >>> busy.agents[0].session_concurrency, busy.gate.max_concurrent_flows
    (20, 60)
    >>> cfg.topology
    'agent_main'
    """
    if n_messages is None and duration_s is None:
        duration_s = 86_400.0
    concurrency = max(1, math.ceil(messages_per_day / _MESSAGES_PER_SESSION_DAY))
    worker_service = Lognormal(mean_s=90.0, cv=0.8)
    agents = [AgentConfig(id=a, session_concurrency=concurrency) for a in SAMPLE_MAIN_AGENTS] + [
        AgentConfig(id=a, kind="subagent", service=worker_service, session_concurrency=concurrency)
        for a in SAMPLE_WORKER_AGENTS
    ]
    # Main agents talk to each other twice as often as they delegate to one worker.
    rate = messages_per_day / 86_400.0 / len(SAMPLE_MAIN_AGENTS)
    senders = [
        AgentRate(
            agent=a,
            rate_per_s=rate,
            targets={
                **{b: 2.0 for b in SAMPLE_MAIN_AGENTS if b != a},
                **dict.fromkeys(SAMPLE_WORKER_AGENTS, 1.0),
            },
        )
        for a in SAMPLE_MAIN_AGENTS
    ]
    mean = sum(SAMPLE_HOURLY_PROFILE) / len(SAMPLE_HOURLY_PROFILE)
    return SimConfig(
        agents=agents,
        workload=PoissonArrivals(
            agents=senders, hourly_profile=[h / mean for h in SAMPLE_HOURLY_PROFILE]
        ),
        n_messages=n_messages,
        duration_s=duration_s,
        failures=FailurePolicy(
            rates={
                "rate_limit": 0.02,
                "server_overload": 0.01,
                "run_not_found": 0.01,
                "gateway_connection": 0.005,
            }
        ),
        gate=GatePolicy(max_concurrent_flows=3 * concurrency),
        tasks=TaskPolicy(mean_duration_s=7200.0, mean_gap_s=1800.0),
        start=start,
        # the bundled sample was recorded on an older gateway: its sends target
        # `agent:<id>:main` (no conversation lanes), so its deployment is the per-agent one
        # (and the benchmark logs made from it stay as they were)
        topology="agent_main",
    )
