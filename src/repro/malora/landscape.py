"""The union margin of W(α) = W0 + Σ α_t ΔW_t as a function of α, on a whole grid at once.

Each (example i, competitor class c) pair gives a margin term (W(α)x_i)_{y_i} − (W(α)x_i)_c
that is affine in α; the union margin is their minimum, divided by ‖W(α)‖_F, a quadratic in
α. Terms that cannot be the minimum anywhere in the grid's box are dropped first (exactly:
a term whose smallest value on the box exceeds the smallest of all terms' largest values is
never the minimum), so dense grids over 2–3 coefficients cost little.
"""

from __future__ import annotations

import numpy as np


def margin_terms(base, deltas, x, y) -> tuple[np.ndarray, np.ndarray]:
    """(a0, A) with margin term j = a0_j + A_j · α, over all pairs (i, c ≠ y_i)."""
    y = np.asarray(y)
    n, k = len(y), base.shape[0]
    keep = np.ones((n, k), dtype=bool)
    keep[np.arange(n), y] = False

    def diffs(weight):
        logits = x @ weight.T
        return (logits[np.arange(n), y][:, None] - logits)[keep]

    return diffs(base), np.stack([diffs(d) for d in deltas], axis=1)


def _prune(a0, a, lo, hi):
    low = a0 + np.minimum(a * lo, a * hi).sum(axis=1)
    high = a0 + np.maximum(a * lo, a * hi).sum(axis=1)
    keep = low <= high.min()
    return a0[keep], a[keep]


def union_margins(base, deltas, x, y, alphas: np.ndarray, *, normalised: bool = True):
    """Union min-margin of W(α) for every row of ``alphas`` (grid points × tasks)."""
    alphas = np.atleast_2d(np.asarray(alphas, dtype=float))
    a0, a = margin_terms(base, deltas, x, y)
    a0, a = _prune(a0, a, alphas.min(axis=0), alphas.max(axis=0))
    values = np.empty(len(alphas))
    step = max(1, 2**22 // max(1, len(a0)))  # ≈ 32 MB of terms per chunk
    for start in range(0, len(alphas), step):
        chunk = alphas[start : start + step]
        values[start : start + len(chunk)] = (a0[None, :] + chunk @ a.T).min(axis=1)
    if not normalised:
        return values
    return values / weight_norms(base, deltas, alphas)


def weight_norms(base, deltas, alphas) -> np.ndarray:
    """‖W0 + Σ α_t ΔW_t‖_F for every row of ``alphas``."""
    flat = np.stack([np.ravel(d) for d in deltas])
    gram, cross = flat @ flat.T, flat @ np.ravel(base)
    alphas = np.atleast_2d(alphas)
    sq = np.sum(base**2) + 2 * alphas @ cross + np.einsum("gs,st,gt->g", alphas, gram, alphas)
    return np.sqrt(np.maximum(sq, 0.0))


def product_grid(axis: np.ndarray, n_tasks: int) -> np.ndarray:
    """Every combination of ``axis`` values for ``n_tasks`` coefficients (points × tasks)."""
    mesh = np.meshgrid(*[axis] * n_tasks, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def grid_optimum(base, deltas, x, y, axis: np.ndarray) -> tuple[np.ndarray, float]:
    """The grid point of largest normalised union margin."""
    grid = product_grid(np.asarray(axis, float), len(deltas))
    values = union_margins(base, deltas, x, y, grid)
    best = int(np.argmax(values))
    return grid[best], float(values[best])


def best_union_margin(
    base, deltas, x, y, *, axis, upper: float | None = None, tol: float = 1e-7, max_iter: int = 30
) -> tuple[np.ndarray, float]:
    """The largest normalised union margin over α ∈ [0, upper]^T (the oracle of brief §5).

    Starts from the optimum of a coarse grid (``axis``), then Dinkelbach's method for the
    ratio min_j(a_j + A_j α) / ‖W(α)‖, concave over convex: each step is a second-order cone
    program, max_α min_j(a_j + A_j α) − γ_k ‖W(α)‖, and γ rises to the exact maximum. The
    result is never below the grid optimum.
    """
    import cvxpy as cp  # an optional heavy import, as for the nuclear-norm SVM

    axis = np.asarray(axis, float)
    upper = float(axis.max()) if upper is None else float(upper)
    alpha, gamma = grid_optimum(base, deltas, x, y, axis)
    if gamma <= 0:  # f − γg is concave only for γ ≥ 0: keep the grid answer
        return alpha, gamma
    a0, a = margin_terms(base, deltas, x, y)
    flat = np.stack([np.ravel(d) for d in deltas], axis=1)
    var = cp.Variable(len(deltas))
    level = cp.Parameter(nonneg=True)
    objective = cp.min(a0 + a @ var) - level * cp.norm(np.ravel(base) + flat @ var)
    problem = cp.Problem(cp.Maximize(objective), [var >= 0, var <= upper])
    for _ in range(max_iter):
        level.value = gamma
        problem.solve(solver="CLARABEL")
        if var.value is None:
            break
        candidate = np.clip(var.value, 0.0, upper)
        value = float(union_margins(base, deltas, x, y, candidate)[0])
        if value <= gamma + tol:
            break
        alpha, gamma = candidate, value
    return alpha, gamma
