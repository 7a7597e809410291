"""Best-match Jaccard of planted vs recovered blocks' cell sets U×V (Prelić et al. 2006)."""

from __future__ import annotations

import numpy as np


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


def noise_grid(noise: dict, method: str):
    """(deletions, backgrounds, grid) of a noise study: mean best Jaccard over seeds per
    deletion (rows) × background (columns) for one method."""
    rows = [r for r in noise["rows"] if r["method"] == method]
    dels = sorted({r["deletion"] for r in rows})
    bgs = sorted({r["background"] for r in rows})
    cells = {}
    for r in rows:
        cells.setdefault((r["deletion"], r["background"]), []).append(r["mean_best_jaccard"])
    return dels, bgs, np.array([[np.mean(cells[d, b]) for b in bgs] for d in dels])
