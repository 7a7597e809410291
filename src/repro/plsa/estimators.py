"""Estimators of the target edge class-pair distribution pi^T and the derived weights.

Inputs are calibrated node probabilities P (n, k); edge_index (2, E) lists directed edges
(both directions of each undirected edge). Pair cells are flattened as i * k + j everywhere.
Memory: nothing here allocates E x k^2 or E x k; edges are processed in chunks of
CHUNK_EDGES, so the largest arrays are the inputs themselves.

* hard labels: pair counts of argmax labels; StruRW's own weights B_T / B_S
  (``strurw_edge_ratio``).
* moment matching (Pair-Align): phi(u, v) = P_u (x) P_v. Under CSS, E[phi | ij] is the same
  in both domains, so with w = pi^T / pi^S
      E_T[phi] = sum_ij pi^T_ij E[phi | ij] = sum_ij w_ij pi^S_ij E_S[phi | ij] = C w,
  where C[ab, ij] = E_S[phi_ab 1{(y_u, y_v) = (i, j)}] (its column sums are pi^S when
  the rows of P are probabilities). w solves an exact QP (repro.plsa.qp).
* PLSA's pairwise-likelihood EM lives in repro.plsa.em.
"""

from __future__ import annotations

import numpy as np

from repro.plsa.csbm import pair_distribution
from repro.plsa.qp import solve_simplex_qp

# Edges per chunk (here and in repro.plsa.em): E never sets the memory. Measured by
# benchmarks/plsa_estimators.py at E = 10^6, k = 20 (one thread, loaded machine): 0.425 and
# 0.441 s per EM iteration with chunks of 4096 and 8192 edges, 0.515 / 0.630 / 0.654 with
# 2^14 / 2^16 / 2^18 (the buffers leave the cache).
CHUNK_EDGES = 8192


def l1_error(pi_hat: np.ndarray, pi_true: np.ndarray) -> float:
    return float(np.abs(np.asarray(pi_hat) - np.asarray(pi_true)).sum())


def hard_label_estimate(P: np.ndarray, edge_index: np.ndarray, k: int) -> np.ndarray:
    """Pair distribution of argmax labels over the target edges.

    StruRW's B_T(i, j) = count_ij / (n_i n_j) with predicted class sizes n_i, so this
    pi_ij = count_ij / E = B_T(i, j) n_i n_j / E: the same counts, normalised per edge
    instead of per node pair. It is biased whenever the classifier errs.
    """
    return pair_distribution(edge_index, np.asarray(P).argmax(axis=1), k)


def chunks(num_edges: int, chunk_edges: int):
    """Consecutive slices of at most ``chunk_edges`` edges covering range(num_edges)."""
    for start in range(0, num_edges, chunk_edges):
        yield slice(start, min(start + chunk_edges, num_edges))


def pair_moments(
    P: np.ndarray, edge_index: np.ndarray, *, chunk_edges: int = CHUNK_EDGES
) -> np.ndarray:
    """mu = mean over edges of P_u (x) P_v, flattened (k^2,): k x k products over edge chunks."""
    u, v = edge_index
    total = np.zeros((P.shape[1], P.shape[1]))
    for rows in chunks(edge_index.shape[1], chunk_edges):
        total += P[u[rows]].T @ P[v[rows]]
    return total.ravel() / edge_index.shape[1]


def pair_confusion(
    P_source: np.ndarray,
    y_source: np.ndarray,
    source_edge_index: np.ndarray,
    k: int,
    *,
    chunk_edges: int = CHUNK_EDGES,
) -> np.ndarray:
    """C[ab, ij] = mean over source edges of (P_u (x) P_v)_ab 1{(y_u, y_v) = (i, j)}.

    Edges are sorted by true pair cell; column ij is then P_U^T P_V over that cell's edges.
    ``P_source`` may be any per-node moment (probabilities, or logits as Pair-Align's
    training scripts use). Peak memory is two chunk x k gathers, never E x k^2.
    """
    u, v = source_edge_index
    cell = y_source[u].astype(np.int64) * k + y_source[v]
    order = np.argsort(cell, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=k * k))])
    C = np.zeros((P_source.shape[1] ** 2, k * k))
    for c in np.flatnonzero(np.diff(bounds)):
        edges = order[bounds[c] : bounds[c + 1]]
        for rows in chunks(edges.size, chunk_edges):
            C[:, c] += (P_source[u[edges[rows]]].T @ P_source[v[edges[rows]]]).ravel()
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


def strurw_edge_ratio(
    pred_target: np.ndarray,
    target_edge_index: np.ndarray,
    y_source: np.ndarray,
    source_edge_index: np.ndarray,
    k: int,
) -> np.ndarray:
    """StruRW's edge weights B_T / B_S (Liu et al. 2023, ``Utils/edge_rw.py``).

    B(i, j) = #directed edges between class i and class j / (n_i n_j), from the true labels
    on the source and the hard pseudo-labels on the target; a ratio that is inf or nan
    (no source edges in the cell) is set to 1, as in the published code.
    """

    def block(labels, edge_index):
        counts = np.bincount(labels[edge_index[0]] * k + labels[edge_index[1]], minlength=k * k)
        sizes = np.bincount(labels, minlength=k).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return counts.reshape(k, k) / np.outer(sizes, sizes)

    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = block(np.asarray(pred_target), target_edge_index) / block(
            np.asarray(y_source), source_edge_index
        )
    ratio[~np.isfinite(ratio)] = 1.0
    return ratio


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
