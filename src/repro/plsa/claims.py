"""PLSA's claims and checks, judged against criteria written in the config before the run.

Claim kinds (``papers.plsa.claims.<id>.kind``): ``small_edges_win`` (share of repetitions
at the smallest |E| where PLSA's error is below moment matching's, worst over settings),
``rate_slope`` (largest distance of the MM and PLSA log-log slopes from -1/2),
``hard_label_floor`` (hard-label error over PLSA's at the largest |E|, smallest over
settings), ``comparison`` (an end-to-end metric against every one of some baselines, paired
over the shared seeds) and ``not_tested``.

Check kinds (``papers.plsa.checks``: true by construction unless there is a bug):
``em_monotone`` (repetitions of the estimator studies whose EM log-likelihood ever fell),
``qp_optimal`` (the largest KKT residual of the moment-matching
QPs, infinite when one stopped short of optimal) and ``oracle_exact`` (the largest π̂ L1
error of the oracle over data sets and seeds).
"""

from __future__ import annotations

import math

import numpy as np

from repro.common.claims import (
    Claim,
    check_spec,
    check_worst,
    comparison_claim,
    not_tested,
    run_claims,
)
from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.io import read_json, write_json

# The smallest target-accuracy gain that counts as one method beating another (a "beats"
# claim's margin): one point of accuracy, about the seed-to-seed spread of ERM on the CSBMs.
MIN_EFFECTS = {"target_accuracy": 0.01}


def _at_size(rate: dict, choose):
    """(label, rows) per (shift, σ) setting, keeping the rows at the size ``choose`` picks."""
    for shift, sigma in sorted({(r["shift"], r["sigma"]) for r in rate["rows"]}):
        rows = [r for r in rate["rows"] if (r["shift"], r["sigma"]) == (shift, sigma)]
        n = choose(r["n"] for r in rows)
        yield f"{shift}, σ={sigma:g}, n={n}", [r for r in rows if r["n"] == n]


def _worst(cid, spec, values: dict, worst, fmt, prefix: str) -> Claim:
    """The least favourable setting decides; all of them in the details."""
    details = "; ".join(f"{k}: {fmt(v)}" for k, v in values.items())
    return check_worst(cid, spec, values, worst, prefix + details)


def _mean_error(rows, estimator) -> float:
    return float(np.mean([r["error"][estimator] for r in rows]))


def _small_edges_win(cid, spec, rate) -> Claim:
    shares = {
        label: float(np.mean([r["error"]["plsa"] < r["error"]["moment_matching"] for r in rows]))
        for label, rows in _at_size(rate, min)
    }
    return _worst(cid, spec, shares, min, lambda v: f"{v:.0%}", "PLSA < MM in ")


def _rate_slope(cid, spec, rate) -> Claim:
    if not rate["slopes"]:
        return not_tested(cid, spec["claim"], "the estimator study has a single graph size")
    distances = {
        f"{setting} {e}": abs(slopes[e] + 0.5)
        for setting, slopes in rate["slopes"].items()
        for e in ("moment_matching", "plsa")
    }
    return _worst(
        cid, spec, distances, max, lambda v: f"{v:.2f}", "|slope + 1/2| per setting and estimator: "
    )


def _hard_label_floor(cid, spec, rate) -> Claim:
    ratios = {
        label: _mean_error(rows, "hard_label") / _mean_error(rows, "plsa")
        for label, rows in _at_size(rate, max)
    }
    return _worst(cid, spec, ratios, min, lambda v: f"{v:.2f}", "hard / PLSA error: ")


def _study_rows(inputs) -> list[tuple[str, dict]]:
    return [(name, row) for name, study in inputs["studies"].items() for row in study["rows"]]


def _label(name: str, row: dict) -> str:
    return f"{name} {row['shift']} σ={row['sigma']:g} n={row['n']} seed {row['seed']}"


def _em_monotone(cid, spec, inputs) -> Claim:
    rows = _study_rows(inputs)
    fell = [_label(name, row) for name, row in rows if not row["solver"]["plsa"]["monotone"]]
    unconverged = sum(not row["solver"]["plsa"]["converged"] for _, row in rows)
    details = (
        f"{len(rows)} EM runs of the estimator studies ({unconverged} stopped at max_iter); "
        f"log-likelihood fell in: {fell or 'none'}"
    )
    return check_spec(cid, spec, len(fell), details)


def _qp_optimal(cid, spec, inputs) -> Claim:
    residuals = {
        f"{_label(name, row)} {estimator}": (
            solver["kkt_residual"] if solver["status"] == "optimal" else math.inf
        )
        for name, row in _study_rows(inputs)
        for estimator, solver in row["solver"].items()
        if "status" in solver
    }
    worst = max(residuals, key=residuals.get)
    details = f"{len(residuals)} QPs; largest KKT residual {residuals[worst]:.2g} ({worst})"
    return check_spec(cid, spec, residuals[worst], details)


def _oracle_exact(cid, spec, inputs) -> Claim:
    errors = {
        f"{dataset} seed {seed}": row["pi_l1_error"]
        for dataset, document in inputs["metrics"].items()
        if "oracle" in document["methods"]
        for seed, row in zip(
            document["seeds"], document["methods"]["oracle"]["per_seed"], strict=True
        )
    }
    if not errors:
        return not_tested(cid, spec["claim"], "no data set of this run trains the oracle")
    worst = max(errors, key=errors.get)
    return check_spec(cid, spec, errors[worst], f"oracle π̂ L1 per run: {errors}")


def check_claims(
    specs: dict,
    study_paths: dict[str, str],
    metrics_paths: dict[str, str],
    output: str,
    checks: dict | None = None,
):
    """``study_paths``: {"rate": estimator_rate.json, "shift": estimator_shift.json}; the
    claims read the rate study, the checks both."""
    studies = {name: read_json(path) for name, path in study_paths.items()}
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    inputs = {"rate": studies["rate"], "studies": studies, "metrics": metrics}
    results = run_claims(specs, KINDS, inputs, checks)
    write_json(output, results)
    return results


# The claim and check kinds of papers.plsa, each handler(id, spec, inputs).
KINDS = {
    "small_edges_win": lambda cid, spec, inputs: _small_edges_win(cid, spec, inputs["rate"]),
    "rate_slope": lambda cid, spec, inputs: _rate_slope(cid, spec, inputs["rate"]),
    "hard_label_floor": lambda cid, spec, inputs: _hard_label_floor(cid, spec, inputs["rate"]),
    "comparison": lambda cid, spec, inputs: comparison_claim(
        cid, spec, inputs["metrics"], MIN_EFFECTS
    ),
    "em_monotone": _em_monotone,
    "qp_optimal": _qp_optimal,
    "oracle_exact": _oracle_exact,
}


def main(argv: list[str] | None = None) -> int:
    """Judge the config's PLSA claims and checks on the studies and metrics (rule plsa_claims)."""
    p = step_parser(main.__doc__, paper="plsa")
    p.add_argument("--rate", required=True, help="estimator_rate.json")
    p.add_argument("--shift", required=True, help="estimator_shift.json")
    p.add_argument("output", help="the claims .json to write")
    p.add_argument("metrics", nargs="*", metavar="DATASET=METRICS", help="data set=metrics .json")
    args = p.parse_args(argv)
    log_to_stderr()
    section = paper_section(args.config, "plsa")
    metrics = dict(item.split("=", 1) for item in args.metrics)
    studies = {"rate": args.rate, "shift": args.shift}
    check_claims(section.get("claims", {}), studies, metrics, args.output, section.get("checks"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
