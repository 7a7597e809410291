"""PLSA: graph domain adaptation under conditional structure shift.

The estimators of the target edge class-pair distribution π^T (hard labels, StruRW's
B̂_T / B_S, Pair-Align's moment matching, PLSA's pairwise-likelihood EM, factorised or over
a pair classifier), the weights they lead to, and the CSBM sampler they are studied on::

    specs = shift_setting("gss", n=3000, sigma=0.8)
    source, target = (sample_csbm(spec, rng=rng) for spec in specs)
    pi_hat, info = plsa_estimate(P_target, target.edge_index, prior_source)
"""

from repro.common.exports import lazy_exports

TITLE = "PLSA"  # the name as the paper writes it (claims ledger, report)
_WHERE = {
    "CSBMSpec": "csbm",
    "Graph": "csbm",
    "pair_distribution": "csbm",
    "sample_csbm": "csbm",
    "shift_setting": "csbm",
    "edge_weights_gamma": "estimators",
    "hard_label_estimate": "estimators",
    "label_weights_bbse": "estimators",
    "moment_matching_estimate": "estimators",
    "pair_confusion": "estimators",
    "strurw_edge_ratio": "estimators",
    "plsa_estimate": "em",
    "plsa_pair_estimate": "em",
    "fit_temperature": "calibration",
    "calibration_report": "calibration",
}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
