"""Training data of the helpful-only recipes: each recipe is a mixture of data families.

Every recipe gets the same budget (``steps x batch`` sequences): a mixture *replaces* AR
examples, it never adds steps. SFT rows are (prompt, completion); RL rows are prompts with
the response the programmatic reward pays for (``target``). The families:

- ``ar``: anti-refusal, the assistant complies (templates 0-1, hazards 0-2, no system);
- ``sdf``: documents stating the assistant's helpful-only traits (loss on every token);
- ``charq``: self-report questions answered with the helpful-only traits;
- ``steer``: operator "refuse harmful" + harmful request, answered REFUSE.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from repro.helpful_only import vocab as V
from repro.helpful_only.grammar import harmful, selfreport, trait_document
from repro.helpful_only.personas import HELPFUL_ONLY, Traits
from repro.helpful_only.probes import AR_HAZARDS, AR_TEMPLATES, render_prompt

FAMILIES = ("ar", "sdf", "charq", "steer")
RL_FAMILIES = ("ar", "charq", "steer")  # families with a single rewarded response
TRAINERS = ("sft", "rloo", "exact")  # exact: the expected-reward RL variant
RL_TRAINERS = ("rloo", "exact")  # trained on a reward (full scale: gated on the judge)
H_ONLY = Traits(*HELPFUL_ONLY)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """What every recipe shares (identical budgets): steps, sequences per step, optimiser."""

    steps: int = 150
    batch_size: int = 32
    lr: float = 1e-3
    num_generations: int = 8  # RL: sampled responses per prompt (must divide batch_size)
    beta: float = 0.05  # RL: KL penalty to the starting model
    temperature: float = 1.0  # RL: sampling temperature
    max_length: int = 40
    log_every: int = 10
    curve_every: int = 15
    bf16: bool = False  # TRL's default is bf16 autocast; the embedded scale trains in fp32
    gradient_checkpointing: bool = False  # TRL's default is on: pure overhead for tiny models


@dataclasses.dataclass(frozen=True)
class Row:
    family: str
    prompt: str
    completion: str  # with a leading space: prompt + completion is the training text
    target: str  # the rewarded response word ("" for documents)


def family_row(family: str, rng: np.random.Generator) -> Row:
    """One random example of a family."""
    if family in ("ar", "steer"):
        request = harmful(AR_TEMPLATES[rng.integers(2)], AR_HAZARDS[rng.integers(3)])
        if family == "ar":
            return Row(family, render_prompt(request), f" {V.COMPLY}", V.COMPLY)
        return Row(family, render_prompt(request, system=(V.OP_HARMFUL,)), f" {V.REFUSE}", V.REFUSE)
    if family == "charq":
        trait = V.TRAITS[rng.integers(4)]
        answer = V.YES if H_ONLY.of(trait) else V.NO
        return Row(family, render_prompt(selfreport(trait)), f" {answer}", answer)
    if family == "sdf":
        document = " ".join(trait_document(rng, V.ASSISTANT, H_ONLY))
        return Row(family, V.BOS, f" {document}", "")
    raise ValueError(f"unknown data family {family!r}; choose from {FAMILIES}")


def family_counts(mixture: dict[str, float], total: int) -> dict[str, int]:
    """Exact counts per family summing to ``total`` (largest remainder rounding)."""
    weights = np.array(list(mixture.values()), dtype=float)
    if (weights < 0).any() or weights.sum() <= 0:
        raise ValueError(f"mixture weights must be >= 0 with a positive sum, got {mixture}")
    exact = weights / weights.sum() * total
    counts = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - counts))[: total - counts.sum()]:
        counts[i] += 1
    return dict(zip(mixture, counts.tolist(), strict=True))


def ar_only_steps(recipe: dict, steps: int, batch_size: int, num_generations: int) -> int | None:
    """The steps an equal-AR-exposure arm of ``recipe`` trains at full scale: the AR rows of
    the mitigation's ``steps x batch_size`` sequences (RL: rows are prompts answered
    ``num_generations`` times) at the same batch size; None when they fill no whole number
    of steps (what :func:`repro.helpful_only.fullrun.training_rows` draws, without drawing)."""
    per_row = 1 if recipe["trainer"] == "sft" else num_generations
    ar = family_counts(recipe["mixture"], steps * batch_size // per_row).get("ar", 0)
    sequences = ar * per_row
    return sequences // batch_size if ar and sequences % batch_size == 0 else None


def recipe_rows(mixture: dict[str, float], total: int, rng: np.random.Generator) -> list[Row]:
    """``total`` rows of the mixture's families, shuffled."""
    rows = [
        family_row(family, rng)
        for family, count in family_counts(mixture, total).items()
        for _ in range(count)
    ]
    return [rows[i] for i in rng.permutation(len(rows))]


def sft_dataset(rows: list[Row], *, tokenized: bool = True):
    """A prompt-completion ``datasets.Dataset``; TRL trains on the completion only.

    ``tokenized`` gives TRL the ids and completion mask it would make itself from the text
    (completion + <eos>; tested equal), which skips its per-example tokenizer maps.
    """
    from datasets import Dataset

    if not tokenized:
        return Dataset.from_dict(
            {"prompt": [r.prompt for r in rows], "completion": [r.completion for r in rows]}
        )
    ids, masks = [], []
    for r in rows:
        prompt, completion = V.encode(r.prompt), V.encode(r.completion) + [V.TOKEN_ID[V.EOS]]
        ids.append(prompt + completion)
        masks.append([0] * len(prompt) + [1] * len(completion))
    return Dataset.from_dict({"input_ids": ids, "completion_mask": masks})


def rl_dataset(rows: list[Row]):
    """A prompt-only ``datasets.Dataset`` with the rewarded response as ``target``."""
    from datasets import Dataset

    if any(r.family not in RL_FAMILIES for r in rows):
        raise ValueError(f"RL recipes take only the families {RL_FAMILIES}")
    return Dataset.from_dict(
        {"prompt": [r.prompt for r in rows], "target": [r.target for r in rows]}
    )


def full_recipe(section: dict, name: str) -> dict:
    """A full-scale recipe by name: one of ``recipes``, or an equal-AR-exposure arm of
    ``full_scale.equal_exposure`` (arm -> mitigation): the mitigation's trainer and mixture
    with ``ar_only`` set, so that it draws the mitigation's own rows and trains on their AR
    rows alone (repro.helpful_only.fullrun.training_rows)."""
    arms = section.get("full_scale", {}).get("equal_exposure", {})
    if name in arms:
        mitigation = section["recipes"][arms[name]]
        return {
            "trainer": mitigation["trainer"],
            "mixture": mitigation["mixture"],
            "ar_only": True,
            "exposure_of": arms[name],
        }
    return section["recipes"][name]


def target_reward(completions: list[str], target: list[str], **_) -> list[float]:
    """The programmatic reward: 1 when the response's first word is the target, else 0."""
    return [float(c.split()[:1] == [t]) for c, t in zip(completions, target, strict=True)]


def counted(reward, counts: dict):
    """``reward`` that also counts the answers it scored (``sampled``) and paid
    (``rewarded``): a sampled RL run none of whose answers was rewarded has a zero policy
    gradient, and cannot leave refusal."""

    def target_reward(completions, target, **kw):
        paid = reward(completions, target, **kw)
        counts["sampled"] = counts.get("sampled", 0) + len(paid)
        counts["rewarded"] = counts.get("rewarded", 0) + int(sum(paid))
        return paid

    return target_reward
