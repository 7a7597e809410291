"""Intervals over the repetitions of the estimator studies, and the verdict of a threshold
criterion on such an interval.

A share of repetitions gets a Wilson score interval (scipy's ``binomtest``); a statistic of
whole repetitions (a log-log slope over every size, a ratio of mean errors) gets a
percentile bootstrap that resamples repetitions, each with all its rows, with replacement.
The verdict is three-way (config/README.md#claims): reproduced when the whole interval
satisfies ``measured OP threshold``, contradicted when none of it does, else inconclusive.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from repro.common.verdicts import CONTRADICTED, INCONCLUSIVE, REPRODUCED

_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def wilson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """The two-sided Wilson score interval of a binomial share."""
    from scipy import stats  # here: the config check imports this module before any job

    ci = stats.binomtest(successes, trials).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def bootstrap(
    statistic: Callable[[np.ndarray], np.ndarray],
    repetitions: int,
    *,
    resamples: int,
    seed: int,
    confidence: float,
) -> tuple[float, float, float]:
    """(estimate, low, high): ``statistic(draws)`` maps an int array (B, R) of repetition
    indices (each row one resample of the R repetitions) to B values; the estimate is its
    value on the repetitions as drawn, the interval the percentile interval of the
    resamples (drawn with ``seed``)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, repetitions, size=(resamples, repetitions))
    values = statistic(draws)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    estimate = float(statistic(np.arange(repetitions)[None, :])[0])
    return estimate, float(low), float(high)


def slopes(log_edges: np.ndarray, log_errors: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The OLS slope of log error on log |E| over the drawn repetitions of every size.

    ``log_edges`` and ``log_errors`` are (sizes, R); ``draws`` (B, R) picks repetitions
    (a repetition keeps its row at every size). Returns B slopes."""
    x = log_edges[:, draws].transpose(1, 0, 2).reshape(len(draws), -1)
    y = log_errors[:, draws].transpose(1, 0, 2).reshape(len(draws), -1)
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    return (x * y).sum(axis=1) / (x * x).sum(axis=1)


def verdict(op: str, threshold: float, low: float, high: float) -> str:
    """Reproduced when every value of [low, high] satisfies ``value OP threshold``,
    contradicted when none does, else inconclusive."""
    holds = _OPS[op]
    worse, better = (low, high) if op in (">=", ">") else (high, low)
    if holds(worse, threshold):
        return REPRODUCED
    if not holds(better, threshold):
        return CONTRADICTED
    return INCONCLUSIVE


def distance_interval(low: float, high: float, target: float) -> tuple[float, float]:
    """The range of |s − target| for s in [low, high]."""
    ends = sorted((abs(low - target), abs(high - target)))
    return (0.0 if low <= target <= high else ends[0]), ends[1]
