"""Per-seed study outputs → one summary: mean ± sd over seeds, per-seed values in seed order
(for the paired claims) and paired differences of MaLoRA against every other rule."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from repro.common.io import read_json, write_json
from repro.common.stats import paired_difference
from repro.malora.names import DIGITS_METRICS, LINEAR_METRICS

REFERENCE = "malora"


def _stats(values: Sequence[float]) -> dict:
    """Mean and sd over the seeds where the value is defined; ``defined`` says how many."""
    v = np.asarray([np.nan if x is None else x for x in values], dtype=float)
    ok = v[np.isfinite(v)]
    return {
        "mean": float(ok.mean()) if len(ok) else float("nan"),
        "sd": float(ok.std(ddof=1)) if len(ok) > 1 else 0.0,
        "defined": int(len(ok)),
        "per_seed": v.tolist(),
    }


def _paired(methods: dict, metrics: Sequence[str]) -> dict:
    """MaLoRA − rule per seed, mean with its 95% paired t interval."""
    if REFERENCE not in methods:
        return {}
    out = {}
    for name, rows in methods.items():
        if name == REFERENCE:
            continue
        out[name] = {}
        for metric in metrics:
            d = paired_difference(methods[REFERENCE][metric]["per_seed"], rows[metric]["per_seed"])
            out[name][metric] = {"mean": d.mean, "low": d.low, "high": d.high, "n": d.n}
    return out


def _method_table(runs: list[dict], metrics) -> dict:
    names = list(runs[0]["methods"])
    return {
        name: {m: _stats([r["methods"][name][m] for r in runs]) for m in metrics} for name in names
    }


def summarise_linear(seed_docs: list[dict]) -> dict:
    """seed_docs: the linear merge outputs, one per seed, in seed order."""
    seeds = [d["seed"] for d in seed_docs]
    out = {"seeds": seeds, "settings": {}}
    keys = [(r["setting"], r["overlap"]) for r in seed_docs[0]["runs"]]
    for i, (setting, overlap) in enumerate(keys):
        runs = [d["runs"][i] for d in seed_docs]
        methods = _method_table(runs, LINEAR_METRICS)
        entry = {
            "overlap": overlap,
            "methods": methods,
            "paired_vs_malora": _paired(methods, ("union_margin", "joint_accuracy")),
            "oracle": _stats([r["oracle"]["union_margin"] for r in runs]),
            # largest duality gap of a seed's adapters, and its base's gap bound
            "adapter_gap": _stats([float(np.max(r["adapter_gaps"])) for r in runs]),
            "base_gap": _stats([r["base_gap"] for r in runs]),
            "alphas": {n: [r["methods"][n]["alphas"] for r in runs] for n in methods},
            "calibration_evaluations": {
                n: max(r["methods"][n]["calibration_evaluations"] for r in runs) for n in methods
            },
            "errors": {n: [r["methods"][n].get("error") for r in runs] for n in methods},
        }
        if "ablations" in runs[0]:
            entry["ablations"] = _ablations([r["ablations"] for r in runs])
            entry["landscape_first_seed"] = runs[0]["landscape"]
        out["settings"].setdefault(setting, []).append(entry)
    return out


def _ablations(per_seed: list[dict]) -> dict:
    out = {}
    for family, values in per_seed[0].items():
        out[family] = {}
        for key, value in values.items():
            if isinstance(value, dict):  # n_tasks: several rules per task count
                out[family][key] = {r: _stats([s[family][key][r] for s in per_seed]) for r in value}
            else:
                out[family][key] = _stats([s[family][key] for s in per_seed])
    return out


def summarise_sweep(seed_docs: list[dict]) -> dict:
    out = {"seeds": [d["seed"] for d in seed_docs], "overlaps": []}
    for i, first in enumerate(seed_docs[0]["overlaps"]):
        rows = []
        for j, row in enumerate(first["lambdas"]):
            per = [d["overlaps"][i]["lambdas"][j] for d in seed_docs]
            entry = {
                "lambda": row["lambda"],
                "delta_norm": _stats([p["delta_norm"] for p in per]),
                "gap": _stats([p["gap"] for p in per]),
            }
            for name in row["cosine"]:
                entry[f"cosine_{name}"] = _stats([p["cosine"][name] for p in per])
                for step in row["cosine_by_step"]:
                    entry.setdefault("cosine_by_step", {}).setdefault(name, {})[step] = _stats(
                        [p["cosine_by_step"][step][name] for p in per]
                    )
            for name in row["path_cosine"]:  # the λ path's own references (C1's controls)
                entry[f"cosine_{name}"] = _stats([p["path_cosine"][name] for p in per])
            for margin in row["measured"]:
                entry[f"measured_{margin}"] = _stats([p["measured"][margin] for p in per])
                for svm in row["closed_form"]:
                    entry[f"closed_{svm}_{margin}"] = _stats(
                        [p["closed_form"][svm][margin] for p in per]
                    )
            rows.append(entry)
        out["overlaps"].append(
            {
                "overlap": first["overlap"],
                "lambdas": rows,
                "base_margin": _stats([d["overlaps"][i]["base_margin"] for d in seed_docs]),
                "base_norm": _stats([d["overlaps"][i]["base_norm"] for d in seed_docs]),
                "base_gap": _stats([d["overlaps"][i]["base_gap"] for d in seed_docs]),
                "nuclear_svm_status": [d["overlaps"][i]["nuclear_svm_status"] for d in seed_docs],
            }
        )
    return out


def summarise_digits(seed_docs: list[dict]) -> dict:
    methods = _method_table(seed_docs, DIGITS_METRICS)
    return {
        "seeds": [d["seed"] for d in seed_docs],
        "methods": methods,
        "paired_vs_malora": _paired(methods, DIGITS_METRICS),
        "individual_accuracy": [d["individual_accuracy"] for d in seed_docs],
        "base_accuracy": [d["base_accuracy"] for d in seed_docs],
        "pertask_chance": seed_docs[0]["pertask_chance"],
        "task_overlap": _stats([d["task_overlap"] for d in seed_docs]),
        "peft_cat_max_abs_logit_gap": max(d["peft_cat_max_abs_logit_gap"] for d in seed_docs),
        "alphas": {n: [d["methods"][n]["alphas"] for d in seed_docs] for n in methods},
        "calibration_evaluations": {
            n: max(d["methods"][n]["calibration_evaluations"] for d in seed_docs) for n in methods
        },
        "errors": {n: [d["methods"][n].get("error") for d in seed_docs] for n in methods},
        "ablations": _digits_ablations(seed_docs),
    }


def _digits_ablations(seed_docs) -> dict:
    out = {}
    for family, values in seed_docs[0]["ablations"].items():
        out[family] = {}
        for key in values:
            rows = [d["ablations"][family][key] for d in seed_docs]
            out[family][key] = {
                m: _stats([np.nan if r is None else r[m] for r in rows]) for m in DIGITS_METRICS
            }
    return out


def summarise(sweep: list[dict], linear: list[dict], digits: list[dict]) -> dict:
    return {
        "sweep": summarise_sweep(sweep),
        "linear": summarise_linear(linear),
        "digits": summarise_digits(digits),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Summarise the MaLoRA studies over seeds.")
    parser.add_argument("--sweep", nargs="+", required=True, help="sweep JSON per seed")
    parser.add_argument("--linear", nargs="+", required=True, help="linear merge JSON per seed")
    parser.add_argument("--digits", required=True, help="digits JSON (all seeds)")
    parser.add_argument("--out", required=True, help="summary JSON to write")
    args = parser.parse_args(argv)
    digits = read_json(args.digits)["seeds"]
    write_json(
        args.out,
        summarise([read_json(p) for p in args.sweep], [read_json(p) for p in args.linear], digits),
    )


if __name__ == "__main__":
    main()


def summarise_full(runs: list[dict], backbones, methods) -> dict:
    """Full-scale runs (backbone-major, method-minor order) → per backbone the same layout
    as the digits summary: methods' stats over calibration draws, MaLoRA − rule paired."""
    from repro.malora.names import FULL_METRICS as METRICS

    out, it = {}, iter(runs)
    for backbone in backbones:
        docs = {m: next(it) for m in methods}
        seeds = [r["seed"] for r in docs[methods[0]]["runs"]]
        table = {
            m: {k: _stats([r.get(k) for r in d["runs"]]) for k in METRICS} for m, d in docs.items()
        }
        out[backbone] = {
            "seeds": seeds,
            "tasks": docs[methods[0]]["tasks"],
            "methods": table,
            "paired_vs_malora": _paired(table, METRICS),
        }
    return out
