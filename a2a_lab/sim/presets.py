"""Textbook queues as configurations of the full model, for validation against theory.

Each preset is a :class:`~a2a_lab.sim.config.SimConfig` of the same model every other
experiment runs: one requester (``client``) sends Poisson arrivals to one agent (``server``)
whose main session serves them FIFO with ``c`` servers, and every other policy is off (no
concurrency gate, no wait limit, no ping-pong, no announce step, no tasks, no channel
sessions), so each exchange is exactly one queue visit: wait, service, reply. The
simulated waits can then be held against closed-form results
(:mod:`a2a_lab.sim.theory`).
"""

from __future__ import annotations

from a2a_lab.sim.config import AgentConfig, PairRate, PingPongPolicy, PoissonArrivals, SimConfig
from a2a_lab.sim.distributions import Deterministic, Exponential, Lognormal, ServiceTime

__all__ = ["md1", "mg1_lognormal", "mm1", "mmc", "single_queue"]


def single_queue(arrival_rate: float, service: ServiceTime, servers: int, n_messages: int) -> SimConfig:
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
    """
    return SimConfig(
        agents=[AgentConfig(id="client"), AgentConfig(id="server", service=service, session_concurrency=servers)],
        workload=PoissonArrivals(pairs=[PairRate(from_agent="client", to_agent="server", rate_per_s=arrival_rate)]),
        n_messages=n_messages,
        duration_s=None,
        channel_share=0.0,
        gate=None,
        wait=None,
        ping_pong=PingPongPolicy(max_turns=0),
        announce=None,
        tasks=None,
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
