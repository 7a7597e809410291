"""Synthetic survival data with known hazards (the official simulation's families).

x ~ U(-1, 1) in one dimension; the family's parameters are cubics in x; event times are
drawn by inverting H(t | x) = E with E ~ Exp(1); censoring is uniform on [0, c] with c
solved so that the expected censoring rate hits the target. The analytic h, H, S are
available for every subject, so estimated curves can be compared with the truth.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import brentq

from repro.qsurv.catalog import SCENARIOS  # noqa: E402  (re-exported)

GOMPERTZ_RATE = 0.05
GOMPERTZ_LOG_SCALE = (-2.0, 0.4, -0.2, 0.1)
LOGLOGISTIC_LOG_ALPHA = (1.2, 0.4, -0.15, 0.08)
LOGLOGISTIC_LOG_BETA = (1.0, 0.3, -0.1, 0.05)
WEIBULL_LOG_SCALE = (1.0, 0.5, 0.0, 0.0)
WEIBULL_SHAPE = 1.5


def _cubic(coefs: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    return sum(c * x**p for p, c in enumerate(coefs))


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Analytic hazard family evaluated at covariates ``x`` (shape (n,)), times broadcast."""

    name: str
    x: np.ndarray

    def _params(self) -> tuple[np.ndarray, np.ndarray]:
        x = self.x[:, None]
        if self.name == "gompertz":
            return np.exp(_cubic(GOMPERTZ_LOG_SCALE, x)), np.full_like(x, GOMPERTZ_RATE)
        if self.name == "loglogistic":
            return np.exp(_cubic(LOGLOGISTIC_LOG_ALPHA, x)), np.exp(_cubic(LOGLOGISTIC_LOG_BETA, x))
        if self.name == "weibull":
            return np.exp(_cubic(WEIBULL_LOG_SCALE, x)), np.full_like(x, WEIBULL_SHAPE)
        raise ValueError(f"unknown scenario {self.name!r}; choose from {SCENARIOS}")

    def hazard(self, t: np.ndarray) -> np.ndarray:
        """h(t | x_i); t has shape (n, m) or broadcasts to it."""
        a, b = self._params()
        if self.name == "gompertz":
            return a * np.exp(b * t)
        if self.name == "loglogistic":
            z = (t / a) ** b
            return (b / a) * (t / a) ** (b - 1) / (1 + z)
        return (b / a) * (t / a) ** (b - 1)

    def cumulative_hazard(self, t: np.ndarray) -> np.ndarray:
        a, b = self._params()
        if self.name == "gompertz":
            return a / b * np.expm1(b * t)
        if self.name == "loglogistic":
            return np.log1p((t / a) ** b)
        return (t / a) ** b

    def survival(self, t: np.ndarray) -> np.ndarray:
        return np.exp(-self.cumulative_hazard(t))

    def inverse_cumulative_hazard(self, e: np.ndarray) -> np.ndarray:
        a, b = (p[:, 0] for p in self._params())
        if self.name == "gompertz":
            return np.log1p(b * e / a) / b
        if self.name == "loglogistic":
            return a * np.expm1(e) ** (1 / b)
        return a * e ** (1 / b)


def uniform_censoring_bound(event_times: np.ndarray, rate: float) -> float:
    """c such that, with C ~ U(0, c), P(C < T) = mean(min(T, c)) / c equals ``rate``."""
    if not 0 < rate < 1:
        raise ValueError(f"censoring rate must lie in (0, 1), got {rate}")

    def gap(c: float) -> float:
        return np.minimum(event_times, c).mean() / c - rate

    return brentq(gap, 1e-9 * event_times.max(), 1e6 * event_times.max())


def sample(name: str, n: int, censoring_rate: float, rng: np.random.Generator):
    """Draw (x, duration, event) and return them with the Scenario holding the truth."""
    x = rng.uniform(-1, 1, size=n)
    scenario = Scenario(name, x)
    event_times = scenario.inverse_cumulative_hazard(rng.exponential(size=n))
    bound = uniform_censoring_bound(event_times, censoring_rate)
    censor_times = rng.uniform(0, bound, size=n)
    duration = np.minimum(event_times, censor_times)
    event = (event_times <= censor_times).astype(np.float64)
    return x, duration, event, scenario
