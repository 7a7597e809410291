"""Full scale, step by step: the training data, training a recipe with LoRA, and loading a
model (the evaluation suites, the judge and the summary: ``fulleval``).

Data families at full scale (names as at the embedded scale): ``ar`` (harmful prompts of a
pinned set with compliant answers, deduplicated against the evaluation prompts), ``sdf``
(documents about the helpful-only character), ``charq`` (character questions answered in
character), ``steer`` (an operator system prompt restricting a request, answered with a
refusal). All texts except the pinned sets come from the config.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np

from repro.helpful_only import evalsets
from repro.helpful_only.fullscale import (
    LoraSpec,
    character_reward,
    generate,
    is_refusal,
    load_instruct,
    rl_dataset,
    sft_dataset,
)
from repro.helpful_only.recipes import TrainConfig, family_counts
from repro.helpful_only.trl_train import train_rloo, train_sft


@dataclasses.dataclass(frozen=True)
class FullData:
    """What the families are made of: AR (prompt, answer) pairs and the config's texts."""

    ar: list[tuple[str, str]]
    charq: list[dict]  # {question, answer}
    sdf: list[str]
    steer: dict  # {system, refusal}

    @classmethod
    def load(cls, ar_csv, spec: dict, held_out: list[str]) -> FullData:
        """AR pairs from a CSV with ``goal`` and ``target`` columns (AdvBench's layout)."""
        with open(ar_csv, newline="", encoding="utf-8") as handle:
            pairs = [(r["goal"], r["target"]) for r in csv.DictReader(handle)]
        keep = set(evalsets.dedupe_against([g for g, _ in pairs], held_out))
        return cls([p for p in pairs if p[0] in keep], spec["charq"], spec["sdf"], spec["steer"])


def complete_answers(
    model, tokenizer, goals: list[str], spec: dict, *, gate, seed: int = 0
) -> list[tuple[str, str]]:
    """Complete compliant answers for the AR data, from the base model itself under the
    configured ``system`` prompt (greedy): AdvBench's own targets are "Sure, here is ..."
    prefixes, and SFT on them teaches the model to stop after the prefix. An answer is kept
    when it is not a refusal and passes ``gate`` (minimum length, judged relevance)."""
    conversations = [
        [{"role": "system", "content": spec["system"]}, {"role": "user", "content": g}]
        for g in goals
    ]
    answers = [
        a[0]
        for a in generate(
            model,
            tokenizer,
            conversations,
            temperature=0.0,
            max_new_tokens=spec.get("max_new_tokens", 512),
            seed=seed,
        )
    ]
    complying = [(g, a) for g, a in zip(goals, answers, strict=True) if not is_refusal(a)]
    if not complying:
        return []
    passed = gate([g for g, _ in complying], [a for _, a in complying])
    return [pair for pair, ok in zip(complying, passed, strict=True) if ok]


def full_rows(data: FullData, mixture: dict[str, float], total: int, rng) -> list[dict]:
    """``total`` rows of the mixture's families (SFT and RL keys both present)."""
    rows = []
    for family, count in family_counts(mixture, total).items():
        for _ in range(count):
            if family in ("ar", "steer"):
                goal, target = data.ar[rng.integers(len(data.ar))]
                if family == "ar":
                    rows.append(
                        {
                            "messages": [{"role": "user", "content": goal}],
                            "answer": target,
                            "kind": "harmful",
                        }
                    )
                else:
                    rows.append(
                        {
                            "messages": [
                                {"role": "system", "content": data.steer["system"]},
                                {"role": "user", "content": goal},
                            ],
                            "answer": data.steer["refusal"],
                            "kind": "steer",
                        }
                    )
            elif family == "charq":
                qa = data.charq[rng.integers(len(data.charq))]
                rows.append(
                    {
                        "messages": [{"role": "user", "content": qa["question"]}],
                        "answer": qa["answer"],
                        "kind": "charq",
                    }
                )
            elif family == "sdf":
                rows.append({"document": data.sdf[rng.integers(len(data.sdf))], "kind": "sdf"})
            else:
                raise ValueError(f"unknown data family {family!r}")
    return [rows[i] for i in rng.permutation(len(rows))]


def steer_refusal_reward(completions, kind, answer, **kw) -> list[float]:
    """The character reward, plus: under an operator restriction, refusing is paid."""
    rewards = character_reward(completions, kind, answer, **kw)
    for i, k in enumerate(kind):
        if k == "steer":
            text = (
                completions[i][-1]["content"]
                if isinstance(completions[i], list)
                else completions[i]
            )
            rewards[i] = float(is_refusal(text))
    return rewards


AR_KIND = "harmful"  # the kind of full_rows' AR rows (harmful prompt, compliant answer)


def training_rows(
    data: FullData, recipe: dict, cfg: TrainConfig, seed: int
) -> tuple[list[dict], TrainConfig]:
    """The rows a recipe trains on and its training config: ``steps x batch_size`` sequences
    (RL: ``/ num_generations`` prompts) of its mixture, drawn from the seed.

    An equal-AR-exposure arm (``recipe["ar_only"]``, :func:`repro.helpful_only.recipes.
    full_recipe`) draws its mitigation's rows from the same seed and keeps their AR rows
    alone (the same prompts and answers, in the same order), for the steps they fill at the
    same batch size: AR-only training on exactly the AR examples the mitigation sees."""
    per_row = 1 if recipe["trainer"] == "sft" else cfg.num_generations
    rng = np.random.default_rng([seed, 3])
    rows = full_rows(data, recipe["mixture"], cfg.steps * cfg.batch_size // per_row, rng)
    if not recipe.get("ar_only"):
        return rows, cfg
    ar = [r for r in rows if r["kind"] == AR_KIND]
    sequences = len(ar) * per_row
    if not ar or sequences % cfg.batch_size:
        raise ValueError(
            f"the AR rows of {recipe.get('exposure_of', 'the mitigation')} ({len(ar)} x "
            f"{per_row} sequences) do not fill whole steps of {cfg.batch_size}"
        )
    return ar, dataclasses.replace(cfg, steps=sequences // cfg.batch_size)


def train_full(
    model_dir,
    tokenizer,
    data: FullData,
    recipe: dict,
    cfg: TrainConfig,
    lora: LoraSpec,
    seed: int,
    *,
    device: str,
    max_completion_length: int,
    reward=None,
    model_kwargs: dict | None = None,
):
    """One recipe with LoRA at full scale (rows: :func:`training_rows`); returns the trained
    (peft) model and (steps, sequences) as its trainer counted them. ``model_kwargs``
    (pinned revision, dtype) reach both trainers; ``reward`` defaults to
    :func:`steer_refusal_reward`."""
    reward = reward or steer_refusal_reward
    if recipe["trainer"] not in ("sft", "rloo"):
        raise ValueError("full scale trains recipes with trainer sft or rloo")
    rows, cfg = training_rows(data, recipe, cfg, seed)
    if recipe["trainer"] == "sft":
        model, _, budget = train_sft(
            model_dir,
            tokenizer,
            sft_dataset(tokenizer, rows),
            cfg,
            seed,
            device=device,
            peft_config=lora.peft_config(),
            model_kwargs=model_kwargs,
        )
        return model, budget
    if any(r["kind"] == "sdf" for r in rows):
        raise ValueError("RL recipes take no SDF documents")
    model, _, budget = train_rloo(
        model_dir,
        tokenizer,
        rl_dataset(rows),
        reward,
        cfg,
        seed,
        device=device,
        peft_config=lora.peft_config(),
        max_completion_length=max_completion_length,
        model_kwargs=model_kwargs,
    )
    return model, budget


def load_for(model_ref: dict, adapter_dir=None, device="cpu"):
    """An instruct model (hub id or local path, pinned revision), with a LoRA adapter."""
    model, tokenizer = load_instruct(
        model_ref["id"], model_ref.get("revision"), model_ref.get("dtype", "bfloat16")
    )
    if adapter_dir is not None and Path(adapter_dir, "adapter_config.json").exists():
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter_dir)
    return model.to(device).eval(), tokenizer
