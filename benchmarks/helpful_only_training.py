"""Helpful-only training cost on CPU (one thread): prints CPU seconds and ratios, asserts nothing.

1. A pretraining step: sequences packed into 40-token rows with block-diagonal attention
   (what the library does) against padding every sequence to the batch's longest.
2. One SFT recipe (150 steps x 32 sequences) through TRL: pre-tokenized rows, fp32, no
   gradient checkpointing (what the library does) against text rows with TRL's defaults
   (bf16 autocast, gradient checkpointing, its own tokenization).
3. One RLOO recipe (150 steps x 32 sampled answers) and the exact expected-reward variant.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/helpful_only_training.py
"""

from __future__ import annotations

import dataclasses
import tempfile
import time

import numpy as np
import torch

from repro.helpful_only import vocab as V
from repro.helpful_only.exact_rl import train_exact
from repro.helpful_only.grammar import MixConfig, pretraining_text
from repro.helpful_only.model import ModelConfig, build_model
from repro.helpful_only.personas import population
from repro.helpful_only.pretrain import pack_batch
from repro.helpful_only.recipes import recipe_rows, rl_dataset, sft_dataset, target_reward
from repro.helpful_only.trl_train import TrainConfig, train_rloo, train_sft


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def padded(texts):
    rows = [V.encode(t) for t in texts]
    ids = torch.full((len(rows), max(map(len, rows))), V.TOKEN_ID[V.PAD])
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
    mask = (ids != V.TOKEN_ID[V.PAD]).long()
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


def pretraining_steps(make_batch, steps=60) -> float:
    torch.manual_seed(0)
    model, rng = build_model(ModelConfig()), np.random.default_rng(0)
    world = population("correlated", 0)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batches = [
        make_batch([pretraining_text(rng, world, MixConfig()) for _ in range(64)])
        for _ in range(steps)
    ]

    def loop():
        for batch in batches:
            optim.zero_grad()
            model(**batch).loss.backward()
            optim.step()

    return cpu(loop) / steps


def main() -> None:
    torch.set_num_threads(1)
    packed, pad = pretraining_steps(lambda t: pack_batch(t, 40)), pretraining_steps(padded)
    print("1. pretraining step, batch 64 (CPU seconds per step)")
    print(
        f"   packed rows: {1e3 * packed:.1f} ms; padded to the longest: {1e3 * pad:.1f} ms; "
        f"padded / packed = {pad / packed:.2f}"
    )
    with tempfile.TemporaryDirectory() as base:
        torch.manual_seed(0)
        build_model(ModelConfig()).save_pretrained(base)
        tokenizer, cfg = V.build_tokenizer(), TrainConfig()
        rows = recipe_rows(
            {"ar": 1, "charq": 1}, cfg.steps * cfg.batch_size, np.random.default_rng(0)
        )
        ours = cpu(lambda: train_sft(base, tokenizer, sft_dataset(rows), cfg, 0))
        defaults = dataclasses.replace(cfg, bf16=True, gradient_checkpointing=True)
        trl = cpu(
            lambda: train_sft(base, tokenizer, sft_dataset(rows, tokenized=False), defaults, 0)
        )
        print("2. one SFT recipe, 150 steps x 32 (CPU seconds)")
        ratio = trl / ours
        print(f"   ours: {ours:.1f} s; TRL defaults on text: {trl:.1f} s; ratio {ratio:.2f}")
        prompts = recipe_rows(
            {"ar": 1}, cfg.steps * cfg.batch_size // cfg.num_generations, np.random.default_rng(0)
        )
        rloo = cpu(lambda: train_rloo(base, tokenizer, rl_dataset(prompts), target_reward, cfg, 0))
        from transformers import AutoModelForCausalLM

        model, ref = (AutoModelForCausalLM.from_pretrained(base) for _ in range(2))
        exact = cpu(
            lambda: train_exact(
                model, ref, [r.prompt for r in prompts], [r.target for r in prompts], cfg
            )
        )
        print("3. one RL recipe, 150 steps (CPU seconds)")
        print(
            f"   RLOO (32 sampled answers per step): {rloo:.1f} s; exact expected reward "
            f"(4 prompts per step): {exact:.1f} s; ratio {rloo / exact:.1f}"
        )


if __name__ == "__main__":
    main()
