"""repro.plsa.study's log-log rate slopes against closed forms and numpy's least squares."""

import numpy as np
import pytest

from repro.plsa import study


def test_slope_of_a_power_law_is_its_exponent():
    """error = 3 |E|^(-1/2) exactly: slope −1/2 (x and y swapped would give −2)."""
    edges = np.array([100.0, 400.0, 1600.0, 6400.0])
    assert study.slope(edges, 3.0 * edges**-0.5) == pytest.approx(-0.5, rel=1e-12)


def test_slopes_per_shift_and_sigma_pool_every_repetition():
    """Three sizes (σ 0.55) or two (σ 0.8), two repetitions each, unequal noise: each (shift,
    σ, estimator) slope is np.polyfit of log error on log |E| over all its points; σ 0.3,
    with one size only, has none (and does not stop the others)."""
    rng = np.random.default_rng(3)
    sizes = {0.55: ((100, 500.0), (300, 1700.0), (900, 5200.0)), 0.8: ((100, 480.0), (900, 5000.0))}
    rows = [{"shift": "gss", "sigma": 0.3, "n": 100, "edges": 500.0,
             "error": dict.fromkeys(study.ESTIMATORS, 0.1)}]  # fmt: skip
    for sigma, exponent in ((0.55, -0.3), (0.8, -0.7)):
        for n, edges in sizes[sigma]:
            for _ in range(2):
                error = {e: 0.2 * edges**exponent * rng.lognormal(0, 0.3) for e in study.ESTIMATORS}
                rows.append(
                    {"shift": "gss", "sigma": sigma, "n": n, "edges": edges, "error": error}
                )
    slopes = study._slopes(rows)
    assert set(slopes) == {"gss/0.55", "gss/0.8"}
    for sigma in (0.55, 0.8):
        sub = [r for r in rows if r["sigma"] == sigma]
        x = np.log([r["edges"] for r in sub])
        for estimator in study.ESTIMATORS:
            y = np.log([r["error"][estimator] for r in sub])
            reference = np.polyfit(x, y, 1)[0]
            assert slopes[f"gss/{sigma:g}"][estimator] == pytest.approx(reference, rel=1e-10)
