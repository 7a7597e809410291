"""QSurv's claims and checks, judged against criteria written in the config before the run.

Kinds (``KINDS``), each ``handler(id, spec, {"quadrature": ..., "metrics": ...})``:

* ``quadrature_convergence``: Gauss-Legendre's error falls faster in K than the
  trapezoid's. Per family, the least-squares slope of log10(median relative error) against
  K (:func:`repro.qsurv.quadrature.log_error_slope`, points at the rounding floor left out);
  measured: the least favourable family's slope ratio GL / trapezoid (> 1: GL steeper). The
  error ratio at ``nodes`` is in the details.
* ``error_bound``: the number of (x, t, K) cases where the observed GL error exceeds the
  classical bound (a check: the bound is a theorem).
* ``comparison``: a method against every one of some baselines on one metric of one data
  set, paired over the seeds (:func:`repro.common.claims.comparison_claim`).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from repro.common.claims import Claim, check_spec, comparison_claim, run_claims
from repro.common.io import read_json, write_json

# The smallest difference on each metric that counts as one method beating another (a
# "beats" claim's margin unless the paper's sentence gives one): a hundredth of concordance
# and half a hundredth of Brier score / hazard L1 are within seed noise on these data sets.
MIN_EFFECTS = {"cindex_ipcw": 0.01, "ibs_ipcw": 0.005, "hazard_l1": 0.005}

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
    parts, ratios = [], {}
    for family, rules in quadrature["families"].items():
        gl, trapezoid = _slope(rules["gauss_legendre"]), _slope(rules["trapezoid"])
        ratios[family] = gl / trapezoid if trapezoid < 0 else math.nan
        at_k = rules["trapezoid"][nodes]["median"] / rules["gauss_legendre"][nodes]["median"]
        parts.append(
            f"{family}: slope of log10 error per node GL {gl:.3g}, trapezoid {trapezoid:.3g}"
            f" (ratio {ratios[family]:.3g}); error ratio trapezoid / GL at K = {nodes} {at_k:.3g}"
        )
    worst = math.nan if any(map(math.isnan, ratios.values())) else min(ratios.values())
    return check_spec(cid, spec, worst, "; ".join(parts))


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
    "comparison": lambda cid, spec, inputs: comparison_claim(
        cid, spec, inputs["metrics"], MIN_EFFECTS
    ),
}


def check_claims(
    claim_specs: dict[str, Any],
    quadrature_path: str,
    metrics_paths: dict[str, str],
    output: str,
    check_specs: dict[str, Any] | None = None,
) -> list[Claim]:
    quadrature = read_json(quadrature_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    inputs = {"quadrature": quadrature, "metrics": metrics}
    claims = run_claims(claim_specs, KINDS, inputs, check_specs)
    write_json(output, claims)
    return claims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("specs", help="JSON file: {claims: {...}, checks: {...}} as in the config")
    parser.add_argument("quadrature", help="results/qsurv/metrics/quadrature.json")
    parser.add_argument("output", help="claims JSON to write")
    parser.add_argument("metrics", nargs="*", help="NAME=PATH of each data set's metrics JSON")
    args = parser.parse_args()
    with open(args.specs) as handle:
        specs = json.load(handle)
    metrics = dict(item.split("=", 1) for item in args.metrics)
    check_claims(
        specs.get("claims", {}), args.quadrature, metrics, args.output, specs.get("checks")
    )


if __name__ == "__main__":
    main()
