"""Best-match Jaccard of planted vs recovered blocks' cell sets U×V (Prelić et al. 2006)."""

from __future__ import annotations

import numpy as np

from repro.common.claims import over_seeds


def cell_jaccard(U1, V1, U2, V2) -> float:
    """|U1×V1 ∩ U2×V2| / |U1×V1 ∪ U2×V2|, from the sides alone."""
    inter = len(np.intersect1d(U1, U2)) * len(np.intersect1d(V1, V2))
    union = len(U1) * len(V1) + len(U2) * len(V2) - inter
    return inter / union if union else 1.0


def best_match(truth: dict, found: dict) -> np.ndarray:
    """Per planted block, the best Jaccard over recovered factors of the same sign."""
    scores = []
    for U, V, s in zip(truth["rows"], truth["cols"], truth["signs"], strict=True):
        same = [
            cell_jaccard(U, V, U2, V2)
            for U2, V2, s2 in zip(found["rows"], found["cols"], found["signs"], strict=True)
            if s2 == s
        ]
        scores.append(max(same, default=0.0))
    return np.asarray(scores)


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
