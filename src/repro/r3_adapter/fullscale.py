"""Full scale: adapt a real backbone (DUSt3R, VGGT) on low-light image pairs and evaluate it.

The same method specs and adapters as the embedded run attach through ``BACKBONES`` (the
targets and relation sites of each backbone). Training uses DUSt3R's confidence-weighted
regression on scale-normalised pointmaps, Σ C‖x̂/ŝ − x/s‖ − α log C, on both views. Every
step is tested on local module trees with the backbones' names (tests/r3_adapter/trees.py).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

import numpy as np
import roma
import torch

from repro.r3_adapter.attention import captured, diagnostics
from repro.r3_adapter.backbones import BACKBONES
from repro.r3_adapter.methods import Adapted, build_method
from repro.r3_adapter.sevenscenes import RawLowLight, pair_targets

log = logging.getLogger(__name__)


def _dust3r_forward(model, image1, image2):
    B, _, H, W = image1.shape
    shape = torch.tensor([[H, W]] * B, device=image1.device)
    views = [
        {
            "img": 2 * img - 1,
            "true_shape": shape,
            "idx": list(range(B)),
            "instance": [str(i) for i in range(B)],
        }
        for img in (image1, image2)
    ]
    res1, res2 = model(*views)
    return res1["pts3d"], res2["pts3d_in_other_view"], res1["conf"], res2["conf"]


def _vggt_forward(model, image1, image2):
    out = model(torch.stack([image1, image2], dim=1))
    points, conf = out["world_points"], out["world_points_conf"]
    return points[:, 0], points[:, 1], conf[:, 0], conf[:, 1]


def _dust3r_relation(probabilities, site, batch):
    return probabilities.mean(dim=1)  # dec_blocks2: view-2 queries over view-1 keys


def _vggt_relation(probabilities, site, batch):
    own, other = site.rows(probabilities.shape[-1], probabilities.device)
    mean = probabilities.mean(dim=1)
    block = mean[:, own[1]][:, :, own[0]]  # frame-1 patches over frame-0 patches
    return block / block.sum(-1, keepdim=True).clamp_min(1e-12)


@dataclasses.dataclass(frozen=True)
class BackboneIO:
    forward: Callable  # (model, image1, image2) -> points1, points2 (view-1 frame), conf1, conf2
    relation_pattern: str  # attention modules whose relation is view 2 -> view 1
    relation: Callable  # (probabilities, site, batch) -> (B, N2, N1)


IO = {
    "dust3r": BackboneIO(_dust3r_forward, r"dec_blocks2\.\d+\.cross_attn$", _dust3r_relation),
    "vggt": BackboneIO(_vggt_forward, r"aggregator\.global_blocks\.\d+\.attn$", _vggt_relation),
}


def _normalised(points, valid):
    """Points over their mean distance to the origin (per pair, both views together)."""
    norms = torch.cat(
        [(p.norm(dim=-1) * v).flatten(1) for p, v in zip(points, valid, strict=True)], 1
    )
    count = torch.cat([v.flatten(1) for v in valid], 1).sum(1).clamp(min=1)
    scale = (norms.sum(1) / count).clamp_min(1e-8)
    return [p / scale[:, None, None, None] for p in points]


def confidence_loss(pred, conf, truth, valid, alpha: float = 0.2) -> torch.Tensor:
    """DUSt3R's regression loss over both views (it goes negative; that is expected)."""
    pred, truth = _normalised(pred, valid), _normalised(truth, valid)
    total = 0.0
    for p, c, t, v in zip(pred, conf, truth, valid, strict=True):
        err = (p - t).norm(dim=-1)
        total = total + ((c * err - alpha * c.log()) * v).sum() / v.sum().clamp(min=1)
    return total


@dataclasses.dataclass(frozen=True)
class FullAdaptConfig:
    steps: int = 500
    batch_size: int = 4
    lrs: tuple[float, ...] = (1e-4, 3e-4, 1e-3)
    adapt_severity: int = 2

    def __post_init__(self):
        object.__setattr__(self, "lrs", tuple(float(x) for x in self.lrs))


class PairBatches:
    """Pairs as tensors on a device, darkened on the fly at a severity (fixed noise per seed)."""

    def __init__(self, arrays: dict, index, device, shift: RawLowLight, patch: int):
        take = lambda k: torch.from_numpy(np.asarray(arrays[k])[index])  # noqa: E731
        self.images = [take(k).permute(0, 3, 1, 2).float().div(255) for k in ("image1", "image2")]
        self.depths = [take("depth1"), take("depth2")]
        self.T21, self.K = take("T21").float(), torch.from_numpy(arrays["K"]).float()
        self.device, self.shift, self.patch = device, shift, patch

    def __len__(self):
        return len(self.T21)

    def batch(self, index, severity: int, seed: int) -> dict:
        g = torch.Generator().manual_seed(seed)
        images = [self.shift.apply(img[index], severity, g).to(self.device) for img in self.images]
        targets = pair_targets(
            self.depths[0][index], self.depths[1][index], self.K, self.T21[index], self.patch
        )
        targets = {k: v.to(self.device) for k, v in targets.items()}
        return {"images": images, "T21": self.T21[index].to(self.device), **targets}


def adapt_full(adapted: Adapted, io: BackboneIO, data: PairBatches, cfg: FullAdaptConfig, lr, seed):
    params = adapted.trainable()
    opt = torch.optim.AdamW(params, lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    g = torch.Generator().manual_seed(seed)
    adapted.model.train()
    losses = []
    for step in range(cfg.steps):
        index = torch.randperm(len(data), generator=g)[: cfg.batch_size]
        b = data.batch(index, cfg.adapt_severity, seed * 100_003 + step)
        p1, p2, c1, c2 = io.forward(adapted.model, *b["images"])
        loss = confidence_loss(
            [p1, p2], [c1, c2], [b["points1"], b["points2"]], [b["valid1"], b["valid2"]]
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % 50 == 0:
            log.info("step %d/%d loss %.4f", step + 1, cfg.steps, losses[-1])
    adapted.model.eval()
    return losses


def _epe_absrel(points2, b) -> tuple[float, float]:
    valid = b["valid2"].flatten(1).float()
    pred, truth = points2.flatten(1, 2), b["points2"].flatten(1, 2)
    R, t, s = roma.rigid_points_registration(pred, truth, weights=valid, compute_scaling=True)
    aligned = s[:, None, None] * pred @ R.transpose(1, 2) + t[:, None]
    epe = ((aligned - truth).norm(dim=-1) * valid).sum() / valid.sum()
    depth = (pred @ b["T21"][:, :3, :3].transpose(1, 2) + b["T21"][:, None, :3, 3])[..., 2]
    d = b["depth2"].flatten(1)
    rel = []
    for i in range(len(d)):
        m = valid[i] > 0
        scale = d[i][m].quantile(0.5) / depth[i][m].quantile(0.5).clamp_min(1e-6)
        rel.append(((depth[i][m] * scale - d[i][m]).abs() / d[i][m]).mean())
    return epe.item(), torch.stack(rel).mean().item()


@torch.no_grad()
def evaluate_full(adapted, io, site, data: PairBatches, severities, seed, chunk: int = 4) -> dict:
    """Per severity: pointmap EPE (Sim(3)-aligned), depth AbsRel, per-layer GT-mass."""
    out = {}
    for severity in severities:
        rows, layers = [], {}
        for start in range(0, len(data), chunk):
            index = torch.arange(start, min(start + chunk, len(data)))
            b = data.batch(index, severity, seed * 7919 + start)
            with captured(adapted.model, io.relation_pattern) as probs:
                _, p2, _, _ = io.forward(adapted.model, *b["images"])
            rows.append(_epe_absrel(p2, b))
            for name, p in probs.items():
                layers.setdefault(name, []).append((io.relation(p, site, len(index)), b["match"]))
        epe, absrel = np.mean(rows, axis=0)
        name = "clean" if severity == 0 else f"severity{severity}"
        out[f"{name}/epe"], out[f"{name}/absrel"] = float(epe), float(absrel)
        for i, parts in enumerate(layers.values()):
            relation = torch.cat([r for r, _ in parts])
            match = torch.cat([m for _, m in parts])
            for k, v in diagnostics(relation, match).items():
                out[f"{name}/layer{i}/{k}"] = v
    return out


def build_full(model, backbone: str, spec: dict, grid) -> tuple[Adapted, object]:
    b = BACKBONES[backbone]
    site = b.site(model, grid)
    return build_method(model, spec, site=site, targets=b.targets), site
