"""δ-Mem's claims, checked against criteria written in the config before the run.

Kinds (``papers.delta_mem.claims.<id>.kind``), each over the evaluated n_facts (those up to
``n_facts_max`` where given) of the metrics of ``method``:
``state_gain`` (smallest z of state-only over truncated, binomial SE of the difference
with all seeds' episodes pooled), ``zeroed_state`` (largest |zeroed − truncated|),
``full_state_no_harm`` (smallest full+state − full), ``lora_chance`` (largest LoRA
state-only accuracy above chance), ``capability`` (smallest capability / full),
``frozen_backbone`` (largest change of a backbone weight over all training runs),
``param_count`` (δ-Mem's trainable parameters at Qwen3-4B's sizes against the paper's, as
a relative difference), ``locomo_ratio`` (full scale: overall LoCoMo F1 of ``method``'s
adapter under the metric's first condition over the base under its second, for the
backbone named by ``dataset``), ``mab_ratio`` (the same with the overall MemoryAgentBench
score, full scale) and ``not_tested``; a ``not_tested`` claim with ``metric: a/b``
gets the embedded analogue (ratio of mean accuracies a / b) in its details.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from repro.common.claims import Claim, check_spec, check_worst, not_tested, run_claims
from repro.common.io import read_json, write_json


def _facts(metrics: dict, spec: dict) -> list[int]:
    cap = spec.get("n_facts_max", math.inf)
    return [n for n in metrics["n_facts"] if n <= cap]


def _acc(metrics: dict, condition: str, n: int) -> float:
    return metrics["mean"][f"{condition}/{n}"]


def _sd(metrics: dict, condition: str, n: int) -> float:
    return metrics["std"][f"{condition}/{n}"]


def _worst(cid, spec, values: dict, pick, fmt, prefix) -> Claim:
    details = prefix + "; ".join(f"n_facts={n}: {fmt(n, v)}" for n, v in values.items())
    return check_worst(cid, spec, values, pick, details)


def _state_gain(cid, spec, m):
    N = m["episodes"] * len(m["seeds"])
    z = {}
    for n in _facts(m, spec):
        a, b = _acc(m, "state_only", n), _acc(m, "truncated", n)
        z[n] = (a - b) / math.sqrt(max(a * (1 - a) + b * (1 - b), 1e-12) / N)
    return _worst(
        cid,
        spec,
        z,
        min,
        lambda n, v: (
            f"state-only {_acc(m, 'state_only', n):.3f} ± {_sd(m, 'state_only', n):.3f} "
            f"vs truncated {_acc(m, 'truncated', n):.3f}, z={v:.1f}"
        ),
        f"{N} episodes per n_facts; ",
    )


def _zeroed_state(cid, spec, m):
    gap = {n: abs(_acc(m, "zeroed", n) - _acc(m, "truncated", n)) for n in _facts(m, spec)}
    return _worst(
        cid,
        spec,
        gap,
        max,
        lambda n, v: (
            f"|zeroed − truncated| {v:.3f}, another episode's state {_acc(m, 'other_state', n):.3f}"
        ),
        "",
    )


def _full_state_no_harm(cid, spec, m):
    diff = {n: _acc(m, "full_state", n) - _acc(m, "full", n) for n in _facts(m, spec)}
    return _worst(
        cid,
        spec,
        diff,
        min,
        lambda n, v: f"full+state {_acc(m, 'full_state', n):.3f} vs full {_acc(m, 'full', n):.3f}",
        "",
    )


def _lora_chance(cid, spec, m):
    from repro.delta_mem.episodes import N_VALUES  # imports torch (not at DAG time)

    chance = 1 / N_VALUES
    above = {n: _acc(m, "lora", n) - chance for n in _facts(m, spec)}
    return _worst(
        cid,
        spec,
        above,
        max,
        lambda n, v: f"LoRA {_acc(m, 'lora', n):.3f}",
        f"chance {chance:.4f}; ",
    )


def _capability(cid, spec, m):
    ratio = {n: _acc(m, "capability", n) / _acc(m, "full", n) for n in _facts(m, spec)}
    return _worst(
        cid,
        spec,
        ratio,
        min,
        lambda n, v: f"{_acc(m, 'capability', n):.3f} / {_acc(m, 'full', n):.3f} = {v:.3f}",
        "full window with the method attached / base: ",
    )


def _frozen_backbone(cid, spec, all_metrics):
    changes = {
        f"{name} seed {row['seed']}": row["train"]["backbone_max_change"]
        for name, m in all_metrics.items()
        for row in m["per_seed"]
    }
    key = max(changes, key=changes.get)
    details = f"largest backbone weight change over {len(changes)} runs ({key})"
    return check_worst(cid, spec, changes, max, details)


def _param_count(cid, spec, _metrics):
    from repro.delta_mem.memory import qwen3_4b_trainable_parameters  # imports torch

    per_layer, total = qwen3_4b_trainable_parameters()
    paper = float(spec["paper_value"])
    details = f"{per_layer:,} per layer × 36 layers = {total:,} (rank 8, Q/O heads)"
    return check_spec(cid, spec, abs(total - paper) / paper, details)


def _analogue(claim: Claim, spec: dict, m: dict) -> Claim:
    top, bottom = spec["metric"].split("/")
    facts = _facts(m, spec)
    ratios = {n: _acc(m, top, n) / max(_acc(m, bottom, n), 1e-12) for n in facts}
    mean = np.mean([_acc(m, top, n) for n in facts]) / np.mean([_acc(m, bottom, n) for n in facts])
    text = ", ".join(f"{n}: {r:.2f}" for n, r in ratios.items())
    return dataclasses.replace(
        claim,
        details=(
            f"{claim.details} Embedded analogue {top}/{bottom} (ratio of mean accuracies over "
            f"n_facts {facts}): {mean:.2f}; per n_facts {text}."
        ),
    )


def _bench_ratio(cid, spec, docs, bench: str, field: str, unit: str):
    if spec["dataset"] not in docs:
        return not_tested(
            cid,
            spec["claim"],
            f"{bench} was not run for {spec['dataset']}",
            paper_value=spec.get("paper_value"),
        )
    table = docs[spec["dataset"]][field]
    top, bottom = spec["metric"].split("/")
    a, b = table[f"{spec['method']}/{top}"], table[f"base/{bottom}"]
    details = (
        f"{spec['dataset']}: {spec['method']} adapter {top} {unit} {a['overall']:.4f} vs "
        f"base {bottom} {b['overall']:.4f} ({a['n']} questions)"
    )
    return check_spec(cid, spec, a["overall"] / b["overall"], details)


def _locomo_ratio(cid, spec, locomo):
    return _bench_ratio(cid, spec, locomo, "LoCoMo", "f1", "F1")


def _mab_ratio(cid, spec, mab):
    return _bench_ratio(cid, spec, mab, "MemoryAgentBench", "score", "score")


def _reads_method(handler):
    """A handler of one method's metrics (the claim's ``method``)."""
    return lambda cid, spec, inputs: handler(cid, spec, inputs["metrics"][spec["method"]])


# The claim kinds of papers.delta_mem.claims, each handler(id, spec, {metrics, locomo, mab}).
KINDS = {
    "state_gain": _reads_method(_state_gain),
    "zeroed_state": _reads_method(_zeroed_state),
    "full_state_no_harm": _reads_method(_full_state_no_harm),
    "lora_chance": _reads_method(_lora_chance),
    "capability": _reads_method(_capability),
    "frozen_backbone": lambda cid, spec, inputs: _frozen_backbone(cid, spec, inputs["metrics"]),
    "param_count": lambda cid, spec, inputs: _param_count(cid, spec, inputs["metrics"]),
    "locomo_ratio": lambda cid, spec, inputs: _locomo_ratio(cid, spec, inputs["locomo"]),
    "mab_ratio": lambda cid, spec, inputs: _mab_ratio(cid, spec, inputs["mab"]),
}


def check_claims(
    specs: dict,
    metrics_paths: dict[str, str],
    output: str,
    locomo_paths: dict[str, str] | None = None,
    mab_paths: dict[str, str] | None = None,
) -> list[Claim]:
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    locomo = {name: read_json(path) for name, path in (locomo_paths or {}).items()}
    mab = {name: read_json(path) for name, path in (mab_paths or {}).items()}
    for m in metrics.values():
        m["n_facts"] = sorted(int(n) for n in m["per_seed"][0]["accuracy"]["truncated"])
    claims = [
        _analogue(c, specs[c.id], metrics[specs[c.id]["method"]])
        if specs[c.id]["kind"] == "not_tested" and "metric" in specs[c.id]
        else c
        for c in run_claims(specs, KINDS, {"metrics": metrics, "locomo": locomo, "mab": mab})
    ]
    write_json(output, claims)
    return claims
