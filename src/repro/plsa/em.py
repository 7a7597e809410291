"""PLSA: maximum pairwise likelihood of the target edge class-pair distribution by EM.

Brief §2.3. The likelihood is a composite one over the target edges (an edge-weighted
U-statistic), maximised over the k x k simplex:

* factorised: L(pi) = mean_e log sum_ij pi_ij g_i(u) g_j(v), g = P / p^S, from calibrated
  node probabilities P (exact on CSBM with a feature-only predictor);
* pair classifier: L(pi) = mean_e log sum_ij pi_ij q_e(ij) / prior_ij, from a calibrated
  k^2-way classifier's posteriors q_e (repro.plsa.pair_classifier).

EM starts from the uniform point in both (and in every caller), optionally SQUAREM-
accelerated with a monotonicity safeguard. Edges are processed in chunks: memory is a few
chunk x k buffers beside the inputs, whatever E is.
"""

from __future__ import annotations

import numpy as np

from repro.plsa.estimators import CHUNK_EDGES, chunks

TINY = 1e-300  # floor on per-edge likelihoods: keeps log and division finite


class _FactorisedMap:
    """The EM map of the factorised likelihood L(pi) = mean_e log g_u^T pi g_v, g = P / p^S.

    r_e(ij) = pi_ij g_i(u) g_j(v) / Z_e and the M-step mean_e r_e is
    pi * sum_e g_u (g_v / Z_e)^T / E: never an E x k x k array. The chunk x k buffers are
    reused across iterations; unchunked, G_u, G_v and a buffer took 3 E k float64 (4.8 GB
    at E = 10^7, k = 20).
    """

    def __init__(self, g: np.ndarray, edge_index: np.ndarray, chunk_edges: int):
        self.g, self.u, self.v = g, edge_index[0], edge_index[1]
        size, k = min(chunk_edges, max(edge_index.shape[1], 1)), g.shape[1]
        self.gu, self.prod, self.gv = (np.empty((size, k)) for _ in range(3))
        self.z = np.empty(size)
        self.chunk_edges = chunk_edges

    def __call__(self, pi: np.ndarray) -> tuple[np.ndarray, float]:
        """One EM map and L(pi) (free: the E-step normaliser is the per-edge likelihood)."""
        total, loglik = np.zeros_like(pi), 0.0
        for rows in chunks(self.u.size, self.chunk_edges):
            m = rows.stop - rows.start
            gu, prod, gv, z = self.gu[:m], self.prod[:m], self.gv[:m], self.z[:m]
            np.take(self.g, self.u[rows], axis=0, out=gu)
            np.take(self.g, self.v[rows], axis=0, out=gv)
            np.matmul(gu, pi, out=prod)
            np.einsum("ej,ej->e", prod, gv, out=z)
            np.maximum(z, TINY, out=z)
            loglik += float(np.log(z).sum())
            np.divide(gv, z[:, None], out=gv)
            total += gu.T @ gv
        new = pi * total / self.u.size
        return new / new.sum(), loglik / self.u.size


class _PosteriorMap:
    """The EM map of L(pi) = mean_e log sum_c pi_c q[e, c] / prior_c over pair posteriors q;
    q / prior is formed chunk by chunk, never as a second E x k^2 array."""

    def __init__(self, q: np.ndarray, inverse_prior: np.ndarray, chunk_edges: int):
        self.q, self.inverse_prior, self.chunk_edges = q, inverse_prior, chunk_edges

    def __call__(self, pi: np.ndarray) -> tuple[np.ndarray, float]:
        flat, total, loglik = pi.ravel(), np.zeros(pi.size), 0.0
        for rows in chunks(self.q.shape[0], self.chunk_edges):
            G = self.q[rows] * self.inverse_prior
            z = np.maximum(G @ flat, TINY)
            loglik += float(np.log(z).sum())
            total += (1.0 / z) @ G
        new = (flat * total / self.q.shape[0]).reshape(pi.shape)
        return new / new.sum(), loglik / self.q.shape[0]


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


def _em(step, k: int, *, tol: float, max_iter: int, accelerate: bool):
    """EM (optionally SQUAREM) from the uniform point of the k x k simplex.

    Every path starts there (issue 16): a multiplicative EM update keeps zeros, so a start
    at pi^S could never give target mass to a cell with no source edges. ``iterations``
    counts EM maps (passes over the edges), the cost unit for both variants; convergence
    is a plain EM step changing no cell by tol or more. SQUAREM is monotone by
    construction: an extrapolated point is kept only if its likelihood is at least that of
    the plain EM iterate it replaces, so ``loglik_trace`` (L of every kept iterate, in
    order) never decreases.
    """
    pi = np.full((k, k), 1.0 / k**2)
    trace: list[float] = []
    passes, converged = 0, False
    while passes < max_iter and not converged:
        p1, ll = step(pi)
        passes += 1
        trace.append(ll)
        converged = np.abs(p1 - pi).max() < tol
        if converged or not accelerate or passes >= max_iter:
            pi = p1
            continue
        p2, ll1 = step(p1)
        passes += 1
        trace.append(ll1)
        converged = np.abs(p2 - p1).max() < tol
        point = None if converged or passes >= max_iter else _squarem_point(pi, p1, p2)
        pi = p2
        if point is not None:
            p3, ll_point = step(point)
            passes += 1
            if ll_point >= ll1:  # else keep the plain EM iterate p2 (L(p2) >= L(p1))
                trace.append(ll_point)
                pi = p3
    return pi, {"iterations": passes, "loglik_trace": trace, "converged": bool(converged)}


def plsa_estimate(
    P: np.ndarray,
    edge_index: np.ndarray,
    prior_source: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    accelerate: bool = True,
    chunk_edges: int = CHUNK_EDGES,
) -> tuple[np.ndarray, dict]:
    """Maximum pairwise likelihood pi^T by EM (brief §2.3, factorised posterior)."""
    g = np.asarray(P, dtype=float) / np.asarray(prior_source, dtype=float)
    step = _FactorisedMap(g, np.asarray(edge_index), chunk_edges)
    return _em(step, P.shape[1], tol=tol, max_iter=max_iter, accelerate=accelerate)


def plsa_pair_estimate(
    pair_posteriors: np.ndarray,
    pair_prior: np.ndarray,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    accelerate: bool = True,
    chunk_edges: int = CHUNK_EDGES,
) -> tuple[np.ndarray, dict]:
    """PLSA's EM over a pair classifier's calibrated posteriors q(i, j | e) (brief §2.3, 2).

    ``pair_posteriors`` is (E, k^2) over the target edges, ``pair_prior`` (k^2,) the pair
    distribution the classifier was trained on: L(pi) = mean_e log sum_ij pi_ij q_e(ij) /
    prior_ij. A cell the classifier never saw (prior 0) carries no evidence and stays at 0.
    """
    prior = np.asarray(pair_prior, dtype=float).ravel()
    inverse = np.zeros_like(prior)
    inverse[prior > 0] = 1.0 / prior[prior > 0]
    k = int(round(np.sqrt(prior.size)))
    step = _PosteriorMap(np.asarray(pair_posteriors, dtype=float), inverse, chunk_edges)
    return _em(step, k, tol=tol, max_iter=max_iter, accelerate=accelerate)
