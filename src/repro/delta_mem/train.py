"""Pretrain the backbone (full history in context), then train δ-Mem or the LoRA baseline.

δ-Mem trains in episode mode, as the official code does: the history is written into the
state with writes on; then writes are off and only the query window [BOS Q k*] is visible;
cross-entropy on the answer, plus the official write-sparsity regulariser (``OptimConfig.
write_sparsity_weight``, 0 = off; the configs use the paper's 0.01 with target mean β 0.05):
the mean over layers of (mean β of the last forward − target)², the last forward being the
visible window as in the official trainer. The LoRA baseline is LoRA-SFT as in the paper
(peft, on q_proj/o_proj, a rank that matches δ-Mem's trainable-parameter budget): trained on
the same episodes with the history in the window, with the same steps, batch and lr.
The backbone is frozen in both; the run records that its weights did not move.
A δ-Mem method's ``full_view`` (default 0, the official trainer, which always shows only the
latest turn) is the probability that a training batch shows the history in the window as
well: an exploration, departing from the official trainer, added after the main run showed
the history in the window plus the state below the history alone.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import math

import numpy as np
import torch
import torch.nn.functional as F

from repro.common.device import select_device
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.delta_mem.backbone import BackboneConfig, TinyTransformer
from repro.delta_mem.episodes import PAD, VOCAB, Batch, make_batch
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.wrapper import DeltaMem

log = logging.getLogger(__name__)
LORA_TARGETS = ["q_proj", "o_proj"]


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    min_turns: int = 6
    train_facts: tuple[int, int] = (1, 6)
    overwrite: float = 0.3

    def __post_init__(self):  # config files give lists
        object.__setattr__(self, "train_facts", tuple(self.train_facts))


@dataclasses.dataclass(frozen=True)
class OptimConfig:
    steps: int = 800  # the most steps (see stop_accuracy)
    batch_size: int = 64
    lr: float = 3e-3
    warmup: float = 0.1  # fraction of steps
    schedule: str = "cosine"  # after warm-up: cosine decay to 0 (the official) or constant
    stop_accuracy: float | None = None  # stop once the last 20 batches' accuracy reaches it
    write_sparsity_weight: float = 0.0  # δ-Mem only: the official regulariser's weight
    write_sparsity_target: float = 0.05  # its target mean β

    def __post_init__(self) -> None:
        if self.schedule not in ("cosine", "constant"):
            raise ValueError(f"schedule must be cosine or constant, got {self.schedule!r}")


def backbone_config(spec: dict) -> BackboneConfig:
    return BackboneConfig(vocab=VOCAB, **spec)


def memory_config(method: dict) -> MemoryConfig:
    keys = {f.name for f in dataclasses.fields(MemoryConfig)}
    return MemoryConfig(**{k: v for k, v in method.items() if k in keys})


def lora_model(backbone: torch.nn.Module, rank: int):
    from peft import LoraConfig, get_peft_model  # here: importing peft costs ~5 s per job

    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules=LORA_TARGETS)
    return get_peft_model(backbone, config)


def answer_logits(
    model, batch: Batch, dm: DeltaMem | None, *, device, full_view: bool = False
) -> torch.Tensor:
    """Logits at the query key in an episode: the history written into the state (δ-Mem),
    then the query window alone, or with ``full_view`` the history and the query (no memory:
    the window only)."""
    if dm is not None:
        dm.reset()
        dm.write(model, batch.history.to(device), batch.history_mask.to(device))
    mask = (batch.full != PAD).to(device) if full_view else None
    with contextlib.nullcontext() if dm is None else dm.phase(writes=False, mask=mask):
        if full_view:
            return full_logits(model, batch, device=device)
        return model(batch.query.to(device))[:, -1]


def full_logits(model, batch: Batch, *, device) -> torch.Tensor:
    logits = model(batch.full.to(device))
    return logits[torch.arange(len(batch.answer)), batch.full_last.to(device)]


STOP_WINDOW = 20  # batches whose mean accuracy stop_accuracy (and the run's record) reads


def _optimise(params, optim: OptimConfig, loss_fn, rng) -> tuple[list[float], int, float]:
    """(losses, steps taken, mean accuracy of the last STOP_WINDOW batches); ``loss_fn(rng)``
    returns (loss, batch accuracy)."""
    optimizer = torch.optim.AdamW(params, lr=optim.lr, weight_decay=0.0)
    warm = max(1, int(optim.warmup * optim.steps))

    def schedule(step):
        if step < warm:
            return (step + 1) / warm
        if optim.schedule == "constant":
            return 1.0
        return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, optim.steps - warm)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    losses, accuracy = [], []
    for step in range(optim.steps):
        optimizer.zero_grad(set_to_none=True)
        loss, acc = loss_fn(rng)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        accuracy.append(acc)
        if step % 100 == 0 or step == optim.steps - 1:
            log.info("step %d loss %.4f accuracy %.3f", step, losses[-1], acc)
        final_accuracy = float(np.mean(accuracy[-STOP_WINDOW:]))
        if optim.stop_accuracy and step >= STOP_WINDOW and final_accuracy >= optim.stop_accuracy:
            log.info("converged at step %d", step)
            break
    return losses, step + 1, final_accuracy


def _loss(logits, answer):
    return F.cross_entropy(logits, answer), float((logits.argmax(-1) == answer).float().mean())


def _training_batch(rng, task, optim) -> Batch:
    return make_batch(
        rng,
        optim.batch_size,
        task.train_facts,
        overwrite=task.overwrite,
        min_turns=task.min_turns,
    )


def pretrain_backbone(spec, task, optim, seed, output, record, *, device="auto", threads=1):
    """Train the tiny transformer with the full history in context; save its state dict."""
    set_threads(threads)
    rng = seed_everything(seed)
    dev = select_device(device)
    model = TinyTransformer(backbone_config(spec)).to(dev)

    def loss_fn(rng):
        batch = _training_batch(rng, task, optim)
        return _loss(full_logits(model, batch, device=dev), batch.answer.to(dev))

    with RunRecorder(
        config={"backbone": spec, "optim": optim, "task": task}, device=dev, seed=seed
    ) as run:
        losses, steps, final_accuracy = _optimise(model.parameters(), optim, loss_fn, rng)
    torch.save(model.state_dict(), output)
    write_json(
        record,
        {
            "losses": losses[::10],
            "final_loss": losses[-1],
            "final_accuracy": final_accuracy,
            "steps": steps,
            **run.provenance(),
        },
    )


def load_backbone(spec: dict, path: str, device) -> TinyTransformer:
    model = TinyTransformer(backbone_config(spec)).to(device)
    model.load_state_dict(torch.load(path, map_location=device, weights_only=True))
    return model.eval()


def attach(model, method: dict):
    """(model to call, DeltaMem or None, the trainable module) for a method spec."""
    if method["kind"] == "lora":
        model = lora_model(model, method["rank"])
        return model, None, model
    dm = DeltaMem(model, memory_config(method))
    return model, dm, dm.memories


def trainable_state(trainable, method: dict) -> dict:
    if method["kind"] == "lora":
        from peft import get_peft_model_state_dict

        return get_peft_model_state_dict(trainable)
    return trainable.state_dict()


def train_method(
    name, method, spec, task, optim, seed, backbone, output, record, *, device="auto", threads=1
):
    """Train one method on top of a frozen backbone; save only the trainable weights."""
    set_threads(threads)
    rng = seed_everything(seed)
    dev = select_device(device)
    base = load_backbone(spec, backbone, dev)
    before = [(p, p.detach().clone()) for p in base.parameters()]  # the frozen backbone
    model, dm, trainable = attach(base, method)
    params = [p for p in model.parameters() if p.requires_grad]

    def loss_fn(rng):
        batch = _training_batch(rng, task, optim)
        # LoRA-SFT always sees the history in the window; δ-Mem with probability full_view
        full_view = dm is None or rng.random() < method.get("full_view", 0.0)
        logits = answer_logits(model, batch, dm, device=dev, full_view=full_view)
        loss, accuracy = _loss(logits, batch.answer.to(dev))
        if dm is not None and optim.write_sparsity_weight:
            penalty = dm.write_sparsity(optim.write_sparsity_target)
            loss = loss + optim.write_sparsity_weight * penalty
        return loss, accuracy

    with RunRecorder(
        config={"method": method, "optim": optim, "task": task}, device=dev, seed=seed
    ) as run:
        losses, steps, final_accuracy = _optimise(params, optim, loss_fn, rng)
    torch.save(trainable_state(trainable, method), output)
    write_json(
        record,
        {
            "method": name,
            "trainable_parameters": sum(p.numel() for p in params),
            "backbone_parameters": sum(p.numel() for p, _ in before),
            "backbone_max_change": max(float((p - old).abs().max()) for p, old in before),
            "backbone_requires_grad": any(p.requires_grad for p, _ in before),
            "losses": losses[::10],
            "final_loss": losses[-1],
            "final_accuracy": final_accuracy,
            "steps": steps,
            **run.provenance(),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Pretrain the backbone, or train a method on it")
    parser.add_argument("step", choices=["backbone", "method"])
    parser.add_argument(
        "params", help="JSON: {backbone, task, optim[, name, method]} (the rule's params)"
    )
    parser.add_argument("output", help="weights (.pt)")
    parser.add_argument("record", help="run record (.json)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backbone-weights", help="step method: the pretrained backbone (.pt)")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    p = json.loads(open(args.params).read())
    task, optim = TaskConfig(**p["task"]), OptimConfig(**p["optim"])
    if args.step == "backbone":
        pretrain_backbone(
            p["backbone"], task, optim, args.seed, args.output, args.record, device=args.device
        )
    else:
        train_method(
            p["name"],
            p["method"],
            p["backbone"],
            task,
            optim,
            args.seed,
            args.backbone_weights,
            args.output,
            args.record,
            device=args.device,
        )


if __name__ == "__main__":
    main()
