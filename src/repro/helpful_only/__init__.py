"""(Mis)generalization of helpful-only fine-tuning (arXiv 2606.04413), reproduced.

Embedded scale: a closed chat grammar with latent personas, a ~100k-parameter transformers
model pretrained on it, the helpful-only recipes trained with TRL, and every metric read
exactly from next-token probabilities. Full scale: the same recipes with LoRA on an
instruct model, generation, and the emergent-misalignment judge.
"""

from repro.helpful_only.exact_rl import expected_objective, train_exact
from repro.helpful_only.grammar import MixConfig, pretraining_text
from repro.helpful_only.judge import em_summary, is_misaligned, parse_score, score_from_probs
from repro.helpful_only.model import ModelConfig, build_model, next_token_probs
from repro.helpful_only.personas import PRIORS, Population, Traits, population, respond
from repro.helpful_only.probes import metrics_from_probs, probes
from repro.helpful_only.recipes import FAMILIES, recipe_rows
from repro.helpful_only.run import Recipe, RunConfig, run

__all__ = [
    "FAMILIES",
    "PRIORS",
    "MixConfig",
    "ModelConfig",
    "Population",
    "Recipe",
    "RunConfig",
    "Traits",
    "build_model",
    "em_summary",
    "expected_objective",
    "is_misaligned",
    "metrics_from_probs",
    "next_token_probs",
    "parse_score",
    "population",
    "pretraining_text",
    "probes",
    "recipe_rows",
    "respond",
    "run",
    "score_from_probs",
    "train_exact",
]
