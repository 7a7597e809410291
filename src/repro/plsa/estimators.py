"""Estimators of the target edge class-pair distribution pi^T and the derived weights.

Inputs are calibrated node probabilities P (n, k); edge_index (2, E) lists directed edges
(both directions of each undirected edge). Pair cells are flattened as i * k + j everywhere.
Memory: nothing here allocates E x k^2; the largest arrays are E x k (gathered node rows).

* hard labels (StruRW): pair counts of argmax labels.
* moment matching (Pair-Align): phi(u, v) = P_u (x) P_v. Under CSS, E[phi | ij] is the same
  in both domains, so with w = pi^T / pi^S
      E_T[phi] = sum_ij pi^T_ij E[phi | ij] = sum_ij w_ij pi^S_ij E_S[phi | ij] = C w,
  where C[ab, ij] = E_S[phi_ab 1{(y_u, y_v) = (i, j)}] (its column sums are pi^S, because
  the rows of P sum to one). w solves an exact QP (repro.plsa.qp).
* PLSA (factorised, brief §2.3): maximise L(pi) = mean_e log sum_ij pi_ij g_i(u) g_j(v),
  g = P / p^S, over the simplex by EM, optionally SQUAREM-accelerated.
"""

from __future__ import annotations

import numpy as np

from repro.plsa.csbm import pair_distribution
from repro.plsa.qp import solve_simplex_qp

TINY = 1e-300  # floor on per-edge likelihoods: keeps log and division finite


def l1_error(pi_hat: np.ndarray, pi_true: np.ndarray) -> float:
    return float(np.abs(np.asarray(pi_hat) - np.asarray(pi_true)).sum())


def hard_label_estimate(P: np.ndarray, edge_index: np.ndarray, k: int) -> np.ndarray:
    """Pair distribution of argmax labels over the target edges.

    StruRW's B_T(i, j) = count_ij / (n_i n_j) with predicted class sizes n_i, so this
    pi_ij = count_ij / E = B_T(i, j) n_i n_j / E: the same counts, normalised per edge
    instead of per node pair. It is biased whenever the classifier errs.
    """
    return pair_distribution(edge_index, np.asarray(P).argmax(axis=1), k)


def pair_moments(P: np.ndarray, edge_index: np.ndarray) -> np.ndarray:
    """mu = mean over edges of P_u (x) P_v, flattened (k^2,): one k x k product, E x k memory."""
    u, v = edge_index
    return (P[u].T @ P[v]).ravel() / edge_index.shape[1]


def pair_confusion(
    P_source: np.ndarray, y_source: np.ndarray, source_edge_index: np.ndarray, k: int
) -> np.ndarray:
    """C[ab, ij] = mean over source edges of (P_u (x) P_v)_ab 1{(y_u, y_v) = (i, j)}.

    Edges are sorted by true pair cell; column ij is then P_U^T P_V over that cell's edges
    (a k x k product). Peak memory is two E x k gathers, never E x k^2 (let alone E x k^4).
    """
    u, v = source_edge_index
    cell = y_source[u].astype(np.int64) * k + y_source[v]
    order = np.argsort(cell, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=k * k))])
    pu, pv = P_source[u[order]], P_source[v[order]]
    C = np.zeros((k * k, k * k))
    for c in np.flatnonzero(np.diff(bounds)):
        rows = slice(bounds[c], bounds[c + 1])
        C[:, c] = (pu[rows].T @ pv[rows]).ravel()
    return C / source_edge_index.shape[1]


def moment_matching_estimate(
    P: np.ndarray,
    edge_index: np.ndarray,
    confusion: np.ndarray,
    pi_source: np.ndarray,
    *,
    lam: float = 0.0,
) -> tuple[np.ndarray, dict]:
    """Exact argmin_w ||C w - mu_T||^2 + lam ||w - 1||^2, w >= 0, sum pi^S w = 1; pi^T = pi^S w."""
    k = int(round(np.sqrt(confusion.shape[1])))
    a = np.asarray(pi_source, dtype=float).ravel()
    result = solve_simplex_qp(confusion, pair_moments(P, edge_index), a, lam=lam)
    pi_hat = (a * result.w).reshape(k, k)
    pi_hat = pi_hat / pi_hat.sum()  # sum is 1 up to rounding already
    info = {
        "w": result.w.reshape(k, k),
        "lam": float(lam),
        "status": result.status,
        "kkt_residual": result.kkt_residual,
        "iterations": result.iterations,
        "objective": result.objective,
    }
    return pi_hat, info


def pairwise_loglik(pi: np.ndarray, G_u: np.ndarray, G_v: np.ndarray) -> float:
    """L(pi) = mean_e log sum_ij pi_ij G_u[e, i] G_v[e, j], as two E x k products."""
    z = np.einsum("ej,ej->e", G_u @ pi, G_v)
    return float(np.mean(np.log(np.maximum(z, TINY))))


def _em_step(pi, G_u, G_v, work=None) -> tuple[np.ndarray, float]:
    """One EM map and L(pi) (free: the E-step normaliser is the per-edge likelihood).

    r_e(ij) = pi_ij g_i(u) g_j(v) / Z_e and the M-step mean_e r_e is
    pi * (G_u^T (G_v / Z)) / E: never an E x k x k array. ``work`` = (E x k, E) buffers
    reused across iterations; fresh 100 MB arrays each step cost as much as the products.
    """
    buf, z = work if work is not None else (np.empty_like(G_u), np.empty(G_u.shape[0]))
    np.matmul(G_u, pi, out=buf)
    np.einsum("ej,ej->e", buf, G_v, out=z)
    np.maximum(z, TINY, out=z)
    np.divide(G_v, z[:, None], out=buf)
    new = pi * (G_u.T @ buf) / z.size
    return new / new.sum(), float(np.mean(np.log(z)))


def _squarem_point(pi, p1, p2):
    """SqS3 extrapolation (Varadhan & Roland 2008), steps backtracked toward alpha = -1 (= p2)
    until the point stays in the simplex; None when no step longer than plain EM fits."""
    r, v = p1 - pi, p2 - 2 * p1 + pi
    norm_v = np.linalg.norm(v)
    if norm_v == 0:
        return None
    alpha = min(-np.linalg.norm(r) / norm_v, -1.0)
    for _ in range(10):
        if alpha > -1.0 - 1e-3:
            return None
        point = pi - 2 * alpha * r + alpha**2 * v
        if point.min() >= 0:
            return point / point.sum()
        alpha = (alpha - 1.0) / 2.0
    return None


def plsa_estimate(
    P: np.ndarray,
    edge_index: np.ndarray,
    prior_source: np.ndarray,
    *,
    pi_init: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    accelerate: bool = True,
) -> tuple[np.ndarray, dict]:
    """Maximum pairwise likelihood pi^T by EM (brief §2.3, factorised posterior).

    ``iterations`` counts EM maps (passes over the edges), the cost unit for both variants;
    convergence is a plain EM step changing no cell by tol or more. SQUAREM is monotone by
    construction: an extrapolated point is kept only if its likelihood is at least that of
    the plain EM iterate it replaces, so ``loglik_trace`` (L of every kept iterate, in
    order) never decreases.
    """
    k = P.shape[1]
    g = np.asarray(P, dtype=float) / np.asarray(prior_source, dtype=float)
    G_u, G_v = g[edge_index[0]], g[edge_index[1]]
    work = (np.empty_like(G_u), np.empty(G_u.shape[0]))
    pi = np.full((k, k), 1.0 / k**2) if pi_init is None else np.array(pi_init, dtype=float)
    pi = pi / pi.sum()
    trace: list[float] = []
    passes, converged = 0, False
    while passes < max_iter and not converged:
        p1, ll = _em_step(pi, G_u, G_v, work)
        passes += 1
        trace.append(ll)
        converged = np.abs(p1 - pi).max() < tol
        if converged or not accelerate or passes >= max_iter:
            pi = p1
            continue
        p2, ll1 = _em_step(p1, G_u, G_v, work)
        passes += 1
        trace.append(ll1)
        converged = np.abs(p2 - p1).max() < tol
        point = None if converged or passes >= max_iter else _squarem_point(pi, p1, p2)
        pi = p2
        if point is not None:
            p3, ll_point = _em_step(point, G_u, G_v, work)
            passes += 1
            if ll_point >= ll1:  # else keep the plain EM iterate p2 (L(p2) >= L(p1))
                trace.append(ll_point)
                pi = p3
    return pi, {"iterations": passes, "loglik_trace": trace, "converged": bool(converged)}


def edge_weights_gamma(
    pi_target: np.ndarray, pi_source: np.ndarray, *, delta: float = 1e-4
) -> np.ndarray:
    """gamma_ij = [pi^T_ij / sum_j' pi^T_ij'] / [pi^S_ij / sum_j' pi^S_ij'] after + delta."""
    t = np.asarray(pi_target, dtype=float) + delta
    s = np.asarray(pi_source, dtype=float) + delta
    return (t / t.sum(axis=1, keepdims=True)) / (s / s.sum(axis=1, keepdims=True))


def label_weights_mlls(
    P: np.ndarray, prior_source: np.ndarray, *, tol: float = 1e-8, max_iter: int = 1000
) -> np.ndarray:
    """Node-level MLLS / EM of Saerens et al. (2002): beta = p^T / p^S."""
    prior_source = np.asarray(prior_source, dtype=float)
    g = np.asarray(P, dtype=float) / prior_source
    p = prior_source.copy()
    for _ in range(max_iter):
        post = g * p
        new = (post / post.sum(axis=1, keepdims=True)).mean(axis=0)
        done = np.abs(new - p).max() < tol
        p = new
        if done:
            break
    return p / prior_source


def label_weights_bbse(
    P_source_val: np.ndarray,
    y_source_val: np.ndarray,
    P_target: np.ndarray,
    k: int,
    *,
    lam: float = 0.005,
) -> np.ndarray:
    """Pair-Align's node-level BBSE: the same exact QP on softmax moments, ridge lam toward 1.

    C[a, i] = mean over source validation nodes of P_a 1{y = i}; constraint p^S . beta = 1.
    """
    onehot = np.eye(k)[y_source_val]
    C = P_source_val.T @ onehot / len(y_source_val)
    return solve_simplex_qp(C, P_target.mean(axis=0), C.sum(axis=0), lam=lam).w
