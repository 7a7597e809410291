"""Best-match Jaccard of planted vs recovered blocks' cell sets U×V (Prelić et al. 2006)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from repro.common.claims import over_seeds


def _membership(sides, size: int) -> sparse.csr_matrix:
    """(blocks × size) 0/1 matrix: row b marks the indices in ``sides[b]``."""
    lengths = [len(side) for side in sides]
    indices = np.concatenate([np.asarray(side, dtype=np.int64) for side in sides])
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    data = np.ones(len(indices), dtype=np.int64)
    return sparse.csr_matrix((data, indices, indptr), shape=(len(sides), size))


def best_match(truth: dict, found: dict) -> np.ndarray:
    """Per planted block, the best Jaccard |U1×V1 ∩ U2×V2| / |U1×V1 ∪ U2×V2| over recovered
    factors of the same sign (0 where none has it). A product set's intersection is the
    product of the sides' intersections, so every pair comes from two sparse products."""
    if not len(truth["rows"]):
        return np.zeros(0)
    if not len(found["rows"]):
        return np.zeros(len(truth["rows"]))
    sides = {}
    for key in ("rows", "cols"):
        size = 1 + max(int(np.max(s, initial=-1)) for s in (*truth[key], *found[key]))
        planted, recovered = (_membership(d[key], size) for d in (truth, found))
        shared = (planted @ recovered.T).toarray()
        sides[key] = (shared, planted.sum(1).A1, recovered.sum(1).A1)
    (rows, planted_rows, found_rows), (cols, planted_cols, found_cols) = sides.values()
    inter = rows * cols
    union = (planted_rows * planted_cols)[:, None] + (found_rows * found_cols)[None, :] - inter
    jaccard = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
    same_sign = np.equal.outer(np.asarray(truth["signs"]), np.asarray(found["signs"]))
    return np.where(same_sign, jaccard, 0.0).max(axis=1)


def recovery_metrics(truth: dict, found: dict) -> dict:
    scores = best_match(truth, found)
    return {
        "mean_best_jaccard": float(scores.mean()) if len(scores) else float("nan"),
        "fraction_above_0_9": float((scores > 0.9).mean()) if len(scores) else float("nan"),
        "planted_blocks": len(scores),
        "recovered_factors": len(found["rows"]),
    }


def noise_cells(noise: dict, method: str) -> dict[tuple[float, float], dict[int, float]]:
    """(deletion, background) -> {seed: mean best Jaccard} of one method in a noise study."""
    cells = {}
    for r in noise["rows"]:
        if r["method"] == method:
            cells.setdefault((r["deletion"], r["background"]), {})[r["seed"]] = r[
                "mean_best_jaccard"
            ]
    return cells


def noise_grid(noise: dict, method: str):
    """(deletions, backgrounds, grid) of a noise study: mean best Jaccard over seeds per
    deletion (rows) × background (columns) for one method; NaN where a seed has no value
    (:func:`repro.common.claims.over_seeds`)."""
    cells = noise_cells(noise, method)
    dels = sorted({d for d, _ in cells})
    bgs = sorted({b for _, b in cells})

    def mean(d, b):
        value, _ = over_seeds(cells.get((d, b), {}), np.mean)
        return np.nan if value is None else value

    return dels, bgs, np.array([[mean(d, b) for b in bgs] for d in dels])
