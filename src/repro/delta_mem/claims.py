"""δ-Mem's claims and checks, judged against criteria written in the config before the run.

Kinds (``papers.delta_mem.{claims,checks}.<id>.kind``), each over the evaluated n_facts
(those up to ``n_facts_max`` where given) of the metrics of ``method``:

- ``paired_conditions``: ``conditions: [a, b]`` of one method compared per seed (the seeds
  share backbones and evaluation episodes) with the paired criterion, at every n_facts; the
  claim holds only if it holds at each, and the least favourable n_facts is reported. An
  ``exploration`` method (a setting added after the pre-registered run) is reported in the
  details, never in the verdict.
- ``beats_baseline``: ``method``'s ``condition`` against each of ``baselines``'
  ``baseline_condition``, the per-seed mean accuracy over the n_facts, paired; the least
  favourable baseline is reported.
- checks: ``zeroed_state`` (largest |zeroed − truncated|), ``lora_chance`` (largest LoRA
  accuracy without the history above chance), ``frozen_backbone`` (largest change of a
  backbone weight over all training runs), ``param_count`` (δ-Mem's trainable parameters at
  Qwen3-4B's sizes against the paper's, as a relative difference), ``sane_runs`` (the
  number of (method, seed) runs that failed their sanity check, :mod:`repro.delta_mem.sanity`).
- full scale: ``locomo_ratio`` (overall LoCoMo F1 of ``method``'s adapter under the metric's
  first condition over the base adapter under its second, for the backbone ``dataset``) and
  ``mab_ratio`` (the same with the overall MemoryAgentBench score).
- ``not_tested``; with ``metric: a/b`` it gets the embedded analogue (ratio of mean
  accuracies a / b) in its details.

Every paired criterion carries its margin ``delta`` in the config. A claim that reads a seed
whose run failed its sanity check is "not reproduced", naming the seed and the reason.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np

from repro.common.claims import (
    NOT_REPRODUCED,
    Claim,
    all_hold,
    check_spec,
    check_worst,
    not_tested,
    paired_claim,
    paired_criterion_text,
    run_claims,
)
from repro.common.io import read_json, write_json
from repro.delta_mem.sanity import failed_runs

CHANCE = 1 / 16  # episodes.N_VALUES (not imported: that module imports torch)


def _facts(metrics: dict, spec: dict) -> list[int]:
    cap = spec.get("n_facts_max", math.inf)
    return [n for n in metrics["n_facts"] if n <= cap]


def _acc(metrics: dict, condition: str, n: int) -> float:
    value = metrics["mean"][f"{condition}/{n}"]
    return math.nan if value is None else value  # JSON null: a NaN mean


def _by_seed(metrics: dict, condition: str, n: int) -> dict[int, float]:
    return {r["seed"]: r["accuracy"][condition][str(n)] for r in metrics["per_seed"]}


def _seed_means(metrics: dict, condition: str, facts: list[int]) -> dict[int, float]:
    by_n = [_by_seed(metrics, condition, n) for n in facts]
    return {seed: float(np.mean([b[seed] for b in by_n])) for seed in by_n[0]}


def _failed(cid, spec, docs: list[dict]) -> Claim | None:
    """The claim as "not reproduced" when a seed it reads failed its sanity check, else None."""
    reasons = [f"{d['method']} seed {s}: {r}" for d in docs for s, r in d["failed"].items()]
    if not reasons:
        return None
    return Claim(
        cid,
        spec["claim"],
        paired_criterion_text(spec["criterion"]),
        NOT_REPRODUCED,
        paper_value=spec.get("paper_value"),
        details="failed runs (per-seed sanity check): " + "; ".join(reasons),
    )


def _least_favourable(cid: str, results: dict, label: str) -> Claim:
    """One claim from several settings (three-way :func:`repro.common.claims.all_hold`):
    it holds only if every one holds; every setting is listed and the least favourable's
    per-seed differences and half-width are given."""
    claim = all_hold(cid, [(f"{label}={k}", r) for k, r in results.items()])
    if len(results) == 1:
        return claim
    worst = next(
        r for r in results.values() if (r.measured, r.interval) == (claim.measured, claim.interval)
    )
    return dataclasses.replace(claim, details=f"{claim.details} ({worst.details})")


def _exploration(spec: dict, metrics: dict, top: str, bottom: str) -> str:
    name = spec.get("exploration")
    if not name:
        return ""
    m = metrics[name]
    diffs = ", ".join(f"{n}: {_acc(m, top, n) - _acc(m, bottom, n):+.3f}" for n in _facts(m, spec))
    return (
        f". Exploration, not the verdict: {name} (seeds {m['seeds']}), {top} − {bottom} "
        f"per n_facts {diffs}"
    )


def _paired_conditions(cid, spec, metrics):
    m = metrics[spec["method"]]
    if failed := _failed(cid, spec, [m]):
        return failed
    top, bottom = spec["conditions"]
    results = {
        n: paired_claim(cid, spec, _by_seed(m, top, n), _by_seed(m, bottom, n))
        for n in _facts(m, spec)
    }
    claim = _least_favourable(cid, results, "n_facts")
    return dataclasses.replace(
        claim,
        details=f"{top} − {bottom}, seeds {m['seeds']}; {claim.details}"
        + _exploration(spec, metrics, top, bottom),
    )


def _beats_baseline(cid, spec, metrics):
    m = metrics[spec["method"]]
    if failed := _failed(cid, spec, [m, *(metrics[b] for b in spec["baselines"])]):
        return failed
    facts = _facts(m, spec)
    ours = _seed_means(m, spec["condition"], facts)
    results = {
        b: paired_claim(cid, spec, ours, _seed_means(metrics[b], spec["baseline_condition"], facts))
        for b in spec["baselines"]
    }
    claim = _least_favourable(cid, results, "baseline")
    what = f"{spec['method']} {spec['condition']} − {spec['baseline_condition']}"
    return dataclasses.replace(claim, details=f"{what}, mean over n_facts {facts}; {claim.details}")


def _worst(cid, spec, values: dict, pick, fmt, prefix) -> Claim:
    details = prefix + "; ".join(f"n_facts={n}: {fmt(n, v)}" for n, v in values.items())
    return check_worst(cid, spec, values, pick, details)


def _zeroed_state(cid, spec, metrics):
    m = metrics[spec["method"]]
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


def _lora_chance(cid, spec, metrics):
    m = metrics[spec["method"]]
    above = {n: _acc(m, "lora_truncated", n) - CHANCE for n in _facts(m, spec)}
    return _worst(
        cid,
        spec,
        above,
        max,
        lambda n, v: f"LoRA-SFT, query window only: {_acc(m, 'lora_truncated', n):.3f}",
        f"chance {CHANCE:.4f}; ",
    )


def _frozen_backbone(cid, spec, metrics):
    changes = {
        f"{name} seed {row['seed']}": row["train"]["backbone_max_change"]
        for name, m in metrics.items()
        for row in m["per_seed"]
    }
    key = max(changes, key=changes.get)
    details = f"largest backbone weight change over {len(changes)} runs ({key})"
    return check_worst(cid, spec, changes, max, details)


def _sane_runs(cid, spec, metrics):
    failed = {f"{name} seed {s}": r for name, m in metrics.items() for s, r in m["failed"].items()}
    runs = sum(len(m["per_seed"]) for m in metrics.values())
    details = f"{len(failed)} of {len(metrics)} methods' {runs} seed runs failed" + "".join(
        f"; {run}: {reason}" for run, reason in failed.items()
    )
    return check_spec(cid, spec, len(failed), details)


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


def _locomo_ratio(cid, spec, inputs):
    return _bench_ratio(cid, spec, inputs["locomo"], "LoCoMo", "f1", "F1")


def _mab_ratio(cid, spec, inputs):
    return _bench_ratio(cid, spec, inputs["mab"], "MemoryAgentBench", "score", "score")


def _metrics(handler):
    return lambda cid, spec, inputs: handler(cid, spec, inputs["metrics"])


# papers.delta_mem.{claims,checks} kinds, each handler(id, spec, {metrics, locomo, mab})
KINDS = {
    "paired_conditions": _metrics(_paired_conditions),
    "beats_baseline": _metrics(_beats_baseline),
    "zeroed_state": _metrics(_zeroed_state),
    "lora_chance": _metrics(_lora_chance),
    "frozen_backbone": _metrics(_frozen_backbone),
    "param_count": _metrics(_param_count),
    "sane_runs": _metrics(_sane_runs),
    "locomo_ratio": _locomo_ratio,
    "mab_ratio": _mab_ratio,
}


def check_claims(
    specs: dict,
    metrics_paths: dict[str, str],
    output: str,
    locomo_paths: dict[str, str] | None = None,
    mab_paths: dict[str, str] | None = None,
    checks: dict | None = None,
    sanity: dict | None = None,
) -> list[Claim]:
    """Every claim and check from the metrics documents; ``sanity`` holds the thresholds of
    the per-seed sanity check (``papers.delta_mem.sanity``; none: no seed fails)."""
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    locomo = {name: read_json(path) for name, path in (locomo_paths or {}).items()}
    mab = {name: read_json(path) for name, path in (mab_paths or {}).items()}
    for m in metrics.values():
        m["n_facts"] = sorted(int(n) for n in m["per_seed"][0]["accuracy"]["truncated"])
        m["failed"] = failed_runs(m, sanity)
    inputs = {"metrics": metrics, "locomo": locomo, "mab": mab}
    results = [
        _analogue(c, specs[c.id], metrics[specs[c.id]["method"]])
        if c.type == "claim" and specs[c.id]["kind"] == "not_tested" and "metric" in specs[c.id]
        else c
        for c in run_claims(specs, KINDS, inputs, checks or {})
    ]
    write_json(output, results)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description="δ-Mem's claims and checks from metrics JSON")
    parser.add_argument(
        "specs", help="JSON: {claims: {...}, checks: {...}, sanity: {...}} as in the config"
    )
    parser.add_argument("output")
    parser.add_argument("metrics", nargs="+", help="method=path of results/delta_mem/metrics")
    args = parser.parse_args()
    specs = json.loads(open(args.specs).read())
    paths = dict(item.split("=", 1) for item in args.metrics)
    check_claims(
        specs["claims"],
        paths,
        args.output,
        checks=specs.get("checks", {}),
        sanity=specs.get("sanity"),
    )


if __name__ == "__main__":
    main()
