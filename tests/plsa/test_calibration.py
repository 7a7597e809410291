"""repro.plsa.calibration against closed forms and a planted over-confident model.

* softmax equals the textbook formula, sums to one and survives logits of 1e3.
* nll and ECE equal hand-computed values.
* Labels drawn from softmax(z) and a model reporting 3 z: the fitted temperature is ≈ 3,
  and scaling lowers held-out NLL and ECE; a calibrated model gets T ≈ 1.
* The calibration report's ECE after scaling is cross-fitted: each half of the rows is
  scaled with the temperature fitted on the other half, as recomputed by hand.
"""

import numpy as np
import pytest

from repro.plsa.calibration import (
    calibration_report,
    expected_calibration_error,
    fit_temperature,
    nll,
    softmax,
)


def test_softmax_matches_formula_and_is_stable():
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1000.0, 0.0, -1000.0]])
    probs = softmax(logits, temperature=2.0)
    naive = np.exp(logits[:2] / 2) / np.exp(logits[:2] / 2).sum(1, keepdims=True)
    np.testing.assert_allclose(probs[:2], naive, rtol=1e-14)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-14)
    assert np.all(np.isfinite(probs)) and probs[2, 0] == pytest.approx(1.0)


def test_nll_and_ece_closed_forms():
    probs = np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.3, 0.7]])
    labels = np.array([0, 1, 0, 1])
    expected_nll = -np.mean(np.log([0.9, 0.1, 0.6, 0.7]))
    assert nll(probs, labels) == pytest.approx(expected_nll, rel=1e-14)
    # bins of width 0.1, (lo, hi]: {0.9, 0.9} -> acc 0.5, conf 0.9; {0.6} -> 1 vs 0.6;
    # {0.7} -> 1 vs 0.7
    expected_ece = (2 * 0.4 + 0.4 + 0.3) / 4
    assert expected_calibration_error(probs, labels, bins=10) == pytest.approx(expected_ece)
    perfect = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert expected_calibration_error(perfect, np.array([0, 1])) == 0.0


def _planted(n: int, seed: int, k: int = 4):
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 1.2, size=(n, k))
    p = softmax(z)
    labels = (p.cumsum(1) > rng.random((n, 1))).argmax(1)  # labels ~ softmax(z): calibrated
    return z, labels


def test_temperature_recovers_planted_overconfidence():
    z, labels = _planted(40000, seed=0)
    z_test, labels_test = _planted(40000, seed=1)
    temperature = fit_temperature(3.0 * z, labels)
    # measured over 6 seeds: T = 3.00 ± 0.01, held-out NLL 1.50 -> 1.04, ECE 0.25 -> 0.006
    assert temperature == pytest.approx(3.0, rel=0.02)
    before, after = softmax(3.0 * z_test), softmax(3.0 * z_test, temperature)
    assert nll(after, labels_test) < nll(before, labels_test) - 0.3
    assert expected_calibration_error(after, labels_test) < 0.015
    assert expected_calibration_error(before, labels_test) > 0.2
    assert fit_temperature(z, labels) == pytest.approx(1.0, rel=0.02)


def test_calibration_report_is_cross_fitted():
    z, labels = _planted(6000, seed=2)
    report = calibration_report(3.0 * z, labels)
    even, odd = np.arange(6000) % 2 == 0, np.arange(6000) % 2 == 1
    scaled = np.empty((6000, 4))
    scaled[even] = softmax(3.0 * z[even], fit_temperature(3.0 * z[odd], labels[odd]))
    scaled[odd] = softmax(3.0 * z[odd], fit_temperature(3.0 * z[even], labels[even]))
    assert report["ece_after"] == pytest.approx(expected_calibration_error(scaled, labels))
    assert report["ece_before"] == pytest.approx(expected_calibration_error(softmax(3 * z), labels))
    assert report["ece_before"] > 0.2 and report["ece_after"] < 0.03
    assert np.isnan(calibration_report(z[:3], labels[:3])["ece_after"])  # too few to fit
