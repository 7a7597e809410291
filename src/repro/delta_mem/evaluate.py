"""Accuracy of every history condition (brief §5–6) against facts per episode, per seed.

Conditions: ``truncated`` (base, query window only), ``full`` (base, whole history in the
window), and for δ-Mem ``state_only`` (history written, query window read), ``zeroed``
(zero state), ``other_state`` (the state another episode wrote: the gain must be specific
to the episode), ``other_replay`` (that state read with this episode's history and query in
the window, writes off: a deliberately wrong state, the harm a no-harm claim must detect),
``history_replay`` (history written, then history + query read with writes
off: the official ``history_replay`` mode) and ``official_prompt`` (reset, one pass over
history + query with writes on: the analogue of the paper's LoCoMo condition, the official
``official_prompt`` mode). The LoRA-SFT baseline gives ``lora_truncated`` (adapter on, query
window) and ``lora_full`` (adapter on, history in the window: its own setting).
Every method and seed sees the same evaluation episodes, drawn from ``EvalConfig.seed``
(``papers.delta_mem.evaluation.seed``) and the n_facts.
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


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    n_facts: tuple[int, ...] = (1, 2, 4, 6, 8, 12)
    episodes: int = 1000
    overwrite_facts: tuple[int, ...] = (4,)
    batch_size: int = 500
    seed: int = 20260  # the evaluation episodes' seed (with n_facts and overwrite)

    def __post_init__(self):  # config files give lists
        object.__setattr__(self, "n_facts", tuple(self.n_facts))
        object.__setattr__(self, "overwrite_facts", tuple(self.overwrite_facts))


def episodes(cfg: EvalConfig, task: TaskConfig, n: int, overwrite: bool) -> list[Batch]:
    rng = np.random.default_rng([cfg.seed, n, int(overwrite)])
    sizes = [min(cfg.batch_size, cfg.episodes - i) for i in range(0, cfg.episodes, cfg.batch_size)]
    return [make_batch(rng, s, n, overwrite=overwrite, min_turns=task.min_turns) for s in sizes]


def _read(model, dm, tokens, device):
    with dm.phase(writes=False):
        return model(tokens.to(device))


def memory_conditions(model, dm, batch: Batch, device) -> dict[str, torch.Tensor]:
    """Answer logits of the δ-Mem conditions for one batch. The history is written once (by
    ``state_only``) and its states are reused: reads with writes off leave them as they are,
    so every condition reads exactly the states a fresh write gives."""
    out = {"state_only": answer_logits(model, batch, dm, device=device)}
    written = dm.states()
    mask = (batch.full != PAD).to(device)
    dm.reset()
    out["zeroed"] = _read(model, dm, batch.query, device)[:, -1]
    dm.set_states([s.roll(1, dims=0) for s in written])  # the previous episode's states
    out["other_state"] = _read(model, dm, batch.query, device)[:, -1]
    with dm.phase(writes=False, mask=mask):
        out["other_replay"] = full_logits(model, batch, device=device)
    dm.set_states(written)
    with dm.phase(writes=False, mask=mask):
        out["history_replay"] = full_logits(model, batch, device=device)
    dm.reset()
    with dm.phase(writes=True, mask=mask):
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


def _record(path) -> dict:
    return {k: v for k, v in read_json(path).items() if k not in ("losses", "config")}


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
    backbone_runs,
    output,
    *,
    device="auto",
    threads=1,
) -> dict:
    """Every seed's accuracies, with its training record (``train``) and its backbone's
    pretraining record (``backbone``) beside, for the claims' per-seed sanity checks."""
    set_threads(threads)
    dev = select_device(device)
    with RunRecorder(config={"method": method, "eval": cfg}, device=dev) as rec:
        rows = []
        for seed, bb, w, r, br in zip(seeds, backbones, weights, runs, backbone_runs, strict=True):
            row = evaluate_seed(method, spec, task, cfg, seed, bb, w, dev)
            row["train"], row["backbone"] = _record(r), _record(br)
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
        "runs",
        nargs="+",
        help="seed:backbone.pt:backbone.json:weights.pt:record.json, one per seed",
    )
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = parser.parse_args()
    p = json.loads(open(args.params).read())
    runs = [r.split(":") for r in args.runs]
    seeds, backbones, backbone_records, weights, records = zip(*runs, strict=True)
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
        backbone_records,
        args.output,
        device=args.device,
    )


if __name__ == "__main__":
    main()
