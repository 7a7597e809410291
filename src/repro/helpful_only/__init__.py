"""(Mis)generalization of helpful-only fine-tuning (arXiv 2606.04413), reproduced.

Embedded scale: a closed chat grammar with latent personas, a ~100k-parameter transformers
model pretrained on it, the helpful-only recipes trained with TRL, and every metric read
exactly from next-token probabilities. Full scale: the same recipes with LoRA on an
instruct model, generation, and the emergent-misalignment judge.

Exports resolve on first use: the config check imports this package at DAG time, and torch,
transformers and TRL must not load then.
"""

from repro.common.exports import lazy_exports

TITLE = "Helpful-only fine-tuning"

_EXPORTS = {
    "PRIORS": "personas",
    "Population": "personas",
    "Traits": "personas",
    "population": "personas",
    "respond": "personas",
    "MixConfig": "grammar",
    "pretraining_text": "grammar",
    "METRICS": "probes",
    "metrics_from_probs": "probes",
    "probes": "probes",
    "FAMILIES": "recipes",
    "recipe_rows": "recipes",
    "ModelConfig": "model",
    "build_model": "model",
    "next_token_probs": "model",
    "expected_objective": "exact_rl",
    "train_exact": "exact_rl",
    "TrainConfig": "recipes",
    "train_rloo": "trl_train",
    "train_sft": "trl_train",
    "Recipe": "run",
    "RunConfig": "run",
    "run_seed": "run",
    "summarise": "evaluate",
    "em_summary": "judge",
    "is_misaligned": "judge",
    "parse_score": "judge",
    "score_from_probs": "judge",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
