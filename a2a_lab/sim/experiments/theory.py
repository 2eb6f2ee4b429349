"""Closed-form queueing results the simulator is validated against (and notebooks plot).

All rates are per second, all times in seconds; every function requires a stable queue
(utilisation below 1). Waits are the time in queue before service starts; sojourn is wait
plus service.
"""

from __future__ import annotations

import math

__all__ = [
    "erlang_c",
    "md1_mean_wait",
    "mg1_mean_wait",
    "mm1_mean_wait",
    "mm1_sojourn_quantile",
    "mmc_mean_wait",
]


def _utilisation(arrival_rate: float, service_rate: float, servers: int = 1) -> float:
    rho = arrival_rate / (servers * service_rate)
    if not 0 <= rho < 1:
        raise ValueError(f"the queue is not stable: utilisation {rho:.4g} must be in [0, 1)")
    return rho


def mm1_mean_wait(arrival_rate: float, service_rate: float) -> float:
    """M/M/1 mean wait in queue, ``rho / (mu - lambda)``.

    Examples
    --------
    >>> mm1_mean_wait(0.8, 1.0)
    4.000000000000001
    """
    rho = _utilisation(arrival_rate, service_rate)
    return rho / (service_rate - arrival_rate)


def mm1_sojourn_quantile(arrival_rate: float, service_rate: float, q: float) -> float:
    """M/M/1 sojourn-time quantile: the sojourn is exponential with rate ``mu - lambda``.

    Examples
    --------
    >>> round(mm1_sojourn_quantile(0.8, 1.0, 0.95), 3), round(mm1_sojourn_quantile(0.8, 1.0, 0.99), 3)
    (14.979, 23.026)
    """
    _utilisation(arrival_rate, service_rate)
    return -math.log1p(-q) / (service_rate - arrival_rate)


def erlang_c(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Probability that an arrival waits in M/M/c (Erlang's C formula).

    Examples
    --------
    >>> round(erlang_c(2.4, 1.0, 3), 5)
    0.64719
    """
    rho = _utilisation(arrival_rate, service_rate, servers)
    a = arrival_rate / service_rate
    # sum of a^k / k! for k < c, computed term by term (no factorial overflow)
    term, total = 1.0, 1.0
    for k in range(1, servers):
        term *= a / k
        total += term
    last = term * a / servers / (1 - rho)
    return last / (total + last)


def mmc_mean_wait(arrival_rate: float, service_rate: float, servers: int) -> float:
    """M/M/c mean wait in queue, ``C(c, a) / (c mu - lambda)``.

    Examples
    --------
    >>> round(mmc_mean_wait(2.4, 1.0, 3), 5)
    1.07865
    """
    return erlang_c(arrival_rate, service_rate, servers) / (servers * service_rate - arrival_rate)


def mg1_mean_wait(arrival_rate: float, mean_service: float, service_cv: float) -> float:
    """M/G/1 mean wait in queue (Pollaczek-Khinchine), ``lambda E[S²] / (2 (1 - rho))``.

    Examples
    --------
    >>> mg1_mean_wait(0.5, 1.0, 2.0)  # lognormal or any service with mean 1 and cv 2
    2.5
    """
    rho = _utilisation(arrival_rate, 1.0 / mean_service)
    second_moment = mean_service**2 * (1.0 + service_cv**2)
    return arrival_rate * second_moment / (2.0 * (1.0 - rho))


def md1_mean_wait(arrival_rate: float, service_time: float) -> float:
    """M/D/1 mean wait in queue, ``rho D / (2 (1 - rho))``.

    Examples
    --------
    >>> md1_mean_wait(0.8, 1.0)
    2.0000000000000004
    """
    return mg1_mean_wait(arrival_rate, service_time, 0.0)
