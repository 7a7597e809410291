"""Truncated SVD at the same parameter budget as a decomposition (reconstruction error)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def svd_at_budget(A: sp.spmatrix, budget: int, *, dense_below: int = 600, seed: int = 0) -> dict:
    """Rank k = ⌊budget / (m + n + 1)⌋ (≥ 1) SVD of A and its relative Frobenius error.

    A rank-k SVD stores k(m + n + 1) numbers; ‖A − A_k‖²_F = ‖A‖²_F − Σ_{i≤k} σ_i².
    """
    A = sp.csr_matrix(A, dtype=np.float64)
    m, n = A.shape
    k = int(min(max(1, budget // (m + n + 1)), min(m, n) - 1))
    total = float(A.multiply(A).sum())
    if min(m, n) <= dense_below:
        sigma = np.linalg.svd(A.toarray(), compute_uv=False)[:k]
    else:
        v0 = np.random.default_rng(seed).standard_normal(min(m, n))
        sigma = sla.svds(A, k=k, return_singular_vectors=False, v0=v0)
    kept = float(np.sum(np.asarray(sigma) ** 2))
    return {
        "svd_rank": k,
        "svd_parameters": k * (m + n + 1),
        "svd_rel_error": float(np.sqrt(max(total - kept, 0.0) / total)) if total else 0.0,
    }
