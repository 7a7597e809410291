"""The KnOTS CLIP benchmark (8 vision tasks): the published LoRA adapters on the vision
tower, parquet image splits and per-task zero-shot text heads (``fullscale`` runs it)."""

from __future__ import annotations

import dataclasses

import torch

from repro.malora.fullscale import DeltaBench, FullConfig
from repro.malora.fullscale_data import (
    decode,
    load_adapter_peft,
    load_parquet_images,
    load_shards,
    parquet_class_names,
    text_heads,
)


@dataclasses.dataclass(frozen=True)
class FullTask:
    name: str
    adapter_config: str
    adapter_weights: str
    calibration: str  # parquet shard the calibration draws come from (validation or train)
    test: tuple[str, ...]  # parquet shards of the test split
    templates: tuple[str, ...] = ("a photo of a {}.",)
    class_names: tuple[str, ...] | None = None  # default: the parquet's ClassLabel names


class ClipBench(DeltaBench):
    """A CLIP model whose vision weights are set to W0 + ΔW on demand, and per-task heads."""

    def __init__(self, cfg: FullConfig):
        from transformers import CLIPImageProcessor, CLIPModel, CLIPTokenizer, CLIPVisionModel

        from repro.common.device import select_device

        device = select_device(cfg.device)
        model = CLIPModel.from_pretrained(cfg.model_dir).to(device).eval()
        self.processor = CLIPImageProcessor.from_pretrained(cfg.model_dir)
        tokenizer = CLIPTokenizer.from_pretrained(cfg.model_dir)
        vision = [n for n, _ in model.named_parameters() if n.startswith("vision_model.")]
        # the KnOTS adapters were saved from a CLIPVisionModel: peft loads them onto one
        tower = CLIPVisionModel(model.config.vision_config)
        tower.load_state_dict(model.vision_model.state_dict())
        deltas = [
            load_adapter_peft(t.adapter_config, t.adapter_weights, tower, vision) for t in cfg.tasks
        ]
        del tower
        super().__init__(cfg, model, deltas, device)  # LoRA is on the vision tower
        self.heads = []
        for task in cfg.tasks:
            names = task.class_names or parquet_class_names(task.test[0])
            if not names:
                raise ValueError(f"{task.name}: no class names in config or {task.test}")
            self.heads.append(text_heads(model, tokenizer, names, task.templates, device))

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

    def data(self, seed: int):
        cfg = self.cfg
        calib = [
            load_parquet_images(t.calibration, limit=cfg.calibration_per_task, seed=seed)
            for t in cfg.tasks
        ]
        test = [load_shards(t.test, limit=cfg.test_limit) for t in cfg.tasks]
        return calib, test
