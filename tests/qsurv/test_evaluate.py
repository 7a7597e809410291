"""repro.qsurv.evaluate on hand-made inputs with known answers.

* ``interval_hazard`` of exp(-c t) is c on any grid; of a piecewise curve, the slope of H.
* ``evaluate`` on the analytic truth itself gives survival/hazard L1 = 0, and on a curve
  with twice the hazard gives the hand-computed hazard L1 (and the figure's hazard-error
  curve, its integrand); the forward-difference hazard L1
  (the official simulation's) is its O(Δt) bias; the official IPCW metrics equal a direct
  computation from the same stored curves.
* The reference arms: the oracle scores as the truth given as a method; the Kaplan-Meier
  arm is the product-limit curve by hand.
"""

import numpy as np
import pytest

from repro.common.io import read_json, read_npz, write_json, write_npz
from repro.qsurv import simulate
from repro.qsurv.evaluate import EvaluateConfig, evaluate, interval_hazard
from repro.qsurv.ipcw import official_metrics, step_reader
from repro.qsurv.reference import predictions as reference_predictions


def test_interval_hazard_of_exponential_is_constant():
    c = np.array([[0.2], [1.0], [3.5]])
    grid = np.array([0.0, 0.1, 0.15, 0.7, 1.0, 2.4])  # uneven on purpose
    np.testing.assert_allclose(
        interval_hazard(np.exp(-c * grid), grid), np.broadcast_to(c, (3, 5)), rtol=1e-10
    )


def test_interval_hazard_is_average_hazard_of_each_interval():
    grid = np.array([0.5, 1.0, 2.0, 4.0])
    cumulative = grid**2  # h = 2t: average over [a, b] is a + b
    np.testing.assert_allclose(
        interval_hazard(np.exp(-cumulative)[None], grid)[0], grid[1:] + grid[:-1], rtol=1e-10
    )
    # S = 0 is clipped at 1e-12 rather than giving inf
    assert np.all(np.isfinite(interval_hazard(np.array([[1.0, 0.0]]), np.array([0.0, 1.0]))))


def truth_predictions(data: dict, factor: float = 1.0) -> dict:
    """Curves with hazard factor · h_true on both grids: exp(-factor · H_true)."""
    surv_metric, surv_truth = [], []
    for i in range(len(data["seeds"])):
        sc = simulate.Scenario("gompertz", data["x_test_raw"][i])
        surv_metric.append(np.exp(-factor * sc.cumulative_hazard(data["metric_grid"][i][None])))
        surv_truth.append(np.exp(-factor * data["true_cumhaz"][i]))
    n = len(data["seeds"])
    return dict(
        surv_metric=np.stack(surv_metric),
        surv_truth=np.stack(surv_truth),
        train_seconds=np.full(n, 1.5),
        epochs=np.full(n, 4),
    )


def test_evaluate_truth_against_itself(tiny_synthetic, tmp_path):
    data = read_npz(tiny_synthetic)
    predictions, logs = {}, {}
    for method, factor in (("truth", 1.0), ("double", 2.0)):
        predictions[method] = str(tmp_path / f"{method}.npz")
        write_npz(predictions[method], **truth_predictions(data, factor))
        logs[method] = str(tmp_path / f"{method}.json")
        write_json(logs[method], {"provenance": {"device": "cpu"}})
    result = evaluate(
        EvaluateConfig(dataset="gompertz", methods=("truth", "double"), metric_grid_points=20),
        str(tiny_synthetic),
        predictions,
        logs,
        str(tmp_path / "metrics.json"),
    )
    truth = result["methods"]["truth"]["mean"]
    assert truth["hazard_l1"] == pytest.approx(0.0, abs=1e-12)
    assert truth["survival_l1"] == pytest.approx(0.0, abs=1e-12)
    assert truth["train_seconds"] == 1.5 and truth["epochs"] == 4
    assert 0.5 < truth["ctd"] <= 1 and 0 < truth["ibs"] < 0.25
    # |2 h̄ - h̄| = h̄: the hazard L1 is the time-averaged true interval hazard
    grid = data["truth_grid"][0]
    h_bar = np.diff(data["true_cumhaz"][0], axis=1) / np.diff(grid)
    mid = (grid[1:] + grid[:-1]) / 2
    expected = np.mean(np.trapezoid(h_bar, mid, axis=1) / (mid[-1] - mid[0]))
    assert result["methods"]["double"]["mean"]["hazard_l1"] == pytest.approx(expected, rel=1e-9)
    # the same concordance: doubling the hazard keeps every subject's ranking
    assert result["methods"]["double"]["mean"]["ctd"] == pytest.approx(truth["ctd"])
    assert result["synthetic"] is True
    # the figure's hazard-error curve is the integrand of hazard_l1: |2 h̄ - h̄| = h̄ per
    # subject, so its mean over subjects, and its time average is the metric
    error = result["curves"]["runs"][0]["methods"]["double"]["hazard_error"]
    np.testing.assert_allclose(error, h_bar.mean(axis=0), rtol=1e-9)
    assert np.trapezoid(error, mid) / (mid[-1] - mid[0]) == pytest.approx(expected, rel=1e-9)
    # the official simulation's hazard L1 (forward difference vs h at the left point) is
    # not 0 even for the truth: its O(Δt) bias, here on a 12-point grid
    forward = np.diff(data["true_cumhaz"][0], axis=1) / np.diff(grid)
    bias = np.trapezoid(np.abs(forward - data["true_hazard"][0][:, :-1]), grid[:-1], axis=1)
    assert truth["hazard_l1_forward"] == pytest.approx(
        np.mean(bias / (grid[-2] - grid[0])), rel=1e-9
    )
    assert truth["hazard_l1_forward"] > 1e-4
    # the official IPCW metrics beside pycox's, from the same stored curves
    split = {k: v[0] for k, v in data.items() if k != "seeds"}
    official = official_metrics(
        step_reader(truth_predictions(data)["surv_metric"][0], split["metric_grid"]),
        np.concatenate([split["t_train"], split["t_val"]]),
        np.concatenate([split["e_train"], split["e_val"]]),
        split["t_test"],
        split["e_test"],
    )
    row = result["methods"]["truth"]["per_seed"][0]
    assert row["cindex_ipcw"] == pytest.approx(official["cindex_ipcw"], rel=1e-12)
    assert row["ibs_ipcw"] == pytest.approx(official["ibs_ipcw"], rel=1e-12)
    assert 0.5 < row["cindex_ipcw"] <= 1 and row["cindex_ipcw"] != pytest.approx(row["ctd"])
    stored = read_json(tmp_path / "metrics.json")
    assert stored["methods"]["truth"]["training_provenance"] == {"device": "cpu"}


def kaplan_meier_by_hand(durations, events, times):
    """The product-limit estimate Π_{t_i <= t} (1 - d_i / n_i), a loop over event times."""
    survival, out = 1.0, []
    steps = {}
    for t in np.unique(durations[events == 1]):
        at_risk = np.sum(durations >= t)
        died = np.sum((durations == t) & (events == 1))
        survival *= 1 - died / at_risk
        steps[t] = survival
    for t in times:
        passed = [s for u, s in steps.items() if u <= t]
        out.append(passed[-1] if passed else 1.0)
    return np.array(out)


def test_reference_arms_against_their_definitions(tiny_synthetic, tmp_path):
    """The oracle is scored exactly as the analytic truth given as a method; the Kaplan-Meier
    arm is the training split's product-limit curve for every subject (a loop by hand), so it
    ranks every pair as a tie: IPCW C-index exactly 0.5."""
    data = read_npz(tiny_synthetic)
    predictions = {"truth": str(tmp_path / "truth.npz")}
    write_npz(predictions["truth"], **truth_predictions(data))
    logs = {"truth": str(tmp_path / "truth.json")}
    write_json(logs["truth"], {"provenance": {}})
    result = evaluate(
        EvaluateConfig(dataset="gompertz", methods=("truth",), metric_grid_points=20),
        str(tiny_synthetic),
        predictions,
        logs,
        str(tmp_path / "metrics.json"),
    )
    assert result["reference_arms"] == ["kaplan_meier", "oracle"]
    truth, oracle = (result["methods"][m]["per_seed"][0] for m in ("truth", "oracle"))
    assert {k: v for k, v in truth.items() if k not in ("train_seconds", "epochs")} == oracle
    assert oracle["hazard_l1"] == 0.0 and oracle["survival_l1"] == 0.0
    km = result["methods"]["kaplan_meier"]["per_seed"][0]
    assert km["cindex_ipcw"] == 0.5
    # the curve itself, by hand, on both grids
    curves = reference_predictions("gompertz", data)["kaplan_meier"]
    for key, grid in (("surv_metric", "metric_grid"), ("surv_truth", "truth_grid")):
        expected = kaplan_meier_by_hand(data["t_train"][0], data["e_train"][0], data[grid][0])
        np.testing.assert_allclose(curves[key][0], np.broadcast_to(expected, curves[key][0].shape))
    # a real data set (no truth) has the Kaplan-Meier arm only
    real = {k: v for k, v in data.items() if k not in ("true_cumhaz", "true_hazard")}
    assert list(reference_predictions("gbsg2", real)) == ["kaplan_meier"]
