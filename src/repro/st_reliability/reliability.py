"""Reliability signals and how well they rank per-prediction quality (brief §2.4).

Predicted-NN-distance d̂ = min over the line's training perturbations of dist(Δ̂, Δ_t);
the oracle uses the true Δ instead of Δ̂; the magnitude baseline is ‖Δ̂‖₂. Every distance
is computed with L2 and with cosine distance. For pooling across (encoder, line) groups a
group's distances are divided by its median leave-one-out train-to-train NN distance.
"""

from __future__ import annotations

import numpy as np

METRICS = ("l2", "cosine")


def _pairwise(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
    if metric == "l2":
        sq = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2 * a @ b.T
        return np.sqrt(np.maximum(sq, 0.0))
    if metric == "cosine":
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - (a @ b.T) / (na[:, None] * nb[None, :])
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def predicted_nn_distance(pred_deltas, train_deltas, metric: str = "l2") -> np.ndarray:
    """Per prediction (row of ``pred_deltas``), the distance to the nearest training Δ."""
    train = np.atleast_2d(np.asarray(train_deltas, float))
    if train.shape[0] == 0:
        raise ValueError("no training deltas to compare with")
    return _pairwise(pred_deltas, train, metric).min(1)


def loo_train_nn_distance(train_deltas, metric: str) -> np.ndarray:
    """Each training Δ's distance to its nearest *other* training Δ."""
    d = _pairwise(train_deltas, train_deltas, metric)
    np.fill_diagonal(d, np.inf)
    return d.min(1)


def centred_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks along the last axis (ties get average ranks) minus their mean."""
    from scipy.stats import rankdata  # here, not at import: the config check loads this module

    r = rankdata(x, axis=-1)
    return r - r.mean(-1, keepdims=True)


def rank_correlation(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Pearson correlation of centred ranks along the last axis: Spearman's ρ."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx**2).sum(-1) * (ry**2).sum(-1))


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ along the last axis (ties get average ranks), vectorised over rows."""
    return rank_correlation(centred_ranks(x), centred_ranks(y))


def partial_from(r_qd, r_qm, r_dm):
    """The partial correlation of q and d given m from the three pairwise ones."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (r_qd - r_qm * r_dm) / np.sqrt((1 - r_qm**2) * (1 - r_dm**2))


def partial_spearman(q: np.ndarray, d: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Spearman of q and d with the magnitude m partialled out (on ranks), along axis -1."""
    return partial_from(spearman(q, d), spearman(q, m), spearman(d, m))


def decile_curve(score: np.ndarray, q: np.ndarray, n_bins: int = 10) -> dict[str, list[float]]:
    """Mean quality per score decile (equal-count bins), low scores first."""
    order = np.argsort(score, kind="stable")
    bins = np.array_split(order, n_bins)
    return {
        "score": [float(np.mean(score[b])) for b in bins if len(b)],
        "quality": [float(np.mean(q[b])) for b in bins if len(b)],
    }
