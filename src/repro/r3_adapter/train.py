"""Pretraining on clean scenes, and few-shot adaptation with a learning-rate search.

Every method gets the same few-shot set, steps, batch, optimiser and learning-rate grid;
the rate is chosen by correspondence accuracy on a shifted validation set that is disjoint
from the test scenes (ties: the smaller rate).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import numpy as np
import torch

from repro.r3_adapter.data import Observed, observed
from repro.r3_adapter.losses import task_loss
from repro.r3_adapter.methods import Adapted
from repro.r3_adapter.metrics import correspondence_accuracy
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.scenes import SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    steps: int = 800
    batch_size: int = 32
    lr: float = 3e-3  # peak of the one-cycle schedule
    weight_decay: float = 0.01


@dataclasses.dataclass(frozen=True)
class AdaptConfig:
    steps: int = 100
    batch_size: int = 32
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2)  # the same grid for every method

    def __post_init__(self):
        object.__setattr__(self, "lrs", tuple(float(lr) for lr in self.lrs))


def pretrain(
    model_cfg: ModelConfig,
    scene: SceneConfig,
    shift: LowLight,
    cfg: PretrainConfig,
    seed: int,
    device: torch.device,
) -> tuple[TwoViewTransformer, list[float]]:
    """Train on a stream of fresh clean scenes; returns the model and the loss per step."""
    torch.manual_seed(seed)
    rng = np.random.default_rng([seed, 1])
    model = TwoViewTransformer(model_cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.steps)
    losses = []
    for step in range(cfg.steps):
        batch = observed(make_scenes(scene, cfg.batch_size, rng), 0, shift, rng).to(device)
        loss = task_loss(model(*batch.inputs()), batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == cfg.steps - 1:
            log.info("pretrain step %d/%d loss %.4f", step + 1, cfg.steps, losses[-1])
    return model.eval(), losses


def adapt(adapted: Adapted, data: Observed, cfg: AdaptConfig, lr: float, seed: int) -> list[float]:
    """AdamW with cosine decay over ``cfg.steps`` minibatches of the few-shot set."""
    params = adapted.trainable()
    if not params:
        return []
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(params, lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    adapted.model.train()
    losses = []
    for _ in range(cfg.steps):
        index = torch.randperm(len(data), generator=generator)[: cfg.batch_size]
        batch = data.subset(index)
        loss = task_loss(adapted.model(*batch.inputs()), batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    adapted.model.eval()
    return losses


@torch.no_grad()
def validation_accuracy(adapted: Adapted, data: Observed) -> float:
    return correspondence_accuracy(adapted.model(*data.inputs())["match"], data)


def search_lr(
    build: Callable[[], Adapted],
    fewshot: Observed,
    validation: Observed,
    cfg: AdaptConfig,
    seed: int,
    lrs: Sequence[float] | None = None,
) -> tuple[Adapted, dict]:
    """Adapt a fresh copy per rate; keep the best on validation accuracy."""
    best, record = None, {"validation_accuracy": {}, "losses": {}}
    for lr in lrs or cfg.lrs:
        torch.manual_seed(seed)  # the same adapter initialisation at every rate
        adapted = build()
        losses = adapt(adapted, fewshot, cfg, lr, seed)
        accuracy = validation_accuracy(adapted, validation)
        record["validation_accuracy"][lr], record["losses"][lr] = accuracy, losses
        log.info("lr %.0e: validation accuracy %.4f", lr, accuracy)
        if best is None or accuracy > best[0]:
            if best is not None:
                best[2].remove()
            best = (accuracy, lr, adapted)
        else:
            adapted.remove()
        if not adapted.trainable():
            break  # nothing trains: every rate gives the same model
    record["lr"], record["n_trainable"] = best[1], best[2].n_trainable()
    return best[2], record
