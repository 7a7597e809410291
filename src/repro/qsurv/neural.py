"""Training and prediction for the continuous-time hazard networks (QSurv and its ablations).

AdamW with cosine learning-rate decay and optional gradient clipping (:mod:`repro.qsurv.optim`,
the same for every arm), early stopping on the validation loss.

Training resumes from its last checkpoint: the checkpoint holds the model, optimiser,
schedule, early-stopping state and epoch, and the epoch's shuffling comes from (seed, epoch)
alone, so a run killed after epoch k and resumed gives the same numbers as an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from pathlib import Path

import numpy as np
import torch

from repro.qsurv import optim
from repro.qsurv.model import QuadratureLikelihood, build_from_config
from repro.qsurv.quadrature import interval_points

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class NeuralConfig:
    conditioning: str = "time_lora"
    rule: str = "gauss_legendre"
    nodes: int = 15
    hidden: tuple[int, ...] = (32, 32)
    dropout: float = 0.0
    rank: int = 16
    alpha: float = 16.0
    time_width: int = 32
    time_depth: int = 3
    time_activation: str = "tanh"
    epochs: int = 100
    batch_size: int = 128
    lr: float = 1e-2
    weight_decay: float = 1e-4
    patience: int = 10
    grad_clip: float = 0.0  # max global gradient norm; 0 = no clipping
    eval_nodes: int = 15


def build(cfg: NeuralConfig, in_features: int) -> torch.nn.Module:
    return build_from_config(cfg.conditioning, cfg, in_features)


def _save_atomic(obj: dict, path: Path) -> None:
    tmp = path.with_name(path.name + ".part")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def fit(
    cfg: NeuralConfig,
    split: dict[str, np.ndarray],
    *,
    seed: int,
    device: torch.device,
    checkpoint: Path,
) -> tuple[torch.nn.Module, dict]:
    """Train with early stopping on the validation loss; return the best model and a history."""
    t_max = float(split["t_train"].max())
    tensors = {
        k: torch.as_tensor(split[k], dtype=torch.float32, device=device)
        for k in ("x_train", "t_train", "e_train", "x_val", "t_val", "e_val")
    }
    v_train, v_val = tensors["t_train"] / t_max, tensors["t_val"] / t_max
    torch.manual_seed(seed)
    net = build(cfg, split["x_train"].shape[1]).to(device)
    loss_fn = QuadratureLikelihood(rule=cfg.rule, nodes=cfg.nodes, time_scale=t_max).to(device)
    optimizer = optim.adamw(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    schedule = optim.cosine(optimizer, epochs=cfg.epochs)
    state = {
        "epoch": 0,
        "best_val": float("inf"),
        "bad_epochs": 0,
        "best_state": None,
        "val_losses": [],
        "lrs": [],
        "train_seconds": 0.0,
    }
    if checkpoint.exists():
        saved = torch.load(checkpoint, map_location=device, weights_only=True)
        net.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        state = saved["state"]
        log.info("resuming seed %d from %s at epoch %d", seed, checkpoint, state["epoch"])
    n = len(v_train)
    while state["epoch"] < cfg.epochs and state["bad_epochs"] < cfg.patience:
        started = time.perf_counter()
        net.train()
        order = torch.randperm(
            n, generator=torch.Generator().manual_seed(seed * 100_003 + state["epoch"])
        )
        for batch in order.to(device).split(cfg.batch_size):
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(
                net, tensors["x_train"][batch], v_train[batch], tensors["e_train"][batch]
            )
            loss.backward()
            optim.clip_gradients(net.parameters(), cfg.grad_clip)
            optimizer.step()
        state["lrs"].append(optimizer.param_groups[0]["lr"])
        schedule.step()
        net.eval()
        with torch.no_grad():
            val = float(loss_fn(net, tensors["x_val"], v_val, tensors["e_val"]))
        state["val_losses"].append(val)
        state["epoch"] += 1
        state["train_seconds"] += time.perf_counter() - started
        if val < state["best_val"] - 1e-6:
            state.update(
                best_val=val,
                bad_epochs=0,
                best_state={k: v.detach().clone() for k, v in net.state_dict().items()},
            )
        else:
            state["bad_epochs"] += 1
        _save_atomic(
            {
                "model": net.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "state": state,
            },
            checkpoint,
        )
        if state["epoch"] % 10 == 0:
            log.info("seed %d epoch %d: validation loss %.4f", seed, state["epoch"], val)
    net.load_state_dict(state["best_state"])
    history = {
        "epochs": state["epoch"],
        "best_val_loss": state["best_val"],
        "train_seconds": state["train_seconds"],
        "t_max": t_max,
        "lrs": state["lrs"],
    }
    return net, history


@torch.no_grad()
def predict_survival(
    net: torch.nn.Module,
    x: np.ndarray,
    grid: np.ndarray,
    *,
    t_max: float,
    nodes: int,
    device: torch.device,
    chunk: int = 256,
) -> np.ndarray:
    """S(t | x) on ``grid`` (n, M): each grid interval integrated with its own K GL nodes.

    The network sees v = t / t_max and returns the hazard per unit of t, so each interval's
    integral over v is rescaled by t_max.
    """
    net.eval()
    points, weights = interval_points(np.asarray(grid) / t_max, "gauss_legendre", nodes)
    points_t = torch.as_tensor(points.reshape(-1), dtype=torch.float32, device=device)
    weights_t = torch.as_tensor(weights, dtype=torch.float32, device=device)
    out = []
    for xs in torch.as_tensor(x, dtype=torch.float32, device=device).split(chunk):
        hazard = net(xs, points_t[None, :]).view(len(xs), *weights.shape)
        cumulative = t_max * (hazard * weights_t).sum(-1).cumsum(-1)
        out.append(torch.exp(-cumulative.clamp(max=30.0)).cpu())
    return torch.cat(out).numpy().astype(np.float64)
