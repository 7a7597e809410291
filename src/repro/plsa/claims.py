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

from repro.common.claims import Claim, check_worst, comparison_claim, not_tested, run_claims
from repro.common.io import read_json, write_json


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


def check_claims(specs: dict, rate_path: str, metrics_paths: dict[str, str], output: str):
    rate = read_json(rate_path)
    metrics = {name: read_json(path) for name, path in metrics_paths.items()}
    claims = run_claims(specs, KINDS, {"rate": rate, "metrics": metrics})
    write_json(output, claims)
    return claims


# The claim kinds of papers.plsa.claims, each handler(id, spec, {rate, metrics}).
KINDS = {
    "small_edges_win": lambda cid, spec, inputs: _small_edges_win(cid, spec, inputs["rate"]),
    "rate_slope": lambda cid, spec, inputs: _rate_slope(cid, spec, inputs["rate"]),
    "hard_label_floor": lambda cid, spec, inputs: _hard_label_floor(cid, spec, inputs["rate"]),
    "comparison": lambda cid, spec, inputs: comparison_claim(cid, spec, inputs["metrics"]),
}
