"""Reference arms: survival curves that need no training, evaluated beside the methods.

* ``kaplan_meier``: the training split's Kaplan-Meier curve for every test subject, the
  model that ignores the covariates. It is the trivial model of the per-seed sanity check
  (:mod:`repro.qsurv.sanity`) and the negative control of the comparison claims: a claim
  that comes out the same for it as for QSurv cannot tell a survival model from none.
* ``oracle`` (synthetic scenarios only): the analytic S(t | x) of every test subject, the
  positive control of the hazard claims (its hazard error is 0 by construction).

Both are read on the same grids, and scored by the same code, as every trained method.
"""

from __future__ import annotations

import numpy as np

from repro.qsurv import simulate
from repro.qsurv.catalog import KAPLAN_MEIER, ORACLE


def kaplan_meier(t_train, e_train, grid, subjects: int) -> np.ndarray:
    """S(grid) of the training split's Kaplan-Meier estimate (right-continuous), the same
    row for each of ``subjects`` test subjects: shape (subjects, len(grid))."""
    from lifelines import KaplanMeierFitter

    fitter = KaplanMeierFitter().fit(np.asarray(t_train, float), np.asarray(e_train, float))
    curve = fitter.survival_function_at_times(np.asarray(grid, float)).to_numpy()
    return np.repeat(curve[None, :], subjects, axis=0)


def oracle(scenario: str, x_test_raw, grid) -> np.ndarray:
    """The analytic S(grid | x) of each test subject: shape (len(x_test_raw), len(grid))."""
    truth = simulate.Scenario(scenario, np.asarray(x_test_raw, float))
    return truth.survival(np.asarray(grid, float)[None, :])


def predictions(dataset: str, data: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """Each reference arm's curves for every seed of a prepared data set, in the layout of a
    trained method's predictions file (``surv_metric`` and ``surv_truth``, seeds first)."""
    seeds = range(len(data["seeds"]))
    synthetic = "true_cumhaz" in data
    n_test = data["t_test"].shape[1]

    def km(grid_key, i):
        return kaplan_meier(data["t_train"][i], data["e_train"][i], data[grid_key][i], n_test)

    arms = {
        KAPLAN_MEIER: {
            "surv_metric": np.stack([km("metric_grid", i) for i in seeds]),
            "surv_truth": (
                np.stack([km("truth_grid", i) for i in seeds])
                if synthetic
                else np.empty((len(seeds), 0, 0))
            ),
        }
    }
    if synthetic:
        arms[ORACLE] = {
            key: np.stack([oracle(dataset, data["x_test_raw"][i], data[grid][i]) for i in seeds])
            for key, grid in (("surv_metric", "metric_grid"), ("surv_truth", "truth_grid"))
        }
    return arms
