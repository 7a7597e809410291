"""The training objective shared by pretraining and every adaptation method."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.r3_adapter.data import Observed


def match_targets(data: Observed) -> torch.Tensor:
    """Class of each view-2 patch: its view-1 token, or N (the dustbin) for holes."""
    match = data.scenes.match
    return torch.where(match >= 0, match, match.shape[1])


def task_loss(out: dict[str, torch.Tensor], data: Observed, *, match_weight: float = 1.0):
    """Mean Euclidean pointmap error on co-visible patches + match cross-entropy."""
    seen = data.scenes.covisible
    distance = (out["points"] - data.scenes.points2).norm(dim=-1)
    points = (distance * seen).sum() / seen.sum().clamp(min=1)
    logits = out["match"]
    match = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), match_targets(data).reshape(-1))
    return points + match_weight * match
