"""Each claim follows the numbers, and each can come out contradicted on planted data (an
interval that straddles the minimum effect: inconclusive; a missing value: not reproduced);
checks fail when their property breaks; config typos stop the run naming the key."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.r3_adapter import configcheck
from repro.r3_adapter.claims import check_claims
from tests.conftest import ROOT, set_dotted

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
SECTION = CONFIG["papers"]["r3_adapter"]
CLAIMS, CHECKS = SECTION["claims"], SECTION["checks"]
SEEDS = SECTION["seeds"]
DOMAINS = ["clean", "severity1", "severity2", "severity3"]


def _doc(method, values, n_trainable=15_000):
    """A metrics document: ``values`` maps a flat metric to one value per seed."""
    rows = [{"seed": s, **{k: float(v[i]) for k, v in values.items()}} for i, s in enumerate(SEEDS)]
    mean = {k: float(np.mean(v)) for k, v in values.items()}
    std = {k: float(np.std(v, ddof=1)) for k, v in values.items()}
    return {
        "method": method,
        "seeds": SEEDS,
        "n_trainable": n_trainable,
        "per_seed": rows,
        "mean": mean,
        "std": std,
    }


def _frozen(
    accuracy=(1.0, 0.5, 0.02, 0.002),
    mass=(0.6, 0.4, 0.2, 0.1),
    epe=None,
    precise=1,
    free=None,
    precision=(0.95, 0.7, 0.4, 0.2),
):
    """The frozen model: layer ``precise`` is the most precise clean layer and carries
    ``mass`` and ``precision``; the other layers stay flat (they never carried
    correspondence); ``free`` is the dustbin-free accuracy (default: ``accuracy``)."""
    epe = epe or (0.05, 0.2, 0.4, 0.5)
    free = free or accuracy
    values = {}
    for d, acc, f, m, e, p in zip(DOMAINS, accuracy, free, mass, epe, precision, strict=True):
        values[f"{d}/accuracy"] = [acc, acc * 0.99, acc * 1.01]
        values[f"{d}/dustbin_free_accuracy"] = [f, f * 0.99, f * 1.01]
        values[f"{d}/epe"] = [e] * 3
        values[f"{d}/absrel"] = [e / 10] * 3
        for layer in range(3):
            carrying = layer == precise
            values[f"{d}/layer{layer}/gt_mass"] = [m if carrying else 0.03] * 3
            values[f"{d}/layer{layer}/precision"] = [p if carrying else 0.1] * 3
            values[f"{d}/layer{layer}/entropy"] = [0.5] * 3
    return _doc("frozen", values, n_trainable=0)


def _method(name, sev2, clean_epe, n_trainable=15_000):
    return _doc(name, {"severity2/accuracy": sev2, "clean/epe": clean_epe}, n_trainable)


def _metrics(
    r3=(0.62, 0.60, 0.61),
    lora=(0.60, 0.58, 0.59),
    r3_epe=(0.10, 0.11, 0.12),
    lora_epe=(0.14, 0.15, 0.15),
    ablated=(0.55, 0.56, 0.54),
    frozen=None,
    r3_out=None,
):
    docs = {
        "frozen": frozen or _frozen(),
        "r3_lite": _method("r3_lite", r3, r3_epe, 15_168),
        "r3_lite_out": _method("r3_lite_out", r3_out or r3, r3_epe, 15_168),
        "lora_r6": _method("lora_r6", lora, lora_epe, 16_128),
        "vpt": _method("vpt", lora, lora_epe, 15_180),
        "adaptformer": _method("adaptformer", lora, lora_epe, 15_285),
    }
    for name in ("r3_no_retrieval", "r3_no_rewiring", "r3_no_refinement"):
        docs[name] = _method(name, ablated, r3_epe)
    return docs


def _runs(gap=0.0, change=0.0):
    runs = {
        m: {
            "method": m,
            "spec": SECTION["methods"][m],
            "identity_gap": gap,
            "runs": [{"seed": s, "backbone_change": change} for s in SEEDS],
        }
        for m in SECTION["methods"]
    }
    runs["r3_no_refinement"]["identity_gap"] = 0.5  # ungated: not expected to be identity
    return runs


# the handlers' own verdicts: the claims without their controls (test_controls.py judges
# the configured claims with them)
OWN = {cid: {k: v for k, v in spec.items() if k != "controls"} for cid, spec in CLAIMS.items()}


def _judge(tmp_path, metrics, runs=None):
    results = check_claims(OWN, CHECKS, metrics, runs or _runs(), str(tmp_path / "c.json"))
    return {c.id: c for c in results}


def test_verdicts_follow_the_numbers(tmp_path):
    out = _judge(tmp_path, _metrics())
    assert out["collapse_under_shift"].verdict == "reproduced"
    # the least favourable of the three ratios: the precision's 0.4 / 0.95
    assert out["collapse_under_shift"].measured == pytest.approx(0.4 / 0.95)
    assert out["relational_vs_channelwise"].verdict == "reproduced"
    assert out["relational_vs_channelwise"].measured == pytest.approx(0.02)
    assert out["clean_retention"].verdict == "reproduced"
    assert out["clean_retention"].measured == pytest.approx(0.0367, abs=1e-4)  # oriented: +
    assert out["module_ablation"].verdict == "reproduced"
    assert out["robustness_benchmarks"].verdict == "not tested at this scale"
    assert {out[c].verdict for c in CHECKS} == {"passed"}
    assert out["matched_budget"].measured == pytest.approx(abs(16_128 - 15_168) / 15_168)


def test_collapse_must_fail_without_a_drop(tmp_path):
    robust = _frozen(accuracy=(1.0, 0.9, 0.8, 0.7), mass=(0.6, 0.55, 0.5, 0.45))
    assert _judge(tmp_path, _metrics(frozen=robust))["collapse_under_shift"].verdict == (
        "contradicted"
    )


def test_collapse_is_judged_on_the_relation_not_on_the_dustbin(tmp_path):
    # the match head sends every patch to the dustbin, but without it the relation still
    # finds 60 % of the matches: not a collapse of the relation
    dustbin = _frozen(free=(1.0, 0.8, 0.6, 0.5))
    out = _judge(tmp_path, _metrics(frozen=dustbin))["collapse_under_shift"]
    assert out.verdict == "contradicted"
    assert "dustbin_free_accuracy; per seed {0: 0.6" in out.details
    # the relation's precision holds up in the precise layer: contradicted too
    precise = _frozen(precision=(0.95, 0.9, 0.85, 0.8))
    assert _judge(tmp_path, _metrics(frozen=precise))["collapse_under_shift"].verdict == (
        "contradicted"
    )


def test_collapse_must_fail_when_the_precise_layer_does_not_collapse(tmp_path):
    # the accuracy drops, but the layer with the best clean precision keeps its GT-mass:
    # judging a layer that never carried correspondence is what the brief warns against
    flat = _frozen(mass=(0.6, 0.1, 0.2, 0.05))  # low at severity 2, but not monotone
    out = _judge(tmp_path, _metrics(frozen=flat))["collapse_under_shift"]
    assert out.verdict == "contradicted" and "not monotone" in out.details
    error_falls = _frozen(epe=(0.5, 0.4, 0.3, 0.2))
    assert _judge(tmp_path, _metrics(frozen=error_falls))["collapse_under_shift"].verdict == (
        "contradicted"
    )


def test_relational_claim_must_fail_when_lora_wins_or_the_sign_is_unclear(tmp_path):
    worse = _judge(tmp_path, _metrics(r3=(0.58, 0.57, 0.59), lora=(0.62, 0.60, 0.61)))
    assert worse["relational_vs_channelwise"].verdict == "contradicted"
    assert worse["relational_vs_channelwise"].measured < 0
    # better, but by less than the minimum effect of an accuracy (0.01): contradicted too
    slight = _judge(tmp_path, _metrics(r3=(0.605, 0.585, 0.595), lora=(0.60, 0.58, 0.59)))
    assert slight["relational_vs_channelwise"].verdict == "contradicted"
    noisy = _judge(tmp_path, _metrics(r3=(0.70, 0.50, 0.61), lora=(0.60, 0.58, 0.59)))
    assert noisy["relational_vs_channelwise"].verdict == "inconclusive"
    assert (
        noisy["relational_vs_channelwise"].interval[0]
        < 0
        < noisy["relational_vs_channelwise"].interval[1]
    )


def test_both_gate_parameterisations_are_judged_side_by_side(tmp_path):
    out = _judge(tmp_path, _metrics(r3=(0.55, 0.56, 0.54), r3_out=(0.66, 0.64, 0.65)))
    assert out["relational_vs_channelwise"].verdict == "contradicted"
    assert out["relational_vs_channelwise_out_projection"].verdict == "reproduced"
    # against each budget-matched baseline; the least favourable is reported
    metrics = _metrics()
    metrics["vpt"] = _method("vpt", (0.63, 0.61, 0.62), (0.1,) * 3, 15_180)
    c2 = _judge(tmp_path, metrics)["relational_vs_channelwise"]
    assert c2.verdict == "contradicted" and "least favourable: r3_lite − vpt" in c2.details


def test_retention_must_fail_when_3r_forgets_more(tmp_path):
    out = _judge(tmp_path, _metrics(r3_epe=(0.2, 0.21, 0.22)))
    assert out["clean_retention"].verdict == "contradicted"
    # the embedded run's situation: an interval that straddles the minimum effect
    wide = _judge(tmp_path, _metrics(r3_epe=(0.10, 0.17, 0.12)))["clean_retention"]
    assert wide.verdict == "inconclusive"
    margin = CLAIMS["clean_retention"]["criterion"]["delta"]
    assert wide.interval[0] < margin < wide.interval[1]


def test_ablation_must_fail_when_one_module_does_not_help(tmp_path):
    metrics = _metrics()
    metrics["r3_no_rewiring"] = _method("r3_no_rewiring", (0.63, 0.61, 0.62), (0.1,) * 3)
    out = _judge(tmp_path, metrics)["module_ablation"]
    assert out.verdict == "contradicted"
    assert "r3_lite − r3_no_rewiring: contradicted" in out.details


def test_missing_values_are_not_reproduced_with_the_reason(tmp_path):
    metrics = _metrics()
    metrics["lora_r6"]["per_seed"][1]["severity2/accuracy"] = None  # a NaN stored as null
    out = _judge(tmp_path, metrics)["relational_vs_channelwise"]
    assert out.verdict == "not reproduced" and "missing" in out.details
    del metrics["r3_lite"]
    assert _judge(tmp_path, metrics)["clean_retention"].verdict == "not reproduced"


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_every_claim_has_its_record_and_its_margin_in_the_config(name):
    section = yaml.safe_load((ROOT / "config" / name).read_text())["papers"]["r3_adapter"]
    for cid, spec in section["claims"].items():
        assert spec["registered"] >= "2026-12-01", (name, cid)
        if spec["kind"] != "not_tested":
            assert set(spec["controls"]) == {"positive", "negative"}, (name, cid)
        if "test" in spec.get("criterion", {}):  # a paired criterion carries its own margin
            assert spec["criterion"]["delta"] > 0, (name, cid)


def test_a_nan_seed_makes_the_collapse_not_reproduced(tmp_path):
    metrics = _metrics()
    metrics["frozen"]["per_seed"][2]["severity2/dustbin_free_accuracy"] = float("nan")
    out = _judge(tmp_path, metrics)["collapse_under_shift"]
    assert out.verdict == "not reproduced" and "seeds [2]" in out.details


def test_checks_fail_when_their_property_breaks(tmp_path):
    out = _judge(tmp_path, _metrics(), _runs(gap=1e-3, change=1e-4))
    assert out["identity_at_step_zero"].verdict == "failed"
    assert out["frozen_backbone"].verdict == "failed"
    metrics = _metrics()
    metrics["lora_r6"]["n_trainable"] = 40_000
    assert _judge(tmp_path, metrics)["matched_budget"].verdict == "failed"
    metrics["frozen"] = _frozen(accuracy=(0.5, 0.2, 0.01, 0.0))
    assert _judge(tmp_path, metrics)["pretrained_clean"].verdict == "failed"


def _bad(path: str, value):
    return set_dotted(copy.deepcopy(CONFIG), path, value)


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        ("papers.r3_adapter.claims.relational_vs_channelwise.method", "r3_lte", "method"),
        ("papers.r3_adapter.claims.clean_retention.baselines", ["lora_r7"], "baselines"),
        ("papers.r3_adapter.claims.module_ablation.metric", "severity2/acuracy", "metric"),
        ("papers.r3_adapter.claims.collapse_under_shift.severity", 5, "severity"),
        ("papers.r3_adapter.claims.collapse_under_shift.kind", "colapse", "kind"),
        ("papers.r3_adapter.roles.matched_peft", "lora_r5", "roles.matched_peft"),
        ("papers.r3_adapter.splits.adapt_severity", 4, "adapt_severity"),
        ("papers.r3_adapter.seeds", [0], "seeds"),
    ],
)
def test_config_typos_name_the_key(path, value, named):
    with pytest.raises(ConfigError, match=named):
        configcheck.check(_bad(path, value))


def test_the_shipped_config_passes():
    configcheck.check(CONFIG)


def test_collapse_is_judged_on_an_interval_over_the_seeds(tmp_path):
    """Seed ratios 0.2, 0.45 and 0.74 of clean: their mean 0.47 is below 0.5, but the t
    interval over three seeds straddles it: inconclusive, not reproduced."""
    metrics = _metrics()
    for row, value in zip(metrics["frozen"]["per_seed"], (0.2, 0.45, 0.75), strict=True):
        row["severity2/dustbin_free_accuracy"] = value
    out = _judge(tmp_path, metrics)["collapse_under_shift"]
    assert out.verdict == "inconclusive", out
    assert out.interval[0] < 0.5 < out.interval[1]
