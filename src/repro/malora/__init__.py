"""MaLoRA: margin-based LoRA merging (NeurIPS 2026), reconstructed from the brief.

The rule: α_t = m_0 / m_t from calibration margins, W(α) = W0 + Σ_t α_t ΔW_t; the baselines
share one signature (``rule(problem, **params) -> Merged``); LoRA adapters and their exact
merges come from peft.
"""

from repro.malora.baselines import RULES, Merged, MergeProblem, run_rule
from repro.malora.margins import margin, normalised_margin, per_example_margins
from repro.malora.merging import malora_alphas, merge
from repro.malora.svm import cosine, frobenius_svm, nuclear_svm
from repro.malora.theory import union_margin_closed_form

TITLE = "MaLoRA"  # the paper's name as it writes it (report category, ledger section)
_LAZY = {"lora_deltas", "merge_cat"}  # peft takes ≈10 s to import: only when asked for


def __getattr__(name):
    if name in _LAZY:
        from repro.malora import peft_merge

        return getattr(peft_merge, name)
    raise AttributeError(f"module 'repro.malora' has no attribute {name!r}")


__all__ = [
    "RULES",
    "TITLE",
    "Merged",
    "MergeProblem",
    "cosine",
    "frobenius_svm",
    "lora_deltas",
    "malora_alphas",
    "margin",
    "merge",
    "merge_cat",
    "normalised_margin",
    "nuclear_svm",
    "per_example_margins",
    "run_rule",
    "union_margin_closed_form",
]
