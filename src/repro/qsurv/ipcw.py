"""The official QSurv evaluation's IPCW metrics, written from their definitions.

They are reported beside pycox's Antolini Ctd and test-KM IBS (:mod:`repro.qsurv.metrics`),
and differ from them on purpose (qsurv.md, section 5):

* G, the censoring survival, is the Kaplan-Meier estimate (lifelines) on the *training*
  data, read right-continuously: G(t) includes the censorings at t.
* C-index: a time-dependent Uno concordance. For each test event i with T_i <= tau,
  compare S(T_i | x_i) with S(T_i | x_j) over every j with T_j > T_i (strictly: a
  censoring tied with T_i is not comparable, where scikit-survival counts it), weight the
  pair by 1/G(T_i)^2 and count prediction ties 1/2. Events whose weight exceeds
  ``max_weight`` are dropped.
* IBS: the plain mean over ``n_points`` equally spaced times in [t_5, tau] of the IPCW
  Brier score S^2 1{T <= s, e = 1}/G(T) + (1 - S)^2 1{T > s}/G(s), with G floored at
  1/max_weight; t_5 is the 5th-percentile test event time.
* Horizon "full": the first time at which the training censoring KM reaches 0.001 (the
  largest training time if it never does).

Predictions enter as ``surv_fn(times) -> S`` of shape (n_subjects, len(times)).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from lifelines import KaplanMeierFitter

SurvivalFunction = Callable[[np.ndarray], np.ndarray]
FULL_HORIZON_G = 1e-3
MAX_WEIGHT = 10.0
IBS_POINTS = 500


def censoring_km(durations, events) -> Callable[[np.ndarray], np.ndarray]:
    """G(t) = P(C > t), the Kaplan-Meier estimate with the roles of event and censoring swapped."""
    fitter = KaplanMeierFitter().fit(np.asarray(durations, float), 1 - np.asarray(events, float))
    return lambda t: fitter.survival_function_at_times(np.asarray(t, float)).to_numpy()


def full_horizon(train_durations, train_events, quantile: float = FULL_HORIZON_G) -> float:
    """The first training time at which G falls to ``quantile`` or below."""
    times = np.unique(np.asarray(train_durations, float))
    below = times[censoring_km(train_durations, train_events)(times) <= quantile]
    return float(below[0]) if below.size else float(times[-1])


def step_reader(surv: np.ndarray, grid: np.ndarray) -> SurvivalFunction:
    """Read curves stored on ``grid`` as right-continuous steps (S = 1 before grid[0])."""
    surv, grid = np.asarray(surv, float), np.asarray(grid, float)
    padded = np.concatenate([np.ones((surv.shape[0], 1)), surv], axis=1)
    return lambda t: padded[:, np.searchsorted(grid, np.asarray(t, float), side="right")]


def concordance(
    surv_fn: SurvivalFunction,
    durations,
    events,
    censoring: Callable[[np.ndarray], np.ndarray],
    tau: float,
    max_weight: float | None = MAX_WEIGHT,
) -> float:
    """Time-dependent IPCW concordance; NaN when no event is usable."""
    durations, events = np.asarray(durations, float), np.asarray(events, float)
    cases = np.flatnonzero((events == 1) & (durations <= tau))
    g = censoring(durations[cases])
    floor = max(1e-8, 1 / np.sqrt(max_weight)) if max_weight else 1e-8
    cases, g = cases[g > floor], g[g > floor]
    if cases.size == 0:
        return float("nan")
    times = durations[cases]
    surv = surv_fn(times)  # (n, cases): every subject at every case's event time
    s_case = surv[cases, np.arange(cases.size)]
    later = durations[:, None] > times[None, :]
    concordant = (s_case[None, :] < surv) + 0.5 * (s_case[None, :] == surv)
    weight = 1.0 / g**2
    denominator = float((later.sum(0) * weight).sum())
    if denominator == 0:
        return float("nan")
    return float(((concordant * later).sum(0) * weight).sum() / denominator)


def brier_mean(
    surv_fn: SurvivalFunction,
    durations,
    events,
    censoring: Callable[[np.ndarray], np.ndarray],
    times: np.ndarray,
    max_weight: float | None = MAX_WEIGHT,
) -> float:
    """Mean IPCW Brier score over ``times`` (the official "integrated" Brier score)."""
    durations, events = np.asarray(durations, float), np.asarray(events, float)
    times = np.asarray(times, float)
    floor = 1.0 / max_weight if max_weight else 1e-8
    s = surv_fn(times)  # (n, m)
    g_subject = np.maximum(censoring(durations), floor)[:, None]
    g_time = np.maximum(censoring(times), floor)[None, :]
    failed = durations[:, None] <= times[None, :]
    brier = s**2 * (failed & (events[:, None] == 1)) / g_subject + (1 - s) ** 2 * ~failed / g_time
    return float(brier.mean())


def brier_times(durations, events, tau: float, n_points: int = IBS_POINTS) -> np.ndarray:
    """``n_points`` equally spaced times from the 5th-percentile event time to tau."""
    durations, events = np.asarray(durations, float), np.asarray(events, float)
    start = 1e-7
    if events.any():
        start = max(float(np.percentile(durations[events == 1], 5)), 1e-7)
        start = start if start < tau else 1e-7
    return np.linspace(start, tau, n_points)


def official_metrics(
    surv_fn: SurvivalFunction, train_durations, train_events, durations, events
) -> dict[str, float]:
    """C-index and IBS at the "full" horizon, G from the training data, weights capped at 10."""
    censoring = censoring_km(train_durations, train_events)
    tau = full_horizon(train_durations, train_events)
    times = brier_times(durations, events, tau)
    return {
        "cindex_ipcw": concordance(surv_fn, durations, events, censoring, tau),
        "ibs_ipcw": brier_mean(surv_fn, durations, events, censoring, times),
        "horizon_ipcw": tau,
    }
