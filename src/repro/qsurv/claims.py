"""QSurv's claims, checked against criteria written in the config before the run.

Each config entry under ``papers.qsurv.claims`` names its kind:
``quadrature_convergence`` (trapezoid/GL error ratio at a fixed K), ``error_bound`` (count of
bound violations), ``comparison`` (a method against the best of some baselines on one
metric of one data set) or ``not_tested`` (with the reason).
"""

from __future__ import annotations

from typing import Any

from repro.common.claims import Claim, check_spec, comparison_claim, run_claims
from repro.common.io import read_json, write_json


def _quadrature_convergence(cid: str, spec: dict, quadrature: dict) -> Claim:
    nodes = str(spec["nodes"])
    ratios = {
        family: rules["trapezoid"][nodes]["median"] / rules["gauss_legendre"][nodes]["median"]
        for family, rules in quadrature["families"].items()
    }
    worst = min(ratios, key=ratios.get)
    details = ", ".join(f"{f}: {r:.3g}" for f, r in ratios.items())
    return check_spec(
        cid,
        spec,
        ratios[worst],
        f"median relative error ratio trapezoid / GL at K = {nodes} ({details})",
    )


def _error_bound(cid: str, spec: dict, quadrature: dict) -> Claim:
    bound = quadrature["gompertz_bound"]
    return check_spec(
        cid,
        spec,
        bound["violations"],
        f"{bound['violations']} violations in {bound['checked']} (x, t, K) cases",
    )


# The claim kinds of papers.qsurv.claims, each handler(id, spec, {quadrature, metrics}).
KINDS = {
    "quadrature_convergence": lambda cid, spec, inputs: _quadrature_convergence(
        cid, spec, inputs["quadrature"]
    ),
    "error_bound": lambda cid, spec, inputs: _error_bound(cid, spec, inputs["quadrature"]),
    "comparison": lambda cid, spec, inputs: comparison_claim(cid, spec, inputs["metrics"]),
}


def check_claims(
    claim_specs: dict[str, Any], quadrature_path: str, metrics_paths: dict[str, str], output: str
) -> list[Claim]:
    quadrature = read_json(quadrature_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    claims = run_claims(claim_specs, KINDS, {"quadrature": quadrature, "metrics": metrics})
    write_json(output, claims)
    return claims
