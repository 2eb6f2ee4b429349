"""Maximum-likelihood fits of service-time distributions to right-censored times."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
from scipy import optimize, special, stats

from a2a_lab.sim.distributions import Exponential, Gamma, Lognormal, ServiceTime

__all__ = [
    "FAMILIES",
    "Family",
    "FitFamily",
    "Frozen",
    "TimeData",
    "TimeFit",
    "fit_best",
    "fit_family",
    "fit_service_time",
    "frozen",
    "with_intervals",
]

Family = Literal["lognormal", "gamma", "exponential"]
#: A family, or ``auto``: per agent, the family of least AIC (:func:`fit_best`).
FitFamily = Literal["auto", "lognormal", "gamma", "exponential"]
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


#: The families the simulator can run (:mod:`a2a_lab.sim.distributions`), with their
#: parameter counts: the candidates of a per-agent choice by AIC.
FAMILIES: Final[dict[str, int]] = {"exponential": 1, "gamma": 2, "lognormal": 2}
#: The two-sided level of every reported interval.
LEVEL: Final = 0.95


@dataclass(frozen=True)
class TimeData:
    """Everything the log says about one agent's run times (seconds), for a likelihood.

    ``observed``: times seen to the end; ``censored``: lower bounds (still running when
    observation stopped); ``replied`` / ``replied_w``: per run with an unknown start, its
    time for each draw of the start (``<= 0``: impossible) and the draws' weights;
    ``waited`` / ``waited_w``: the same for runs with no reply within the wait limit (time
    from each draw of the start to the end of the wait).
    """

    observed: np.ndarray
    censored: np.ndarray = field(default_factory=lambda: np.empty(0))
    replied: np.ndarray = field(default_factory=lambda: np.empty((0, 1)))
    replied_w: np.ndarray = field(default_factory=lambda: np.empty((0, 1)))
    waited: np.ndarray = field(default_factory=lambda: np.empty((0, 1)))
    waited_w: np.ndarray = field(default_factory=lambda: np.empty((0, 1)))

    @property
    def rows(self) -> int:
        """The runs in the likelihood."""
        return int(self.observed.size + self.censored.size + len(self.replied) + len(self.waited))


@dataclass(frozen=True)
class TimeFit:
    """A maximum-likelihood fit of one family, with profile-likelihood intervals.

    ``mean_ci`` and ``cv_ci`` are 95 % profile-likelihood intervals (Wilks: the parameter
    values whose profile log-likelihood lies within ``chi2(1).ppf(0.95) / 2`` of the
    maximum); an exponential's ``cv`` is 1 by definition (interval ``(1, 1)``).
    """

    dist: ServiceTime
    family: str
    nll: float
    rows: int
    mean_ci: tuple[float, float]
    cv_ci: tuple[float, float]

    @property
    def aic(self) -> float:
        """Akaike's information criterion, ``2 k + 2 nll``."""
        return 2.0 * FAMILIES[self.family] + 2.0 * self.nll


def _frozen_of(family: str, log_mean: float, log_cv: float) -> Frozen:
    """The scipy distribution of a family at (log mean, log cv)."""
    mean = math.exp(log_mean)
    if family == "lognormal":
        sigma2 = math.log1p(math.exp(2.0 * log_cv))
        return stats.lognorm(math.sqrt(sigma2), scale=mean * math.exp(-sigma2 / 2.0))
    if family == "gamma":
        cv2 = math.exp(2.0 * log_cv)
        return stats.gamma(1.0 / cv2, scale=mean * cv2)
    return stats.expon(scale=mean)


def _service(family: str, log_mean: float, log_cv: float) -> ServiceTime:
    mean = math.exp(log_mean)
    if family == "lognormal":
        return Lognormal(mean_s=mean, cv=math.exp(log_cv))
    if family == "gamma":
        return Gamma(mean_s=mean, cv=math.exp(log_cv))
    return Exponential(mean_s=mean)


def _params(family: str, log_mean: float, log_cv: float) -> tuple[float, float]:
    """(mu, sigma) of a lognormal, (shape, scale) of a gamma, (mean, 0) of an exponential."""
    if family == "lognormal":
        sigma2 = math.log1p(math.exp(2.0 * log_cv))
        return log_mean - sigma2 / 2.0, math.sqrt(sigma2)
    if family == "gamma":
        cv2 = math.exp(2.0 * log_cv)
        return 1.0 / cv2, math.exp(log_mean) * cv2
    return math.exp(log_mean), 0.0


def _logpdf(family: str, p: tuple[float, float], t: np.ndarray) -> np.ndarray:
    """The log density at ``t > 0``: :mod:`scipy.special` directly, since a frozen
    :mod:`scipy.stats` distribution costs ~0.1 ms to build and the profiles evaluate
    thousands (the doctest of :func:`negative_log_likelihood` holds it to scipy.stats)."""
    if family == "lognormal":
        lt = np.log(t)
        z = (lt - p[0]) / p[1]
        out: np.ndarray = -0.5 * z * z - lt - math.log(p[1]) - 0.5 * math.log(2.0 * math.pi)
        return out
    if family == "gamma":
        y = t / p[1]
        out = (p[0] - 1.0) * np.log(y) - y - float(special.gammaln(p[0])) - math.log(p[1])
        return out
    return -t / p[0] - math.log(p[0])


def _logsf(family: str, p: tuple[float, float], t: np.ndarray) -> np.ndarray:
    """The log survival at ``t > 0`` (``log_ndtr``, ``gammaincc``: scipy.stats' own)."""
    if family == "lognormal":
        out: np.ndarray = special.log_ndtr(-(np.log(t) - p[0]) / p[1])
        return out
    if family == "gamma":
        with np.errstate(divide="ignore"):
            out = np.log(special.gammaincc(p[0], t / p[1]))
        return out
    return -t / p[0]


def negative_log_likelihood(family: str, data: TimeData, log_mean: float, log_cv: float) -> float:
    """The negative log-likelihood of ``data`` under a family at (log mean, log cv).

    Exact times count by their density, censored ones by their survival, runs with an
    unknown start by the weighted mean over their start draws of the density (replied) or
    the survival (no reply). Infinite where the parameters are impossible.

    Examples
    --------
    >>> x, c = np.array([3.0, 10.0, 25.0]), np.array([30.0])
    >>> d = stats.gamma(1 / 0.7**2, scale=20.0 * 0.7**2)
    >>> want = -(d.logpdf(x).sum() + d.logsf(c).sum())
    >>> got = negative_log_likelihood("gamma", TimeData(x, c), math.log(20.0), math.log(0.7))
    >>> bool(np.isclose(got, want))
    True
    """
    if not (math.isfinite(log_mean) and math.isfinite(log_cv)) or abs(log_cv) > 12.0:
        return math.inf
    if abs(log_mean) > 700.0:
        return math.inf
    p = _params(family, log_mean, log_cv)
    with np.errstate(all="ignore"):
        ll = float(_logpdf(family, p, data.observed).sum() + _logsf(family, p, data.censored).sum())
        if len(data.replied):
            pos = data.replied > 0
            dens = np.where(pos, np.exp(_logpdf(family, p, np.where(pos, data.replied, 1.0))), 0.0)
            mix = (dens * data.replied_w).sum(axis=1) / data.replied_w.sum(axis=1)
            ll += float(np.log(np.maximum(mix, 1e-300)).sum())
        if len(data.waited):
            pos = data.waited > 0
            surv = np.where(pos, np.exp(_logsf(family, p, np.where(pos, data.waited, 1.0))), 1.0)
            mix = (surv * data.waited_w).sum(axis=1) / data.waited_w.sum(axis=1)
            ll += float(np.log(np.maximum(mix, 1e-300)).sum())
    return -ll if math.isfinite(ll) else math.inf


def _start_point(family: str, data: TimeData) -> tuple[float, float]:
    """Moments of the exact and censored times (censored counted as seen): a start."""
    x = np.concatenate([data.observed, data.censored])
    mean = float(x.mean()) if x.size else 1.0
    cv = float(x.std() / mean) if x.size > 1 and mean > 0 and x.std() > 0 else 1.0
    # the exponential's total time over completed runs is its exact MLE without mixtures
    if family == "exponential" and data.observed.size:
        mean = float(x.sum() / data.observed.size)
    return math.log(max(mean, 1e-9)), math.log(min(max(cv, 0.05), 20.0))


def fit_family(family: str, data: TimeData, intervals: bool = True) -> TimeFit:
    """Maximum-likelihood fit of one family to ``data``, with 95 % profile intervals.

    The exponential has one parameter (its mean); gamma and lognormal are fitted in
    (log mean, log cv), so each interval is the profile of the parameter the simulator
    takes. Each interval end is a root (:func:`scipy.optimize.brentq`) of the profile
    deviance less ``chi2(1).ppf(0.95)``; the nuisance parameter is re-maximised at every
    point (:func:`scipy.optimize.minimize_scalar`). No library computes profile intervals
    for censored and mixture likelihoods, so this is written here on scipy's optimisers.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> x = rng.gamma(4.0, 7.5, 400)  # mean 30, cv 0.5
    >>> f = fit_family("gamma", TimeData(observed=x))
    >>> f.mean_ci[0] < 30.0 < f.mean_ci[1], f.cv_ci[0] < 0.5 < f.cv_ci[1]
    (True, True)
    >>> f.aic < fit_family("lognormal", TimeData(observed=x)).aic
    True
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: choose lognormal, gamma or exponential")
    m0, c0 = _start_point(family, data)
    if family == "exponential":

        def prof_mean(m: float) -> float:
            return negative_log_likelihood(family, data, m, 0.0)

        best = optimize.minimize_scalar(prof_mean, bracket=(m0 - 0.5, m0 + 0.5))
        m_hat, c_hat, nll = float(best.x), 0.0, float(best.fun)
    else:

        def both(p: np.ndarray) -> float:
            return negative_log_likelihood(family, data, float(p[0]), float(p[1]))

        best = optimize.minimize(
            both,
            np.array([m0, c0]),
            method="Nelder-Mead",
            options={"xatol": 1e-6, "fatol": 1e-7, "maxiter": 4000},
        )
        m_hat, c_hat, nll = float(best.x[0]), float(best.x[1]), float(best.fun)
    fit = TimeFit(
        _service(family, m_hat, c_hat), family, nll, data.rows, (math.nan,) * 2, (math.nan,) * 2
    )
    return with_intervals(fit, data) if intervals else fit


def with_intervals(fit: TimeFit, data: TimeData) -> TimeFit:
    """``fit`` (a maximum of its family's likelihood on ``data``) with its 95 % profile intervals."""
    if not math.isfinite(fit.nll):
        return fit
    d = fit.dist
    at = (math.log(d.mean), math.log(float(getattr(d, "cv", 1.0))))
    mean_ci = _profile_interval(fit.family, data, fit.nll, 0, at)
    cv_ci = (
        (1.0, 1.0)
        if fit.family == "exponential"
        else _profile_interval(fit.family, data, fit.nll, 1, at)
    )
    return TimeFit(d, fit.family, fit.nll, fit.rows, mean_ci, cv_ci)


def _profile_interval(
    family: str, data: TimeData, nll: float, which: int, at: tuple[float, float]
) -> tuple[float, float]:
    """The 95 % profile-likelihood interval of parameter ``which`` (0: mean, 1: cv)."""
    limit = float(stats.chi2.ppf(LEVEL, 1)) / 2.0
    hat = at[which]
    nuisance = at[1 - which]

    def profile(v: float) -> float:
        if family == "exponential":
            return negative_log_likelihood(family, data, v, 0.0) - nll - limit

        def inner(u: float) -> float:
            pair = (v, u) if which == 0 else (u, v)
            return negative_log_likelihood(family, data, *pair)

        res = optimize.minimize_scalar(
            inner, bracket=(nuisance - 0.1, nuisance + 0.1), options={"xtol": 1e-5}
        )
        return float(min(res.fun, inner(nuisance))) - nll - limit

    # first step: about 1.5 standard errors (log mean: cv / sqrt(n); log cv: 1 / sqrt(2 n))
    rows = max(data.rows, 1)
    first = 1.5 * (math.exp(at[1]) if which == 0 else math.sqrt(0.5)) / math.sqrt(rows)
    ends = []
    for sign in (-1.0, 1.0):
        step, inner_v, outer_v = max(first, 1e-3), hat, hat
        found = False
        for _ in range(40):
            outer_v = hat + sign * step
            if profile(outer_v) > 0:
                found = True
                break
            inner_v, step = outer_v, step * 1.6
        if not found:
            ends.append(math.inf * sign)
            continue
        lo, hi = min(inner_v, outer_v), max(inner_v, outer_v)
        ends.append(optimize.brentq(profile, lo, hi, xtol=1e-5))
    return math.exp(ends[0]), math.exp(ends[1])


def fit_best(
    data: TimeData, families: tuple[str, ...] = tuple(FAMILIES)
) -> tuple[TimeFit, dict[str, float]]:
    """The family of ``families`` with the least AIC, with its intervals; and every AIC.

    Examples
    --------
    >>> rng = np.random.default_rng(5)
    >>> best, aic = fit_best(TimeData(observed=rng.lognormal(3.0, 0.8, 500)))
    >>> best.family, sorted(aic)
    ('lognormal', ['exponential', 'gamma', 'lognormal'])
    """
    fits = {f: fit_family(f, data, intervals=False) for f in families}
    aic = {f: fit.aic for f, fit in fits.items()}
    chosen = min(aic, key=lambda f: (aic[f], FAMILIES[f]))
    return with_intervals(fits[chosen], data), aic


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
    survival (no reply) there (:func:`negative_log_likelihood`).

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
    data = TimeData(
        np.asarray(observed_s, dtype=float),
        np.asarray(censored_s, dtype=float),
        replied_s,
        replied_w,
        waited_s,
        waited_w,
    )
    return fit_family(family, data, intervals=False).dist


def _median(d: ServiceTime) -> float:
    return float(d.ppf(np.array([0.5]))[0])
