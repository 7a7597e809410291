"""On an exactly orthogonal toy the measured margins equal the closed forms and the MaLoRA α
attains the best union margin; off orthogonality the oracle is never beaten."""

import numpy as np
import pytest

from repro.malora import malora_alphas, margin, union_margin_closed_form
from repro.malora.landscape import best_union_margin, grid_optimum, product_grid, union_margins
from repro.malora.theory import lambda_path_margins, mean_cross_entropy, ray_scale
from tests.malora.malora_helpers import stack


def _margins(base, deltas, data):
    m0 = margin(data[0].x @ base.T, data[0].y)
    return m0, np.array([margin(d.x @ dw.T, d.y) for d, dw in zip(data[1:], deltas, strict=True)])


def test_measured_union_margin_equals_the_closed_form(orthogonal_toy):
    _, train, base, deltas = orthogonal_toy
    m0, m = _margins(base, deltas, train)
    x, y = stack(train)
    rng = np.random.default_rng(0)
    for alphas in rng.uniform(0.05, 3.0, size=(25, len(deltas))):
        weight = base + sum(a * d for a, d in zip(alphas, deltas, strict=True))
        measured = margin(x @ weight.T, y) / np.linalg.norm(weight)
        closed = union_margin_closed_form(
            m0, m, np.linalg.norm(base), [np.linalg.norm(d) for d in deltas], alphas
        )
        assert measured == pytest.approx(closed, rel=1e-9)
        assert union_margins(base, deltas, x, y, alphas)[0] == pytest.approx(measured, rel=1e-9)


def test_malora_alpha_attains_the_grid_optimum(orthogonal_toy):
    _, train, base, deltas = orthogonal_toy
    m0, m = _margins(base, deltas, train)
    x, y = stack(train)
    alphas = malora_alphas(m, m0)
    value = union_margins(base, deltas, x, y, alphas)[0]
    _, grid_best = grid_optimum(base, deltas, x, y, np.geomspace(0.05, 5, 61))
    assert value >= grid_best - 1e-12
    best_alpha, best = best_union_margin(base, deltas, x, y, axis=np.geomspace(0.05, 5, 7))
    assert best == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(best_alpha, alphas, rtol=1e-3)
    # the equalised margins: every task sits at the pre-training margin
    np.testing.assert_allclose(alphas * m, m0)


def test_off_orthogonality_the_oracle_bounds_every_rule(overlapping_toy):
    _, train, base, deltas = overlapping_toy
    x, y = stack(train)
    grid = product_grid(np.geomspace(0.05, 5, 25), len(deltas))
    grid_values = union_margins(base, deltas, x, y, grid)
    alpha, best = best_union_margin(base, deltas, x, y, axis=np.geomspace(0.05, 5, 5))
    assert best >= grid_values.max() - 1e-9
    assert union_margins(base, deltas, x, y, alpha)[0] == pytest.approx(best)


def test_union_margins_on_a_grid_match_direct_evaluation(overlapping_toy):
    _, train, base, deltas = overlapping_toy
    x, y = stack(train)
    grid = product_grid(np.array([0.1, 0.7, 2.0]), len(deltas))
    direct = []
    for alphas in grid:
        w = base + sum(a * d for a, d in zip(alphas, deltas, strict=True))
        direct.append(margin(x @ w.T, y) / np.linalg.norm(w))
    np.testing.assert_allclose(union_margins(base, deltas, x, y, grid), direct, rtol=1e-10)


def test_ray_scale_minimises_the_one_dimensional_objective():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 5)), np.arange(40) % 3
    direction = rng.normal(size=(3, 5))
    lam = 0.05
    s = ray_scale(x, y, direction, lam)
    nuc = np.linalg.norm(direction, "nuc")
    grid = np.linspace(0, 20, 20001)
    values = [mean_cross_entropy(g * x @ direction.T, y) + lam * g * nuc for g in grid]
    assert s == pytest.approx(grid[int(np.argmin(values))], abs=2e-3)


def test_lambda_path_margins_follow_the_norm_identity():
    out = lambda_path_margins(
        base_margin=2.0, base_norm=3.0, svm_margin=1.0, svm_norm=4.0, scale=1.0
    )
    assert out["pretrain"] == pytest.approx(2 / 5)
    assert out["finetune"] == pytest.approx(1 / 5)
    assert out["union"] == pytest.approx(1 / 5)
