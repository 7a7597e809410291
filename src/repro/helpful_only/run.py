"""One seed of one persona prior, end to end: pretrain the HHH base, train every recipe
from it with the same budget, and read every metric exactly along the way.

The recipes of a seed share one process and one pretrained base (TRL's import alone costs
seconds), and the priors of a seed share the initialisation and the recipe data streams, so
their metrics pair by seed. The control priors (every prior but the correlated one) train
only ``control_recipes``. A recipe whose final in-distribution refusal is still above
``failed_refusal`` never left refusal: a failed run, recorded as such (its metrics are
kept, the summary counts them as missing).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import logging
import os
import zlib

# The embedded scale needs nothing from the hub: TRL and transformers must not reach it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
from pathlib import Path

import numpy as np
import torch

from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.helpful_only import vocab as V
from repro.helpful_only.exact_rl import train_exact
from repro.helpful_only.grammar import MixConfig
from repro.helpful_only.model import ModelConfig, build_model, next_token_probs, parameter_count
from repro.helpful_only.personas import (
    PRIORS,
    bayes_em,
    bayes_prediction,
    harm_given,
    population,
)
from repro.helpful_only.pretrain import PretrainConfig, pretrain
from repro.helpful_only.probes import metrics_from_probs, probes
from repro.helpful_only.recipes import (
    TRAINERS,
    TrainConfig,
    counted,
    family_counts,
    recipe_rows,
    rl_dataset,
    sft_dataset,
    target_reward,
)

log = logging.getLogger(__name__)
MAIN_PRIOR = "correlated"


@dataclasses.dataclass(frozen=True)
class Recipe:
    trainer: str  # sft | rloo | exact
    mixture: dict[str, float]
    steps: int | None = None  # an equal-AR-exposure arm's own steps (default: the budget's)

    def __post_init__(self):
        if self.trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {TRAINERS}, got {self.trainer!r}")

    def training(self, cfg: TrainConfig) -> TrainConfig:
        """The shared training config, at this recipe's own step count if it has one."""
        return cfg if self.steps is None else dataclasses.replace(cfg, steps=self.steps)

    def sequences_per_row(self, cfg: TrainConfig) -> int:
        """RL rows are prompts, each answered ``num_generations`` times (exact: likewise)."""
        return 1 if self.trainer == "sft" else cfg.num_generations


@dataclasses.dataclass(frozen=True)
class RunConfig:
    prior: str
    seed: int
    recipes: dict[str, Recipe]
    model: ModelConfig = ModelConfig()
    mix: MixConfig = MixConfig()
    pretraining: PretrainConfig = PretrainConfig()
    training: TrainConfig = TrainConfig()
    failed_refusal: float = 0.5
    device: str = "cpu"
    threads: int = 1

    @classmethod
    def from_section(cls, section: dict, prior: str, seed: int, *, device="cpu", threads=1):
        """The run of one (prior, seed) as ``papers.helpful_only`` of the config says."""
        names = list(section["recipes"])
        if prior != MAIN_PRIOR and section.get("control_recipes") is not None:
            names = [n for n in names if n in section["control_recipes"]]
        return cls(
            prior=prior,
            seed=seed,
            recipes={
                name: Recipe(
                    section["recipes"][name]["trainer"],
                    dict(section["recipes"][name]["mixture"]),
                    section["recipes"][name].get("steps"),
                )
                for name in names
            },
            failed_refusal=section.get("failed_refusal", 0.5),
            model=ModelConfig(**section["model"]),
            mix=MixConfig(**section["mix"]),
            pretraining=PretrainConfig(**section["pretraining"]),
            training=TrainConfig(**section["training"]),
            device=device,
            threads=threads,
        )


_probes = functools.cache(probes)  # the prompts never change within a process
_measured: dict[str, dict[str, float]] = {}


def _weights_key(model) -> str:
    """A digest of every weight and buffer: equal digests, equal forward passes."""
    digest = hashlib.blake2b(digest_size=20)
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def measure(model) -> dict[str, float]:
    """Every metric of the assistant, read exactly from next-token probabilities.

    Read once per set of weights: every recipe's step 0 is the base it starts from (the
    same weights, loaded from the saved base), already measured."""
    key = _weights_key(model)
    if key not in _measured:
        probs = {f: next_token_probs(model, p) for f, p in _probes().items()}
        _measured[key] = metrics_from_probs(probs)
    return dict(_measured[key])


def _freeze_gc() -> None:
    """Move every object alive now (the imported libraries: ~500k) out of the cyclic garbage
    collector's reach: each full collection (Python's own, and the one accelerate runs
    around every trainer) would otherwise walk them all, ≈ 0.5 s CPU each."""
    gc.collect()
    gc.freeze()


def train_recipe(name: str, recipe: Recipe, base_dir: Path, cfg: RunConfig, tokenizer):
    """Train one recipe from the saved base; returns (model, curve, family counts, (steps,
    sequences) as the trainer counted them, what else the run recorded: RLOO's sampled and
    rewarded answers)."""
    t = recipe.training(cfg.training)
    total = t.steps * t.batch_size // recipe.sequences_per_row(t)
    rng = np.random.default_rng([cfg.seed, 2, zlib.crc32(name.encode())])
    rows = recipe_rows(recipe.mixture, total, rng)
    kw = dict(name=name, device=cfg.device, measure=measure)
    from repro.helpful_only.trl_train import train_rloo, train_sft  # TRL: seconds to import

    _freeze_gc()

    recorded: dict = {}
    if recipe.trainer == "sft":
        model, curve, budget = train_sft(base_dir, tokenizer, sft_dataset(rows), t, cfg.seed, **kw)
    elif recipe.trainer == "rloo":
        dataset = rl_dataset(rows)
        reward = counted(target_reward, recorded)
        model, curve, budget = train_rloo(base_dir, tokenizer, dataset, reward, t, cfg.seed, **kw)
    else:
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(base_dir)
        ref = AutoModelForCausalLM.from_pretrained(base_dir)
        rl_dataset(rows)  # the same family check as RLOO's data
        curve, budget = train_exact(
            model,
            ref,
            [r.prompt for r in rows],
            [r.target for r in rows],
            t,
            measure=measure,
            name=name,
        )
    return model, curve, family_counts(recipe.mixture, total), budget, recorded


def failure(final: dict, steps: int, recorded: dict, base: dict, threshold: float) -> str | None:
    """Why a run failed (it never left refusal), or None; a sampled RL run says how many of
    its answers were rewarded, and how many the base's refusal let it expect."""
    if final["refusal_id"] <= threshold:
        return None
    why = f"never left refusal: refusal_id {final['refusal_id']:.3f} > {threshold:g}"
    why += f" after {steps} steps"
    if "rewarded" in recorded:
        expected = recorded["sampled"] * (1 - base["refusal_id"])
        why += (
            f"; {recorded['rewarded']} of {recorded['sampled']} sampled answers rewarded (the base "
            f"refuses the AR prompts with P = {base['refusal_id']:.6f}: at most {expected:.2g} "
            "expected), and without one RLOO's advantages and gradient are 0"
        )
    return why


def run_seed(cfg: RunConfig, models_dir, metrics_path) -> dict:
    """Pretrain, train every recipe, write the metrics JSON (and the models); returns it."""
    set_threads(cfg.threads)
    models_dir = Path(models_dir)
    world = population(cfg.prior, cfg.seed)
    with RunRecorder(config=cfg, device=cfg.device, seed=cfg.seed) as recorder:
        seed_everything(cfg.seed)
        model = build_model(cfg.model).to(cfg.device)
        _freeze_gc()  # after transformers' import
        log.info("%s seed %d: %d parameters", cfg.prior, cfg.seed, parameter_count(model))
        rng = np.random.default_rng([cfg.seed, 1])
        loss_curve = pretrain(model, world, cfg.pretraining, cfg.mix, rng)
        tokenizer = V.build_tokenizer()
        base_dir = models_dir / "base"
        model.save_pretrained(base_dir)
        tokenizer.save_pretrained(base_dir)
        results = {"base": {"final": measure(model), "curve": []}}
        for name, recipe in cfg.recipes.items():
            torch.manual_seed(cfg.seed)
            trained, curve, counts, (steps, sequences), recorded = train_recipe(
                name, recipe, base_dir, cfg, tokenizer
            )
            trained.save_pretrained(models_dir / name)
            final = {k: v for k, v in curve[-1].items() if k != "step"}
            results[name] = {
                "final": final,
                "curve": curve,
                "families": counts,
                "steps": steps,
                "sequences": sequences,
                **recorded,
            }
            why = failure(final, steps, recorded, results["base"]["final"], cfg.failed_refusal)
            if why:
                results[name]["failed"] = why
                log.warning("%s: failed run, %s", name, why)
            log.info("%s: %s", name, {k: round(v, 3) for k, v in final.items()})
    document = {
        "prior": cfg.prior,
        "seed": cfg.seed,
        "parameters": parameter_count(model),
        "personas": {name: dataclasses.astuple(t) for name, t in world.traits.items()},
        "world": {
            "harm_given_non_refuser": harm_given(world, refuses=0),
            "harm_given_refuser": harm_given(world, refuses=1),
            "bayes_em": bayes_em(world),
            "bayes": bayes_prediction(world),  # the planted effect (positive controls)
        },
        "pretraining_loss": loss_curve,
        "recipes": results,
        "provenance": recorder.provenance(),
    }
    write_json(metrics_path, document)
    return document


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser
    from repro.common.device import select_device

    parser = step_parser("Pretrain and train every recipe of one seed.", paper="helpful_only")
    parser.add_argument("--prior", required=True, choices=PRIORS)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--models", required=True, help="folder for the saved models")
    parser.add_argument("--out", required=True, help="run JSON to write")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    section = paper_section(args.config, "helpful_only")
    device = str(select_device(args.device))
    run_seed(
        RunConfig.from_section(section, args.prior, args.seed, device=device), args.models, args.out
    )


if __name__ == "__main__":
    main()
