"""The NLI benchmark (KnOTS's language setting): a sequence-classification LM (Llama-3-8B)
with the published per-task LoRA adapters on q/k/v/o, each task judged through its own
adapter's classification head on that task's classes (``fullscale`` runs it)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from repro.common.io import read_json
from repro.malora.fullscale import DeltaBench, FullConfig
from repro.malora.fullscale_data import load_factors, load_head
from repro.malora.nli_data import load_split, load_tokenizer


@dataclasses.dataclass(frozen=True)
class NliTask:
    name: str
    adapter_config: str
    adapter_weights: str  # LoRA factors and the task's head (peft keeps `score` for SEQ_CLS)
    data: str  # the tokenised task (nli_data.prepare_task)


class NliBench(DeltaBench):
    """The LM's attention weights set to W0 + ΔW on demand; per task its head and classes."""

    def __init__(self, cfg: FullConfig):
        from transformers import AutoModelForSequenceClassification

        from repro.common.device import select_device

        device = select_device(cfg.device)
        heads = [load_head(t.adapter_weights) for t in cfg.tasks]
        self.tokenizer = load_tokenizer(cfg.model_dir)
        model = AutoModelForSequenceClassification.from_pretrained(
            cfg.model_dir, num_labels=heads[0].shape[0], dtype=getattr(torch, cfg.dtype)
        )
        model.config.pad_token_id = self.tokenizer.pad_token_id  # pooling: last non-pad token
        model = model.to(device).eval()
        names = [n for n, _ in model.named_parameters()]
        factors = [load_factors(t.adapter_config, t.adapter_weights, names) for t in cfg.tasks]
        deltas = [{k: b @ a for k, (b, a) in f.items()} for f in factors]
        super().__init__(cfg, model, deltas, factors, device)
        shape = tuple(model.score.weight.shape)
        for task, head in zip(cfg.tasks, heads, strict=True):
            if tuple(head.shape) != shape:
                raise ValueError(f"{task.adapter_weights}: head {tuple(head.shape)} ≠ {shape}")
        self.heads = [h.to(device, model.score.weight.dtype) for h in heads]
        self.docs = [read_json(t.data) for t in cfg.tasks]
        self.classes = [np.asarray(d["classes"]) for d in self.docs]
        for task, classes in zip(cfg.tasks, self.classes, strict=True):
            if classes.max() >= shape[0]:
                raise ValueError(
                    f"{task.name}: classes {classes.tolist()} exceed the {shape[0]}-way head"
                )

    @torch.no_grad()
    def logits(self, task: int, input_ids) -> torch.Tensor:
        """Logits of the task's classes (the others are masked, as KnOTS masks them),
        length-sorted batches (less padding), rows in the input's order."""
        self.model.score.weight.copy_(self.heads[task])
        order = np.argsort([len(ids) for ids in input_ids], kind="stable")
        out = torch.empty(len(input_ids), len(self.classes[task]))
        for start in range(0, len(order), self.cfg.batch_size):
            rows = order[start : start + self.cfg.batch_size]
            ids = {"input_ids": [input_ids[i] for i in rows]}
            batch = self.tokenizer.pad(ids, return_tensors="pt")
            logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits
            keep = torch.as_tensor(self.classes[task], device=logits.device)
            out[torch.as_tensor(rows)] = logits[:, keep].float().cpu()
        return out

    def data(self, seed: int):
        """Per task: a calibration draw and the test set, labels as positions among the
        task's classes."""
        cfg, calib, test = self.cfg, [], []
        for doc, classes in zip(self.docs, self.classes, strict=True):
            for part, limit, s, into in (
                ("calibration", cfg.calibration_per_task, seed, calib),
                ("test", cfg.test_limit, 0, test),
            ):
                ids, y = load_split(doc, part, limit=limit, seed=s)
                into.append((ids, np.searchsorted(classes, y)))
        return calib, test
