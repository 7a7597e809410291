"""QSurv's claims and checks, judged against criteria written in the config before the run.

Kinds (``KINDS``), each ``handler(id, spec, {"quadrature", "metrics", "sanity"})``:

* ``quadrature_convergence``: ``rule``'s error falls faster in K than ``baseline_rule``'s
  (Gauss-Legendre and trapezoid in the claim; other rules of the study in its controls).
  Per family of ``families`` (default: every family of the study), the least-squares slope
  of log10(median relative error) against K (:func:`repro.qsurv.quadrature.log_error_slope`,
  points at the rounding floor left out); measured: the least favourable family's slope
  ratio rule / baseline rule (> 1: the rule is steeper). The error ratio at ``nodes`` is in
  the details.
* ``comparison``: a method against every one of some baselines on one metric of one data
  set, paired over the seeds (:func:`repro.common.claims.comparison_claim`); every paired
  criterion carries its margin ``delta`` in the config. A compared method with a seed that
  fails the sanity check (:mod:`repro.qsurv.sanity`) makes it "not reproduced", naming the
  seed and the reason.
* ``error_bound`` (a check): the number of (x, t, K) cases where the observed GL error
  exceeds the classical bound (the bound is a theorem).
* ``seed_sanity`` (a check): the number of (data set, method, seed) runs that fail the
  sanity check.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from repro.common.claims import (
    NOT_REPRODUCED,
    Claim,
    check_spec,
    comparison_claim,
    paired_criterion_text,
    run_claims,
)
from repro.common.controls import number_text
from repro.common.io import read_json, write_json
from repro.qsurv import sanity

# every comparison criterion names its margin delta in the config (the schema requires it):
# no metric-wide minimum effect to fall back on
NO_MIN_EFFECTS: dict[str, float] = {}

RULE_NAMES = {"gauss_legendre": "GL", "trapezoid": "trapezoid", "midpoint": "midpoint"}
# Below this relative error a median is rounding, not truncation (as quadrature_study's
# bound check): such points stay out of the slope.
ROUNDING = 64 * 2.220446049250313e-16


def _slope(by_k: dict) -> float:
    from repro.qsurv.quadrature import log_error_slope  # numpy: not at DAG time

    nodes = sorted(by_k, key=int)
    errors = [by_k[k]["median"] for k in nodes]
    return log_error_slope([int(k) for k in nodes], errors, floor=ROUNDING)


def _quadrature_convergence(cid: str, spec: dict, quadrature: dict) -> Claim:
    nodes = str(spec["nodes"])
    rule, baseline = spec.get("rule", "gauss_legendre"), spec.get("baseline_rule", "trapezoid")
    families = spec.get("families", list(quadrature["families"]))
    name, base_name = RULE_NAMES[rule], RULE_NAMES[baseline]
    parts, ratios = [], {}
    for family in families:
        rules = quadrature["families"][family]
        steep, base = _slope(rules[rule]), _slope(rules[baseline])
        ratios[family] = steep / base if base < 0 else math.nan
        at_k = rules[baseline][nodes]["median"] / rules[rule][nodes]["median"]
        parts.append(
            f"{family}: slope of log10 error per node {name} {steep:.3g}, {base_name} {base:.3g}"
            f" (ratio {ratios[family]:.3g}); error ratio {base_name} / {name} at K = {nodes} "
            f"{at_k:.3g}"
        )
    worst = math.nan if any(map(math.isnan, ratios.values())) else min(ratios.values())
    return check_spec(cid, spec, worst, "; ".join(parts))


def _comparison(cid: str, spec: dict, inputs: dict) -> Claim:
    """A paired comparison, "not reproduced" where one of its runs failed the sanity check
    (the comparison with the failed runs is in the details, not the measured number)."""
    claim = comparison_claim(cid, spec, inputs["metrics"], NO_MIN_EFFECTS)
    document = inputs["metrics"].get(spec["dataset"])
    if document is None:
        return claim
    failures = sanity.seed_failures(document, inputs["sanity"])
    compared = [spec["method"], *spec["baselines"]]
    failed = sanity.describe(spec["dataset"], {m: failures[m] for m in compared if m in failures})
    if not failed:
        return claim
    return Claim(
        cid,
        spec["claim"],
        paired_criterion_text(spec["criterion"]),
        NOT_REPRODUCED,
        paper_value=spec.get("paper_value"),
        details=(
            f"failed runs (sanity check): {'; '.join(failed)}; the comparison with them: "
            f"{claim.verdict}, {number_text(claim.measured, claim.interval)}"
        ),
    )


def _seed_sanity(cid: str, spec: dict, inputs: dict) -> Claim:
    failed = [
        line
        for dataset, document in inputs["metrics"].items()
        for line in sanity.describe(dataset, sanity.seed_failures(document, inputs["sanity"]))
    ]
    runs = sum(
        len(document["seeds"]) * (len(document["methods"]) - len(document["reference_arms"]))
        for document in inputs["metrics"].values()
    )
    details = f"{len(failed)} of {runs} (data set, method, seed) runs fail"
    return check_spec(cid, spec, len(failed), "; ".join([details, *failed]))


def _error_bound(cid: str, spec: dict, quadrature: dict) -> Claim:
    bound = quadrature["gompertz_bound"]
    return check_spec(
        cid,
        spec,
        bound["violations"],
        f"{bound['violations']} violations in {bound['checked']} (x, t, K) cases",
    )


KINDS = {
    "quadrature_convergence": lambda cid, spec, inputs: _quadrature_convergence(
        cid, spec, inputs["quadrature"]
    ),
    "error_bound": lambda cid, spec, inputs: _error_bound(cid, spec, inputs["quadrature"]),
    "comparison": _comparison,
    "seed_sanity": _seed_sanity,
}


def check_claims(
    claim_specs: dict[str, Any],
    quadrature_path: str,
    metrics_paths: dict[str, str],
    output: str,
    check_specs: dict[str, Any] | None = None,
    *,
    sanity_thresholds: dict[str, Any],
) -> list[Claim]:
    """Every claim and check; ``sanity_thresholds`` is config ``papers.qsurv.sanity``."""
    quadrature = read_json(quadrature_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    inputs = {"quadrature": quadrature, "metrics": metrics, "sanity": sanity_thresholds}
    claims = run_claims(claim_specs, KINDS, inputs, check_specs)
    write_json(output, claims)
    return claims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "specs", help="JSON file: {claims: {...}, checks: {...}, sanity: {...}} as in the config"
    )
    parser.add_argument("quadrature", help="results/qsurv/metrics/quadrature.json")
    parser.add_argument("output", help="claims JSON to write")
    parser.add_argument("metrics", nargs="*", help="NAME=PATH of each data set's metrics JSON")
    args = parser.parse_args()
    with open(args.specs) as handle:
        specs = json.load(handle)
    metrics = dict(item.split("=", 1) for item in args.metrics)
    check_claims(
        specs.get("claims", {}),
        args.quadrature,
        metrics,
        args.output,
        specs.get("checks"),
        sanity_thresholds=specs["sanity"],
    )


if __name__ == "__main__":
    main()
