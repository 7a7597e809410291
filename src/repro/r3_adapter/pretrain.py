"""Pretrain the two-view backbone on a stream of fresh clean scenes (one checkpoint).

Every adaptation seed starts from this one checkpoint, as adapting a released model does;
seeds vary the few-shot set, the validation and test scenes, the adapter initialisation and
the minibatch order.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import torch

from repro.common.device import select_device
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.r3_adapter.data import observed
from repro.r3_adapter.losses import task_loss
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
    seed: int = 0
    # Intra-op threads. The weights depend on it (float sums split differently), so it is set
    # here rather than taken from the cores a run has.
    threads: int = 1


def model_config(scene: SceneConfig, spec: dict) -> ModelConfig:
    return ModelConfig(tokens=scene.tokens, channels=scene.channels, **spec)


def pretrain(
    model_cfg: ModelConfig,
    scene: SceneConfig,
    shift: LowLight,
    cfg: PretrainConfig,
    device: torch.device,
) -> tuple[TwoViewTransformer, list[float]]:
    """Train on fresh clean scenes every step; returns the model and the loss per step."""
    seed_everything(cfg.seed)
    rng = np.random.default_rng([cfg.seed, 1])
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


def run(
    scene: SceneConfig,
    shift: LowLight,
    model_spec: dict,
    cfg: PretrainConfig,
    model_path: str,
    record_path: str,
    *,
    device: str = "auto",
) -> None:
    set_threads(cfg.threads)
    dev = select_device(device)
    model_cfg = model_config(scene, model_spec)
    config = {"scene": scene, "model": model_cfg, "pretraining": cfg}
    with RunRecorder(config=config, device=dev, seed=cfg.seed) as rec:
        model, losses = pretrain(model_cfg, scene, shift, cfg, dev)
    torch.save(model.state_dict(), model_path)
    n_params = sum(p.numel() for p in model.parameters())
    write_json(record_path, {"losses": losses, "parameters": n_params, **rec.provenance()})


def main(argv: list[str] | None = None) -> None:
    from repro.common.cli import paper_section, step_parser

    p = step_parser("Pretrain the embedded two-view backbone.", paper="r3_adapter")
    p.add_argument("model", help="output state dict (.pt)")
    p.add_argument("record", help="output JSON record")
    p.add_argument("--device", default="auto")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    sec = paper_section(args.config, "r3_adapter")
    run(
        SceneConfig(**sec.get("scene", {})),
        LowLight(**sec.get("low_light", {})),
        sec.get("model", {}),
        PretrainConfig(**sec.get("pretraining", {})),
        args.model,
        args.record,
        device=args.device,
    )


if __name__ == "__main__":
    main()
