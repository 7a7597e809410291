"""Best-match Jaccard against the definition: explicit cell sets U×V as Python sets."""

from __future__ import annotations

import numpy as np
import pytest

from repro.sbd.recovery import best_match


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
