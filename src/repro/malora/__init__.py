"""MaLoRA: margin-based LoRA merging (NeurIPS 2026), reconstructed from the brief.

The rule: α_t = m_0 / m_t from calibration margins (``malora_alphas``), W(α) = W0 + Σ_t α_t
ΔW_t (``merge``); the baselines share one signature (``rule(problem, **params) -> Merged``,
``RULES``, ``run_rule``); LoRA adapters and their exact ``cat`` merges come from peft
(``lora_deltas``, ``merge_cat``); the two SVMs (``frobenius_svm``, ``nuclear_svm``).
"""

from repro.common.exports import lazy_exports

TITLE = "MaLoRA"  # the paper's name as it writes it (claims ledger, report category)
_EXPORTS = {
    "margin": "margins",
    "normalised_margin": "margins",
    "per_example_margins": "margins",
    "malora_alphas": "merging",
    "merge": "merging",
    "RULES": "baselines",
    "Merged": "baselines",
    "MergeProblem": "baselines",
    "run_rule": "baselines",
    "lora_deltas": "peft_merge",
    "merge_cat": "peft_merge",
    "cosine": "svm",
    "frobenius_svm": "svm",
    "nuclear_svm": "svm",
    "union_margin_closed_form": "theory",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
