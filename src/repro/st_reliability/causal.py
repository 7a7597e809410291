"""The brief's causal check (§2.3.8): edit one layer's attention update inside the forward
pass and measure the per-perturbation quality of the predictions that come out.

Edits: project the leading direction v₁ of the set-mean updates out of U (a rank-1
bottleneck loses what it carries), project a random unit direction out (the control for
removing any one direction), replace every attention row by the mean row (keeps the
set-mean update, drops the per-cell differences), and uniform attention.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from repro.st_reliability import attention
from repro.st_reliability.metrics import pearson_rows
from repro.st_reliability.predict import predict_line


def edits(direction: torch.Tensor, *, seed: int) -> dict:
    """name -> edit for :func:`attention.edited_update` (``None``: the model unedited)."""
    g = torch.Generator().manual_seed(seed)
    random = torch.randn(direction.shape, generator=g)
    return {
        "none": None,
        "project_v1": attention.project_out(direction),
        "project_random": attention.project_out(random),
        "mean_row": attention.swap_maps("mean_row"),
        "uniform": attention.swap_maps("uniform"),
    }


def causal_quality(
    loaded,
    index,
    basal,
    perts: list[str],
    true: np.ndarray,
    *,
    layer: int,
    direction,
    seed: int,
    ceiling: float,
    pert_batch: int = 0,
    unedited: np.ndarray | None = None,
) -> dict[str, float]:
    """Mean Pearson(Δ̂, Δ) over ``perts`` (the per-perturbation form of cell-eval's
    pearson_delta, same control reference) under each edit of ``layer``'s update.
    ``unedited``: the model's own Δ̂ of ``perts`` from :func:`predict_line` on the same
    basal sentences, when the caller has it (then the unedited pass is not run again)."""
    out = {}
    for name, edit in edits(direction, seed=seed).items():
        if edit is None and unedited is not None:
            delta_hat = unedited
        else:
            block = (
                attention.edited_update(loaded.model, layer, edit)
                if edit is not None
                else contextlib.nullcontext()
            )
            with block:
                _, delta_hat, _ = predict_line(
                    loaded, index, basal, perts, ceiling=ceiling, pert_batch=pert_batch
                )
        out[name] = float(np.nanmean(pearson_rows(delta_hat, true)))
    return out
