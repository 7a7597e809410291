"""Multiclass hard-margin SVMs on one task's data: the two candidates LoRA may align with.

- Frobenius (Crammer–Singer): min ‖W‖_F² s.t. (Wx_i)_{y_i} − (Wx_i)_c ≥ 1, solved by
  scikit-learn's ``LinearSVC(multi_class="crammer_singer")`` with a large C.
- Nuclear norm: the same constraints with min ‖W‖_*, the bias the factorised LoRA penalty
  (λ/2)(‖A‖² + ‖B‖²) = λ‖BA‖_* induces; solved with cvxpy.

Both are solved in an orthonormal basis of the data's span (the optimum has its rows there:
projecting rows onto the span keeps every constraint and shrinks both norms) and are
returned with rows summing to zero (a common shift of the rows changes no prediction, and a
LoRA update trained on the task's own classes has zero-sum rows).
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.svm import LinearSVC

log = logging.getLogger(__name__)


def _span(x: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    return vt[s > tol * s.max()].T  # d × rank


def _labels(y, n_classes: int) -> np.ndarray:
    y = np.asarray(y, dtype=np.int64)
    if set(np.unique(y)) != set(range(n_classes)):
        raise ValueError(f"labels must use every class 0..{n_classes - 1}, got {np.unique(y)}")
    return y


def frobenius_svm(x, y, n_classes: int, *, c: float = 1e4, tol: float = 1e-6) -> np.ndarray:
    """Crammer–Singer SVM (large C ≈ hard margin), classes × features."""
    x, y = np.asarray(x, dtype=np.float64), _labels(y, n_classes)
    basis = _span(x)
    model = LinearSVC(
        multi_class="crammer_singer", fit_intercept=False, C=c, tol=tol, max_iter=200_000
    )
    model.fit(x @ basis, y)
    weight = model.coef_ @ basis.T
    return weight - weight.mean(axis=0, keepdims=True)


def nuclear_svm(
    x,
    y,
    n_classes: int,
    *,
    solver: str = "CLARABEL",
    tolerance: float = 1e-6,
    with_status: bool = False,
) -> np.ndarray | tuple[np.ndarray, str]:
    """Hard-margin multiclass SVM of least nuclear norm (zero-sum rows), classes × features;
    with ``with_status`` also the solver's status ("optimal" or "optimal_inaccurate": the
    latter is logged as a warning, and the caller records it).

    CLARABEL runs to the stated ``tolerance`` (duality gap, absolute and relative, and
    feasibility): at its default 1e-8 (and at 1e-7 on 6 of 10 sweep problems) it ends
    "optimal_inaccurate" on these problems with the same optimum to 1e-7."""
    import cvxpy as cp  # 2 s to import: only when this SVM is asked for

    x, y = np.asarray(x, dtype=np.float64), _labels(y, n_classes)
    basis = _span(x)
    z = x @ basis
    w = cp.Variable((n_classes, basis.shape[1]))
    onehot = np.eye(n_classes)[y]
    scores = z @ w.T  # n × classes
    true = cp.sum(cp.multiply(scores, onehot), axis=1, keepdims=True)
    # true − score_c ≥ 1 for every c ≠ y; the one-hot term makes c = y read 1 ≥ 1
    constraints = [true - scores + onehot >= 1, cp.sum(w, axis=0) == 0]
    problem = cp.Problem(cp.Minimize(cp.normNuc(w)), constraints)
    options = {}
    if solver == "CLARABEL":
        options = {"tol_gap_abs": tolerance, "tol_gap_rel": tolerance, "tol_feas": tolerance}
    problem.solve(solver=solver, **options)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"nuclear-norm SVM: solver status {problem.status} (not separable?)")
    if problem.status != "optimal":
        log.warning("nuclear-norm SVM: solver %s ended %s", solver, problem.status)
    weight = w.value @ basis.T
    return (weight, problem.status) if with_status else weight


def cosine(a, b) -> float:
    """⟨A, B⟩_F / (‖A‖_F ‖B‖_F)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.sum(a * b) / (np.linalg.norm(a) * np.linalg.norm(b)))
