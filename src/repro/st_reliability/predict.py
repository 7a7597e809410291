"""Load a trained variant and predict held-out (line, perturbation) pairs in gene space."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable

import torch

from repro.st_reliability.data import CONTROL
from repro.st_reliability.encoders import load_encoder
from repro.st_reliability.model import ModelConfig, build_model, self_only_attention
from repro.st_reliability.sentences import CellIndex
from repro.st_reliability.train import Variant


@dataclasses.dataclass
class Loaded:
    model: torch.nn.Module
    encoder: object
    variant: Variant
    vocabulary: list[str]
    # a planted attention change (a context manager factory taking the model), applied in
    # every forward pass (repro.st_reliability.planted); None for the model as trained
    plant: Callable | None = None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def attention(self):
        """The attention the variant was trained with (self-only for that null), with the
        planted change, if any."""
        if self.plant is not None:
            return self.plant(self.model)
        if self.variant.attention == "self_only":
            return self_only_attention(self.model)
        return contextlib.nullcontext()


def load(path: str, *, untrained: bool = False, device: str | torch.device = "cpu") -> Loaded:
    """A checkpoint from train.py; ``untrained`` gives the same model at initialisation."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    encoder = load_encoder(ckpt["encoder"])
    model = build_model(
        ModelConfig(**ckpt["model_config"]),
        input_dim=encoder.dim,
        pert_dim=len(ckpt["vocabulary"]),
        gene_space=encoder.gene_space,
    )
    model.load_state_dict(ckpt["init"] if untrained else ckpt["model"])
    return Loaded(
        model.to(device).eval(), encoder, Variant(**ckpt["variant"]), list(ckpt["vocabulary"])
    )


def sentence_batch(index: CellIndex, basal: torch.Tensor, perts: list[str], device=None) -> dict:
    """Every perturbation on each of the line's fixed basal sentences (K, S): K·len(perts)
    sentences, perturbation-major, on ``device`` (the model's)."""
    k, s = basal.shape
    rows = basal.repeat(len(perts), 1).reshape(-1)
    batch = {"ctrl_cell_emb": index.cells[rows], "pert_emb": index.one_hot(perts, repeat=k * s)}
    return {name: t.to(device) for name, t in batch.items()} if device is not None else batch


def predict_line(
    loaded: Loaded,
    index: CellIndex,
    basal: torch.Tensor,
    perts: list[str],
    *,
    ceiling: float,
    pert_batch: int = 0,
):
    """Gene-space predicted cells per perturbation (K·S, G), clipped to [0, ceiling] (the
    data's log1p range; cell-eval rejects values outside it), the number of clipped values
    above the ceiling, and Δ̂ = mean(predicted cells) − mean(predicted controls on the same
    basal cells). Forward passes take ``pert_batch`` perturbations at a time (0: all; each
    sentence is predicted on its own, so the result is the same)."""
    names = [CONTROL, *perts]
    size = pert_batch or len(names)
    outs = []
    for i in range(0, len(names), size):
        batch = sentence_batch(index, basal, names[i : i + size], loaded.device)
        with torch.no_grad(), loaded.attention():
            outs.append(loaded.encoder.decode(loaded.model(batch)).cpu())
    out = torch.cat(outs)
    above = int((out > ceiling).sum())
    cells = out.clamp(0.0, ceiling).reshape(len(names), -1, out.shape[-1]).numpy()
    means = cells.mean(1)
    deltas = means[1:] - means[0]
    return {name: cells[i] for i, name in enumerate(names)}, deltas, above
