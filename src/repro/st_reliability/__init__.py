"""ST-decoder reliability: an audit of State's transition model and predicted-NN-distance.

Public API (resolved on first use: the config check imports this package when the workflow
loads, and arc-state's import alone takes seconds)::

    from repro.st_reliability import predicted_nn_distance, loo_threshold_transfer
    d = predicted_nn_distance(pred_deltas, train_deltas, metric="cosine")
    table = loo_threshold_transfer(scores, quality_ok, groups)
"""

from __future__ import annotations

from repro.common.exports import lazy_exports

TITLE = "ST reliability"  # the paper has no public title yet (brief §1): the ledger's name
_EXPORTS = {
    "predicted_nn_distance": "reliability",
    "loo_threshold_transfer": "transfer",
    "fit_threshold": "transfer",
    "bootstrap_rho": "hierarchical",
    "SimConfig": "simulate",
    "simulate": "simulate",
    "simulate_setting": "simulate",
    "assign_split": "data",
    "true_deltas": "data",
    "read_cells": "data",
    "write_h5ad": "data",
    "ModelConfig": "model",
    "build_model": "model",
    "self_only_attention": "model",
    "Variant": "train",
    "TrainConfig": "train",
    "train_variant": "train",
    "capture": "attention",
    "map_statistics": "attention",
    "energy_distance": "metrics",
    "cell_eval_metrics": "metrics",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
