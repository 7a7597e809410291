"""Closed forms of the theory under exact orthogonality (brief §2.2–2.3, reconstructed).

With W0's rows and every ΔW_t on disjoint class rows, Frobenius norms add, and on task t's
data only α_t ΔW_t x is non-zero among the task rows, so

    γ_union(α) = min(m_0, min_t α_t m_t) / √(‖W0‖² + Σ_t α_t² ‖ΔW_t‖²),

maximised by α_t = m_0 / m_t. Along the λ path the adapter is modelled as s(λ)·Ŵ, Ŵ the
unit-margin SVM of the task, s(λ) minimising the task loss L(sŴ) + λ s ‖Ŵ‖_* (the factorised
penalty at a balanced factorisation); the normalised margins then follow in closed form.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar


def union_margin_closed_form(base_margin, task_margins, base_norm, delta_norms, alphas) -> float:
    """γ_union(α) under exact orthogonality (see the module docstring)."""
    m, a = np.asarray(task_margins, float), np.asarray(alphas, float)
    n = np.asarray(delta_norms, float)
    return float(min(base_margin, np.min(a * m)) / np.sqrt(base_norm**2 + np.sum(a**2 * n**2)))


def mean_cross_entropy(logits: np.ndarray, local_y: np.ndarray) -> float:
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -float(np.mean(log_p[np.arange(len(local_y)), local_y]))


def ray_scale(x, local_y, direction, lam: float, *, offset=None, upper: float = 1e3) -> float:
    """s(λ) = argmin_{s ≥ 0} CE(offset + s x Ŵᵀ) + λ s ‖Ŵ‖_*, a 1-d convex problem.

    ``direction`` is the task's head block (its classes × features); ``offset`` the frozen
    base logits on those rows (zero under exact orthogonality).
    """
    x = np.asarray(x, float)
    scores = x @ np.asarray(direction, float).T
    base = np.zeros_like(scores) if offset is None else np.asarray(offset, float)
    nuclear = float(np.linalg.norm(direction, ord="nuc"))
    result = minimize_scalar(
        lambda s: mean_cross_entropy(base + s * scores, local_y) + lam * s * nuclear,
        bounds=(0.0, upper),
        method="bounded",
        options={"xatol": 1e-8},
    )
    return float(result.x)


def lambda_path_margins(*, base_margin, base_norm, svm_margin, svm_norm, scale) -> dict:
    """Normalised margins of W0 + sŴ: pre-training, fine-tuning and their union."""
    norm = np.sqrt(base_norm**2 + scale**2 * svm_norm**2)
    return {
        "pretrain": base_margin / norm,
        "finetune": scale * svm_margin / norm,
        "union": min(base_margin, scale * svm_margin) / norm,
    }
