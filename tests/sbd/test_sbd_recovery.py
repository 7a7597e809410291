"""Best-match Jaccard against the definition: explicit cell sets U×V as Python sets."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from repro.sbd.recovery import best_match, noise_grid, recovery_metrics


def _blocks(rng, count, n=40):
    rows = [rng.choice(n, size=rng.integers(1, 12), replace=False) for _ in range(count)]
    cols = [rng.choice(n, size=rng.integers(1, 12), replace=False) for _ in range(count)]
    return {"rows": rows, "cols": cols, "signs": list(rng.choice([-1, 1], size=count))}


def _naive(truth, found):
    def cells(U, V):
        return {(u, v) for u in U for v in V}

    scores = []
    for U, V, s in zip(truth["rows"], truth["cols"], truth["signs"], strict=True):
        best = 0.0
        for U2, V2, s2 in zip(found["rows"], found["cols"], found["signs"], strict=True):
            if s2 == s:
                a, b = cells(U, V), cells(U2, V2)
                best = max(best, len(a & b) / len(a | b))
        scores.append(best)
    return np.asarray(scores)


@pytest.mark.parametrize("seed", range(5))
def test_equals_the_definition_on_random_signed_blocks(seed):
    rng = np.random.default_rng(seed)
    truth, found = _blocks(rng, 8), _blocks(rng, 11)
    found["rows"][0], found["cols"][0] = truth["rows"][0], truth["cols"][0]  # one exact match
    found["signs"][0] = truth["signs"][0]
    scores = best_match(truth, found)
    np.testing.assert_allclose(scores, _naive(truth, found), rtol=0, atol=1e-12)
    assert scores[0] == 1.0


def test_a_sign_mismatch_never_matches_and_empty_inputs():
    truth = {"rows": [np.array([0, 1])], "cols": [np.array([2, 3])], "signs": [1]}
    flipped = {**truth, "signs": [-1]}
    assert best_match(truth, flipped).tolist() == [0.0]
    assert best_match(truth, {"rows": [], "cols": [], "signs": []}).tolist() == [0.0]
    assert best_match({"rows": [], "cols": [], "signs": []}, truth).shape == (0,)


def test_recovery_metrics_average_the_best_matches_of_unequal_blocks():
    """Three planted blocks whose best matches are 1, 1/2 and 1/4 by hand: mean 7/12, not
    the median 1/2."""
    truth = {
        "rows": [np.array([0, 1]), np.array([2, 3]), np.array([4, 5])],
        "cols": [np.array([0, 1]), np.array([2, 3]), np.array([4, 5])],
        "signs": [1, 1, -1],
    }
    found = {
        # exact; half of block 2's cells (rows 2, 3 × col 2); one of block 3's 4 cells
        "rows": [np.array([0, 1]), np.array([2, 3]), np.array([4])],
        "cols": [np.array([0, 1]), np.array([2]), np.array([4])],
        "signs": [1, 1, -1],
    }
    expected = np.array([1.0, 0.5, 0.25])
    np.testing.assert_allclose(_naive(truth, found), expected)
    metrics = recovery_metrics(truth, found)
    assert metrics["mean_best_jaccard"] == pytest.approx(7 / 12)
    assert metrics["fraction_above_0_9"] == pytest.approx(1 / 3)
    assert (metrics["planted_blocks"], metrics["recovered_factors"]) == (3, 3)


def test_noise_grid_is_the_mean_over_three_seeds_per_cell():
    """Seeds 0.2, 0.3, 1.0 at one cell (mean 0.5, median 0.3), a rising other cell."""
    values = {(0.1, 0.0): (0.2, 0.3, 1.0), (0.1, 0.5): (0.9, 0.6, 0.0), (0.4, 0.0): (0.4, 0.4, 0.1)}
    rows = [
        {"method": "sbd", "deletion": d, "background": b, "seed": s, "mean_best_jaccard": v}
        for (d, b), per_seed in values.items()
        for s, v in enumerate(per_seed)
    ]
    rows.append({"method": "vnm", "deletion": 0.1, "background": 0.0, "seed": 0,
                 "mean_best_jaccard": 0.0})  # fmt: skip
    dels, bgs, grid = noise_grid({"rows": rows}, "sbd")
    assert (dels, bgs) == ([0.1, 0.4], [0.0, 0.5])
    np.testing.assert_allclose(grid, [[0.5, 0.5], [0.3, np.nan]])


def test_recovery_metric_edges_by_hand():
    """A best match of exactly 0.9 (9 of 10 cells) is not above 0.9; a one-cell block found
    exactly scores 1; a one-cell block whose only same-sign factor is empty (no rows) scores
    0; no planted block gives NaN metrics, without a warning."""
    truth = {
        "rows": [np.array([0]), np.array([3]), np.array([7])],
        "cols": [np.arange(10), np.array([12]), np.array([7])],
        "signs": [1, 1, -1],
    }
    found = {
        "rows": [np.array([0]), np.array([3]), np.array([], dtype=int)],
        "cols": [np.arange(9), np.array([12]), np.array([7])],
        "signs": [1, 1, -1],
    }
    np.testing.assert_array_equal(best_match(truth, found), [0.9, 1.0, 0.0])
    metrics = recovery_metrics(truth, found)
    assert metrics["mean_best_jaccard"] == pytest.approx(1.9 / 3)
    assert metrics["fraction_above_0_9"] == pytest.approx(1 / 3)
    empty = {"rows": [], "cols": [], "signs": []}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metrics = recovery_metrics(empty, found)
    assert np.isnan(metrics["mean_best_jaccard"]) and np.isnan(metrics["fraction_above_0_9"])
    assert (metrics["planted_blocks"], metrics["recovered_factors"]) == (0, 3)
