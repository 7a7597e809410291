"""Marginal S(t), H(t) and h(t) per run, and the bands over runs the figure draws.

Per seed, on the seed's truth grid (synthetic data only):

* the marginal survival S̄(t) = mean over test subjects of S(t | x_i) (the population's
  survival), its cumulative hazard H̄ = −log S̄ and its hazard h̄, the average over each grid
  interval of −d log S̄ / dt (:func:`interval_hazard`), the same
  construction for the truth and for every model;
* the hazard error curve: mean over subjects of |ĥ(t | x_i) − h(t | x_i)| at each interval
  midpoint, whose time average (trapezoid over the midpoints, divided by their range) is the
  claims' ``hazard_l1``.

Each seed draws its own sample, so the grids differ slightly between seeds; a band puts every
run on the grid they share (:func:`band_over_runs`).
"""

from __future__ import annotations

import numpy as np


def interval_hazard(surv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Average hazard over each grid interval from survival curves (n, M) -> (n, M - 1)."""
    cumulative = -np.log(np.clip(surv, 1e-12, 1.0))
    return np.diff(cumulative, axis=-1) / np.diff(grid)


def marginal(surv: np.ndarray, grid: np.ndarray) -> dict[str, np.ndarray]:
    """S̄, H̄ on ``grid`` and h̄ on its interval midpoints, from curves (n_subjects, M)."""
    s_bar = np.mean(surv, axis=0)
    return {
        "S": s_bar,
        "H": -np.log(np.clip(s_bar, 1e-12, 1.0)),
        "h": interval_hazard(s_bar[None], grid)[0],
    }


def hazard_error(surv: np.ndarray, true_surv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Mean over subjects of |ĥ − h| per grid interval: the integrand of ``hazard_l1``."""
    return np.mean(np.abs(interval_hazard(surv, grid) - interval_hazard(true_surv, grid)), axis=0)


def run_curves(data: dict, predictions: dict[str, dict]) -> dict:
    """Per seed: the grid, the truth's marginal curves and each method's, with its hazard
    error curve (lists, for the metrics JSON)."""
    runs = []
    for i, seed in enumerate(data["seeds"]):
        grid = data["truth_grid"][i]
        true_surv = np.exp(-data["true_cumhaz"][i])
        methods = {}
        for name, pred in predictions.items():
            curves = marginal(pred["surv_truth"][i], grid)
            curves["hazard_error"] = hazard_error(pred["surv_truth"][i], true_surv, grid)
            methods[name] = curves
        runs.append(
            {
                "seed": int(seed),
                "time": grid,
                "truth": marginal(true_surv, grid),
                "methods": methods,
            }
        )
    return {"runs": runs}


def midpoints(grid) -> np.ndarray:
    grid = np.asarray(grid, dtype=float)
    return (grid[1:] + grid[:-1]) / 2


def band_over_runs(
    times: list, values: list, *, points: int = 100, quantiles: tuple[float, float] = (0.0, 1.0)
) -> dict[str, np.ndarray]:
    """The runs' curves on the time range every run covers (``points`` equal steps; each run
    interpolated linearly on its own times), and at each time their mean and the
    ``quantiles`` over runs (default the range: with 3 runs, no other quantile is more than
    an interpolation between them)."""
    start = max(float(t[0]) for t in times)
    stop = min(float(t[-1]) for t in times)
    if not start < stop:
        raise ValueError(f"the runs share no time range ({start:g} ≥ {stop:g})")
    common = np.linspace(start, stop, points)
    stacked = np.stack(
        [
            np.interp(common, np.asarray(t, float), np.asarray(v, float))
            for t, v in zip(times, values, strict=True)
        ]
    )
    low, high = np.quantile(stacked, quantiles, axis=0)
    return {"time": common, "mean": stacked.mean(axis=0), "low": low, "high": high}
