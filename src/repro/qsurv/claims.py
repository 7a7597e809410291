"""QSurv's claims, checked against criteria written in the config before the run.

Each config entry under ``papers.qsurv.claims`` names its kind:
``quadrature_convergence`` (trapezoid/GL error ratio at a fixed K), ``error_bound`` (count of
bound violations), ``comparison`` (a method against the best of some baselines on one
metric of one data set) or ``not_tested`` (with the reason).
"""

from __future__ import annotations

import logging
from typing import Any

from repro.common.claims import Claim, check, compare_methods, not_tested
from repro.common.io import read_json, write_json

log = logging.getLogger(__name__)


def _quadrature_convergence(cid: str, spec: dict, quadrature: dict) -> Claim:
    nodes = str(spec["nodes"])
    ratios = {
        family: rules["trapezoid"][nodes]["median"] / rules["gauss_legendre"][nodes]["median"]
        for family, rules in quadrature["families"].items()
    }
    worst = min(ratios, key=ratios.get)
    details = ", ".join(f"{f}: {r:.3g}" for f, r in ratios.items())
    return check(
        cid,
        spec["claim"],
        ratios[worst],
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=f"median relative error ratio trapezoid / GL at K = {nodes} ({details})",
    )


def _error_bound(cid: str, spec: dict, quadrature: dict) -> Claim:
    bound = quadrature["gompertz_bound"]
    return check(
        cid,
        spec["claim"],
        bound["violations"],
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=f"{bound['violations']} violations in {bound['checked']} (x, t, K) cases",
    )


def _comparison(cid: str, spec: dict, metrics: dict[str, dict]) -> Claim:
    if spec["dataset"] not in metrics:
        return not_tested(
            cid,
            spec["claim"],
            f"data set {spec['dataset']} is not in this run",
            paper_value=spec.get("paper_value"),
        )
    methods = metrics[spec["dataset"]]["methods"]
    missing = [m for m in [spec["method"], *spec["baselines"]] if m not in methods]
    if missing:
        return not_tested(
            cid,
            spec["claim"],
            f"methods {missing} are not in this run",
            paper_value=spec.get("paper_value"),
        )
    metric = spec["metric"]
    claim = compare_methods(
        cid,
        spec["claim"],
        {m: v["mean"][metric] for m, v in methods.items()},
        {m: v["std"][metric] for m, v in methods.items()},
        method=spec["method"],
        baselines=spec["baselines"],
        lower_is_better=spec["lower_is_better"],
        criterion=spec["criterion"],
        statistic=spec.get("statistic", "difference"),
        paper_value=spec.get("paper_value"),
    )
    return Claim(**{**claim.__dict__, "details": f"{spec['dataset']}, {metric}: {claim.details}"})


def check_claims(
    claim_specs: dict[str, Any], quadrature_path: str, metrics_paths: dict[str, str], output: str
) -> list[Claim]:
    quadrature = read_json(quadrature_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    claims = []
    for cid, spec in claim_specs.items():
        kind = spec["kind"]
        if kind == "quadrature_convergence":
            claims.append(_quadrature_convergence(cid, spec, quadrature))
        elif kind == "error_bound":
            claims.append(_error_bound(cid, spec, quadrature))
        elif kind == "comparison":
            claims.append(_comparison(cid, spec, metrics))
        elif kind == "not_tested":
            claims.append(
                not_tested(cid, spec["claim"], spec["reason"], paper_value=spec.get("paper_value"))
            )
        else:
            raise ValueError(f"claim {cid}: unknown kind {kind!r}")
        log.info("%s: %s (%s)", cid, claims[-1].verdict, claims[-1].details)
    write_json(output, claims)
    return claims
