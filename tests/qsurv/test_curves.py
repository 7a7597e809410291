"""repro.qsurv.curves: the marginal curves and the bands over runs that the hazard-curves
figure draws, against closed forms and a naive loop.

* The marginal hazard of two exponential subjects (rates a ≠ b) is the mixture's hazard,
  (a e^{-at} + b e^{-bt}) / (e^{-at} + e^{-bt}), not the mean of a and b.
* A band over three runs on unequal grids equals linear interpolation and sorting done by
  hand at each common time.
"""

import numpy as np
import pytest

from repro.qsurv.curves import band_over_runs, hazard_error, marginal


def test_marginal_curves_of_two_exponentials_are_the_mixtures():
    a, b = 0.5, 3.0
    grid = np.linspace(0.0, 2.0, 4001)
    surv = np.exp(-np.array([[a], [b]]) * grid)
    curves = marginal(surv, grid)
    mixture = (np.exp(-a * grid) + np.exp(-b * grid)) / 2
    np.testing.assert_allclose(curves["S"], mixture, rtol=1e-12)
    np.testing.assert_allclose(curves["H"], -np.log(mixture), rtol=1e-12)
    mid = (grid[1:] + grid[:-1]) / 2
    hazard = (a * np.exp(-a * mid) + b * np.exp(-b * mid)) / (np.exp(-a * mid) + np.exp(-b * mid))
    np.testing.assert_allclose(curves["h"], hazard, rtol=1e-5)
    assert curves["h"][0] == pytest.approx((a + b) / 2, rel=1e-3)  # not a constant rate
    assert curves["h"][-1] < 0.6  # the frailer subject has left: the survivor's rate remains


def test_hazard_error_is_the_mean_absolute_rate_difference():
    grid = np.array([0.0, 0.5, 1.5, 2.0])  # uneven
    rates, true_rates = np.array([[1.0], [2.0], [0.5]]), np.array([[1.5], [1.5], [1.5]])
    error = hazard_error(np.exp(-rates * grid), np.exp(-true_rates * grid), grid)
    np.testing.assert_allclose(error, np.full(3, (0.5 + 0.5 + 1.0) / 3), rtol=1e-12)


def _naive_interp(t, ts, vs):
    for j in range(len(ts) - 1):
        if ts[j] <= t <= ts[j + 1]:
            w = (t - ts[j]) / (ts[j + 1] - ts[j])
            return vs[j] * (1 - w) + vs[j + 1] * w
    raise AssertionError("outside the run's grid")


def test_band_over_runs_equals_interpolating_and_sorting_by_hand():
    times = [
        [0.0, 1.0, 2.0, 4.0],
        [0.5, 1.5, 3.0, 3.5, 5.0],
        [0.2, 3.8],
    ]
    values = [
        [1.0, 0.8, 0.5, 0.1],
        [0.9, 0.9, 0.2, 0.15, 0.0],
        [1.0, 0.3],
    ]
    band = band_over_runs(times, values, points=7)
    common = np.linspace(0.5, 3.8, 7)  # the range all three runs cover
    np.testing.assert_allclose(band["time"], common)
    for k, t in enumerate(common):
        at = sorted(_naive_interp(t, ts, vs) for ts, vs in zip(times, values, strict=True))
        assert band["low"][k] == pytest.approx(at[0])
        assert band["high"][k] == pytest.approx(at[-1])
        assert band["mean"][k] == pytest.approx(sum(at) / 3)
    # at t = 0.5 the runs read 0.9, 0.9 and 0.9417: the mean is not the median
    assert band["mean"][0] == pytest.approx((0.9 + 0.9 + 1.0 - 0.7 * 0.3 / 3.6) / 3)


def test_band_over_runs_with_inner_quantiles_and_disjoint_runs():
    times = [[0.0, 1.0]] * 5
    values = [[v, v] for v in (0.0, 1.0, 2.0, 3.0, 10.0)]
    band = band_over_runs(times, values, points=3, quantiles=(0.25, 0.75))
    np.testing.assert_allclose(band["low"], 1.0)  # numpy's linear quantile of 5 values
    np.testing.assert_allclose(band["high"], 3.0)
    np.testing.assert_allclose(band["mean"], 3.2)
    with pytest.raises(ValueError, match="share no time range"):
        band_over_runs([[0.0, 1.0], [2.0, 3.0]], [[1, 1], [1, 1]])
