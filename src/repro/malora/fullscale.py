"""The full-scale benchmark: the published KnOTS CLIP LoRA adapters (8 vision tasks) merged
by every rule, α from calibration draws of the validation splits, accuracy on the test
splits (per-task zero-shot heads, KnOTS's per-task setting). GPU jobs; CPU works for tests.

Calibration draws play the role of seeds (paired across rules). The pre-training data is
not available, so MaLoRA's scale falls back to the mean task margin (brief §2.3, §8.4).
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import torch

from repro.malora.baselines import MergeProblem, rule_row
from repro.malora.fullscale_data import (
    decode,
    load_adapter,
    load_parquet_images,
    load_shards,
    text_heads,
)
from repro.malora.margins import margin
from repro.malora.names import FULL_METRICS

log = logging.getLogger(__name__)
METRICS = FULL_METRICS


@dataclasses.dataclass(frozen=True)
class FullTask:
    name: str
    adapter_config: str
    adapter_weights: str
    calibration: str  # parquet shard the calibration draws come from (validation or train)
    test: tuple[str, ...]  # parquet shards of the test split
    templates: tuple[str, ...] = ("a photo of a {}.",)
    class_names: tuple[str, ...] | None = None  # default: the parquet's ClassLabel names


@dataclasses.dataclass(frozen=True)
class FullConfig:
    model_dir: str
    tasks: tuple[FullTask, ...]
    methods: dict
    scale_grid: tuple[float, ...]
    seeds: tuple[int, ...] = (0, 1, 2)
    calibration_per_task: int = 32
    test_limit: int | None = None
    margin: dict = dataclasses.field(default_factory=lambda: {"stat": "quantile", "q": 0.05})
    batch_size: int = 256
    device: str = "auto"


class ClipBench:
    """A CLIP model whose vision weights are set to W0 + ΔW on demand, and per-task heads."""

    def __init__(self, cfg: FullConfig):
        from transformers import CLIPImageProcessor, CLIPModel, CLIPTokenizer

        from repro.common.device import select_device
        from repro.malora.fullscale_data import parquet_class_names

        self.cfg, self.device = cfg, select_device(cfg.device)
        self.model = CLIPModel.from_pretrained(cfg.model_dir).to(self.device).eval()
        self.processor = CLIPImageProcessor.from_pretrained(cfg.model_dir)
        tokenizer = CLIPTokenizer.from_pretrained(cfg.model_dir)
        params = dict(self.model.named_parameters())
        vision = [n for n in params if n.startswith("vision_model.")]  # LoRA is on this tower
        self.deltas = [load_adapter(t.adapter_config, t.adapter_weights, vision) for t in cfg.tasks]
        self.base = {n: params[n].detach().clone() for n in self.deltas[0]}
        self.heads = []
        for task in cfg.tasks:
            names = task.class_names or parquet_class_names(task.test[0])
            if not names:
                raise ValueError(f"{task.name}: no class names in config or {task.test}")
            self.heads.append(text_heads(self.model, tokenizer, names, task.templates, self.device))

    @torch.no_grad()
    def set_delta(self, delta) -> None:
        params = dict(self.model.named_parameters())
        for name, value in self.base.items():
            update = delta.get(name)
            params[name].copy_(
                value
                if update is None
                else value + torch.as_tensor(update, device=self.device, dtype=value.dtype)
            )

    @torch.no_grad()
    def logits(self, task: int, raw_images) -> torch.Tensor:
        out = []
        for start in range(0, len(raw_images), self.cfg.batch_size):
            batch = [decode(r) for r in raw_images[start : start + self.cfg.batch_size]]
            pixels = self.processor(images=batch, return_tensors="pt")["pixel_values"]
            emb = self.model.get_image_features(pixel_values=pixels.to(self.device))
            emb = getattr(emb, "pooler_output", emb)
            out.append(100.0 * torch.nn.functional.normalize(emb, dim=-1) @ self.heads[task].T)
        return torch.cat(out).float().cpu()


def _accuracy(bench, delta, data) -> list[float]:
    bench.set_delta(delta)
    return [
        float((bench.logits(t, raw).argmax(1).numpy() == y).mean())
        for t, (raw, y) in enumerate(data)
    ]


def _problem(bench, calib, seed) -> MergeProblem:
    stat, names = bench.cfg.margin, list(bench.base)
    numpy_deltas = [{k: v.cpu().numpy() for k, v in d.items()} for d in bench.deltas]

    def task_margin(delta, t):
        bench.set_delta(delta)
        return margin(bench.logits(t, calib[t][0]), calib[t][1], **stat)

    def loss(delta):
        bench.set_delta(delta)
        return float(
            np.mean(
                [
                    torch.nn.functional.cross_entropy(
                        bench.logits(t, raw), torch.as_tensor(y)
                    ).item()
                    for t, (raw, y) in enumerate(calib)
                ]
            )
        )

    layer = {
        n: np.array([task_margin({n: d[n]}, t) for t, d in enumerate(numpy_deltas)]) for n in names
    }
    return MergeProblem(
        numpy_deltas,
        score=lambda delta: float(np.mean(_accuracy(bench, delta, calib))),
        loss=loss,
        task_margins=np.array([task_margin(d, t) for t, d in enumerate(numpy_deltas)]),
        base_margin=None,  # no pre-training data: α_t = mean_s(m_s) / m_t
        layer_margins=layer,
        seed=seed,
    )


def _data(cfg: FullConfig, seed: int):
    calib = [
        load_parquet_images(t.calibration, limit=cfg.calibration_per_task, seed=seed)
        for t in cfg.tasks
    ]
    test = [load_shards(t.test, limit=cfg.test_limit) for t in cfg.tasks]
    return calib, test


def _accuracy_one(bench, delta, t, data) -> float:
    bench.set_delta(delta)
    raw, y = data
    return float((bench.logits(t, raw).argmax(1).numpy() == y).mean())


def run_individual(cfg: FullConfig) -> dict:
    """Zero-shot accuracy and each adapter alone on its own task (the normalisers)."""
    bench = ClipBench(cfg)
    _, test = _data(cfg, 0)
    own = [_accuracy_one(bench, d, t, test[t]) for t, d in enumerate(bench.deltas)]
    return {
        "tasks": [t.name for t in cfg.tasks],
        "zero_shot": _accuracy(bench, {}, test),
        "individual": own,
    }


def run_method(cfg: FullConfig, method: str, individual: dict) -> dict:
    """One rule, every calibration draw: α, calibration calls, per-task test accuracy."""
    bench = ClipBench(cfg)
    spec = cfg.methods[method]
    rows = []
    for seed in cfg.seeds:
        calib, test = _data(cfg, seed)

        def evaluate(delta, test=test):
            acc = _accuracy(bench, delta, test)
            return {
                "task_accuracy": acc,
                "mean_accuracy": float(np.mean(acc)),
                "normalised_accuracy": float(np.mean(np.array(acc) / individual["individual"])),
            }

        row = rule_row(spec, _problem(bench, calib, seed), cfg.scale_grid, evaluate, METRICS)
        rows.append({"seed": seed, **row})
        log.info("%s seed %d: normalised accuracy %.4f", method, seed, row["normalised_accuracy"])
    return {"method": method, "tasks": [t.name for t in cfg.tasks], "runs": rows}
