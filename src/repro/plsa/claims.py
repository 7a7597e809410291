"""PLSA's claims and checks, judged against criteria written in the config before the run.

Claim kinds (``papers.plsa.claims.<id>.kind``): ``small_edges_win``, ``rate_slope`` and
``hard_label_floor`` over the repetitions of the rate study, each with an interval over
them (:mod:`repro.plsa.study_claims`); ``comparison``, an end-to-end metric against every one
of some baselines, paired over the shared seeds, once every run it reads passed its sanity
check (:mod:`repro.plsa.sanity`: otherwise "not reproduced", naming the runs); and
``not_tested``. Every margin is the config's (``delta`` in each paired criterion).

Check kinds (``papers.plsa.checks``: true by construction unless there is a bug):
``em_monotone`` (repetitions of the estimator studies whose EM log-likelihood ever fell),
``qp_optimal`` (the largest KKT residual of the moment-matching QPs, infinite when one
stopped short of optimal), ``oracle_exact`` (the largest π̂ L1 error of the oracle over data
sets and seeds) and ``runs_sane`` (end-to-end runs whose target accuracy is not above the
best constant predictor's, the majority share of the target test nodes, by
``end_to_end.sanity.above_constant``: a broken run, not a result).
"""

from __future__ import annotations

import math

from repro.common.claims import (
    Claim,
    check_spec,
    comparison_claim,
    failed_runs_claim,
    not_tested,
    paired_criterion_text,
    run_claims,
)
from repro.common.cli import log_to_stderr, paper_section, step_parser
from repro.common.io import read_json, write_json
from repro.plsa import study_claims
from repro.plsa.sanity import failed_runs


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


def _comparison(cid, spec, inputs) -> Claim:
    """The shared paired comparison, once every run it reads is sane."""
    methods = [spec["method"], *spec["baselines"]]
    failed = failed_runs(
        inputs["metrics"], inputs["above_constant"], dataset=spec["dataset"], methods=methods
    )
    if failed:
        return failed_runs_claim(cid, spec, failed, paired_criterion_text(spec["criterion"]))
    return comparison_claim(cid, spec, inputs["metrics"])


def _runs_sane(cid, spec, inputs) -> Claim:
    if not inputs["metrics"]:
        return not_tested(cid, spec["claim"], "no end-to-end data set in this run")
    failed = failed_runs(inputs["metrics"], inputs["above_constant"])
    runs = sum(
        len(m["per_seed"])
        for document in inputs["metrics"].values()
        for m in document["methods"].values()
    )
    margin = inputs["above_constant"]
    details = f"{runs} runs, each above the constant predictor by ≥ {margin:g}; failed: "
    details += "; ".join(failed) or "none"
    return check_spec(cid, spec, len(failed), details)


def check_claims(
    specs: dict,
    study_paths: dict[str, str],
    metrics_paths: dict[str, str],
    output: str,
    checks: dict | None = None,
    *,
    sanity: dict,
):
    """``study_paths``: {"rate": estimator_rate.json, "shift": estimator_shift.json}; the
    claims read the rate study, the checks both; ``sanity``: ``end_to_end.sanity``."""
    studies = {name: read_json(path) for name, path in study_paths.items()}
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    inputs = {
        "rate": studies["rate"],
        "studies": studies,
        "metrics": metrics,
        "above_constant": float(sanity["above_constant"]),
    }
    results = run_claims(specs, KINDS, inputs, checks)
    write_json(output, results)
    return results


# The claim and check kinds of papers.plsa, each handler(id, spec, inputs).
KINDS = {
    **study_claims.KINDS,
    "comparison": _comparison,
    "em_monotone": _em_monotone,
    "qp_optimal": _qp_optimal,
    "oracle_exact": _oracle_exact,
    "runs_sane": _runs_sane,
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
    check_claims(
        section.get("claims", {}),
        studies,
        metrics,
        args.output,
        section.get("checks"),
        sanity=section["end_to_end"]["sanity"],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
