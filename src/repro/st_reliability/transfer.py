"""Leave-one-group-out transfer of one acceptance threshold (brief §2.5).

For each held-out (encoder, line) group the rule — its *direction* (accept when the
score is ≤ τ, or ≥ τ) and τ — is fitted on the other groups by Youden's J, then applied
to the held-out group. The direction is fitted because the sign of a distance signal can
flip between L2 and cosine (the brief's prototype).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _rates(accept: np.ndarray, ok: np.ndarray) -> tuple[float, float]:
    """(TPR, TNR): accepted share of good predictions, rejected share of bad ones."""
    tpr = accept[ok].mean() if ok.any() else np.nan
    tnr = (~accept[~ok]).mean() if (~ok).any() else np.nan
    return float(tpr), float(tnr)


def fit_threshold(scores: np.ndarray, ok: np.ndarray) -> tuple[str, float, float]:
    """(direction, τ, J) maximising Youden's J = TPR + TNR − 1 over both directions and
    every cut between consecutive distinct scores (ties: the first found)."""
    scores, ok = np.asarray(scores, float), np.asarray(ok, bool)
    if ok.all() or not ok.any():
        raise ValueError("fitting a threshold needs both good and bad predictions")
    values = np.unique(scores)
    cuts = np.concatenate([[values[0] - 1], (values[1:] + values[:-1]) / 2, [values[-1] + 1]])
    best = ("<=", float(cuts[0]), -np.inf)
    for direction in ("<=", ">="):
        accept = (
            scores[None, :] <= cuts[:, None]
            if direction == "<="
            else scores[None, :] >= cuts[:, None]
        )
        tpr = accept[:, ok].mean(1)
        tnr = (~accept[:, ~ok]).mean(1)
        j = tpr + tnr - 1
        k = int(np.argmax(j))
        if j[k] > best[2]:
            best = (direction, float(cuts[k]), float(j[k]))
    return best


def apply_threshold(scores: np.ndarray, direction: str, tau: float) -> np.ndarray:
    scores = np.asarray(scores, float)
    return scores <= tau if direction == "<=" else scores >= tau


def own_rule_out_of_sample(scores, ok, *, seed: int = 0) -> float:
    """The group's own rule judged out of sample: its predictions split in two halves (each
    class split evenly, at random), the rule fitted on one half and applied to the other,
    balanced accuracy averaged over both ways. NaN when a half lacks a class."""
    scores, ok = np.asarray(scores, float), np.asarray(ok, bool)
    rng = np.random.default_rng(seed)
    half = np.zeros(len(ok), bool)
    for cls in (True, False):
        members = rng.permutation(np.flatnonzero(ok == cls))
        half[members[: len(members) // 2]] = True
    accuracies = []
    for fit_on in (half, ~half):
        test = ~fit_on
        if ok[fit_on].all() or not ok[fit_on].any() or ok[test].all() or not ok[test].any():
            return float("nan")
        direction, tau, _ = fit_threshold(scores[fit_on], ok[fit_on])
        tpr, tnr = _rates(apply_threshold(scores[test], direction, tau), ok[test])
        accuracies.append((tpr + tnr) / 2)
    return float(np.mean(accuracies))


def loo_threshold_transfer(scores, quality_ok, groups, *, quality=None) -> pd.DataFrame:
    """One row per held-out group: the rule fitted on the others and how it does there.

    Columns: direction, tau, balanced_accuracy, precision (good share of the accepted),
    coverage (accepted share), own_balanced_accuracy (the group's own best rule, in
    sample), own_oos_balanced_accuracy (its own rule fitted out of sample,
    :func:`own_rule_out_of_sample`), gap (own out of sample − transferred), gap_in_sample,
    and with ``quality`` the mean quality of accepted and rejected predictions. A group
    with only good or only bad predictions has NaN accuracies; so has every column of a
    fold whose other groups hold only one class (no rule can be fitted).
    """
    scores = np.asarray(scores, float)
    ok = np.asarray(quality_ok, bool)
    groups = np.asarray(groups)
    rows = []
    for g in pd.unique(groups):
        held = groups == g
        rest = ok[~held]
        if rest.all() or not rest.any():  # the other groups cannot fit a rule
            rows.append(
                {
                    "group": g,
                    "n": int(held.sum()),
                    "good_share": float(ok[held].mean()),
                    "direction": None,
                    "tau": np.nan,
                    "balanced_accuracy": np.nan,
                    "precision": np.nan,
                    "coverage": np.nan,
                    "own_direction": None,
                    "own_balanced_accuracy": np.nan,
                    "own_oos_balanced_accuracy": np.nan,
                    "gap": np.nan,
                    "gap_in_sample": np.nan,
                }
            )
            continue
        direction, tau, _ = fit_threshold(scores[~held], rest)
        accept = apply_threshold(scores[held], direction, tau)
        tpr, tnr = _rates(accept, ok[held])
        both = ok[held].any() and not ok[held].all()
        own = fit_threshold(scores[held], ok[held]) if both else None
        row = {
            "group": g,
            "n": int(held.sum()),
            "good_share": float(ok[held].mean()),
            "direction": direction,
            "tau": tau,
            "balanced_accuracy": (tpr + tnr) / 2 if both else np.nan,
            "precision": float(ok[held][accept].mean()) if accept.any() else np.nan,
            "coverage": float(accept.mean()),
            "own_direction": own[0] if own else None,
            "own_balanced_accuracy": (own[2] + 1) / 2 if own else np.nan,
            "own_oos_balanced_accuracy": own_rule_out_of_sample(scores[held], ok[held])
            if both
            else np.nan,
        }
        row["gap"] = row["own_oos_balanced_accuracy"] - row["balanced_accuracy"]
        row["gap_in_sample"] = row["own_balanced_accuracy"] - row["balanced_accuracy"]
        if quality is not None:
            q = np.asarray(quality, float)[held]
            row["mean_q_accepted"] = float(q[accept].mean()) if accept.any() else np.nan
            row["mean_q_rejected"] = float(q[~accept].mean()) if (~accept).any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def risk_coverage(scores: np.ndarray, quality: np.ndarray, direction: str) -> dict[str, list]:
    """Risk (1 − mean q of the accepted) as coverage grows, most trusted first; and AURC."""
    order = np.argsort(scores if direction == "<=" else -np.asarray(scores), kind="stable")
    q = np.asarray(quality, float)[order]
    risk = 1 - np.cumsum(q) / np.arange(1, len(q) + 1)
    coverage = np.arange(1, len(q) + 1) / len(q)
    return {"coverage": coverage.tolist(), "risk": risk.tolist(), "aurc": float(risk.mean())}
