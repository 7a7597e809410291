"""A parameter-free reference matcher: descriptor correlation with 3×3 neighbourhood
consensus (in the spirit of NCNet, https://arxiv.org/abs/1810.10510, without learning).

Each view's observations are standardised per scene and channel (which undoes the shift's
gain and black level), correlated by cosine similarity between every view-2 and view-1
patch, and each correlation S[q, k] is replaced by the sum of S[q + d, k + d] over the 3×3
displacements d that keep both patches on the grid: a match is supported by its neighbours
moving with it. The prediction is the argmax over view-1 patches (no dustbin), so its
accuracy compares with the models' dustbin-free accuracy. It shows what the relational
evidence alone can recover from the noisy observations.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def standardise(obs: torch.Tensor) -> torch.Tensor:
    """(B, N, C) zero mean, unit variance per scene and channel, then unit norm per patch."""
    z = (obs - obs.mean(dim=1, keepdim=True)) / obs.std(dim=1, keepdim=True).clamp_min(1e-6)
    return F.normalize(z, dim=-1)


def consensus_scores(obs1: torch.Tensor, obs2: torch.Tensor, grid: int) -> torch.Tensor:
    """(B, N2, N1) correlation of view-2 with view-1 patches summed over 3×3 co-displacements."""
    B, N, _ = obs1.shape
    h = w = grid
    corr = standardise(obs2) @ standardise(obs1).transpose(1, 2)  # (B, N2, N1)
    padded = F.pad(corr.reshape(B, h, w, h, w), (1, 1, 1, 1, 1, 1, 1, 1))
    total = torch.zeros(B, h, w, h, w, dtype=corr.dtype, device=corr.device)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            y, x = 1 + dy, 1 + dx
            total += padded[:, y : y + h, x : x + w, y : y + h, x : x + w]
    return total.reshape(B, N, N)


def consensus_accuracy(obs1: torch.Tensor, obs2: torch.Tensor, match: torch.Tensor, grid: int):
    """Fraction of co-visible view-2 patches whose consensus argmax is the true view-1 patch."""
    seen = match >= 0
    hits = (consensus_scores(obs1, obs2, grid).argmax(dim=-1) == match) & seen
    return (hits.sum() / seen.sum()).item()
