"""PLSA's claim and check kinds on hand-made study and metrics documents.

* Each kind gives the number computed by hand (shares, slopes, ratios, paired t intervals).
* Every claim and check of config/config.yaml comes out "contradicted" / "failed" on
  documents built to contradict it, and "reproduced" / "passed" on documents built to
  support it: no verdict is fixed in advance.
* A NaN in the metrics is "not reproduced" with the reason, never a crash.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from scipy import stats

from repro.common.claims import (
    CONTRADICTED,
    FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PASSED,
    REPRODUCED,
)
from repro.plsa.claims import check_claims
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["plsa"]
SEEDS = [0, 1, 2]


def _row(n, seed, mm, plsa, hard, *, sigma=0.8, monotone=True, kkt=1e-14, status="optimal"):
    solver = {"status": status, "kkt_residual": kkt}
    return {
        "shift": "gss",
        "sigma": sigma,
        "n": n,
        "seed": seed,
        "edges": 10 * n,
        "error": {
            "hard_label": hard,
            "moment_matching": mm,
            "moment_matching_ridge": 0.6,
            "plsa": plsa,
        },
        "solver": {
            "hard_label": {},
            "moment_matching": solver,
            "moment_matching_ridge": solver,
            "plsa": {"converged": True, "iterations": 40, "monotone": monotone},
        },
    }


def _metrics(accuracy: dict[str, list[float]], oracle_error: float = 0.0) -> dict:
    methods = {
        m: {"per_seed": [{"target_accuracy": a, "pi_l1_error": 0.1} for a in values]}
        for m, values in accuracy.items()
    }
    methods["oracle"] = {
        "per_seed": [{"target_accuracy": 0.7, "pi_l1_error": oracle_error} for _ in SEEDS]
    }
    return {"seeds": SEEDS, "methods": methods}


def _write(tmp_path, rate, shift, metrics) -> tuple[dict, dict]:
    studies = {"rate": tmp_path / "rate.json", "shift": tmp_path / "shift.json"}
    studies["rate"].write_text(json.dumps(rate))
    studies["shift"].write_text(json.dumps(shift))
    paths = {}
    for name, document in metrics.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(document))
    return {k: str(v) for k, v in studies.items()}, {k: str(v) for k, v in paths.items()}


def _run(tmp_path, rate, metrics, shift=None, specs=None, checks=None):
    studies, paths = _write(tmp_path, rate, shift or {"rows": [], "slopes": {}}, metrics)
    specs = CONFIG["claims"] if specs is None else specs
    checks = CONFIG["checks"] if checks is None else checks
    results = check_claims(specs, studies, paths, str(tmp_path / "claims.json"), checks)
    return {r.id: r for r in results}


def _methods_on(dataset: str) -> set[str]:
    names = set()
    for spec in CONFIG["claims"].values():
        if spec.get("dataset") == dataset:
            names |= {spec["method"], *spec["baselines"]}
    return names


def _documents(plsa_margin: float) -> tuple[dict, dict]:
    """Studies and metrics in which every PLSA variant is ``plsa_margin`` better (or worse)
    than every other method on every seed, with seed-to-seed noise."""
    if plsa_margin > 0:  # PLSA better at small |E| in every repetition, hard labels biased
        rows = [_row(100, s, 0.2, 0.1, 0.3) for s in range(5)]
        rows += [_row(400, s, 0.1, 0.05, 0.3) for s in range(5)]
        slopes = {"gss/0.8": {"moment_matching": -0.5, "plsa": -0.5}}
    else:  # MM better, slopes off -1/2, hard labels as good as PLSA
        rows = [_row(100, s, 0.1, 0.2, 0.2) for s in range(5)]
        rows += [_row(400, s, 0.09, 0.19, 0.19) for s in range(5)]
        slopes = {"gss/0.8": {"moment_matching": -0.1, "plsa": -0.05}}
    noise = np.array([0.0, 0.004, -0.003])
    metrics = {}
    for dataset in CONFIG["end_to_end"]["datasets"]:
        accuracy = {}
        for method in _methods_on(dataset) | {"erm"}:
            plsa = method.startswith("plsa")
            base = 0.65 + (plsa_margin if plsa else 0.0)
            accuracy[method] = list(base + (noise if plsa else -noise / 2))
        metrics[dataset] = _metrics(accuracy)
    return {"rows": rows, "slopes": slopes}, metrics


@pytest.mark.parametrize("margin", [0.05, -0.05])
def test_every_configured_claim_can_hold_and_can_fail(tmp_path, margin):
    rate, metrics = _documents(margin)
    results = _run(tmp_path, rate, metrics, shift=rate)
    want = REPRODUCED if margin > 0 else CONTRADICTED
    for cid, spec in CONFIG["claims"].items():
        expected = NOT_TESTED if spec["kind"] == "not_tested" else want
        assert results[cid].verdict == expected, (cid, results[cid].details)
        assert results[cid].type == "claim"
    for cid in CONFIG["checks"]:
        assert results[cid].type == "check" and results[cid].verdict == PASSED, cid


def test_every_configured_check_can_fail(tmp_path):
    rate, metrics = _documents(0.05)
    rate["rows"][3] = _row(100, 3, 0.2, 0.1, 0.3, monotone=False, status="max_iter", kkt=1e-3)
    for document in metrics.values():
        document["methods"]["oracle"]["per_seed"][1]["pi_l1_error"] = 1e-6
    results = _run(tmp_path, rate, metrics, shift=rate)
    for cid in CONFIG["checks"]:
        assert results[cid].verdict == FAILED, (cid, results[cid].details)
    assert results["em_monotone"].measured == 2  # the same row in both studies
    assert math.isinf(results["qp_optimal"].measured)
    assert results["oracle_exact"].measured == pytest.approx(1e-6)


def test_claim_kinds_give_the_hand_computed_numbers(tmp_path):
    rows = [
        _row(100, 0, 0.20, 0.10, 0.30),
        _row(100, 1, 0.20, 0.25, 0.30),
        _row(400, 0, 0.10, 0.05, 0.28),
        _row(400, 1, 0.10, 0.05, 0.28),
    ]
    rate = {"rows": rows, "slopes": {"gss/0.8": {"moment_matching": -0.5, "plsa": -0.9}}}
    plsa, pa, erm = [0.70, 0.72, 0.69], [0.69, 0.70, 0.70], [0.60, 0.64, 0.61]
    metrics = {"csbm": _metrics({"plsa": plsa, "pa": pa, "erm": erm})}
    paired = {"test": "at_least", "delta": 0.01, "higher_is_better": True}

    def comparison(baselines, criterion):
        return {
            "kind": "comparison",
            "claim": "c",
            "dataset": "csbm",
            "metric": "target_accuracy",
            "method": "plsa",
            "baselines": baselines,
            "criterion": criterion,
        }

    specs = {
        "small": {
            "kind": "small_edges_win",
            "claim": "s",
            "criterion": {"op": ">=", "threshold": 0.8},
        },
        "slope": {"kind": "rate_slope", "claim": "r", "criterion": {"op": "<=", "threshold": 0.2}},
        "floor": {
            "kind": "hard_label_floor",
            "claim": "h",
            "criterion": {"op": ">=", "threshold": 2.0},
        },
        "vs_erm": comparison(["erm"], {"test": "beats", "higher_is_better": True}),
        "at_least": comparison(["pa", "erm"], paired),
        "absent": {**comparison(["erm"], paired), "dataset": "mag"},
        "later": {"kind": "not_tested", "claim": "l", "reason": "needs a GPU"},
    }
    results = _run(tmp_path, rate, metrics, specs=specs, checks={})
    assert results["small"].measured == 0.5 and results["small"].verdict == CONTRADICTED
    assert results["slope"].measured == pytest.approx(0.4)  # |-0.9 + 0.5|
    assert results["floor"].measured == pytest.approx(0.28 / 0.05)
    assert results["floor"].verdict == REPRODUCED

    def t_interval(a, b):
        d = np.subtract(a, b)
        half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        return d.mean(), d.mean() - half, d.mean() + half

    mean, low, high = t_interval(plsa, erm)  # +0.0867, interval above the minimum effect 0.01
    assert results["vs_erm"].measured == pytest.approx(mean)
    assert results["vs_erm"].interval == pytest.approx((low, high))
    assert results["vs_erm"].verdict == REPRODUCED and low > 0.01
    mean, low, high = t_interval(plsa, pa)  # +0.0067 but [-0.022, +0.035]: low < -0.01
    assert results["at_least"].measured == pytest.approx(mean)  # pa is the least favourable
    assert results["at_least"].interval[0] == pytest.approx(low)
    assert results["at_least"].verdict == INCONCLUSIVE and low < -0.01 < high
    assert results["absent"].verdict == NOT_TESTED and results["later"].verdict == NOT_TESTED
    assert len(json.loads((tmp_path / "claims.json").read_text())) == len(specs)


def test_a_nan_is_not_reproduced_with_the_reason(tmp_path):
    rate, metrics = _documents(0.05)
    metrics["csbm_gss"]["methods"]["plsa"]["per_seed"][0]["target_accuracy"] = float("nan")
    results = _run(tmp_path, rate, metrics, shift=rate)
    claim = results["plsa_vs_pair_align_gss"]
    assert claim.verdict == NOT_REPRODUCED and "missing" in claim.details
