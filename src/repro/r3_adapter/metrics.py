"""Reconstruction and correspondence metrics of the two-view task (brief §5).

* correspondence accuracy: fraction of co-visible view-2 patches whose predicted match
  (argmax over view-1 tokens and the dustbin) is the true view-1 token;
* dustbin-free accuracy: the same with the argmax over view-1 tokens only, so that a
  shifted dustbin logit (which one scalar can fix) does not count as a failed relation;
* pointmap EPE: mean distance between predicted and true view-2 points (view-1 frame) over
  co-visible patches, after a per-scene Umeyama Sim(3) alignment (roma);
* depth AbsRel: view-2 depth (predicted points moved into view 2's camera with the true
  pose) against the true depth, mean |d̂ − d| / d after per-image median scaling.
"""

from __future__ import annotations

import torch

from repro.r3_adapter.data import Observed


def correspondence_accuracy(match_logits: torch.Tensor, data: Observed) -> float:
    seen = data.scenes.covisible
    hits = (match_logits.argmax(dim=-1) == data.scenes.match) & seen
    return (hits.sum() / seen.sum()).item()


def dustbin_free_accuracy(match_logits: torch.Tensor, data: Observed) -> float:
    return correspondence_accuracy(match_logits[..., :-1], data)


def aligned_points(points: torch.Tensor, data: Observed) -> torch.Tensor:
    """Predicted points after the Sim(3) that best maps them onto the truth, per scene."""
    import roma  # here: roma imports torch._dynamo (≈1.5 s), which training jobs never need

    weights = data.scenes.covisible.float()
    R, t, s = roma.rigid_points_registration(
        points, data.scenes.points2, weights=weights, compute_scaling=True
    )
    return s[:, None, None] * points @ R.transpose(1, 2) + t[:, None]


def pointmap_epe(points: torch.Tensor, data: Observed) -> float:
    seen = data.scenes.covisible
    error = (aligned_points(points, data) - data.scenes.points2).norm(dim=-1)
    return ((error * seen).sum() / seen.sum()).item()


def depth_absrel(points: torch.Tensor, data: Observed) -> float:
    s = data.scenes
    seen = s.covisible
    depth = (points @ s.rotation.transpose(1, 2) + s.translation[:, None])[..., 2]
    truth = torch.where(seen, s.depth2, 1.0)
    scale = torch.stack(  # torch.median picks the lower middle value: quantile averages
        [
            truth[b][seen[b]].quantile(0.5) / depth[b][seen[b]].quantile(0.5).clamp_min(1e-6)
            for b in range(len(truth))
        ]
    )
    rel = ((depth * scale[:, None] - truth).abs() / truth) * seen
    return (rel.sum() / seen.sum()).item()


def reconstruction_metrics(out: dict[str, torch.Tensor], data: Observed) -> dict[str, float]:
    return {
        "accuracy": correspondence_accuracy(out["match"], data),
        "dustbin_free_accuracy": dustbin_free_accuracy(out["match"], data),
        "epe": pointmap_epe(out["points"], data),
        "absrel": depth_absrel(out["points"], data),
    }
