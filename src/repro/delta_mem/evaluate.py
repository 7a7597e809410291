"""Accuracy of every history condition (brief §5–6) against facts per episode, per seed.

Conditions: ``truncated`` (base, query window only), ``full`` (base, whole history in the
window), and for δ-Mem ``state_only`` (history written, query window read), ``zeroed``
(zero state), ``other_state`` (the state another episode wrote: the gain must be specific
to the episode), ``history_replay`` (history written, then history + query read with writes
off: the official ``history_replay`` mode) and ``official_prompt`` (reset, one pass over
history + query with writes on: the analogue of the paper's LoCoMo condition, the official
``official_prompt`` mode). The LoRA-SFT baseline gives ``lora_truncated`` (adapter on, query
window) and ``lora_full`` (adapter on, history in the window: its own setting).
Every method and seed sees the same evaluation episodes (fixed seeds per n_facts).
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np
import torch

from repro.common.device import select_device
from repro.common.io import read_json, write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import set_threads
from repro.common.summary import mean_std
from repro.delta_mem.episodes import PAD, Batch, make_batch
from repro.delta_mem.train import TaskConfig, answer_logits, attach, full_logits, load_backbone

EVAL_SEED = 20260


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    n_facts: tuple[int, ...] = (1, 2, 4, 6, 8, 12)
    episodes: int = 1000
    overwrite_facts: tuple[int, ...] = (4,)
    batch_size: int = 500

    def __post_init__(self):  # config files give lists
        object.__setattr__(self, "n_facts", tuple(self.n_facts))
        object.__setattr__(self, "overwrite_facts", tuple(self.overwrite_facts))


def episodes(cfg: EvalConfig, task: TaskConfig, n: int, overwrite: bool) -> list[Batch]:
    rng = np.random.default_rng([EVAL_SEED, n, int(overwrite)])
    sizes = [min(cfg.batch_size, cfg.episodes - i) for i in range(0, cfg.episodes, cfg.batch_size)]
    return [make_batch(rng, s, n, overwrite=overwrite, min_turns=task.min_turns) for s in sizes]


def _write(model, dm, batch, device):
    dm.reset()
    with dm.phase(writes=True, mask=batch.history_mask.to(device)):
        model(batch.history.to(device))


def _read(model, dm, tokens, device):
    with dm.phase(writes=False):
        return model(tokens.to(device))


def memory_conditions(model, dm, batch: Batch, device) -> dict[str, torch.Tensor]:
    """Answer logits of the δ-Mem conditions for one batch."""
    out = {"state_only": answer_logits(model, batch, dm, device=device)}
    dm.reset()
    out["zeroed"] = _read(model, dm, batch.query, device)[:, -1]
    _write(model, dm, batch, device)
    written = dm.states()
    dm.set_states([s.roll(1, dims=0) for s in written])
    out["other_state"] = _read(model, dm, batch.query, device)[:, -1]
    out["history_replay"] = answer_logits(model, batch, dm, device=device, full_view=True)
    dm.reset()
    with dm.phase(writes=True, mask=(batch.full != PAD).to(device)):
        out["official_prompt"] = full_logits(model, batch, device=device)
    return out


def _score(logits: dict[str, torch.Tensor], batch: Batch) -> dict[str, np.ndarray]:
    return {c: (z.argmax(-1).cpu() == batch.answer).numpy() for c, z in logits.items()}


def _stale(logits: dict[str, torch.Tensor], batch: Batch) -> dict[str, np.ndarray]:
    return {c: (z.argmax(-1).cpu() == batch.stale).numpy() for c, z in logits.items()}


def evaluate_seed(method, spec, task, cfg, seed, backbone, weights, device) -> dict:
    """Per condition and n_facts: accuracy; on overwrite episodes also the stale-value rate."""
    base = load_backbone(spec, backbone, device)
    model, dm, trainable = attach(base, method)
    state = torch.load(weights, map_location=device, weights_only=True)
    if dm is None:
        from peft import set_peft_model_state_dict  # LoRA only: peft takes ~5 s to import

        set_peft_model_state_dict(model, state)
    else:
        trainable.load_state_dict(state)
    model.eval()

    def run(batch):
        if dm is None:
            with model.disable_adapter():
                out = {
                    "truncated": model(batch.query.to(device))[:, -1],
                    "full": full_logits(model, batch, device=device),
                }
            out["lora_truncated"] = model(batch.query.to(device))[:, -1]
            out["lora_full"] = full_logits(model, batch, device=device)
            return out
        dm.reset()
        with dm.phase(writes=False):  # zero state and no writes: exactly the base model
            out = {
                "truncated": model(batch.query.to(device))[:, -1],
                "full": full_logits(model, batch, device=device),
            }
        return out | memory_conditions(model, dm, batch, device)

    accuracy, overwrite, beta = {}, {}, []
    with torch.no_grad():
        for n in cfg.n_facts:
            hits = [_score(run(b), b) for b in episodes(cfg, task, n, False)]
            for c in hits[0]:
                accuracy.setdefault(c, {})[n] = float(np.concatenate([h[c] for h in hits]).mean())
            if dm is not None:
                beta.append([float(m.last_beta.mean()) for m in dm.memories])
        for n in cfg.overwrite_facts:
            for b in episodes(cfg, task, n, True):
                logits = run(b)
                new, stale = _score(logits, b), _stale(logits, b)
                for c in new:
                    overwrite.setdefault(c, {})[n] = {
                        "new": float(new[c].mean()),
                        "stale": float(stale[c].mean()),
                    }
    return {
        "seed": seed,
        "accuracy": accuracy,
        "overwrite": overwrite,
        "mean_beta_per_layer": np.mean(beta, axis=0) if beta else None,
    }


def summarise(method: str, kind: str, rows: list[dict]) -> dict:
    """Mean and sd over seeds per condition and n_facts, keys 'condition/n'."""
    flat = [
        {f"{c}/{n}": v for c, by_n in r["accuracy"].items() for n, v in by_n.items()} for r in rows
    ]
    mean, std = mean_std(flat)
    return {
        "method": method,
        "kind": kind,
        "seeds": [r["seed"] for r in rows],
        "per_seed": rows,
        "mean": mean,
        "std": std,
    }


def evaluate_method(
    method_name,
    method,
    spec,
    task,
    cfg,
    seeds,
    backbones,
    weights,
    runs,
    output,
    *,
    device="auto",
    threads=1,
) -> dict:
    set_threads(threads)
    dev = select_device(device)
    with RunRecorder(config={"method": method, "eval": cfg}, device=dev) as rec:
        rows = []
        for seed, bb, w, r in zip(seeds, backbones, weights, runs, strict=True):
            row = evaluate_seed(method, spec, task, cfg, seed, bb, w, dev)
            row["train"] = {k: v for k, v in read_json(r).items() if k not in ("losses", "config")}
            rows.append(row)
    doc = summarise(method_name, method["kind"], rows) | {
        "episodes": cfg.episodes,
        "provenance": rec.provenance(),
    }
    write_json(output, doc)
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description="Accuracy of one method under every condition")
    parser.add_argument(
        "params", help="JSON: {name, method, backbone, task, evaluation} (the rule's)"
    )
    parser.add_argument("output")
    parser.add_argument(
        "runs", nargs="+", help="seed:backbone.pt:weights.pt:record.json, one per seed"
    )
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = parser.parse_args()
    p = json.loads(open(args.params).read())
    seeds, backbones, weights, records = zip(*(r.split(":") for r in args.runs), strict=True)
    evaluate_method(
        p["name"],
        p["method"],
        p["backbone"],
        TaskConfig(**p["task"]),
        EvalConfig(**p["evaluation"]),
        [int(s) for s in seeds],
        backbones,
        weights,
        records,
        args.output,
        device=args.device,
    )


if __name__ == "__main__":
    main()
