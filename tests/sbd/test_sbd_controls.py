"""SBD's claims as configured (config/config.yaml's real entries) judged with their
controls on run-shaped metrics: both controls passing leave the verdict as it is; a
positive control that fails, or a negative one that comes out reproduced, makes the claim
uninformative with the control's number in the reason."""

from __future__ import annotations

import copy

import pytest
import yaml

from repro.common.io import write_json
from repro.sbd.claims import check_claims
from tests.conftest import ROOT

SBD = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["sbd"]
CLAIMS, CHECKS = SBD["claims"], SBD["checks"]
NOISE, SIGN = SBD["noise_study"], SBD["sign_study"]


def _timing(d, speedup):
    ms = {"min_ms": 1.0, "median_ms": 1.0}
    return {"d": d, "device": "cpu", "speedup_scipy": speedup, "speedup_torch": speedup / 2,
            "scipy_csr": {"min_ms": speedup, "median_ms": speedup}, "sbd_scipy": ms,
            "torch_csr": {"min_ms": speedup / 2, "median_ms": speedup / 2}, "sbd_torch": ms,
            "rel_error_sbd_scipy": 1e-7, "rel_error_sbd_torch": 1e-7}  # fmt: skip


def _method(cf, speedup):
    """One method's entry on one graph: its CF and the same speedup at every d."""
    return {"cf": cf, "cf_bytes": cf, "rank": 5, "residual_nnz": 10, "nnz": 100, "cost": 100 / cf,
            "mismatched_cells": 0, "trace": [{"gain": 5, "cost": 100 / cf}],
            "spmm": [_timing(d, speedup) for d in SBD["evaluation"]["dims"]]}  # fmt: skip


def _truth(cf):
    return {"cf": cf, "cf_bytes": cf, "rank": 25, "residual_nnz": 10, "nnz": 100,
            "mismatched_cells": 0}  # fmt: skip


# The embedded run's numbers, rounded (docs/sbd.md): CF and d = 64 speedup per graph.
RUN_METRICS = {
    "planted": {"methods": {"sbd": _method(8.34, 4.69), "vnm_unsigned": _method(3.6, 2.0)},
                "planted_truth": _truth(8.36)},
    "planted_dense": {"methods": {"sbd": _method(23.9, 13.3), "vnm_unsigned": _method(9.0, 5.0)},
                      "planted_truth": _truth(24.5)},
    "random": {"methods": {"sbd": _method(1.06, 0.79), "vnm_unsigned": _method(1.06, 0.80)}},
    "davis": {"methods": {"sbd": _method(1.39, 0.5), "vnm_unsigned": _method(1.2, 0.5)}},
}  # fmt: skip
SBD_JACCARD = {0.05: 0.95, 0.2: 0.91, 0.4: 0.77, 0.5: 0.24, 0.6: 0.04}  # by deletion


def _jaccard(method, deletion):
    return {"sbd": SBD_JACCARD[deletion], "vnm_unsigned": 0.18 * (deletion < 0.1) + 0.03,
            "planted_truth": 1.0, "thinned_truth": 1.0 - deletion}[method]  # fmt: skip


def _run():
    noise = [
        {"method": m, "deletion": d, "background": b, "seed": s, "cf": 5.0,
         "mismatched_cells": 0, "mean_best_jaccard": _jaccard(m, d) + 0.002 * s}
        for m in NOISE["methods"] + NOISE["oracles"]
        for d in NOISE["deletions"] for b in NOISE["backgrounds"] for s in NOISE["seeds"]
    ]  # fmt: skip
    cf = {("nested_only", "sbd"): 15.0, ("nested_only", "vnm_unsigned"): 15.05,
          ("deletions_only", "sbd"): 9.4, ("deletions_only", "vnm_unsigned"): 4.0}  # fmt: skip
    sign = [
        {"setting": t, "method": m, "seed": s, "mismatched_cells": 0,
         "cf": cf[t, m] + 0.1 * (s % 3) + 0.01 * s * (m == "sbd")}
        for t in SIGN["settings"] for m in SIGN["methods"] for s in SIGN["seeds"]
    ]  # fmt: skip
    return {"metrics": copy.deepcopy(RUN_METRICS), "noise": noise, "sign": sign}


def _judge(tmp_path, run, claims=None):
    paths = {}
    for name, doc in run["metrics"].items():
        paths[name] = tmp_path / f"{name}.json"
        write_json(paths[name], {"dataset": name, **doc})
    write_json(tmp_path / "noise.json", {"rows": run["noise"]})
    write_json(tmp_path / "sign.json", {"rows": run["sign"]})
    results = check_claims(claims or CLAIMS, CHECKS, paths, [tmp_path / "noise.json"],
                           [tmp_path / "sign.json"], tmp_path / "claims.json")  # fmt: skip
    return {r.id: r for r in results}


def _set(rows, value, **match):
    for row in rows:
        if all(row[k] == v for k, v in match.items()):
            row.update(value)


def _speedup(run, dataset, speedup):
    for r in run["metrics"][dataset]["methods"]["sbd"]["spmm"]:
        r.update(speedup_scipy=speedup, scipy_csr={"min_ms": speedup, "median_ms": speedup})


MOST_NOISE = {"deletion": max(NOISE["deletions"]), "background": max(NOISE["backgrounds"])}
# what the run gives today: the claim's own verdict, and the verdict after its controls
AS_RUN = {
    "planted_recovery": ("reproduced", "reproduced"),
    "recovery_degrades_with_noise": ("reproduced", "reproduced"),
    "compression_planted": ("contradicted", "uninformative"),  # the truth's CF is 8.36
    "signed_beats_unsigned": ("reproduced", "reproduced"),
    "speedup_within_bound": ("reproduced", "reproduced"),
    "cpu_speedup": ("reproduced", "reproduced"),
    "cpu_speedup_fraction": ("reproduced", "reproduced"),
}


def test_the_configured_claims_on_the_runs_numbers(tmp_path):
    found = _judge(tmp_path, _run())
    for cid, (own, verdict) in AS_RUN.items():
        claim = found[cid]
        assert (claim.own_verdict or claim.verdict, claim.verdict) == (own, verdict), claim
    truth = found["compression_planted"]
    assert "positive control (the planted truth's own factors" in truth.details
    assert "came out contradicted, +8.36" in truth.details  # the control's own number
    assert truth.measured == pytest.approx(8.34)
    assert found["gpu_speedup"].controls == ()  # not tested: no controls run
    positive, negative = found["cpu_speedup"].controls
    assert positive["measured"] == pytest.approx(13.3) and negative["measured"] == 0.79
    assert all("none" in c for c in found["speedup_within_bound"].controls)  # an upper bound


def test_with_both_controls_passing_the_verdict_is_the_claims_own(tmp_path):
    """Judged without its controls, every claim whose controls pass gives the same verdict
    and number as with them."""
    bare = {cid: {k: v for k, v in spec.items() if k != "controls"} for cid, spec in CLAIMS.items()}
    with_controls, without = _judge(tmp_path, _run()), _judge(tmp_path, _run(), bare)
    for cid, (own, verdict) in AS_RUN.items():
        if own == verdict:
            assert with_controls[cid].verdict == without[cid].verdict == verdict, cid
            assert with_controls[cid].measured == without[cid].measured
            assert all(c.get("passed", True) for c in with_controls[cid].controls), cid


def _truth_recovers(run, value):
    _set(run["noise"], {"mean_best_jaccard": value}, method="planted_truth")


# claim -> (an edit under which its positive control fails, the control's number shown)
POSITIVE_FAILS = {
    "planted_recovery": (lambda r: _truth_recovers(r, 0.8), "+0.8"),
    "recovery_degrades_with_noise": (
        lambda r: _set(r["noise"], {"mean_best_jaccard": 0.9}, method="thinned_truth"), "+0"),
    "signed_beats_unsigned": (
        lambda r: _set(r["sign"], {"cf": 2.0}, setting="deletions_only", method="sbd"), "-2.12"),
    "cpu_speedup": (lambda r: _speedup(r, "planted_dense", 0.9), "+0.9"),
    "cpu_speedup_fraction": (lambda r: _speedup(r, "random", 0.3), "+0.283"),
}  # fmt: skip
# claim -> (an edit under which its negative control comes out reproduced, its number)
NEGATIVE_HOLDS = {
    "planted_recovery": (
        lambda r: _set(r["noise"], {"mean_best_jaccard": 0.95}, method="sbd", **MOST_NOISE),
        "+0.95"),
    "recovery_degrades_with_noise": (
        lambda r: [_set(r["noise"], {"mean_best_jaccard": 1 - d}, method="planted_truth",
                        deletion=d) for d in NOISE["deletions"]], "+0.55"),
    "compression_planted": (lambda r: r["metrics"]["random"]["methods"]["sbd"].update(cf=11.0),
                            "+11"),
    # signed and unsigned equal on deletions: the reversed roles are "at least as good" too
    "signed_beats_unsigned": (
        lambda r: _set(r["sign"], {"cf": 4.0}, setting="deletions_only"), "+0"),
    "cpu_speedup": (lambda r: _speedup(r, "random", 1.2), "+1.2"),
    "cpu_speedup_fraction": (lambda r: _speedup(r, "davis", 1.2), "+0.863"),
}  # fmt: skip


CASES = [("positive", c) for c in sorted(POSITIVE_FAILS)] + [
    ("negative", c) for c in sorted(NEGATIVE_HOLDS)
]


@pytest.mark.parametrize(("side", "cid"), CASES)
def test_a_failing_control_makes_the_claim_uninformative(tmp_path, side, cid):
    """A positive control not reproduced, or a negative one reproduced, with its number."""
    edit, number = (POSITIVE_FAILS if side == "positive" else NEGATIVE_HOLDS)[cid]
    run = _run()
    edit(run)
    claim = _judge(tmp_path, run)[cid]
    assert claim.verdict == "uninformative" and claim.own_verdict == AS_RUN[cid][0], claim
    about = CLAIMS[cid]["controls"][side]["about"]
    verdict, shown = claim.details.split(f"the {side} control ({about}) came out ")[1].split(
        ", ", 1
    )
    assert (verdict == "reproduced") == (side == "negative"), claim.details
    assert shown.startswith(number), claim.details


def test_compression_is_judged_once_the_truth_can_pass(tmp_path):
    """Where the planted truth reaches the criterion, the claim's own verdict stands."""
    run = _run()
    run["metrics"]["planted"]["planted_truth"]["cf"] = 12.0
    claim = _judge(tmp_path, run)["compression_planted"]
    assert claim.verdict == "contradicted" and claim.own_verdict == ""


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_every_claim_has_its_record_and_its_margin_in_the_config(name):
    sbd = yaml.safe_load((ROOT / "config" / name).read_text())["papers"]["sbd"]
    for cid, spec in sbd["claims"].items():
        assert spec["registered"] >= "2026-11-29", (name, cid)
        if spec["kind"] != "not_tested":  # both sides, or why none can exist
            assert set(spec["controls"]) in ({"positive", "negative"}, {"none"}), (name, cid)
        if "test" in spec.get("criterion", {}):  # a paired criterion carries its own margin
            assert spec["criterion"]["delta"] > 0, (name, cid)
