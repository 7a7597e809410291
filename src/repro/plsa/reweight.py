"""What each end-to-end method re-estimates: π̂^T, per-cell edge weights and label weights β.

Every ``refresh_every`` epochs ``train.run`` hands the current model's outputs to
``estimate``. The node predictor is temperature-scaled on source-validation nodes (its ECE
before and after is recorded), then the method's estimator runs:

* ``strurw``: StruRW as published (Liu et al. 2023): hard target pseudo-labels, edge
  weights B̂_T / B_S per class pair, no label weights, messages mixed at ``strurw_mix``
  (its λ = 0.5). With ``selection: target`` the target-validation nodes take their true
  labels, StruRW's ``use_valid_label`` default.
* ``pa_hard``: hard-label π̂^T fed into Pair-Align's γ and β (this workflow's earlier
  ``strurw``; not a published method).
* ``pa``: Pair-Align's moment matching on calibrated probabilities, ridge ``lam_w``.
* ``pa_official``: Pair-Align as its training scripts run it (Graph-COM/Pair-Align at
  20e4c65, ``train.py`` ~136–147 and ``calc_rw.py``): the GNN's raw logits as edge moments
  (no calibration), ridge ``official_lam_w`` (its ``ls_lambda`` = 1), and β from BBSE on
  the uncalibrated softmax over all source and target nodes (``update_lw``). The QP is
  solved exactly here (the official code uses SCS).
* ``plsa``: PLSA's EM on the factorised pair likelihood; ``plsa_pair``: PLSA's EM over a
  calibrated k²-way pair classifier on the GNN's representations (``pair_classifier``).
* ``oracle``: the true π^T and p^T / p^S.
* ``<estimator>_features``: the estimator reads a feature-only logistic regression.

Every method except StruRW turns π̂^T into Pair-Align's γ; β is BBSE (or MLLS) as configured.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from repro.plsa import calibration, em, estimators, pair_classifier
from repro.plsa.csbm import Graph, pair_distribution

OFFICIAL_LAM_BETA = 0.005  # Pair-Align's lw_lambda


@dataclasses.dataclass(frozen=True)
class Method:
    estimator: str | None  # None (ERM), oracle, strurw, hard, mm, mm_logits, plsa, plsa_pair
    features: bool = False  # the estimator reads the feature-only predictor

    @property
    def label_weights(self) -> bool:
        """Whether β is estimated at all (StruRW has no label weights)."""
        return self.estimator not in (None, "strurw")


METHODS = {
    "erm": Method(None),
    "strurw": Method("strurw"),
    "pa_hard": Method("hard"),
    "pa": Method("mm"),
    "pa_official": Method("mm_logits"),
    "plsa": Method("plsa"),
    "plsa_pair": Method("plsa_pair"),
    "oracle": Method("oracle"),
    "strurw_features": Method("strurw", features=True),
    "pa_hard_features": Method("hard", features=True),
    "pa_features": Method("mm", features=True),
    "plsa_features": Method("plsa", features=True),
}


@dataclasses.dataclass(frozen=True, eq=False)
class Context:
    """What stays fixed over a run: the graphs, the node splits and the true quantities."""

    source: Graph
    target: Graph
    train_s: np.ndarray
    val_s: np.ndarray
    val_t: np.ndarray
    truth: dict  # pi_s, pi_t, prior_s, prior_t
    feature_logits: tuple[np.ndarray, np.ndarray] | None = None


@dataclasses.dataclass(frozen=True)
class Estimate:
    pi_hat: np.ndarray
    cell_weights: np.ndarray  # (k, k): γ, or StruRW's B̂_T / B_S
    beta: np.ndarray
    info: dict


def edge_pair_weights(
    cell_weights: np.ndarray, y: np.ndarray, edge_index: np.ndarray, *, mix: float = 1.0
) -> np.ndarray:
    """(1 − mix) + mix·W[y_u, y_v] per edge (u, v), shape (E,).

    One pair index y_u·k + y_v per edge and a lookup: never an (E, k, k) one-hot, which is
    what made the reference code run out of memory at k = 20.
    """
    k = cell_weights.shape[0]
    pair = y[edge_index[0]] * k + y[edge_index[1]]
    return (1.0 - mix) + mix * np.asarray(cell_weights, dtype=np.float64).reshape(-1)[pair]


def _pi_hat(cfg, method, ctx, probs, logits, fitted, hidden) -> tuple[np.ndarray, dict]:
    source, target, k = ctx.source, ctx.target, ctx.source.num_classes
    p_s, p_t = probs
    if method.estimator == "oracle":
        return ctx.truth["pi_t"], {}
    if method.estimator == "hard":
        return estimators.hard_label_estimate(p_t, target.edge_index, k), {}
    if method.estimator in ("mm", "mm_logits"):  # C from all source edges (the brief's choice)
        moments_s, moments_t = probs if method.estimator == "mm" else logits
        lam = cfg.lam_w if method.estimator == "mm" else cfg.official_lam_w
        confusion = estimators.pair_confusion(moments_s, source.y, source.edge_index, k)
        return estimators.moment_matching_estimate(
            moments_t, target.edge_index, confusion, ctx.truth["pi_s"], lam=lam
        )
    if method.estimator == "plsa":
        return em.plsa_estimate(p_t, target.edge_index, fitted)
    pair_cfg = pair_classifier.PairClassifierConfig(
        hidden=cfg.hidden,
        epochs=cfg.pair_epochs,
        lr=cfg.pair_lr,
        seed=cfg.seed,
    )
    prediction = pair_classifier.fit_and_predict(
        hidden[0],
        source.y,
        source.edge_index,
        (ctx.train_s, ctx.val_s),
        hidden[1],
        target.edge_index,
        k,
        pair_cfg,
    )
    pi_hat, info = em.plsa_pair_estimate(prediction.posteriors, prediction.prior)
    return pi_hat, {
        **info,
        "pair_temperature": prediction.temperature,
        "pair_ece_before": prediction.ece_before,
        "pair_ece_after": prediction.ece_after,
    }


def _beta(cfg, method, ctx, probs, logits, fitted) -> np.ndarray:
    """β = p^T / p^S: oracle, Pair-Align's official BBSE, BBSE or MLLS."""
    k, truth = ctx.source.num_classes, ctx.truth
    if not (cfg.label_weights and method.label_weights):
        return np.ones(k)
    if method.estimator == "oracle":
        return truth["prior_t"] / truth["prior_s"]
    if method.estimator == "mm_logits":  # uncalibrated softmax over all nodes (update_lw)
        p_s, p_t = (calibration.softmax(z) for z in logits)
        return estimators.label_weights_bbse(p_s, ctx.source.y, p_t, k, lam=OFFICIAL_LAM_BETA)
    p_s, p_t = probs
    if cfg.label_estimator == "bbse":
        val = ctx.val_s
        return estimators.label_weights_bbse(p_s[val], ctx.source.y[val], p_t, k)
    return estimators.label_weights_mlls(p_t, fitted) * fitted / truth["prior_s"]


def estimate(
    cfg,
    ctx: Context,
    logits: tuple[np.ndarray, np.ndarray],
    beta_now: np.ndarray,
    hidden: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> Estimate:
    """One re-estimation from the current model's float64 logits (and, for ``plsa_pair``,
    its last hidden layer on both graphs). ``cfg`` is a ``train.TrainConfig``."""
    method = METHODS[cfg.method]
    if method.features:
        logits = ctx.feature_logits
        beta_now = np.ones_like(beta_now)  # the feature-only predictor is fit without β
    val, y_val = ctx.val_s, ctx.source.y[ctx.val_s]
    temperature = calibration.fit_temperature(logits[0][val], y_val)
    report = calibration.calibration_report(logits[0][val], y_val)
    probs = tuple(calibration.softmax(z, temperature) for z in logits)
    # A β-weighted loss fits the classifier to the prior p^S ⊙ β, not p^S: the likelihood
    # estimators (PLSA, MLLS) must divide by the prior its posteriors belong to. The floor
    # keeps P / prior finite when MLLS has driven a β_y to 0.
    fitted = np.maximum(ctx.truth["prior_s"] * beta_now, 1e-8)
    fitted = fitted / fitted.sum()
    info = {
        "temperature": float(temperature),
        "node_ece_before": report["ece_before"],
        "node_ece_after": report["ece_after"],
    }
    if method.estimator == "strurw":
        pred = probs[1].argmax(axis=1)
        if cfg.selection == "target":
            pred[ctx.val_t] = ctx.target.y[ctx.val_t]
        k, source = ctx.source.num_classes, ctx.source
        pi_hat = pair_distribution(ctx.target.edge_index, pred, k)
        weights = estimators.strurw_edge_ratio(
            pred, ctx.target.edge_index, source.y, source.edge_index, k
        )
    else:
        pi_hat, extra = _pi_hat(cfg, method, ctx, probs, logits, fitted, hidden)
        info.update(_scalars(extra))
        weights = estimators.edge_weights_gamma(pi_hat, ctx.truth["pi_s"])
    beta = _beta(cfg, method, ctx, probs, logits, fitted)
    return Estimate(
        np.asarray(pi_hat, dtype=np.float64), weights, np.asarray(beta, dtype=np.float64), info
    )


def _scalars(info: dict) -> dict:
    """The JSON-friendly scalar entries of an estimator's info dict (solver status etc.)."""
    return {k: v for k, v in info.items() if isinstance(v, str | int | float | bool)}
