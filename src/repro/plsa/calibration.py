"""Temperature scaling and calibration metrics for node (or pair) classifiers.

MLLS-type estimators (PLSA's EM included) are consistent only with a calibrated predictor,
so the temperature is fitted on held-out *source* data before any estimation.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

LOG_T_BOUNDS = (np.log(1e-2), np.log(1e2))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of logits / T, stable for large logits."""
    return np.exp(log_softmax(np.asarray(logits, dtype=float) / temperature, axis=1))


def nll(probs: np.ndarray, labels: np.ndarray) -> float:
    """Mean negative log-likelihood of the true labels (probabilities floored at 1e-300)."""
    picked = probs[np.arange(len(labels)), labels]
    return float(-np.mean(np.log(np.maximum(picked, 1e-300))))


def _nll_from_logits(logits: np.ndarray, labels: np.ndarray, temperature: float) -> float:
    # From logits directly: exact even where softmax would underflow to 0.
    return float(
        -np.mean(log_softmax(logits / temperature, axis=1)[np.arange(len(labels)), labels])
    )


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """T > 0 minimising the NLL of softmax(logits / T); searched on log T in [1e-2, 1e2].

    The NLL is not convex in T but it is unimodal in practice; bounded Brent on log T keeps
    T positive and is scale-free.
    """
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    result = minimize_scalar(
        lambda log_t: _nll_from_logits(logits, labels, np.exp(log_t)),
        bounds=LOG_T_BOUNDS,
        method="bounded",
        options={"xatol": 1e-7},
    )
    return float(np.exp(result.x))


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    """Sum over equal-width confidence bins (lo, hi] of |bin| / n * |accuracy - confidence|."""
    confidence = probs.max(axis=1)
    correct = probs.argmax(axis=1) == labels
    which = np.clip(np.ceil(confidence * bins).astype(np.int64) - 1, 0, bins - 1)
    gap = np.bincount(which, weights=correct - confidence, minlength=bins)
    return float(np.abs(gap).sum() / len(labels))


def calibration_report(logits: np.ndarray, labels: np.ndarray, bins: int = 15) -> dict:
    """ECE of softmax(logits) before and after temperature scaling, on held-out data.

    ``ece_after`` is cross-fitted, so that it is not scored on the data its temperature
    was fitted on: the even-indexed and the odd-indexed rows are each scaled with the
    temperature fitted on the other half (no random draw, so nothing else in a run moves).
    """
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) < 4:  # a half would be too small to fit a temperature on
        return {"ece_before": float("nan"), "ece_after": float("nan")}
    halves = (np.arange(len(labels)) % 2 == 0, np.arange(len(labels)) % 2 == 1)
    scaled = np.empty_like(logits)
    for score, fit in (halves, halves[::-1]):
        scaled[score] = softmax(logits[score], fit_temperature(logits[fit], labels[fit]))
    return {
        "ece_before": expected_calibration_error(softmax(logits), labels, bins),
        "ece_after": expected_calibration_error(scaled, labels, bins),
    }
