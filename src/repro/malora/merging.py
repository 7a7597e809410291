"""The MaLoRA rule and the merge W(α) = W0 + Σ_t α_t ΔW_t, for arrays and state dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def malora_alphas(task_margins, base_margin: float | None = None) -> np.ndarray:
    """α_t = m_0 / m_t: every merged task gets the pre-training margin m_0.

    Without a usable pre-training margin (``None`` or ≤ 0) the scale falls back to the mean
    task margin, α_t = mean_s(m_s) / m_t, which still equalises the task margins (brief §2.3).
    A task margin ≤ 0 (the adapter misclassifies part of its own calibration data) has no
    equalising coefficient: that is an error, not a silent clip.
    """
    m = np.asarray(task_margins, dtype=np.float64)
    if m.ndim != 1 or m.size == 0:
        raise ValueError(f"task_margins must be a non-empty vector, got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise ValueError(
            f"every task margin must be finite and > 0 to equalise it, got {m.tolist()}; "
            "use a robust statistic (quantile/softmin) or more training"
        )
    if base_margin is None or not np.isfinite(base_margin) or base_margin <= 0:
        scale = float(m.mean())
    else:
        scale = float(base_margin)
    return scale / m


def _alpha_for(alpha, name: str) -> float:
    """A task's coefficient for parameter ``name``: one number, or a per-layer mapping."""
    if isinstance(alpha, Mapping):
        if name not in alpha:
            raise KeyError(f"per-layer alphas give no coefficient for {name!r}")
        return float(alpha[name])
    return float(alpha)


def merge(base, deltas: Sequence, alphas):
    """W0 + Σ_t α_t ΔW_t.

    ``base`` is an array (or tensor) and ``deltas`` a list of same-shaped ones; or ``base`` is
    a state dict and each delta a dict over a subset of its keys (parameters no adapter
    touches are copied unchanged). ``alphas`` holds one number per task, or per task a dict of
    per-parameter numbers (per-layer α). Nothing is modified in place.
    """
    if len(deltas) != len(alphas):
        raise ValueError(f"{len(deltas)} deltas but {len(alphas)} alphas")
    if not isinstance(base, Mapping):
        merged = base * 1.0  # a copy, array or tensor alike
        for delta, alpha in zip(deltas, alphas, strict=True):
            if delta.shape != base.shape:
                raise ValueError(f"delta of shape {tuple(delta.shape)} for {tuple(base.shape)}")
            merged = merged + float(alpha) * delta
        return merged
    merged = {name: value * 1.0 for name, value in base.items()}
    for t, (delta, alpha) in enumerate(zip(deltas, alphas, strict=True)):
        for name, update in delta.items():
            if name not in merged:
                raise KeyError(f"delta {t} updates {name!r}, which the base does not have")
            if update.shape != merged[name].shape:
                raise ValueError(
                    f"delta {t}[{name!r}] has shape {tuple(update.shape)}, "
                    f"base has {tuple(merged[name].shape)}"
                )
            merged[name] = merged[name] + _alpha_for(alpha, name) * update
    return merged
