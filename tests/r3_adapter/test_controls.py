"""3R-Adapter's claims as configured (config/config.yaml's real entries) judged with their
controls on run-shaped metrics (the embedded run's means, docs/r3_adapter.md): both controls
passing leave the verdict as it is; a failing positive control, or a negative one that
comes out reproduced, makes the claim uninformative with the control's number. A seed whose
adaptation did not train is a failed run (claims not reproduced, the check failed)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from repro.r3_adapter.claims import check_claims, run_failure
from tests.conftest import ROOT

SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["r3_adapter"]
CLAIMS, CHECKS, SEEDS = SECTION["claims"], SECTION["checks"], SECTION["seeds"]
DOMAINS = ("clean", "severity1", "severity2", "severity3")
# the frozen model by domain (clean, sev 1, 2, 3); layer 1 carries correspondence
FROZEN = {
    "accuracy": (0.998, 0.139, 0.002, 0.0001),
    "dustbin_free_accuracy": (1.0, 0.790, 0.342, 0.131),
    "nc_accuracy": (0.917, 0.888, 0.818, 0.528),
    "epe": (0.057, 0.433, 0.991, 1.171),
    "layer1/gt_mass": (0.511, 0.368, 0.170, 0.077),
    "layer1/precision": (1.0, 0.853, 0.412, 0.160),
}
# every adapted method: (severity-2 accuracy, clean EPE), means of the embedded run
ADAPTED = {
    "dustbin_bias": (0.244, 0.057), "full_ft": (0.281, 0.093), "lora_r6": (0.301, 0.193),
    "vpt": (0.249, 0.140), "adaptformer": (0.270, 0.269), "r3_lite": (0.284, 0.082),
    "r3_lite_out": (0.305, 0.326), "r3_no_retrieval": (0.282, 0.217),
    "r3_no_rewiring": (0.277, 0.249), "r3_no_refinement": (0.291, 0.284),
}  # fmt: skip
SPREAD = 0.01  # per-seed spread shared by the methods (the same scenes), and their own
OWN_SPREAD = 0.003


def _doc(method, values):
    rows = [{"seed": s, **{k: v[i] for k, v in values.items()}} for i, s in enumerate(SEEDS)]
    return {"method": method, "seeds": SEEDS, "n_trainable": 15_000, "per_seed": rows,
            "mean": {k: float(np.mean(v)) for k, v in values.items()}}  # fmt: skip


def _frozen(**override):
    values = {}
    for name, by_domain in (FROZEN | override).items():
        for domain, value in zip(DOMAINS, by_domain, strict=True):
            values[f"{domain}/{name}"] = [value] * len(SEEDS)
    for domain in DOMAINS:  # layers 0 and 2 stay near uniform
        for layer in (0, 2):
            values[f"{domain}/layer{layer}/gt_mass"] = [0.05] * len(SEEDS)
            values[f"{domain}/layer{layer}/precision"] = [0.5] * len(SEEDS)
    return _doc("frozen", values)


def _metrics(**sev2):
    """Every method's document; ``sev2`` replaces a method's severity-2 accuracy."""
    docs = {"frozen": _frozen()}
    for k, (name, (acc, epe)) in enumerate(ADAPTED.items()):
        shift = [SPREAD * (i - 1) + OWN_SPREAD * np.sin(k + 2 * i) for i in range(len(SEEDS))]
        acc = sev2.get(name, acc)
        docs[name] = _doc(name, {"severity2/accuracy": [acc + d for d in shift],
                                 "clean/epe": [epe + d / 2 for d in shift]})  # fmt: skip
    return docs


def _runs(bad=None):
    """Training records: the loss falls from 1.0 to 0.5 at the chosen rate; ``bad`` maps
    (method, seed) to another loss curve."""
    bad = bad or {}
    runs = {}
    for method, spec in SECTION["methods"].items():
        losses = [] if method == "frozen" else list(np.linspace(1.0, 0.5, 100))
        runs[method] = {"method": method, "spec": spec, "identity_gap": 0.0, "runs": [
            {"seed": s, "lr": 0.01, "losses": {"0.01": bad.get((method, s), losses),
                                               "0.03": [9.9] * 100},
             "backbone_change": 0.0, "lr_on_edge": False}
            for s in SEEDS]}  # fmt: skip
    return runs


def _judge(tmp_path, metrics=None, runs=None):
    results = check_claims(CLAIMS, CHECKS, metrics or _metrics(), runs or _runs(),
                           str(tmp_path / "c.json"), sanity=SECTION["sanity"])  # fmt: skip
    return {c.id: c for c in results}


# the claim's own verdict, and the verdict after its controls, on the run's numbers
AS_RUN = {
    "collapse_under_shift": ("reproduced", "reproduced"),
    "relational_vs_channelwise": ("contradicted", "contradicted"),
    "clean_retention": ("reproduced", "reproduced"),
}


def test_the_configured_claims_on_the_runs_numbers(tmp_path):
    found = _judge(tmp_path)
    for cid, (own, verdict) in AS_RUN.items():
        assert (found[cid].own_verdict or found[cid].verdict, found[cid].verdict) == (
            own, verdict), found[cid]  # fmt: skip
    positive, negative = found["collapse_under_shift"].controls
    assert positive["measured"] == pytest.approx(0.160 / 1.0)  # sev-3 precision, the worst
    assert negative["measured"] == pytest.approx(0.818 / 0.917)  # the matcher keeps 89 %
    positive, negative = found["relational_vs_channelwise"].controls
    assert positive["verdict"] == "reproduced" and positive["measured"] == pytest.approx(
        0.284 - 0.002, abs=0.01)  # fmt: skip
    assert negative["verdict"] == "contradicted" and negative["measured"] == 0.0
    retention = found["clean_retention"].controls[0]
    assert retention["measured"] == pytest.approx(0.193 - 0.057, abs=0.01)
    assert found["robustness_benchmarks"].controls == ()
    assert found["adaptation_sanity"].verdict == "passed"


def test_with_both_controls_passing_the_verdict_is_the_claims_own(tmp_path):
    bare = {c: {k: v for k, v in s.items() if k != "controls"} for c, s in CLAIMS.items()}
    with_controls = _judge(tmp_path)
    results = check_claims(bare, CHECKS, _metrics(), _runs(), str(tmp_path / "b.json"),
                           sanity=SECTION["sanity"])  # fmt: skip
    without = {c.id: c for c in results}
    for cid, spec in CLAIMS.items():
        if spec["kind"] == "not_tested":
            continue
        assert all(c["passed"] for c in with_controls[cid].controls), cid
        assert with_controls[cid].verdict == without[cid].verdict, cid
        assert with_controls[cid].measured == without[cid].measured, cid


@pytest.mark.parametrize(
    ("cid", "side", "metrics", "number"),
    [
        # severity 3 no longer collapses the dustbin-free accuracy (0.6 of clean)
        ("collapse_under_shift", "positive",
         _metrics() | {"frozen": _frozen(dustbin_free_accuracy=(1.0, 0.79, 0.342, 0.6))}, "+0.6"),
        # the parameter-free matcher collapses too: the ratio no longer separates the model
        ("collapse_under_shift", "negative",
         _metrics() | {"frozen": _frozen(nc_accuracy=(0.917, 0.6, 0.3, 0.2))}, "+0.327"),
        # adaptation recovers nothing over the frozen model
        ("relational_vs_channelwise", "positive",
         _metrics() | {"frozen": _frozen(accuracy=(0.998, 0.139, 0.284, 0.0001))}, "+0"),
        ("module_ablation", "positive",
         _metrics() | {"frozen": _frozen(accuracy=(0.998, 0.139, 0.284, 0.0001))}, "+0"),
    ],
)  # fmt: skip
def test_a_failing_control_makes_the_claim_uninformative(tmp_path, cid, side, metrics, number):
    claim = _judge(tmp_path, metrics)[cid]
    assert claim.verdict == "uninformative", claim
    about = CLAIMS[cid]["controls"][side]["about"]
    verdict, shown = claim.details.split(f"the {side} control ({about}) came out ")[1].split(
        ", ", 1)  # fmt: skip
    assert (verdict == "reproduced") == (side == "negative"), claim.details
    assert shown.startswith(number), claim.details


@pytest.mark.parametrize(
    ("losses", "reason"),
    [
        ([1.0, float("nan")] + [0.5] * 98, "not finite"),
        (list(np.linspace(1.0, 1.2, 100)), "did not fall"),
    ],
)
def test_a_seed_that_did_not_train_is_a_failed_run(tmp_path, losses, reason):
    found = _judge(tmp_path, runs=_runs({("lora_r6", SEEDS[1]): losses}))
    assert found["adaptation_sanity"].verdict == "failed"
    assert found["adaptation_sanity"].measured == 1
    for cid in ("relational_vs_channelwise", "clean_retention"):  # both read LoRA r6
        assert found[cid].verdict == "not reproduced", found[cid]
        assert f"failed run: lora_r6 seed {SEEDS[1]}: its adaptation loss" in found[cid].details
        assert reason in found[cid].details
    assert found["module_ablation"].verdict != "not reproduced"  # does not read LoRA


def test_the_failed_run_rule_by_hand():
    """The last tenth of the steps against step 0, at the rate the run kept."""
    run = {"lr": 0.003, "losses": {"0.003": [2.0] + [1.0] * 89 + [1.9] * 10, "0.01": [0.1]}}
    assert run_failure(run, 1.0) == ""  # 1.9 ≤ 2.0
    assert "1.9 > 0.9 x 2 at step 0" in run_failure(run, 0.9)  # 1.9 > 1.8
    assert run_failure({"lr": 0.01, "losses": {"0.01": []}}, 1.0) == ""  # nothing trains
