"""Survival metrics for QSurv: a thin wrapper over pycox's ``EvalSurv``.

The numbers come from the library (pycox 0.3.0); this module only fixes the
evaluation grid, validates inputs and converts array layouts. Two deliberate
differences from the paper's own evaluation (qsurv.md, section 5):

* G, the censoring Kaplan-Meier, is fitted on the evaluated data (pycox's
  ``censor_surv='km'``), not on the training split.
* Ctd is pycox's unweighted Antolini concordance; the official code adds IPCW
  weights 1/G(T_i)^2 and a horizon. Prediction ties count 1/2 as in the paper.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.integrate
from pycox.evaluation import EvalSurv


def _install_simps_shim() -> None:
    # pycox 0.3.0 (pycox/evaluation/ipcw.py and admin.py) calls
    # ``scipy.integrate.simps(scores, time_grid)`` at call time, and SciPy 1.14
    # removed ``simps``, so EvalSurv.integrated_brier_score / integrated_nbll
    # raise AttributeError. We add the old name, with its old positional
    # signature, only when SciPy lacks it; ``simpson`` takes x keyword-only.
    if hasattr(scipy.integrate, "simps"):
        return

    def simps(y, x=None, dx=1.0, axis=-1):
        return scipy.integrate.simpson(y, x=x, dx=dx, axis=axis)

    scipy.integrate.simps = simps


_install_simps_shim()


def _as_1d(name: str, values) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _durations_events(durations, events) -> tuple[np.ndarray, np.ndarray]:
    durations = _as_1d("durations", durations)
    events = _as_1d("events", events)
    if durations.shape != events.shape:
        raise ValueError(f"durations {durations.shape} and events {events.shape} differ in shape")
    if not np.isin(events, (0.0, 1.0)).all():
        raise ValueError("events must be 0 (censored) or 1 (event)")
    if not events.any():
        raise ValueError("events has no observed event")
    return durations, events.astype(np.int64)


def _increasing_times(times) -> np.ndarray:
    times = _as_1d("times", times)
    if times.size < 2 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be strictly increasing with at least two points")
    return times


def evaluation_grid(durations, events, n: int = 100) -> np.ndarray:
    """``n`` equally spaced times from the 5th-percentile event time to tau.

    tau is the 90th percentile of all durations (events and censorings). The
    paper's "full" horizon (G(tau) = 0.001) sits in the far tail, where the
    IPCW weights 1/G explode on small test sets; the 90th percentile keeps
    about a tenth of subjects at risk at tau.
    """
    durations, events = _durations_events(durations, events)
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    start = float(np.percentile(durations[events == 1], 5))
    tau = float(np.percentile(durations, 90))
    if not start < tau:
        raise ValueError(f"empty grid: 5th-percentile event time {start} >= tau {tau}")
    return np.linspace(start, tau, n)


def survival_metrics(surv, times, durations, events, *, n_grid: int = 100) -> dict[str, float]:
    """Ctd, IBS and IBLL of predicted curves ``surv[i, k] = S(times[k] | x_i)``.

    Curves are read as right-continuous step functions over ``times``
    (pycox ``steps='post'``) and clipped to [0, 1]. IBS and IBLL are
    integrated (Simpson, by pycox) over ``evaluation_grid(durations, events,
    n_grid)``, which ``times`` must cover. ``ibll`` is pycox's integrated
    *negative* binomial log-likelihood: positive, lower is better, like IBS.
    """
    durations, events = _durations_events(durations, events)
    times = _increasing_times(times)
    surv = np.asarray(surv, dtype=float)
    if surv.shape != (durations.size, times.size):
        raise ValueError(
            f"surv must have shape (n_subjects, n_times) = {(durations.size, times.size)}, "
            f"got {surv.shape}"
        )
    if np.isnan(surv).any():
        raise ValueError("surv contains NaN")
    grid = evaluation_grid(durations, events, n_grid)
    if times[0] > grid[0] or times[-1] < grid[-1]:
        raise ValueError(
            f"times [{times[0]}, {times[-1]}] must cover the grid [{grid[0]}, {grid[-1]}]"
        )
    frame = pd.DataFrame(np.clip(surv, 0.0, 1.0).T, index=times)
    ev = EvalSurv(frame, durations, events, censor_surv="km", steps="post")
    # 'adj_antolini' is Antolini's Ctd with prediction ties counted 1/2 (the paper's
    # rule); plain 'antolini' scores a tie as discordant. Both agree on untied times.
    return {
        "ctd": float(ev.concordance_td("adj_antolini")),
        "ibs": float(ev.integrated_brier_score(grid)),
        "ibll": float(ev.integrated_nbll(grid)),
        "horizon": float(grid[-1]),
    }


def curve_l1(estimate, truth, times) -> float:
    """Time-averaged L1 distance: trapezoid of |estimate - truth| over ``times``
    divided by the time range, averaged over subjects (rows)."""
    times = _increasing_times(times)
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    if estimate.ndim != 2 or estimate.shape != truth.shape or estimate.shape[1] != times.size:
        raise ValueError(
            f"estimate {estimate.shape} and truth {truth.shape} must both be "
            f"(n_subjects, {times.size})"
        )
    diff = np.abs(estimate - truth)
    if np.isnan(diff).any():
        raise ValueError("estimate or truth contains NaN")
    per_subject = np.trapezoid(diff, times, axis=1) / (times[-1] - times[0])
    return float(per_subject.mean())
