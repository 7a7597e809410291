"""3R-Adapter cost on CPU (one thread): prints ratios, asserts nothing.

Per adaptation step (forward + backward + AdamW) of the embedded model, grid 6×6, batch 16:
every method against LoRA at the matched rank, measured in the same run (interleaved
rounds, best of each); and the cost of reading attention out (hooks on ``attn_drop``)
against a plain forward. The brief's "lightweight" is about parameters and time: 3R-lite's
trainable count is in the table, its time is here.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/r3_adapter_step_cost.py
"""

from __future__ import annotations

import time

import numpy as np
import torch

from repro.r3_adapter.attention import captured
from repro.r3_adapter.data import observed
from repro.r3_adapter.losses import task_loss
from repro.r3_adapter.methods import DUST3R_TARGETS, build_method
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.scenes import SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight
from repro.r3_adapter.sites import CrossAttentionSite

METHODS = {
    "lora_r6": {"adapters": {"lora": {"rank": 6}}},
    "head_only": {"train": "heads"},
    "full_ft": {"train": "all"},
    "ssf": {"adapters": {"ssf": {}}},
    "vpt": {"adapters": {"vpt": {"prompts": 8}}},
    "adaptformer": {"adapters": {"adaptformer": {"bottleneck": 16}}},
    "r3_lite": {"adapters": {"relational": {}}},
    "r3_lora": {"adapters": {"relational": {}, "lora": {"rank": 6}}},
}


def _step_time(adapted, batch, rounds: int) -> float:
    opt = torch.optim.AdamW(adapted.trainable(), 1e-3)
    best = np.inf
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(5):
            loss = task_loss(adapted.model(*batch.inputs()), batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        best = min(best, (time.perf_counter() - start) / 5)
    return best


def main() -> None:
    torch.set_num_threads(1)
    scene = SceneConfig(grid=6)
    rng = np.random.default_rng(0)
    batch = observed(make_scenes(scene, 16, rng), 2, LowLight(), rng)
    cfg = ModelConfig(tokens=scene.tokens, channels=scene.channels, dim=64, mlp_ratio=2.0)
    models = {}
    for name, spec in METHODS.items():
        torch.manual_seed(0)
        models[name] = build_method(TwoViewTransformer(cfg), spec, site=CrossAttentionSite((6, 6)))
    times = {name: np.inf for name in METHODS}
    for _ in range(3):  # interleaved, so that load changes hit every method alike
        for name, adapted in models.items():
            times[name] = min(times[name], _step_time(adapted, batch, rounds=2))
    base = times["lora_r6"]
    print("1. adaptation step (fwd + bwd + AdamW), grid 6x6, batch 16, one thread")
    for name, t in times.items():
        n = models[name].n_trainable()
        print(f"   {name:12s} {1e3 * t:7.2f} ms = {t / base:4.2f}x LoRA r6   ({n:,} trainable)")
    plain = TwoViewTransformer(cfg).eval()
    inputs = batch.inputs()
    best = {"plain": np.inf, "captured": np.inf}
    with torch.no_grad():
        for _ in range(5):
            start = time.perf_counter()
            plain(*inputs)
            best["plain"] = min(best["plain"], time.perf_counter() - start)
            start = time.perf_counter()
            with captured(plain, DUST3R_TARGETS.cross_attention):
                plain(*inputs)
            best["captured"] = min(best["captured"], time.perf_counter() - start)
    ratio = best["captured"] / best["plain"]
    print(f"2. forward with cross-attention read-out: {ratio:.2f}x a plain forward")


if __name__ == "__main__":
    main()
