"""The KnOTS CLIP benchmark (8 vision tasks): the published LoRA adapters on the vision
tower, the tasks' cached pixels (``clip_data``: KnOTS's validation part of each test split
for calibration, the rest for testing) and per-task zero-shot text heads (``fullscale`` runs
it)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from repro.malora.clip_data import load_cached, normalise
from repro.malora.fullscale import DeltaBench, FullConfig
from repro.malora.fullscale_data import load_adapter_peft, text_heads


@dataclasses.dataclass(frozen=True)
class FullTask:
    name: str
    adapter_config: str
    adapter_weights: str
    pixels: str  # the task's cache folder (clip_data.cache_task)
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
        loaded = [
            load_adapter_peft(t.adapter_config, t.adapter_weights, tower, vision) for t in cfg.tasks
        ]
        del tower
        deltas, factors = [d for d, _ in loaded], [f for _, f in loaded]
        super().__init__(cfg, model, deltas, factors, device)  # LoRA is on the vision tower
        self.parts, self.heads = [], []
        for task in cfg.tasks:
            parts, meta = load_cached(task.pixels)
            self.parts.append(parts)
            names = task.class_names or meta["class_names"]
            if not names:
                raise ValueError(f"{task.name}: no class names in config or {task.pixels}")
            self.heads.append(text_heads(model, tokenizer, names, task.templates, device))

    @torch.no_grad()
    def logits(self, task: int, pixels) -> torch.Tensor:
        """Logits of the task's zero-shot head for cached uint8 pixels (N × 3 × H × W)."""
        out = []
        for start in range(0, len(pixels), self.cfg.batch_size):
            batch = pixels[start : start + self.cfg.batch_size]
            x = normalise(batch, self.processor, self.device, self.model.dtype)
            emb = self.model.get_image_features(pixel_values=x)
            emb = getattr(emb, "pooler_output", emb)
            out.append(100.0 * torch.nn.functional.normalize(emb, dim=-1) @ self.heads[task].T)
        return torch.cat(out).float().cpu()

    def data(self, seed: int):
        """Per task: ``calibration_per_task`` images drawn (by ``seed``) from the validation
        part, and the test part (a fixed subset of ``test_limit`` rows when set)."""
        cfg, calib, test = self.cfg, [], []
        for parts in self.parts:
            for part, limit, s, into in (
                ("validation", cfg.calibration_per_task, seed, calib),
                ("test", cfg.test_limit, 0, test),
            ):
                pixels, labels = parts[part]  # memory-mapped: a whole part is not copied
                if limit is not None and limit < len(labels):
                    rows = np.sort(np.random.default_rng(s).permutation(len(labels))[:limit])
                    pixels, labels = pixels[rows], labels[rows]
                into.append((pixels, labels))
        return calib, test
