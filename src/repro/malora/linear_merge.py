"""Merging on the linear theory setting (C3): every rule of the config on the same adapters,
α from a calibration split, numbers on disjoint test splits; the grid oracle and the
2-task landscape beside them, and the MaLoRA ablations (margin statistic, calibration size,
number of merged tasks)."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from repro.malora.baselines import MergeProblem, rule_row, run_rule
from repro.malora.landscape import best_union_margin, product_grid, union_margins
from repro.malora.linear import LinearDesign, LinearWorld, train_base, train_lora
from repro.malora.margins import margin
from repro.malora.names import LINEAR_METRICS
from repro.malora.theory import mean_cross_entropy

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ScaleSetting:
    size_factors: tuple[int, ...]  # training-set size of each fine-tuning task (× per_class)
    lambdas: tuple[float, ...]  # each task's LoRA penalty


@dataclasses.dataclass(frozen=True)
class LinearMergeConfig:
    design: LinearDesign
    overlaps: tuple[float, ...]
    settings: dict  # name -> ScaleSetting
    methods: dict  # name -> {rule, params, tune}
    scale_grid: tuple[float, ...]
    test_noises: tuple[float, ...] = (0.3, 0.8)
    rank: int = 4
    base_steps: int = 2000
    base_weight_decay: float = 1e-3
    oracle_axis: tuple[float, ...] = tuple(np.geomspace(0.05, 5.0, 6))
    landscape_axis: tuple[float, ...] = tuple(np.geomspace(0.02, 5.0, 41))
    margin_stats: dict = dataclasses.field(default_factory=lambda: {"min": {"stat": "min"}})
    calibration_sizes: tuple[int, ...] = ()  # examples per class for the ablation
    primary_setting: str = "unequal"  # the claims' setting; landscape and ablations only here


def _stack(data_sets):
    return np.concatenate([d.x for d in data_sets]), np.concatenate([d.y for d in data_sets])


def _evaluate(weight, tests_clean, tests_noisy, classes_per_task) -> dict:
    x, y = _stack(tests_clean)
    norm = float(np.linalg.norm(weight))
    task_margins = [margin(d.x @ weight.T, d.y) for d in tests_clean]
    xn, yn = _stack(tests_noisy)
    per_task = []
    for d in tests_noisy[1:]:
        rows = slice(d.task * classes_per_task, (d.task + 1) * classes_per_task)
        per_task.append(np.mean(np.argmax(d.x @ weight[rows].T, axis=1) == d.y - rows.start))
    return {
        "union_margin": margin(x @ weight.T, y) / norm,
        "min_task_margin": float(min(task_margins)),
        "task_margins": task_margins,
        "pretrain_margin": task_margins[0] / norm,
        "joint_accuracy": float(np.mean(np.argmax(xn @ weight.T, axis=1) == yn)),
        "pretrain_accuracy": float(
            np.mean(np.argmax(tests_noisy[0].x @ weight.T, axis=1) == tests_noisy[0].y)
        ),
        "pertask_accuracy": float(np.mean(per_task)),
    }


def _problem(base, deltas, calib, stat, seed, factors=None) -> MergeProblem:
    x, y = _stack(calib)
    local = [{"W": d} for d in deltas]

    def score(delta):
        w = base + delta["W"]
        return margin(x @ w.T, y, **stat) / float(np.linalg.norm(w))

    def loss(delta):
        return mean_cross_entropy(x @ (base + delta["W"]).T, y)

    m0 = margin(calib[0].x @ base.T, calib[0].y, **stat)
    mt = [margin(d.x @ (base + dw).T, d.y, **stat) for d, dw in zip(calib[1:], deltas, strict=True)]
    return MergeProblem(
        local,
        score=score,
        loss=loss,
        task_margins=np.array(mt),
        base_margin=m0,
        factors=None if factors is None else [{"W": f} for f in factors],
        seed=seed,
    )


def _run_methods(cfg, problem, base, tests_clean, tests_noisy) -> dict:
    def evaluate(delta):
        weight = base + delta["W"]
        return _evaluate(weight, tests_clean, tests_noisy, cfg.design.classes_per_task)

    return {
        name: rule_row(spec, problem, cfg.scale_grid, evaluate, LINEAR_METRICS)
        for name, spec in cfg.methods.items()
    }


def _ablations(cfg, world, base, deltas, overlap, calib, tests_clean, seed) -> dict:
    """MaLoRA's union margin under other statistics, calibration sizes (examples per class,
    fresh draws; "test": the margins of the clean test split itself) and task counts."""
    d = cfg.design
    x, y = _stack(tests_clean)
    out = {"margin_stat": {}, "calibration_size": {}, "n_tasks": {}}
    for name, stat in cfg.margin_stats.items():
        merged = run_rule("malora", _problem(base, deltas, calib, stat, seed))
        out["margin_stat"][name] = float(union_margins(base, deltas, x, y, merged.alphas)[0])
    draws = {
        str(size): [
            world.sample(t, size, d.train_noise, overlap, "calibration pool")
            for t in range(d.n_tasks + 1)
        ]
        for size in cfg.calibration_sizes
    }
    for size, subset in {**draws, "test": tests_clean}.items():
        try:
            merged = run_rule("malora", _problem(base, deltas, subset, {"stat": "min"}, seed))
            value = float(union_margins(base, deltas, x, y, merged.alphas)[0])
        except ValueError:  # a draw where an adapter misclassifies its own calibration data
            value = float("nan")
        out["calibration_size"][size] = value
    for n in range(1, len(deltas) + 1):
        sub_tests = tests_clean[: n + 1]
        xs, ys = _stack(sub_tests)
        problem = _problem(base, deltas[:n], calib[: n + 1], {"stat": "min"}, seed)
        ta = run_rule("task_arithmetic", problem).alphas
        ml = run_rule("malora", problem).alphas
        _, oracle = best_union_margin(base, deltas[:n], xs, ys, axis=cfg.oracle_axis)
        out["n_tasks"][str(n)] = {
            "malora": float(union_margins(base, deltas[:n], xs, ys, ml)[0]),
            "task_arithmetic": float(union_margins(base, deltas[:n], xs, ys, ta)[0]),
            "oracle": oracle,
        }
    return out


def _landscape(cfg, base, deltas, tests_clean, tests_noisy, alphas) -> dict:
    """Union margin and joint accuracy over (α_1, α_2) for tasks 1 and 2 (plus task 0)."""
    axis = np.asarray(cfg.landscape_axis)
    grid = product_grid(axis, 2)
    x, y = _stack(tests_clean[:3])
    xn, yn = _stack(tests_noisy[:3])
    margins = union_margins(base, deltas[:2], x, y, grid)
    accuracy = [
        float(np.mean(np.argmax(xn @ (base + a1 * deltas[0] + a2 * deltas[1]).T, 1) == yn))
        for a1, a2 in grid
    ]
    best = int(np.argmax(margins))
    return {
        "axis": axis.tolist(),
        "union_margin": margins.reshape(len(axis), len(axis)).tolist(),
        "joint_accuracy": np.reshape(accuracy, (len(axis), len(axis))).tolist(),
        "malora": [float(a) for a in alphas[:2]],
        "grid_optimum": grid[best].tolist(),
    }


def run_setting(cfg: LinearMergeConfig, seed: int, setting: str, overlap: float) -> dict:
    d, spec = cfg.design, cfg.settings[setting]
    world = LinearWorld(d, seed)
    train = [world.sample(0, d.pretrain_per_class, d.train_noise, overlap, "train")]
    train += [
        world.sample(t + 1, d.per_class * f, d.train_noise, overlap, "train")
        for t, f in enumerate(spec.size_factors)
    ]
    calib = [
        world.sample(t, d.calib_per_class, d.train_noise, overlap, "calib")
        for t in range(d.n_tasks + 1)
    ]
    tests = {
        noise: [
            world.sample(t, d.test_per_class, noise, overlap, f"test{noise}")
            for t in range(d.n_tasks + 1)
        ]
        for noise in cfg.test_noises
    }
    clean, noisy = tests[min(cfg.test_noises)], tests[max(cfg.test_noises)]
    base_run = train_base(train[0], d, weight_decay=cfg.base_weight_decay, steps=cfg.base_steps)
    base = base_run.weight
    runs = [
        train_lora(data, base, d, rank=cfg.rank, lam=lam, steps=0, seed=seed)  # L-BFGS only
        for data, lam in zip(train[1:], spec.lambdas, strict=True)
    ]
    deltas = [r.delta for r in runs]
    problem = _problem(base, deltas, calib, {"stat": "min"}, seed, [r.factors for r in runs])
    methods = _run_methods(cfg, problem, base, clean, noisy)
    x, y = _stack(clean)
    oracle_alpha, oracle_value = best_union_margin(base, deltas, x, y, axis=cfg.oracle_axis)
    log.info(
        "seed %d %s ε=%.2f: union margin MaLoRA %.3f, oracle %.3f",
        seed,
        setting,
        overlap,
        methods["malora"]["union_margin"],
        oracle_value,
    )
    out = {
        "setting": setting,
        "overlap": overlap,
        "calibration_margins": {
            "base": problem.base_margin,
            "tasks": problem.task_margins.tolist(),
        },
        "delta_norms": [float(np.linalg.norm(dw)) for dw in deltas],
        "adapter_gaps": [r.gap for r in runs],  # duality gaps (bounds on objective − optimum)
        "base_gap": base_run.gap,
        "methods": methods,
        "oracle": {"alphas": oracle_alpha.tolist(), "union_margin": oracle_value},
    }
    if setting == cfg.primary_setting:
        out["landscape"] = _landscape(cfg, base, deltas, clean, noisy, methods["malora"]["alphas"])
        out["ablations"] = _ablations(cfg, world, base, deltas, overlap, calib, clean, seed)
    return out


def run_linear_merge(cfg: LinearMergeConfig, seed: int) -> dict:
    runs = [run_setting(cfg, seed, s, e) for s in cfg.settings for e in cfg.overlaps]
    return {"seed": seed, "runs": runs}
