"""One optimiser, one learning-rate schedule and one gradient clip for every trained arm.

QSurv's networks and the pycox baselines all train with PyTorch's AdamW, whose weight
decay shrinks each weight by lr·wd per step, and a cosine decay of the learning rate over
the configured epochs (stepped once per epoch, from ``lr`` towards 0). torchtuples' own
``tt.optim.AdamW(decoupled_weight_decay=wd)`` shrinks by wd·lr/lr₀ per step instead, which
at the same numbers is 1/lr times stronger: the baselines are not given it.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def adamw(params: Iterable[torch.nn.Parameter], *, lr: float, weight_decay: float):
    if lr <= 0 or weight_decay < 0:
        raise ValueError(f"need lr > 0 and weight_decay >= 0, got {lr} and {weight_decay}")
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.999), weight_decay=weight_decay)


def cosine(optimizer: torch.optim.Optimizer, *, epochs: int):
    """lr_e = lr · (1 + cos(π e / epochs)) / 2 for the epoch after e completed epochs."""
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs, eta_min=0.0)


def clip_gradients(params: Iterable[torch.nn.Parameter], max_norm: float) -> None:
    """Rescale gradients to a global norm of at most ``max_norm``; 0 switches clipping off."""
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(params, max_norm)
