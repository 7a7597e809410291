"""Summary over seeds: per recipe and prior, each metric's per-seed values, its mean with an
interval, and paired differences (recipe - base, mitigation - its AR reference,
decorrelated - correlated), plus the metric curves along training.

Every interval is a paired t interval over seeds below ``MIN_BOOTSTRAP_UNITS`` (20) seeds
and a percentile bootstrap from there on (``repro.common.stats``; a bootstrap under-covers
with few seeds), as the claims use; a mean's interval is that of its paired difference to 0.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping

import numpy as np

from repro.common.claims import MIN_BOOTSTRAP_UNITS
from repro.common.io import read_json, write_json
from repro.common.stats import paired_difference

log = logging.getLogger(__name__)
BASE = "base"


def interval_method(n_seeds: int) -> str:
    return "t" if n_seeds < MIN_BOOTSTRAP_UNITS else "bootstrap"


def _interval(a: Mapping[int, float], b: Mapping[int, float], confidence: float) -> dict:
    """The paired difference over the seeds where both sides have a value (a failed run has
    none); ``n`` says how many."""
    seeds = [s for s in a if a[s] is not None and b.get(s) is not None]
    if not seeds:
        return {"mean": None, "low": None, "high": None, "n": 0}
    d = paired_difference(
        {s: a[s] for s in seeds},
        {s: b[s] for s in seeds},
        confidence=confidence,
        method=interval_method(len(seeds)),
    )
    nan = d.low != d.low
    return {
        "mean": d.mean,
        "low": None if nan else d.low,
        "high": None if nan else d.high,
        "n": len(seeds),
    }


def _mean(values: Mapping[int, float], confidence: float) -> dict:
    return _interval(values, {s: 0.0 for s in values}, confidence)


def _curves(runs: list[dict], recipe: str, metrics: list[str]) -> dict:
    """Mean and spread over seeds of each metric at each logged step (failed runs too: the
    curve shows them)."""
    curves = [r["recipes"][recipe]["curve"] for r in runs]
    steps = [c["step"] for c in curves[0]]
    if any([c["step"] for c in curve] != steps for curve in curves):
        raise ValueError(f"{recipe}: seeds logged different steps")
    out = {"steps": steps}
    for metric in metrics:
        values = np.array([[c[metric] for c in curve] for curve in curves])
        out[metric] = {
            "mean": values.mean(0).tolist(),
            "min": values.min(0).tolist(),
            "max": values.max(0).tolist(),
        }
    return out


def _dose(by_prior: dict, confidence: float, recipe: str = "ar_sft") -> dict:
    """Per prior: P(harm | non-refuser) of its worlds, the Bayes prediction of EM from the
    prior alone, and the EM measured after AR SFT per seed, with measured - predicted."""
    out = {}
    for prior, group in by_prior.items():
        if recipe not in group[0]["recipes"]:
            continue
        runs = {r["seed"]: r for r in group}
        measured = {s: r["recipes"][recipe]["final"]["em"] for s, r in runs.items()}
        predicted = {s: r["world"]["bayes_em"] for s, r in runs.items()}
        out[prior] = {
            "harm_given_non_refuser": {
                s: r["world"]["harm_given_non_refuser"] for s, r in runs.items()
            },
            "harm_given_refuser": {s: r["world"]["harm_given_refuser"] for s, r in runs.items()},
            "bayes_em": predicted,
            "em": measured,
            "em_minus_bayes": _interval(measured, predicted, confidence),
        }
    return out


def summarise(runs: list[dict], references: Mapping[str, str], confidence: float = 0.95) -> dict:
    """The summary document from every (prior, seed) run document.

    ``references`` maps a mitigation recipe to the AR recipe it is compared with. A failed
    run's values are None in ``per_seed`` (listed under ``failed``); means and differences
    use the seeds with a value (``n``).
    """
    priors = sorted({r["prior"] for r in runs})
    seeds = sorted({r["seed"] for r in runs})
    by_prior = {
        p: sorted((r for r in runs if r["prior"] == p), key=lambda r: r["seed"]) for p in priors
    }
    for prior, group in by_prior.items():
        if [r["seed"] for r in group] != seeds:
            raise ValueError(f"prior {prior} has seeds {[r['seed'] for r in group]}, not {seeds}")
    recipes = {p: list(g[0]["recipes"]) for p, g in by_prior.items()}
    every = list(dict.fromkeys(rc for p in priors for rc in recipes[p]))
    metrics = list(runs[0]["recipes"][BASE]["final"])
    failed = {
        p: {
            rc: {r["seed"]: r["recipes"][rc]["failed"] for r in g if "failed" in r["recipes"][rc]}
            for rc in recipes[p]
        }
        for p, g in by_prior.items()
    }

    def value(run, prior, recipe, metric):
        return (
            None
            if run["seed"] in failed[prior][recipe]
            else run["recipes"][recipe]["final"][metric]
        )

    per_seed = {
        prior: {
            recipe: {m: {r["seed"]: value(r, prior, recipe, m) for r in group} for m in metrics}
            for recipe in recipes[prior]
        }
        for prior, group in by_prior.items()
    }
    mean = {
        p: {rc: {m: _mean(v, confidence) for m, v in ms.items()} for rc, ms in rs.items()}
        for p, rs in per_seed.items()
    }

    def diff(p1, r1, p2, r2):
        return {m: _interval(per_seed[p1][r1][m], per_seed[p2][r2][m], confidence) for m in metrics}

    vs_base = {p: {rc: diff(p, rc, p, BASE) for rc in recipes[p] if rc != BASE} for p in priors}
    vs_reference = {
        p: {
            rc: diff(p, rc, p, ref)
            for rc, ref in references.items()
            if {rc, ref} <= set(recipes[p])
        }
        for p in priors
    }
    control = {}
    if {"correlated", "decorrelated"} <= set(priors):
        shared = [rc for rc in recipes["decorrelated"] if rc in recipes["correlated"]]
        control = {rc: diff("decorrelated", rc, "correlated", rc) for rc in shared}
    budgets = {
        rc: sorted(
            {
                (r["recipes"][rc]["steps"], r["recipes"][rc]["sequences"])
                for r in runs
                if rc in r["recipes"]
            }
        )
        for rc in every
        if rc != BASE
    }
    planted = {
        p: {m: {r["seed"]: r["world"]["bayes"][m] for r in g} for m in g[0]["world"]["bayes"]}
        for p, g in by_prior.items()
    }
    curve_metrics = ["refusal_id", "refusal_ood", "em", "sycophancy", "steerability", "helpful"]
    return {
        "priors": priors,
        "seeds": seeds,
        "recipes": every,
        "recipes_by_prior": recipes,
        "metrics": metrics,
        "confidence": confidence,
        "interval": interval_method(len(seeds)),
        "parameters": sorted({r["parameters"] for r in runs}),
        "budgets": budgets,
        "failed": {p: {rc: f for rc, f in fs.items() if f} for p, fs in failed.items()},
        "per_seed": per_seed,
        "mean": mean,
        "vs_base": vs_base,
        "vs_reference": {"references": dict(references), **vs_reference},
        "decorrelated_minus_correlated": control,
        "dose": _dose(by_prior, confidence),
        "planted": planted,  # prior -> metric -> seed -> the prior's Bayes prediction
        "curves": {
            p: {rc: _curves(g, rc, curve_metrics) for rc in recipes[p] if rc != BASE}
            for p, g in by_prior.items()
        },
    }


def evaluate(run_paths: list[str], references: Mapping[str, str], out_path, confidence=0.95):
    summary = summarise([read_json(p) for p in run_paths], references, confidence)
    for prior in summary["priors"]:
        for recipe, m in summary["mean"][prior].items():
            log.info(
                "%s %s: %s",
                prior,
                recipe,
                {k: m[k]["mean"] for k in ("em", "helpful", "sycophancy", "steerability")},
            )
    write_json(out_path, summary)
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Summarise helpful-only runs over seeds.")
    parser.add_argument("runs", nargs="+", help="run JSON files (one per prior and seed)")
    parser.add_argument("--out", required=True, help="summary JSON to write")
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="RECIPE=AR",
        help="compare a mitigation with its AR recipe (repeatable)",
    )
    args = parser.parse_args(argv)
    references = dict(item.split("=", 1) for item in args.reference)
    logging.basicConfig(level=logging.INFO)
    evaluate(args.runs, references, args.out)


if __name__ == "__main__":
    main()
