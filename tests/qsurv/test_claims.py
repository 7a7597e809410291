"""repro.qsurv.claims: verdicts recomputed by hand, and every configured claim can fail.

* ``quadrature_convergence``: the slope of log10(median error) against K per rule, by hand;
  errors at the rounding floor are left out of the fit.
* ``error_bound`` runs as a check: passed / failed, apart from the claims.
* ``comparison`` with paired criteria: the per-seed differences and the t interval by
  hand; "matches" is two-sided.
* For every claim in each config (embedded, full scale, test), inputs under which it must
  come out "contradicted" do so, and inputs under which it should hold do (the claim can
  go either way); a missing method or a NaN gives "not reproduced" with the reason.
"""

import copy
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
from repro.common.io import read_json, write_json
from repro.qsurv.catalog import REFERENCE_ARMS
from repro.qsurv.claims import check_claims
from tests.conftest import ROOT

NODES = [2, 3, 4, 8]


def quadrature(gl_slope: float, trapezoid_slope: float, violations: int = 0) -> dict:
    """Median errors 10^(-1 + slope (K - 2)) per rule; GL bottoms out at 1e-16 (rounding)."""

    def rule(slope):
        return {str(k): {"median": max(10 ** (-1 + slope * (k - 2)), 1e-16)} for k in NODES}

    family = {"gauss_legendre": rule(gl_slope), "trapezoid": rule(trapezoid_slope)}
    return {
        "families": {"gompertz": copy.deepcopy(family), "loglogistic": family},
        "gompertz_bound": {"violations": violations, "checked": 100},
    }


# every run sane: C-index 0.7 (above 0.5 + margin), IBS 0.15 (below Kaplan-Meier's 0.2)
SANE = {"cindex_ipcw": 0.7, "ibs_ipcw": 0.15}
TRIVIAL = {"cindex_ipcw": 0.5, "ibs_ipcw": 0.2}


def metrics(dataset: str, values: dict[str, list[float]], metric: str) -> dict:
    """A metrics document: each method's ``metric`` per seed beside the other numbers of a
    sane run; the reference arms (Kaplan-Meier always: given in ``values`` or trivial)."""
    seeds = list(range(len(next(iter(values.values())))))
    values = {"kaplan_meier": [TRIVIAL.get(metric, 0.5)] * len(seeds), **values}
    references = [m for m in values if m in REFERENCE_ARMS]

    def rows(method, vs):
        base = SANE if method not in references else TRIVIAL
        return [{**base, metric: v} for v in vs]

    return {
        "dataset": dataset,
        "seeds": seeds,
        "methods": {
            m: {"per_seed": rows(m, vs), "mean": {}, "std": {}} for m, vs in values.items()
        },
        "reference_arms": references,
    }


def run(tmp_path, claims, quad, documents, checks=None):
    write_json(tmp_path / "quadrature.json", quad)
    paths = {}
    for name, document in documents.items():
        paths[name] = str(tmp_path / f"{name}.json")
        write_json(paths[name], document)
    out = tmp_path / "claims.json"
    results = check_claims(
        claims, str(tmp_path / "quadrature.json"), paths, str(out), checks, sanity_thresholds=SANITY
    )
    assert [c["id"] for c in read_json(out)] == [*claims, *(checks or {})]
    return {c.id: c for c in results}


CONVERGENCE = {
    "kind": "quadrature_convergence",
    "claim": "GL faster",
    "nodes": 8,
    "criterion": {"op": ">", "threshold": 1.0},
}
BOUND = {"kind": "error_bound", "claim": "bound", "criterion": {"op": "<=", "threshold": 0}}


def test_convergence_slopes_by_hand_and_the_bound_as_a_check(tmp_path):
    quad = quadrature(-3.0, -0.5)
    quad["families"]["loglogistic"]["gauss_legendre"]["3"]["median"] = 1e-3  # off the line
    results = run(tmp_path, {"c": CONVERGENCE}, quad, {}, checks={"bound": BOUND})
    # gompertz GL: K = 2, 3 above the floor (K = 4, 8 are rounding), slope -3; trapezoid -0.5
    # loglogistic GL: K = 2, 3, 4 at 1e-1, 1e-3, 1e-7: least-squares slope by hand
    k = np.array([2.0, 3.0, 4.0])
    ll_slope = np.polyfit(k, np.log10([1e-1, 1e-3, 1e-7]), 1)[0]
    assert ll_slope == pytest.approx(-3.0)
    trapezoid = -0.5
    assert results["c"].measured == pytest.approx(min(-3.0, ll_slope) / trapezoid)
    assert results["c"].verdict == REPRODUCED and results["c"].type == "claim"
    assert "error ratio trapezoid / GL at K = 8" in results["c"].details
    assert results["bound"].type == "check" and results["bound"].verdict == PASSED
    failed = run(tmp_path, {}, quadrature(-3.0, -0.5, violations=2), {}, {"bound": BOUND})
    assert failed["bound"].verdict == FAILED and failed["bound"].measured == 2


def test_convergence_fails_when_gl_is_no_steeper(tmp_path):
    results = run(tmp_path, {"c": CONVERGENCE}, quadrature(-0.5, -0.5), {})
    assert results["c"].measured == pytest.approx(1.0)
    assert results["c"].verdict == CONTRADICTED
    # a rule whose error never leaves the rounding floor has no slope: not reproduced
    results = run(tmp_path, {"c": CONVERGENCE}, quadrature(-20.0, -0.5), {})
    assert results["c"].measured is None and results["c"].verdict == NOT_REPRODUCED


def test_convergence_measures_the_least_favourable_of_three_unequal_families(tmp_path):
    """Three families, each with its own GL and trapezoid slopes: the measured ratio is the
    smallest family ratio (the least favourable), each slope a least-squares fit by hand."""
    slopes = {"gompertz": (-1.5, -0.5), "loglogistic": (-0.8, -0.4), "weibull": (-1.2, -0.25)}
    families = {
        family: {
            rule: {str(k): {"median": 10 ** (-1 + slope * (k - 2))} for k in NODES}
            for rule, slope in zip(("gauss_legendre", "trapezoid"), pair, strict=True)
        }
        for family, pair in slopes.items()
    }
    quad = {"families": families, "gompertz_bound": {"violations": 0, "checked": 1}}
    ratios = {}
    for family, rules in families.items():
        fitted = [
            np.polyfit(NODES, np.log10([rules[rule][str(k)]["median"] for k in NODES]), 1)[0]
            for rule in ("gauss_legendre", "trapezoid")
        ]
        ratios[family] = fitted[0] / fitted[1]
    assert ratios == pytest.approx({"gompertz": 3.0, "loglogistic": 2.0, "weibull": 4.8})
    criterion = {"op": ">", "threshold": 2.5}
    results = run(tmp_path, {"c": {**CONVERGENCE, "criterion": criterion}}, quad, {})
    assert results["c"].measured == pytest.approx(2.0)
    assert results["c"].verdict == CONTRADICTED  # loglogistic falls short of 2.5


def comparison(test, delta, higher_is_better, baselines=("b1", "b2"), metric="m"):
    return {
        "kind": "comparison",
        "claim": "A vs B",
        "dataset": "d",
        "metric": metric,
        "method": "a",
        "baselines": list(baselines),
        "criterion": {"test": test, "delta": delta, "higher_is_better": higher_is_better},
    }


def test_paired_comparison_by_hand(tmp_path):
    values = {"a": [0.70, 0.66, 0.69], "b1": [0.69, 0.64, 0.70], "b2": [0.60, 0.58, 0.61]}
    results = run(
        tmp_path,
        {"at_least": comparison("at_least", 0.02, True), "beats": comparison("beats", 0, True)},
        quadrature(-3, -0.5),
        {"d": metrics("d", values, "m")},
    )
    diff = np.array(values["a"]) - np.array(values["b1"])  # b1 is the least favourable
    half = stats.t.ppf(0.975, 2) * diff.std(ddof=1) / math.sqrt(3)
    claim = results["at_least"]
    assert claim.measured == pytest.approx(diff.mean())
    assert claim.interval == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert claim.verdict == (REPRODUCED if diff.mean() - half > -0.02 else INCONCLUSIVE)
    assert results["beats"].verdict == INCONCLUSIVE  # the interval vs b1 straddles 0
    assert claim.details.split("the worst of these")[-1].strip(": ").endswith("b1")


def test_matches_is_two_sided(tmp_path):
    """Lower is better; A is clearly *better* than B by more than delta: 'matches' fails."""
    values = {"a": [0.010, 0.011, 0.012], "b1": [0.030, 0.032, 0.031]}
    results = run(
        tmp_path,
        {
            "same": comparison("matches", 0.005, False, baselines=("b1",)),
            "no_worse": comparison("at_least", 0.005, False, baselines=("b1",)),
        },
        quadrature(-3, -0.5),
        {"d": metrics("d", values, "m")},
    )
    assert results["same"].verdict == CONTRADICTED
    assert results["no_worse"].verdict == REPRODUCED
    assert results["same"].measured == pytest.approx(0.02, abs=1e-12)  # positive: A better


CONFIGS = {
    name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())
    for name in ("config", "full", "test")
}
SANITY = CONFIGS["config"]["papers"]["qsurv"]["sanity"]  # the thresholds of the run
CLAIMS = [
    (name, cid, spec)
    for name, config in CONFIGS.items()
    for cid, spec in config["papers"]["qsurv"]["claims"].items()
    if spec["kind"] != "not_tested"
]


def comparison_inputs(spec, advantage: float, others: dict[str, float] | None = None) -> dict:
    """Per-seed values where the claim's method (and each arm of ``others``) is better than
    every baseline by ``advantage`` (in units of the claim's delta; negative = worse), with
    small noise, at a sane run's level."""
    criterion = spec["criterion"]
    sign = 1.0 if criterion["higher_is_better"] else -1.0
    rng = np.random.default_rng(0)
    level = 0.7 if criterion["higher_is_better"] else 0.1  # a sane run's (SANE)
    base = level + 0.01 * rng.normal(size=5)
    values = {b: list(base + 1e-4 * rng.normal(size=5)) for b in spec["baselines"]}
    for arm, ahead in {spec["method"]: advantage, **(others or {})}.items():
        values[arm] = list(base + sign * ahead * criterion["delta"])
    return {spec["dataset"]: metrics(spec["dataset"], values, spec["metric"])}


@pytest.mark.parametrize(("config", "cid", "spec"), CLAIMS, ids=[f"{c}-{i}" for c, i, _ in CLAIMS])
def test_every_configured_claim_can_fail_and_hold(tmp_path, config, cid, spec):
    spec = {k: v for k, v in spec.items() if k != "controls"}  # the handler alone (controls:
    # tests/qsurv/test_controls.py)
    if spec["kind"] == "quadrature_convergence":
        failing, holding = [quadrature(-0.5, -0.5), {}], [quadrature(-3.0, -0.5), {}]
    else:
        assert spec["kind"] == "comparison" and "test" in spec["criterion"], "paired criteria"
        worse = -3.0  # worse than every baseline by 3 deltas
        failing = [quadrature(-3, -0.5), comparison_inputs(spec, worse)]
        even = 0.0  # as good as the baselines: at_least and matches hold, beats does not
        good = 3.0 if spec["criterion"]["test"] == "beats" else even
        holding = [quadrature(-3, -0.5), comparison_inputs(spec, good)]
    assert run(tmp_path, {cid: spec}, *failing)[cid].verdict == CONTRADICTED
    assert run(tmp_path, {cid: spec}, *holding)[cid].verdict == REPRODUCED
    if spec["kind"] == "comparison":  # a NaN, then a missing method: verdicts, no crash
        documents = comparison_inputs(spec, 0.0)
        rows = documents[spec["dataset"]]["methods"][spec["method"]]["per_seed"]
        rows[1][spec["metric"]] = float("nan")
        assert run(tmp_path, {cid: spec}, holding[0], documents)[cid].verdict == NOT_REPRODUCED
        documents = comparison_inputs(spec, 0.0)
        del documents[spec["dataset"]]["methods"][spec["baselines"][0]]
        missing = run(tmp_path, {cid: spec}, holding[0], documents)[cid]
        assert missing.verdict == NOT_REPRODUCED and "not computable" in missing.details


def test_claims_and_checks_of_the_configs_are_apart():
    for config in CONFIGS.values():
        q = config["papers"]["qsurv"]
        assert {s["kind"] for s in q["checks"].values()} == {"error_bound", "seed_sanity"}
        assert not {"error_bound", "seed_sanity"} & {s["kind"] for s in q["claims"].values()}
        assert all(
            "test" in s["criterion"] for s in q["claims"].values() if s["kind"] == "comparison"
        )


def test_a_data_set_not_in_the_run_is_not_tested(tmp_path):
    results = run(tmp_path, {"c": comparison("at_least", 0.1, True)}, quadrature(-3, -0.5), {})
    assert results["c"].verdict == NOT_TESTED and "not in this run" in results["c"].details


def test_unknown_kind_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown kind"):
        run(tmp_path, {"bad": {"kind": "vibes", "claim": "x"}}, quadrature(-3, -0.5), {})
