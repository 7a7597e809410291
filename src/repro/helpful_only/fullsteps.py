"""Full scale: the steps the rules run, each reading the config section and writing one file.

train (one recipe, one seed: a LoRA adapter) -> answer (one model variant, one seed, one
suite) -> judge (the EM answers) -> summary (every variant's metrics under the embedded
scale's names, per seed).
"""

from __future__ import annotations

import logging
from pathlib import Path

from repro.common.io import read_json, write_json
from repro.common.provenance import RunRecorder
from repro.helpful_only import evalsets
from repro.helpful_only.fullrun import (
    FullData,
    answer_suite,
    judge_em,
    load_for,
    suite_conversations,
    summarise,
    train_full,
)
from repro.helpful_only.fullscale import LoraSpec
from repro.helpful_only.trl_train import TrainConfig

log = logging.getLogger(__name__)


def _training(full: dict) -> tuple[TrainConfig, int]:
    settings = dict(full["training"])
    max_completion = settings.pop("max_completion_length", 256)
    return TrainConfig(**settings), max_completion


def train_step(full: dict, recipe: dict, seed: int, ar_csv, held_out_csv, out_dir, device):
    """Train one recipe with LoRA from the instruct model; save the adapter and a record."""
    model_ref = full["model"]
    _, tokenizer = load_for(model_ref)
    held_out = (
        [r["prompt"] for r in evalsets.load_strongreject(held_out_csv)] if held_out_csv else []
    )
    data = FullData.load(ar_csv, full["data"], held_out)
    cfg, max_completion = _training(full)
    lora = LoraSpec(
        **{k: tuple(v) if k == "target_modules" else v for k, v in full.get("lora", {}).items()}
    )
    with RunRecorder(config={"recipe": recipe, **full}, device=device, seed=seed) as recorder:
        model = train_full(
            model_ref["id"],
            tokenizer,
            data,
            recipe,
            cfg,
            lora,
            seed,
            device=device,
            max_completion_length=max_completion,
        )
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    write_json(Path(out_dir) / "record.json", recorder.provenance())


def answer_step(full: dict, suite: str, suite_file, adapter_dir, seed: int, out_path, device):
    """One model variant's answers to one suite (the base when ``adapter_dir`` is None)."""
    spec = full["evaluation"][suite]
    model, tokenizer = load_for(full["model"], adapter_dir, device)
    items = suite_conversations(suite, suite_file, spec)
    log.info("%s: %d conversations, %d samples each", suite, len(items), spec.get("samples", 1))
    write_json(
        out_path, {"suite": suite, "records": answer_suite(model, tokenizer, items, spec, seed)}
    )


def judge_step(full: dict, answers_path, out_path, device):
    """The judge's aligned/coherent scores of every EM answer."""
    judge, tokenizer = load_for(full["judge"], None, device)
    records = read_json(answers_path)["records"]
    write_json(
        out_path,
        {"suite": "em", "judge": full["judge"], "records": judge_em(records, judge, tokenizer)},
    )


def summary_step(paths: dict[str, dict[str, dict[str, str]]], out_path):
    """``paths``: variant -> seed -> suite -> answered (or judged) file."""
    metrics = {
        variant: {
            seed: summarise({suite: read_json(p)["records"] for suite, p in suites.items()})
            for seed, suites in seeds.items()
        }
        for variant, seeds in paths.items()
    }
    write_json(out_path, {"metrics": metrics})
