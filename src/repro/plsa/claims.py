"""PLSA's claims, checked against criteria written in the config before the run.

Kinds (``papers.plsa.claims.<id>.kind``): ``small_edges_win`` (share of repetitions at the
smallest |E| where PLSA's error is below moment matching's, worst over settings),
``rate_slope`` (largest distance of the MM and PLSA log-log slopes from -1/2),
``hard_label_floor`` (hard-label error over PLSA's at the largest |E|, smallest over
settings), ``comparison`` (end-to-end metric against the best of some baselines) and
``not_tested``.
"""

from __future__ import annotations

import numpy as np

from repro.common.claims import Claim, check, comparison_claim, not_tested, run_claims
from repro.common.io import read_json, write_json


def _settings(rows):
    return sorted({(r["shift"], r["sigma"]) for r in rows})


def _small_edges_win(cid, spec, rate) -> Claim:
    shares = {}
    for shift, sigma in _settings(rate["rows"]):
        rows = [r for r in rate["rows"] if (r["shift"], r["sigma"]) == (shift, sigma)]
        smallest = min(r["n"] for r in rows)
        wins = [
            r["error"]["plsa"] < r["error"]["moment_matching"] for r in rows if r["n"] == smallest
        ]
        shares[f"{shift}, σ={sigma:g}, n={smallest}"] = float(np.mean(wins))
    worst = min(shares, key=shares.get)
    details = "; ".join(f"{k}: {v:.0%}" for k, v in shares.items())
    return check(
        cid,
        spec["claim"],
        shares[worst],
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=f"PLSA < MM in {details}",
    )


def _rate_slope(cid, spec, rate) -> Claim:
    if not rate["slopes"]:
        return not_tested(cid, spec["claim"], "the estimator study has a single graph size")
    distances = {
        f"{setting} {e}": abs(slopes[e] + 0.5)
        for setting, slopes in rate["slopes"].items()
        for e in ("moment_matching", "plsa")
    }
    worst = max(distances, key=distances.get)
    details = "; ".join(
        f"{setting}: MM {s['moment_matching']:.2f}, PLSA {s['plsa']:.2f}"
        for setting, s in rate["slopes"].items()
    )
    return check(
        cid,
        spec["claim"],
        distances[worst],
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=f"log-log slopes {details}",
    )


def _hard_label_floor(cid, spec, rate) -> Claim:
    ratios = {}
    for shift, sigma in _settings(rate["rows"]):
        rows = [r for r in rate["rows"] if (r["shift"], r["sigma"]) == (shift, sigma)]
        largest = max(r["n"] for r in rows)
        top = [r for r in rows if r["n"] == largest]
        ratios[f"{shift}, σ={sigma:g}, n={largest}"] = np.mean(
            [r["error"]["hard_label"] for r in top]
        ) / np.mean([r["error"]["plsa"] for r in top])
    worst = min(ratios, key=ratios.get)
    details = "; ".join(f"{k}: {v:.2f}" for k, v in ratios.items())
    return check(
        cid,
        spec["claim"],
        ratios[worst],
        spec["criterion"],
        paper_value=spec.get("paper_value"),
        details=f"hard / PLSA error: {details}",
    )


def check_claims(specs: dict, rate_path: str, metrics_paths: dict[str, str], output: str):
    rate = read_json(rate_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    handlers = {kind: (lambda cid, spec, f=f: f(cid, spec, rate)) for kind, f in KINDS.items()}
    handlers["comparison"] = lambda cid, spec: comparison_claim(cid, spec, metrics)
    claims = run_claims(specs, handlers)
    write_json(output, claims)
    return claims


KINDS = {
    "small_edges_win": _small_edges_win,
    "rate_slope": _rate_slope,
    "hard_label_floor": _hard_label_floor,
}
