"""Exact solver for the moment-matching QP of Pair-Align (and node-level BBSE).

    min_w ||C w - mu||^2 + lam ||w - 1||^2   s.t.   w >= 0,  a^T w = 1      (a >= 0)

A primal active-set method (Nocedal & Wright, Alg. 16.3) whose every subproblem, the
equality-constrained least squares on the current free set, is solved exactly (Householder
null-space basis of a, then an SVD least-squares solve; no normal equations, so the
conditioning is cond(C), not its square). It starts from a Lawson-Hanson NNLS solution
with the equality as a heavily weighted row, which usually guesses the active set, and
stops only when the KKT conditions hold: stationarity on the free set, non-negative bound
multipliers, feasibility. No loose iterative tolerance can shrink w toward 1 (the brief's
pitfall): the objective is also rescaled to unit ||[C; sqrt(lam) I]||_F first, which
changes no minimiser.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

DUAL_TOL = 1e-11  # on bound multipliers of the rescaled problem, whose gradients are O(1)


@dataclass(frozen=True)
class QPResult:
    w: np.ndarray
    status: str  # "optimal" or "max_iter"
    kkt_residual: float  # max KKT violation in the rescaled problem
    iterations: int
    objective: float  # in the original scale


def _equality_ls(A: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """argmin ||A x - b|| s.t. a^T x = 1 (minimum-norm in the null space when rank-deficient)."""
    norm = np.linalg.norm(a)
    x0 = a / norm**2
    if a.size == 1:
        return x0
    # Householder reflector H = I - c h h^T maps a onto the first axis, so columns 1.. of H
    # are an orthonormal basis of the null space of a^T; H is never formed.
    h = a.copy()
    h[0] += np.copysign(norm, a[0])
    c = 2.0 / (h @ h)
    AH = A - c * np.outer(A @ h, h)
    z = np.linalg.lstsq(AH[:, 1:], b - A @ x0, rcond=None)[0]
    step = np.concatenate([[0.0], z])
    return x0 + step - c * h * (h @ step)


def _warm_start(A: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    weight = 1e3 / np.linalg.norm(a)
    try:
        w = nnls(np.vstack([A, weight * a]), np.concatenate([b, [weight]]))[0]
    except RuntimeError:  # NNLS iteration limit: start from the centre instead
        w = np.zeros_like(a)
    total = a @ w
    return w / total if total > 0 else np.full_like(a, 1.0 / a.sum())


def _kkt(A, b, a, w, free):
    """Bound multipliers (half-gradient minus nu a) and the largest KKT violation."""
    grad = A.T @ (A @ w - b)
    af = a[free]
    nu = (af @ grad[free]) / (af @ af) if af.any() else 0.0
    mult = grad - nu * a
    parts = [np.abs(mult[free]).max(initial=0.0), abs(a @ w - 1.0), max(0.0, -w.min())]
    parts.append(max(0.0, -mult[~free].min(initial=0.0)))
    return mult, max(parts)


def solve_simplex_qp(
    C: np.ndarray, mu: np.ndarray, a: np.ndarray, *, lam: float = 0.0, max_iter: int | None = None
) -> QPResult:
    """Exact minimiser of ||C w - mu||^2 + lam ||w - 1||^2 over {w >= 0, a^T w = 1}.

    Cells with a = 0 and an all-zero column of C (no source edges there) do not enter the
    objective except through the ridge; they are fixed at w = 1, the ridge's minimiser.
    """
    C = np.asarray(C, dtype=float)
    mu = np.asarray(mu, dtype=float).ravel()
    a = np.asarray(a, dtype=float).ravel()
    if lam < 0 or np.any(a < 0) or a.sum() <= 0 or C.shape != (mu.size, a.size):
        raise ValueError("need lam >= 0, a >= 0 with a positive entry, C of shape (mu, a)")
    var = (a > 0) | C.any(axis=0)
    A, b, av = C[:, var], mu, a[var]
    if lam > 0:
        A = np.vstack([A, np.sqrt(lam) * np.eye(av.size)])
        b = np.concatenate([mu, np.full(av.size, np.sqrt(lam))])
    scale = np.linalg.norm(A) or 1.0
    A, b = A / scale, b / scale

    w = _warm_start(A, b, av)
    free = w > 0
    max_iter = max_iter if max_iter is not None else 3 * av.size + 50
    status, iterations = "max_iter", 0
    while iterations < max_iter:
        iterations += 1
        x = _equality_ls(A[:, free], b, av[free])
        if x.min() >= 0:
            w = np.zeros_like(av)
            w[free] = x
            mult, _ = _kkt(A, b, av, w, free)
            bound = np.flatnonzero(~free)
            if bound.size == 0 or mult[bound].min() >= -DUAL_TOL:
                status = "optimal"
                break
            free[bound[np.argmin(mult[bound])]] = True  # release the most violated bound
        else:
            current = w[free]
            direction = x - current
            shrinking = np.flatnonzero(direction < 0)
            ratios = current[shrinking] / -direction[shrinking]
            w[free] = np.maximum(current + min(1.0, ratios.min()) * direction, 0.0)
            block = np.flatnonzero(free)[shrinking[np.argmin(ratios)]]
            w[block] = 0.0
            free[block] = False  # the blocking bound joins the working set
    _, residual = _kkt(A, b, av, w, free)
    full = np.ones(a.size)
    full[var] = w
    objective = float(np.sum((C @ full - mu) ** 2) + lam * np.sum((full - 1.0) ** 2))
    return QPResult(full, status, float(residual), iterations, objective)
