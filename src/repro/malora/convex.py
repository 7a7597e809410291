"""The linear adapters' convex problem, solved to a certified tolerance.

A rank-r LoRA update ΔW = B A of one task's head rows, trained on
CE(offset + x ΔWᵀ) + (λ/2)(‖A‖² + ‖B‖²), has the same minimum as the convex problem

    P(W) = (1/n) Σ_i ℓ_i(o_i + W z_i) + λ‖W‖_*,   ℓ_i(s) = log Σ_j e^{s_j} − s_{y_i},

whenever r ≥ the rank of its minimiser (k classes: rank ≤ k − 1, as every CE minimiser has
zero-sum rows), because min over factorisations of (‖A‖² + ‖B‖²)/2 is ‖BA‖_*. We minimise the
factorised objective with L-BFGS and certify the result with the Fenchel duality gap

    P(W) − D(U) ≥ P(W) − P*,   D(U) = −(1/n) Σ_i Σ_j q_ij log q_ij + ⟨U, O⟩,

where U = c (P − Y)/n is the loss gradient at W scaled by c = min(1, λ / ‖Uᵀ Z‖₂) into the
dual feasible set, and q_i = c p_i + (1 − c) e_{y_i} (a point of the simplex, so D is
finite). At the optimum the gap is 0; it bounds how far any adapter is from the optimum
without a second solver (the unit tests compare it with cvxpy's optimum).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import minimize


def _probabilities(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax probabilities and log-probabilities (no log of an underflowed 0)."""
    z = scores - scores.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return np.exp(log_p), log_p


def objective(z, offset, local_y, weight, lam: float) -> float:
    """P(W): mean cross-entropy plus λ‖W‖_* (W: classes × features of ``z``)."""
    _, log_p = _probabilities(offset + z @ weight.T)
    ce = -float(np.mean(log_p[np.arange(len(local_y)), local_y]))
    return ce + lam * float(np.linalg.norm(weight, ord="nuc"))


def duality_gap(z, offset, local_y, weight, lam: float) -> float:
    """P(W) − D(U) ≥ P(W) − P* (see the module docstring); never negative up to rounding."""
    n = len(local_y)
    onehot = np.eye(weight.shape[0])[local_y]
    p, _ = _probabilities(offset + z @ weight.T)
    u = (p - onehot) / n
    spectral = float(np.linalg.norm(u.T @ z, ord=2))
    c = 1.0 if spectral <= lam else lam / spectral
    q = c * p + (1 - c) * onehot
    entropy = float(np.sum(np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0)))
    dual = -entropy / n + c * float(np.sum(u * offset))
    return objective(z, offset, local_y, weight, lam) - dual


@dataclasses.dataclass(frozen=True)
class Converged:
    b: np.ndarray  # classes × rank
    a: np.ndarray  # rank × features
    objective: float  # the factorised objective at (B, A)
    gap: float  # duality gap of BA: an upper bound on objective − optimum
    iterations: int


def converge_lora(z, offset, local_y, b, a, lam: float, *, max_iter: int = 20_000) -> Converged:
    """L-BFGS on the factorised objective from (B, A) until it stops improving."""
    k, r = b.shape
    n = len(local_y)
    rows = np.arange(n)

    def value_and_grad(v):
        bb, aa = v[: k * r].reshape(k, r), v[k * r :].reshape(r, -1)
        p, log_p = _probabilities(offset + z @ (bb @ aa).T)
        loss = -float(np.mean(log_p[rows, local_y]))
        p[rows, local_y] -= 1.0
        g = (p / n).T @ z  # classes × features
        value = loss + 0.5 * lam * (float(np.sum(aa * aa)) + float(np.sum(bb * bb)))
        grad = np.concatenate([(g @ aa.T + lam * bb).ravel(), (bb.T @ g + lam * aa).ravel()])
        return value, grad

    result = minimize(
        value_and_grad,
        np.concatenate([b.ravel(), a.ravel()]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "maxcor": 30, "gtol": 1e-12, "ftol": 1e-16},
    )
    bb, aa = result.x[: k * r].reshape(k, r), result.x[k * r :].reshape(r, -1)
    gap = duality_gap(z, offset, local_y, bb @ aa, lam)
    return Converged(bb, aa, float(result.fun), float(gap), int(result.nit))


def converge_ridge(x, local_y, weight, weight_decay: float, *, max_iter: int = 20_000):
    """W0: L-BFGS on CE(x Wᵀ) + (wd/2)‖W‖² from ``weight``; returns (W, gap bound).

    The objective is wd-strongly convex, so objective − optimum ≤ ‖∇‖² / (2 wd)."""
    n, rows = len(local_y), np.arange(len(local_y))
    shape = weight.shape

    def value_and_grad(v):
        w = v.reshape(shape)
        p, log_p = _probabilities(x @ w.T)
        loss = -float(np.mean(log_p[rows, local_y]))
        p[rows, local_y] -= 1.0
        grad = (p / n).T @ x + weight_decay * w
        return loss + 0.5 * weight_decay * float(np.sum(w * w)), grad.ravel()

    result = minimize(
        value_and_grad,
        weight.ravel(),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "maxcor": 30, "gtol": 1e-12, "ftol": 1e-16},
    )
    grad = value_and_grad(result.x)[1]
    return result.x.reshape(shape), float(grad @ grad) / (2 * weight_decay)
