"""Merging the digits adapters: every rule on the same calibration draw, numbers on the test
split (per-task heads, the joint 10-way head, retention of the pre-training digits)."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import torch
from torch.func import functional_call

from repro.malora.baselines import MergeProblem, rule_row, run_rule
from repro.malora.digits import (
    MLP,
    DigitsDesign,
    Split,
    load_splits,
    local_labels,
    restricted_logits,
    train_adapters,
    train_base,
)
from repro.malora.margins import margin
from repro.malora.merging import merge
from repro.malora.names import DIGITS_METRICS
from repro.malora.peft_merge import base_state, lora_deltas, lora_factors, merge_cat

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class DigitsConfig:
    design: DigitsDesign
    methods: dict  # name -> {rule, params, tune}
    scale_grid: tuple[float, ...]
    calibration_per_task: int = 32
    margin: dict = dataclasses.field(default_factory=lambda: {"stat": "quantile", "q": 0.05})
    margin_stats: dict = dataclasses.field(default_factory=dict)  # ablation: name -> stat
    calibration_sizes: tuple[int, ...] = ()  # ablation: examples per task


class Evaluator:
    """Forward passes of the frozen MLP under any merged ΔW (no copies of the model)."""

    def __init__(self, model, base: dict[str, torch.Tensor]):
        self.model, self.base = model, base

    @torch.no_grad()
    def logits(self, delta: dict, x: torch.Tensor) -> torch.Tensor:
        update = {k: torch.as_tensor(v, dtype=torch.float32) for k, v in delta.items()}
        state = merge(self.base, [update], [1.0])
        return functional_call(self.model, state, (x,))


def _draw(pool: Split, classes, size: int, rng) -> Split:
    task = pool.task(classes)
    pick = torch.as_tensor(rng.permutation(len(task.y))[: min(size, len(task.y))])
    return Split(task.x[pick], task.y[pick])


def _task_margin(ev, delta, data: Split, classes, stat) -> float:
    """The margin statistic on the task's own head (what each model was trained on)."""
    logits = restricted_logits(ev.logits(delta, data.x), classes)
    return margin(logits, local_labels(data.y, classes), **stat)


def _accuracy(ev, delta, data: Split, classes=None) -> float:
    logits = ev.logits(delta, data.x)
    if classes is None:
        return float((logits.argmax(1) == data.y).float().mean())
    return float(
        (restricted_logits(logits, classes).argmax(1) == local_labels(data.y, classes))
        .float()
        .mean()
    )


def _task_loss(ev, delta, data: Split, classes) -> float:
    logits = restricted_logits(ev.logits(delta, data.x), classes)
    return float(torch.nn.functional.cross_entropy(logits, local_labels(data.y, classes)))


def _problem(ev, deltas, calib, tasks, stat, seed, factors=None) -> MergeProblem:
    """Calibration objective: mean per-task-head accuracy over all tasks, pre-training
    included (LoraHub: the mean per-task cross-entropy); margins on the tasks' own heads."""
    zero = {k: np.zeros_like(v) for k, v in deltas[0].items()}
    pairs = list(zip(calib, tasks, strict=True))
    task_margins = [
        _task_margin(ev, d, c, k, stat) for d, (c, k) in zip(deltas, pairs[1:], strict=True)
    ]
    return MergeProblem(
        deltas,
        score=lambda delta: float(np.mean([_accuracy(ev, delta, c, k) for c, k in pairs])),
        loss=lambda delta: float(np.mean([_task_loss(ev, delta, c, k) for c, k in pairs])),
        task_margins=np.array(task_margins),
        base_margin=_task_margin(ev, zero, calib[0], tasks[0], stat),
        factors=factors,
        seed=seed,
    )


def _evaluate(ev, delta, test: Split, tasks, individual) -> dict:
    per_task = [_accuracy(ev, delta, test.task(k), k) for k in tasks]
    return {
        "normalised_accuracy": float(
            np.mean([a / b for a, b in zip(per_task[1:], individual[1:], strict=True)])
        ),
        "joint_accuracy": _accuracy(ev, delta, test),
        "pretrain_accuracy": per_task[0],
        "pertask_accuracy": float(np.mean(per_task[1:])),
        "task_accuracy": per_task,
    }


def _overlap(deltas) -> float:
    """Mean cosine of the principal angles between two adapters' row spaces, over layers."""
    values = []
    for name in deltas[0]:
        bases = []
        for d in deltas[:2]:
            _, s, vt = np.linalg.svd(d[name], full_matrices=False)
            bases.append(vt[s > 1e-6 * s.max()].T)
        values.append(np.linalg.svd(bases[0].T @ bases[1], compute_uv=False).mean())
    return float(np.mean(values))


def _run_methods(cfg, ev, problem, test, individual) -> dict:
    def evaluate(delta):
        return _evaluate(ev, delta, test, cfg.design.tasks, individual)

    return {
        name: rule_row(spec, problem, cfg.scale_grid, evaluate, DIGITS_METRICS)
        for name, spec in cfg.methods.items()
    }


def run_digits_seed(cfg: DigitsConfig, seed: int) -> dict:
    """One seed: its split, base, adapters and calibration draw; every rule on them."""
    d = cfg.design
    splits = load_splits(d, seed)
    peft_model = train_adapters(d, train_base(d, splits["train"], seed), splits["train"], seed)
    adapters = [f"task{t}" for t in range(1, len(d.tasks))]
    deltas = [{k: v.numpy() for k, v in lora_deltas(peft_model, a).items()} for a in adapters]
    factors = [
        {k: (b.numpy(), a.numpy()) for k, (b, a) in lora_factors(peft_model, name).items()}
        for name in adapters
    ]
    ev = Evaluator(MLP(d.hidden), base_state(peft_model))  # merged weights go in by name
    rng = np.random.default_rng([seed, 5])
    calib = [_draw(splits["calibration"], k, cfg.calibration_per_task, rng) for k in d.tasks]
    problem = _problem(ev, deltas, calib, d.tasks, cfg.margin, seed, factors)
    test = splits["test"]
    zero = {k: np.zeros_like(v) for k, v in deltas[0].items()}
    base_accuracy = [_accuracy(ev, zero, test.task(k), k) for k in d.tasks]
    individual = base_accuracy[:1] + [
        _accuracy(ev, dl, test.task(k), k) for dl, k in zip(deltas, d.tasks[1:], strict=True)
    ]
    methods = _run_methods(cfg, ev, problem, test, individual)
    log.info(
        "digits seed %d: joint accuracy MaLoRA %.3f, TA %.3f",
        seed,
        methods.get("malora", {}).get("joint_accuracy", float("nan")),
        methods.get("task_arithmetic", {}).get("joint_accuracy", float("nan")),
    )
    return {
        "seed": seed,
        "individual_accuracy": individual,
        # chance of the fine-tuning tasks' own heads (1 / classes), the sanity floor's base
        "pertask_chance": float(np.mean([1 / len(k) for k in d.tasks[1:]])),
        "base_accuracy": base_accuracy,
        "task_overlap": _overlap(deltas),
        "calibration_margins": {
            "base": problem.base_margin,
            "tasks": problem.task_margins.tolist(),
        },
        "methods": methods,
        "ablations": _ablations(cfg, ev, deltas, splits, individual, seed),
        "peft_cat_max_abs_logit_gap": _peft_gap(peft_model, ev, adapters, deltas, test.x),
    }


def _ablations(cfg, ev, deltas, splits, individual, seed) -> dict:
    d, out = cfg.design, {"margin_stat": {}, "calibration_size": {}}
    for label, sizes, stats in [
        ("margin_stat", [cfg.calibration_per_task], cfg.margin_stats),
        ("calibration_size", cfg.calibration_sizes, {"preregistered": cfg.margin}),
    ]:
        for size in sizes:
            for name, stat in stats.items():
                rng = np.random.default_rng([seed, 5, size])
                calib = [_draw(splits["calibration"], k, size, rng) for k in d.tasks]
                try:
                    merged = run_rule("malora", _problem(ev, deltas, calib, d.tasks, stat, seed))
                    value = _evaluate(ev, merged.delta, splits["test"], d.tasks, individual)
                except ValueError as err:  # a non-positive margin: no equalising α
                    log.warning("ablation %s %s: %s", label, name, err)
                    value = None
                out[label][name if label == "margin_stat" else str(size)] = value
    return out


def _peft_gap(peft_model, ev, adapters, deltas, x) -> float:
    """max |logit| gap between peft's exact ``cat`` merge and the dense ΔW-space merge, with
    unequal weights: a check that both paths build the same model."""
    alphas = np.linspace(0.5, 1.5, len(adapters))
    merge_cat(peft_model, adapters, alphas, "weighted_cat")
    peft_model.set_adapter("weighted_cat")
    with torch.no_grad():
        via_peft = peft_model(x)
    zero = {k: np.zeros_like(v) for k, v in deltas[0].items()}
    direct = ev.logits(merge(zero, deltas, list(alphas)), x)
    return float((via_peft - direct).abs().max())
