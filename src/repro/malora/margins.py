"""Multiclass logit margins: per example, and the robust statistics MaLoRA scales by.

The margin of example i is (logits_i)_{y_i} − max_{c≠y_i} (logits_i)_c: positive when it is
classified correctly, and homogeneous of degree 1 in the logits (so m(αW) = α m(W)).
"""

from __future__ import annotations

import numpy as np

STATS = ("min", "quantile", "softmin")


def _as_numpy(values) -> np.ndarray:
    if type(values).__module__.startswith("torch"):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64)


def per_example_margins(logits, y) -> np.ndarray:
    """(logits_i)_{y_i} − max_{c≠y_i} (logits_i)_c for every row i (at least two classes)."""
    logits, y = _as_numpy(logits), np.asarray(_as_numpy(y), dtype=np.int64)
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must be (examples, classes ≥ 2), got shape {logits.shape}")
    if y.shape != (logits.shape[0],):
        raise ValueError(f"labels must be ({logits.shape[0]},), got shape {y.shape}")
    if logits.shape[0] == 0:
        raise ValueError("no examples: a margin of an empty set is undefined")
    if y.min() < 0 or y.max() >= logits.shape[1]:
        raise ValueError(f"labels must lie in [0, {logits.shape[1]}), got {y.min()}..{y.max()}")
    rows = np.arange(len(y))
    true = logits[rows, y]
    others = logits.copy()
    others[rows, y] = -np.inf
    return true - others.max(axis=1)


def summarise_margins(margins, *, stat: str = "min", q: float = 0.05, tau=None) -> float:
    """The statistic of per-example margins: min, the q-th quantile, or the soft-min.

    The soft-min −τ log mean exp(−m_i/τ) lies between the min (τ → 0) and the mean (τ → ∞);
    ``tau=None`` takes τ as the standard deviation of the margins (1 when they are all equal),
    so the statistic stays homogeneous (scaling the logits by α scales it by α).
    """
    m = _as_numpy(margins).ravel()
    if stat == "min":
        return float(m.min())
    if stat == "quantile":
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must lie in [0, 1], got {q}")
        return float(np.quantile(m, q))
    if stat == "softmin":
        if tau is None:
            scale = float(m.std()) or 1.0
        else:
            scale = float(tau)
        if scale <= 0:
            raise ValueError(f"tau must be positive, got {tau}")
        z = -m / scale
        top = z.max()  # log-mean-exp without overflow
        return float(-scale * (top + np.log(np.mean(np.exp(z - top)))))
    raise ValueError(f"stat must be one of {STATS}, got {stat!r}")


def margin(logits, y, *, stat: str = "min", q: float = 0.05, tau=None) -> float:
    """Unnormalised multiclass margin of a set: ``stat`` (min/quantile/softmin) of per-example
    margins."""
    return summarise_margins(per_example_margins(logits, y), stat=stat, q=q, tau=tau)


def normalised_margin(weight, x, y, **stat) -> float:
    """γ(W; D) = m(W; D) / ‖W‖_F for a linear classifier with logits x Wᵀ."""
    weight, x = _as_numpy(weight), _as_numpy(x)
    return margin(x @ weight.T, y, **stat) / float(np.linalg.norm(weight))
