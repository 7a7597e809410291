"""PLSA's claim and check kinds on hand-made study and metrics documents.

* Each kind gives the number computed by hand (shares, slopes, ratios, paired t intervals).
* Every claim and check of config/config.yaml comes out "contradicted" / "failed" on
  documents built to contradict it, and "reproduced" / "passed" on documents built to
  support it, with both of its controls passing: no verdict is fixed in advance.
* A NaN in the metrics or the studies is "not reproduced" with the reason, never a crash.

The controls themselves (a failing one makes a claim uninformative) are in test_controls.py.
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
    UNINFORMATIVE,
)
from repro.plsa.claims import check_claims
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["plsa"]
SANITY = CONFIG["end_to_end"]["sanity"]
SEEDS = [0, 1, 2]
REPETITIONS = 25  # 25 of 25: Wilson's lower end 0.87, above the claim's 0.8


def _row(n, seed, mm, plsa, hard, *, sigma=0.8, monotone=True, kkt=1e-14, status="optimal"):
    """One repetition: the planted estimators as the study plants them (population: sampling
    noise ∝ |E|^(-1/2); source: a floor)."""
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
            "population": 0.5 / math.sqrt(10 * n) * (1 + 0.01 * (seed % 3)),
            "source": 0.63,
        },
        "solver": {
            "hard_label": {},
            "moment_matching": solver,
            "moment_matching_ridge": solver,
            "plsa": {"converged": True, "iterations": 40, "monotone": monotone},
        },
    }


def _run_row(accuracy: float, constant: float = 0.4, pi_error: float = 0.1) -> dict:
    return {"target_accuracy": accuracy, "constant_accuracy": constant, "pi_l1_error": pi_error}


def _metrics(accuracy: dict[str, list[float]], oracle_error: float = 0.0) -> dict:
    methods = {m: {"per_seed": [_run_row(a) for a in values]} for m, values in accuracy.items()}
    if "oracle" not in methods:
        methods["oracle"] = {"per_seed": [_run_row(0.8) for _ in SEEDS]}
    for row in methods["oracle"]["per_seed"]:
        row["pi_l1_error"] = oracle_error
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


def run(tmp_path, rate, metrics, shift=None, specs=None, checks=None):
    studies, paths = _write(tmp_path, rate, shift or {"rows": [], "slopes": {}}, metrics)
    specs = CONFIG["claims"] if specs is None else specs
    checks = CONFIG["checks"] if checks is None else checks
    out = str(tmp_path / "claims.json")
    results = check_claims(specs, studies, paths, out, checks, sanity=SANITY)
    return {r.id: r for r in results}


def _methods_on(dataset: str) -> set[str]:
    names = set()
    for spec in CONFIG["claims"].values():
        if spec.get("dataset") == dataset:
            names |= {spec["method"], *spec["baselines"]}
    return names


def documents(plsa_margin: float) -> tuple[dict, dict]:
    """Studies and metrics in which PLSA holds (``plsa_margin`` > 0) or fails every claim.

    Studies: PLSA's error below MM's in every repetition, both ∝ |E|^(-1/2), hard labels
    biased; or MM better, PLSA flat (slope 0), hard labels as good as PLSA. End to end (per
    seed, with noise): ERM 0.60, the adapted baselines 0.65, the oracle 0.75, every PLSA
    variant 0.70 or 0.55."""
    noise = np.array([0.0, 0.004, -0.003])
    sizes = (100, 400, 1600)
    rows = []
    for s in range(REPETITIONS):
        wobble = 1 + 0.02 * ((s % 5) - 2)  # repetitions differ a little
        for n in sizes:
            scale = wobble * math.sqrt(100 / n)
            if plsa_margin > 0:
                rows.append(_row(n, s, 0.13 * scale, 0.1 * scale, 0.3))
            else:
                rows.append(_row(n, s, 0.1 * scale, 0.2 * wobble, 0.2 * wobble))
    metrics = {}
    for dataset in CONFIG["end_to_end"]["datasets"]:
        accuracy = {}
        for method in _methods_on(dataset) | {"erm", "oracle"}:
            if method.startswith("plsa"):
                accuracy[method] = list((0.70 if plsa_margin > 0 else 0.55) + noise)
            else:
                base = {"erm": 0.60, "oracle": 0.75}.get(method, 0.65)
                accuracy[method] = list(base - noise / 2)
        metrics[dataset] = _metrics(accuracy)
    return {"rows": rows, "slopes": {}}, metrics


@pytest.mark.parametrize("margin", [0.05, -0.05])
def test_every_configured_claim_can_hold_and_can_fail(tmp_path, margin):
    rate, metrics = documents(margin)
    results = run(tmp_path, rate, metrics, shift=rate)
    want = REPRODUCED if margin > 0 else CONTRADICTED
    for cid, spec in CONFIG["claims"].items():
        expected = NOT_TESTED if spec["kind"] == "not_tested" else want
        assert results[cid].verdict == expected, (cid, results[cid].details)
        assert results[cid].type == "claim"
        for control in results[cid].controls:  # both controls passed: the verdict stands
            assert control["passed"], (cid, control)
    for cid in CONFIG["checks"]:
        assert results[cid].type == "check" and results[cid].verdict == PASSED, cid


def test_every_configured_check_can_fail(tmp_path):
    rate, metrics = documents(0.05)
    rate["rows"][3] = _row(100, 1, 0.2, 0.1, 0.3, monotone=False, status="max_iter", kkt=1e-3)
    for document in metrics.values():
        document["methods"]["oracle"]["per_seed"][1]["pi_l1_error"] = 1e-6
        document["methods"]["erm"]["per_seed"][2]["constant_accuracy"] = 0.59
    results = run(tmp_path, rate, metrics, shift=rate)
    for cid in CONFIG["checks"]:
        assert results[cid].verdict == FAILED, (cid, results[cid].details)
    assert results["em_monotone"].measured == 2  # the same row in both studies
    assert math.isinf(results["qp_optimal"].measured)
    assert results["oracle_exact"].measured == pytest.approx(1e-6)
    assert results["runs_sane"].measured == len(metrics)  # ERM's seed 2 on every data set


def test_a_broken_run_makes_its_claims_not_reproduced(tmp_path):
    """ERM's seed 2 on csbm_gss at the constant predictor's accuracy: every claim reading
    ERM there is "not reproduced", naming the run and the reason; one whose negative control
    reads it is uninformative (a control that cannot be computed shows nothing); the others
    are judged as before."""
    rate, metrics = documents(0.05)
    metrics["csbm_gss"]["methods"]["erm"]["per_seed"][2] = _run_row(0.51, constant=0.5)
    results = run(tmp_path, rate, metrics, shift=rate)
    reason = "csbm_gss erm seed 2: target accuracy 0.5100 is not above the constant"
    for cid, spec in CONFIG["claims"].items():
        claim, on_gss = results[cid], spec.get("dataset") == "csbm_gss"
        if on_gss and "erm" in spec["baselines"]:
            assert claim.verdict == NOT_REPRODUCED and reason in claim.details, cid
        elif on_gss:  # the negative control puts ERM in the method's place
            assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED, cid
            negative = claim.controls[1]
            assert negative["verdict"] == NOT_REPRODUCED and reason in negative["details"]
            assert "negative control (ERM" in claim.details
        elif spec["kind"] != "not_tested":
            assert claim.verdict == REPRODUCED, (cid, claim.details)
    assert results["runs_sane"].verdict == FAILED and results["runs_sane"].measured == 1


def test_sanity_margin_is_the_configs(tmp_path):
    """A run exactly at the margin fails, just above it passes (the threshold is the
    config's above_constant, not a number in the code)."""
    rate, metrics = documents(0.05)
    margin = SANITY["above_constant"]
    erm = metrics["csbm_gss"]["methods"]["erm"]["per_seed"]
    erm[0] = _run_row(0.5 + margin - 1e-9, constant=0.5)
    assert run(tmp_path, rate, metrics)["runs_sane"].measured == 1
    erm[0] = _run_row(0.5 + margin + 1e-9, constant=0.5)
    assert run(tmp_path, rate, metrics)["runs_sane"].measured == 0


def _spec(kind, **keys):
    return {"kind": kind, "claim": kind, "confidence": 0.95, **keys}


def test_study_kinds_give_the_hand_computed_numbers(tmp_path):
    rows = [
        _row(100, 0, 0.20, 0.10, 0.30),
        _row(100, 1, 0.20, 0.25, 0.30),
        _row(100, 2, 0.20, 0.15, 0.30),
        _row(400, 0, 0.10, 0.05, 0.28),
        _row(400, 1, 0.10, 0.06, 0.28),
        _row(400, 2, 0.09, 0.05, 0.28),
    ]
    boot = {"resamples": 4000, "seed": 3}
    specs = {
        "small": _spec(
            "small_edges_win",
            estimator="plsa",
            against="moment_matching",
            criterion={"op": ">=", "threshold": 0.8},
        ),
        "slope": _spec(
            "rate_slope",
            estimators=["plsa"],
            rate=-0.5,
            bootstrap=boot,
            criterion={"op": "<=", "threshold": 0.2},
        ),
        "floor": _spec(
            "hard_label_floor",
            estimator="hard_label",
            against="plsa",
            bootstrap=boot,
            criterion={"op": ">=", "threshold": 2.0},
        ),
    }
    results = run(tmp_path, {"rows": rows}, {}, specs=specs, checks={})
    # share 2 of 3, Wilson interval by its closed form
    small = results["small"]
    z, p, n = stats.norm.ppf(0.975), 2 / 3, 3
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert small.measured == pytest.approx(2 / 3)
    assert small.interval == pytest.approx((centre - half, centre + half))
    assert small.verdict == INCONCLUSIVE  # [0.21, 0.94] straddles 0.8
    # the slope of every (log |E|, log error) point, as numpy's least squares gives it
    x = np.log([r["edges"] for r in rows])
    y = np.log([r["error"]["plsa"] for r in rows])
    slope = np.polyfit(x, y, 1)[0]
    assert results["slope"].measured == pytest.approx(abs(slope + 0.5))
    # the ratio of mean errors at the largest size
    assert results["floor"].measured == pytest.approx(0.28 / np.mean([0.05, 0.06, 0.05]))
    assert results["floor"].verdict == REPRODUCED  # every resample is above 2


def test_bootstrap_matches_a_naive_loop():
    """The vectorised slope bootstrap equals np.polyfit on each resample drawn the same way."""
    from repro.plsa import repetitions as reps

    rng = np.random.default_rng(5)
    log_edges = np.log([[1e3] * 8, [1e4] * 8]) + rng.normal(0, 0.01, (2, 8))
    log_errors = -0.5 * log_edges + rng.normal(0, 0.2, (2, 8))
    estimate, low, high = reps.bootstrap(
        lambda d: reps.slopes(log_edges, log_errors, d),
        8,
        resamples=500,
        seed=11,
        confidence=0.9,
    )
    draws = np.random.default_rng(11).integers(0, 8, size=(500, 8))
    naive = [np.polyfit(log_edges[:, d].ravel(), log_errors[:, d].ravel(), 1)[0] for d in draws]
    assert estimate == pytest.approx(np.polyfit(log_edges.ravel(), log_errors.ravel(), 1)[0])
    assert (low, high) == pytest.approx(tuple(np.percentile(naive, [5, 95])))


@pytest.mark.parametrize(
    "op,low,high,verdict",
    [
        (">=", 0.81, 0.9, REPRODUCED),
        (">=", 0.8, 0.9, REPRODUCED),  # the boundary itself satisfies >=
        (">=", 0.7, 0.9, INCONCLUSIVE),
        (">=", 0.5, 0.79, CONTRADICTED),
        (">", 0.8, 0.9, INCONCLUSIVE),
        ("<=", 0.1, 0.8, REPRODUCED),
        ("<=", 0.1, 0.9, INCONCLUSIVE),
        ("<=", 0.81, 0.9, CONTRADICTED),
        ("<", 0.8, 0.9, CONTRADICTED),
    ],
)
def test_threshold_verdict_on_an_interval(op, low, high, verdict):
    from repro.plsa.repetitions import verdict as judge

    assert judge(op, 0.8, low, high) == verdict


def test_registered_repetitions_are_judged_beside(tmp_path):
    """plsa_beats_mm_small_edges as configured, on 25 repetitions where PLSA always wins: 25
    of 25 is reproduced, the 5 registered first (5 of 5) only inconclusive: Wilson's lower
    end 5 / (5 + z²) = 0.566 < 0.8."""
    rate, metrics = documents(0.05)
    spec = CONFIG["claims"]["plsa_beats_mm_small_edges"]
    claim = run(tmp_path, rate, metrics, specs={"c": spec}, checks={})["c"]
    assert claim.verdict == REPRODUCED
    first = claim.at_registered_seeds
    z2 = stats.norm.ppf(0.975) ** 2
    assert first["seeds"] == spec["registered_seeds"] and first["verdict"] == INCONCLUSIVE
    assert first["interval"][0] == pytest.approx(5 / (5 + z2))
    assert "at the 5 repetitions registered first: inconclusive" in claim.details


def test_a_nan_is_not_reproduced_with_the_reason(tmp_path):
    rate, metrics = documents(0.05)
    metrics["csbm_gss"]["methods"]["plsa"]["per_seed"][0]["target_accuracy"] = float("nan")
    rate["rows"][0]["error"]["plsa"] = float("nan")  # n = 100, seed 0
    results = run(tmp_path, rate, metrics, shift=rate)
    claim = results["plsa_vs_pair_align_gss"]
    assert claim.verdict == NOT_REPRODUCED and "no value of ['target_accuracy']" in claim.details
    for cid in ("plsa_beats_mm_small_edges", "consistent_rate"):
        claim = results[cid]
        assert claim.verdict == NOT_REPRODUCED, cid
        assert "plsa error: no value at (n, seed) [(100, 0)]" in claim.details, claim.details


def test_the_least_favourable_setting_is_the_claims_number(tmp_path):
    """Two settings, both inconclusive: the claim's number is the larger distance (the
    criterion reads "largest |slope + 1/2|"), not the one with the wider interval."""
    rows = []
    rng = np.random.default_rng(1)
    for sigma, slope, spread in ((0.55, -0.32, 0.15), (0.8, -0.5, 0.8)):
        for s in range(6):
            for n in (100, 400, 1600):
                error = 0.1 * (n / 100) ** slope * rng.lognormal(0, spread)
                rows.append(_row(n, s, error, error, 0.3, sigma=sigma))
    spec = CONFIG["claims"]["consistent_rate"]
    claim = run(tmp_path, {"rows": rows}, {}, specs={"c": spec}, checks={})["c"]
    assert "reproduced" not in claim.details and claim.verdict == INCONCLUSIVE  # every part
    slopes = {}
    for sigma in (0.55, 0.8):
        sub = [r for r in rows if r["sigma"] == sigma]
        x, y = np.log([r["edges"] for r in sub]), np.log([r["error"]["plsa"] for r in sub])
        slopes[sigma] = np.polyfit(x, y, 1)[0]
    assert claim.measured == pytest.approx(max(abs(v + 0.5) for v in slopes.values()))
