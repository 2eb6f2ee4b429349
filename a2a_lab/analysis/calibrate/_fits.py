"""Maximum-likelihood fits of service-time distributions to right-censored times."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from scipy import optimize, stats

from a2a_lab.sim.distributions import Exponential, Gamma, Lognormal, ServiceTime

__all__ = ["Family", "Frozen", "fit_service_time", "frozen"]

Family = Literal["lognormal", "gamma", "exponential"]
#: A frozen :mod:`scipy.stats` distribution (``cdf``, ``ppf``, ``logpdf``, ``sf``).
Frozen = Any


def fit_service_time(
    observed_s: Sequence[float] | np.ndarray,
    censored_s: Sequence[float] | np.ndarray = (),
    family: Family = "lognormal",
) -> ServiceTime:
    """Maximum-likelihood fit of a service-time distribution to right-censored times.

    Parameters
    ----------
    observed_s
        Times seen to the end (seconds, positive).
    censored_s
        Lower bounds of times that were still running when observation stopped.
    family
        ``lognormal`` and ``gamma`` (location 0, fitted with
        :class:`scipy.stats.CensoredData`) or ``exponential`` (closed form: total time over
        completed runs).

    Returns
    -------
    ServiceTime
        The simulator's distribution (:class:`~a2a_lab.sim.Lognormal` and
        :class:`~a2a_lab.sim.Gamma` by mean and coefficient of variation).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.lognormal(np.log(30.0), 0.8, 4000)
    >>> cut = 60.0  # a wait limit: a fifth of the runs take longer and are censored
    >>> d = fit_service_time(x[x <= cut], np.full(int((x > cut).sum()), cut))
    >>> true_mean = 30.0 * math.exp(0.8**2 / 2)
    >>> abs(d.mean / true_mean - 1) < 0.03, round(d.sigma, 2)
    (True, 0.8)
    >>> biased = fit_service_time(x[x <= cut])  # dropping the censored runs underestimates
    >>> biased.mean < 0.7 * d.mean
    True
    """
    x = np.asarray(observed_s, dtype=float)
    c = np.asarray(censored_s, dtype=float)
    if x.size == 0:
        raise ValueError("a fit needs at least one observed (uncensored) time")
    if (x <= 0).any() or (c <= 0).any() or not (np.isfinite(x).all() and np.isfinite(c).all()):
        raise ValueError("times must be positive and finite")
    if family == "exponential":
        return Exponential(mean_s=float((x.sum() + c.sum()) / x.size))
    data = stats.CensoredData(uncensored=x, right=c)
    if family == "lognormal":
        sigma, _, scale = stats.lognorm.fit(data, floc=0)
        return Lognormal(
            mean_s=float(scale * math.exp(sigma**2 / 2)), cv=float(math.sqrt(math.expm1(sigma**2)))
        )
    if family == "gamma":
        shape, _, scale = stats.gamma.fit(data, floc=0)
        return Gamma(mean_s=float(shape * scale), cv=float(1.0 / math.sqrt(shape)))
    raise ValueError(f"unknown family {family!r}: choose lognormal, gamma or exponential")


def frozen(d: ServiceTime) -> Frozen | None:
    """The :mod:`scipy.stats` distribution of a fitted family (None for any other)."""
    if isinstance(d, Lognormal):
        return stats.lognorm(d.sigma, scale=math.exp(d.mu))
    if isinstance(d, Gamma):
        return stats.gamma(d.shape, scale=d.scale)
    if isinstance(d, Exponential):
        return stats.expon(scale=d.mean)
    return None


def _family_of(family: Family, p: np.ndarray) -> Frozen:
    if family == "lognormal":
        return stats.lognorm(math.exp(p[1]), scale=math.exp(p[0]))
    if family == "gamma":
        return stats.gamma(math.exp(p[0]), scale=math.exp(p[1]))
    return stats.expon(scale=math.exp(p[0]))


def _params_of(d: ServiceTime) -> np.ndarray:
    if isinstance(d, Lognormal):
        return np.array([d.mu, math.log(d.sigma)])
    if isinstance(d, Gamma):
        return np.array([math.log(d.shape), math.log(d.scale)])
    return np.array([math.log(d.mean)])


def _service_of(family: Family, p: np.ndarray) -> ServiceTime:
    if family == "lognormal":
        sigma = math.exp(p[1])
        return Lognormal(mean_s=math.exp(p[0] + sigma**2 / 2), cv=math.sqrt(math.expm1(sigma**2)))
    if family == "gamma":
        shape = math.exp(p[0])
        return Gamma(mean_s=shape * math.exp(p[1]), cv=1.0 / math.sqrt(shape))
    return Exponential(mean_s=math.exp(p[0]))


def fit_with_unknown_starts(
    observed_s: np.ndarray,
    censored_s: np.ndarray,
    replied_s: np.ndarray,
    replied_w: np.ndarray,
    waited_s: np.ndarray,
    waited_w: np.ndarray,
    family: Family = "lognormal",
) -> ServiceTime:
    """Maximum likelihood with runs whose start is known only in distribution.

    Besides exact (``observed_s``) and right-censored (``censored_s``) times, each row of
    ``replied_s`` holds the run's time for each draw of its start (reply - start, seconds;
    ``<= 0``: the draw is impossible) with weights ``replied_w``; each row of ``waited_s``
    the time from each draw of the start to the end of the wait (no reply by then). A row's
    likelihood is the weighted mean over its draws of the density (replied) or the
    survival (no reply) there. Starts from :func:`fit_service_time`.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> s = rng.lognormal(np.log(100.0), 0.55, 2000)
    >>> free = rng.random(2000) < 0.5  # a run found its session free, or waited a while
    >>> start = np.where(free, 0.0, rng.exponential(60.0, 2000))
    >>> draws = np.where(rng.random((2000, 256)) < 0.5, 0.0, rng.exponential(60.0, (2000, 256)))
    >>> y = (start + s)[:, None] - draws  # the reply less each draw of the start
    >>> known = rng.random(2000) < 0.1  # a tenth of the starts are known
    >>> none = np.empty((0, 256))
    >>> d = fit_with_unknown_starts(s[known], [], y[~known], np.ones_like(y[~known]), none, none)
    >>> true_mean = 100.0 * math.exp(0.55**2 / 2)
    >>> abs(d.mean / true_mean - 1) < 0.04
    True
    """
    start = fit_service_time(observed_s, censored_s, family)
    x = np.asarray(observed_s, dtype=float)
    c = np.asarray(censored_s, dtype=float)
    r_pos = replied_s > 0
    r_val = np.where(r_pos, replied_s, 1.0)
    r_sum = replied_w.sum(axis=1)
    w_sum = waited_w.sum(axis=1)
    w_pos = waited_s > 0
    w_val = np.where(w_pos, waited_s, 1.0)

    def nll(p: np.ndarray) -> float:
        d = _family_of(family, p)
        ll = float(d.logpdf(x).sum() + d.logsf(c).sum())
        if r_val.size:
            dens = np.where(r_pos, d.pdf(r_val), 0.0)
            ll += float(np.log(np.maximum((dens * replied_w).sum(axis=1) / r_sum, 1e-300)).sum())
        if w_val.size:
            surv = np.where(w_pos, d.sf(w_val), 1.0)
            ll += float(np.log(np.maximum((surv * waited_w).sum(axis=1) / w_sum, 1e-300)).sum())
        return -ll if math.isfinite(ll) else math.inf

    best = optimize.minimize(nll, _params_of(start), method="Nelder-Mead")
    return _service_of(family, best.x) if best.success else start


def _median(d: ServiceTime) -> float:
    return float(d.ppf(np.array([0.5]))[0])
