"""Both SVMs against their definitions: feasibility, optimality against each other and a
direct cvxpy Frobenius QP, zero-sum rows."""

import cvxpy as cp
import numpy as np
import pytest

from repro.malora import cosine, frobenius_svm, nuclear_svm


@pytest.fixture(scope="module")
def separable():
    rng = np.random.default_rng(0)
    means = rng.normal(size=(4, 6))
    means *= 3 / np.linalg.norm(means, axis=1, keepdims=True)
    y = np.repeat(np.arange(4), 15)
    basis = np.linalg.qr(rng.normal(size=(20, 20)))[0][:, :6]
    return (means[y] + 0.2 * rng.normal(size=(60, 6))) @ basis.T, y


def _margins(w, x, y):
    s = x @ w.T
    true = s[np.arange(len(y)), y]
    s[np.arange(len(y)), y] = -np.inf
    return true - s.max(axis=1)


def test_frobenius_svm_is_the_hard_margin_qp(separable):
    x, y = separable
    w = frobenius_svm(x, y, 4)
    assert _margins(w, x, y).min() >= 1 - 1e-3
    v = cp.Variable((4, x.shape[1]))
    s = x @ v.T
    onehot = np.eye(4)[y]
    true = cp.sum(cp.multiply(s, onehot), axis=1, keepdims=True)
    cp.Problem(cp.Minimize(cp.sum_squares(v)), [true - s + onehot >= 1]).solve()
    assert cosine(w, v.value) > 0.999
    assert np.linalg.norm(w) == pytest.approx(np.linalg.norm(v.value), rel=1e-2)


def test_nuclear_svm_is_feasible_centred_and_has_the_smaller_nuclear_norm(separable):
    x, y = separable
    wn, wf = nuclear_svm(x, y, 4), frobenius_svm(x, y, 4)
    assert _margins(wn, x, y).min() >= 1 - 1e-6
    np.testing.assert_allclose(wn.sum(axis=0), 0, atol=1e-7)
    np.testing.assert_allclose(wf.sum(axis=0), 0, atol=1e-9)
    # each is optimal for its own norm (the Frobenius one up to LinearSVC's large-C slack)
    assert np.linalg.norm(wn, "nuc") <= np.linalg.norm(wf, "nuc") + 1e-6
    assert np.linalg.norm(wf) <= np.linalg.norm(wn) * (1 + 1e-3)


def test_labels_must_cover_every_class(separable):
    x, y = separable
    with pytest.raises(ValueError, match="every class"):
        frobenius_svm(x, y, 5)


def test_cosine():
    assert cosine([[1.0, 0.0]], [[2.0, 0.0]]) == pytest.approx(1.0)
    assert cosine([[1.0, 0.0]], [[0.0, 3.0]]) == pytest.approx(0.0)


def test_an_inaccurate_solve_warns_and_reports_its_status(separable, caplog):
    """CLARABEL at a tolerance it cannot certify ends "optimal_inaccurate": the solve warns,
    and the status comes back for the caller to record; at the stated tolerance it is optimal."""
    x, y = separable
    _, status = nuclear_svm(x, y, 4, with_status=True)
    assert status == "optimal"
    with caplog.at_level("WARNING", logger="repro.malora.svm"):
        _, status = nuclear_svm(x, y, 4, tolerance=1e-16, with_status=True)
    assert status == "optimal_inaccurate"
    assert "optimal_inaccurate" in caplog.text
