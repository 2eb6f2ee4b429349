"""Service-time distributions of the simulator, each a pydantic model with a vectorised ``ppf``.

Every distribution is sampled by INVERSION: the model draws one uniform per message (or per
ping-pong turn) from its random stream and maps it through the distribution's quantile
function (:meth:`ppf`, from :mod:`scipy.stats` or :func:`numpy.quantile`). Two runs that
differ only in a distribution therefore still share their uniforms (common random numbers):
a lognormal service and an exponential one of the same mean are as correlated as they can
be, which makes "what if the LLM got slower?" comparisons sharp.

Parameters are in seconds. ``lognormal`` and ``gamma`` are given by their mean and
coefficient of variation (standard deviation / mean), the figures an analyst reads off a
latency histogram.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, Field, PositiveFloat, field_validator
from scipy import stats

from a2a_lab.sim._strict import STRICT

__all__ = ["Deterministic", "Empirical", "Exponential", "Gamma", "Lognormal", "ServiceTime"]

_CONFIG = STRICT


class _Distribution(BaseModel):
    model_config = _CONFIG

    @property
    def mean(self) -> float:
        """The mean (seconds)."""
        raise NotImplementedError

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """The quantile function applied to uniforms ``u`` in ``[0, 1)``."""
        raise NotImplementedError


class Exponential(_Distribution):
    """Exponential service time (the ``M`` of M/M/1).

    Examples
    --------
    >>> Exponential(mean_s=2.0).ppf(np.array([0.0, 1 - math.exp(-1)])).round(12).tolist()
    [0.0, 2.0]
    """

    kind: Literal["exponential"] = "exponential"
    mean_s: PositiveFloat

    @property
    def mean(self) -> float:
        return self.mean_s

    def ppf(self, u: np.ndarray) -> np.ndarray:
        out: np.ndarray = stats.expon.ppf(u, scale=self.mean_s)
        return out


class Deterministic(_Distribution):
    """A constant service time (the ``D`` of M/D/1).

    Examples
    --------
    >>> Deterministic(value_s=60).ppf(np.array([0.1, 0.9])).tolist()
    [60.0, 60.0]
    """

    kind: Literal["deterministic"] = "deterministic"
    value_s: float = Field(ge=0)

    @property
    def mean(self) -> float:
        return self.value_s

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return np.full(np.shape(u), float(self.value_s))


class _MeanCv(_Distribution):
    """A distribution given by its mean and coefficient of variation (standard deviation / mean)."""

    kind: str
    mean_s: PositiveFloat
    cv: PositiveFloat

    @property
    def mean(self) -> float:
        return self.mean_s


class Lognormal(_MeanCv):
    """Lognormal service time given by its mean and coefficient of variation.

    ``sigma² = ln(1 + cv²)`` and ``mu = ln(mean) - sigma² / 2``.

    Examples
    --------
    >>> d = Lognormal(mean_s=1.0, cv=2.0)
    >>> frozen = stats.lognorm(d.sigma, scale=math.exp(d.mu))
    >>> round(float(frozen.mean()), 12), round(float(frozen.std()), 12)
    (1.0, 2.0)
    """

    kind: Literal["lognormal"] = "lognormal"

    @property
    def sigma(self) -> float:
        """Standard deviation of the underlying normal."""
        return math.sqrt(math.log1p(self.cv**2))

    @property
    def mu(self) -> float:
        """Mean of the underlying normal."""
        return math.log(self.mean_s) - self.sigma**2 / 2

    def ppf(self, u: np.ndarray) -> np.ndarray:
        out: np.ndarray = stats.lognorm.ppf(u, self.sigma, scale=math.exp(self.mu))
        return out


class Gamma(_MeanCv):
    """Gamma service time given by its mean and coefficient of variation (shape ``1 / cv²``).

    Examples
    --------
    >>> d = Gamma(mean_s=30.0, cv=0.5)
    >>> d.shape, d.scale
    (4.0, 7.5)
    """

    kind: Literal["gamma"] = "gamma"

    @property
    def shape(self) -> float:
        """The shape parameter ``k``."""
        return 1.0 / self.cv**2

    @property
    def scale(self) -> float:
        """The scale parameter ``theta = mean / k``."""
        return self.mean_s / self.shape

    def ppf(self, u: np.ndarray) -> np.ndarray:
        out: np.ndarray = stats.gamma.ppf(u, self.shape, scale=self.scale)
        return out


class Empirical(_Distribution):
    """The empirical distribution of observed service times (e.g. run times read off a log).

    Its quantile function is the inverse of the empirical CDF
    (:func:`numpy.quantile` with ``method="inverted_cdf"``): every draw is one of the
    observed values, each with its observed frequency.

    Examples
    --------
    >>> Empirical(samples_s=[5.0, 1.0, 3.0]).ppf(np.array([0.0, 0.4, 0.99])).tolist()
    [1.0, 3.0, 5.0]
    """

    kind: Literal["empirical"] = "empirical"
    samples_s: list[float] = Field(min_length=1)

    @field_validator("samples_s")
    @classmethod
    def _non_negative(cls, value: list[float]) -> list[float]:
        if not all(math.isfinite(x) and x >= 0 for x in value):
            raise ValueError("every sample must be a finite number >= 0")
        return value

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples_s))

    def ppf(self, u: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.quantile(
            np.asarray(self.samples_s, dtype=float), u, method="inverted_cdf"
        )
        return out


#: Any service-time distribution; the ``kind`` field selects the model in JSON / TOML.
ServiceTime = Annotated[
    Exponential | Deterministic | Lognormal | Gamma | Empirical, Field(discriminator="kind")
]
