"""The MaLoRA config check: the shipped configs pass; typos stop the run naming the key."""

import copy
from pathlib import Path

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.malora.configcheck import check

ROOT = Path(__file__).resolve().parents[2]


def _config(name="config.yaml"):
    return yaml.safe_load((ROOT / "config" / name).read_text())


@pytest.mark.parametrize("name", ["config.yaml", "test.yaml", "full.yaml"])
def test_shipped_configs_pass(name):
    check(_config(name))


def _broken(edit):
    config = copy.deepcopy(_config())
    edit(config["papers"]["malora"])
    return config


@pytest.mark.parametrize(
    "edit, key",
    [
        (
            lambda s: s["claims"]["c4_digits_joint"].update(baselines=["tiez"]),
            "claims.c4_digits_joint.baselines",
        ),
        (
            lambda s: s["claims"]["c4_digits_joint"].update(metric="accuracy"),
            "claims.c4_digits_joint.metric",
        ),
        (
            lambda s: s["claims"]["c3_beats_average"].update(overlaps=[0.5]),
            "claims.c3_beats_average.overlaps",
        ),
        (
            lambda s: s["claims"]["c1_interior_peak_nuclear"].update(kind="alignment"),
            "claims.c1_interior_peak_nuclear.kind",
        ),
        (lambda s: s["checks"]["equal_budgets"].update(kind="budget"), "checks.equal_budgets.kind"),
        (
            lambda s: s["merge_rules"]["methods"]["ties"].update(rule="tie"),
            "merge_rules.methods.ties.rule",
        ),
        (
            lambda s: s["merge_rules"]["methods"]["ties"]["params"].update(topk=0.2),
            "merge_rules.methods.ties.params",
        ),
        (
            lambda s: s["merge_rules"]["methods"]["average"].update(tune=True),
            "merge_rules.methods.average.tune",
        ),
        (lambda s: s["linear"]["methods"].append("nope"), "linear.methods"),
        (
            lambda s: s["linear"]["settings"]["unequal"].update(lambdas=[1e-3]),
            "linear.settings.unequal.lambdas",
        ),
        (lambda s: s["linear"].update(primary_setting="uneven"), "linear.primary_setting"),
        # issue 34: every claim's record, margins and controls are in the config
        (lambda s: s["claims"]["c2_tradeoff"].pop("registered"), "claims.c2_tradeoff.registered"),
        (lambda s: s["claims"]["c2_tradeoff"].pop("controls"), "claims.c2_tradeoff.controls"),
        (
            lambda s: s["claims"]["c3_beats_average"]["criterion"].pop("delta"),
            "claims.c3_beats_average.criterion.delta",
        ),
        (
            lambda s: s["claims"]["c2_tradeoff"].pop("retention_floor"),
            "claims.c2_tradeoff.retention_floor",
        ),
        (  # a control names a setting of the run
            lambda s: s["claims"]["c3_beats_average"]["controls"]["negative"]["set"].update(
                setting="equl"
            ),
            "claims.c3_beats_average.controls.negative.set.setting",
        ),
        (  # the linear oracle is no arm of the digits study
            lambda s: s["claims"]["c4_digits_joint"]["controls"]["positive"]["set"].update(
                method="oracle"
            ),
            "claims.c4_digits_joint.controls.positive.set.method",
        ),
    ],
)
def test_a_typo_is_a_config_error_naming_the_key(edit, key):
    with pytest.raises(ConfigError, match=f"papers.malora.{key}"):
        check(_broken(edit))


def test_full_scale_downloads_must_be_configured():
    config = copy.deepcopy(_config("full.yaml"))
    del config["downloads"]["malora_vit_b32_config"]
    with pytest.raises(ConfigError, match="full_scale.backbones.vit_b32"):
        check(config)


def _nli(edit):
    config = copy.deepcopy(_config("full.yaml"))
    edit(config["papers"]["malora"]["full_scale"]["backbones"]["llama3_8b"])
    return config


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda b: b.pop("model_dir"), "llama3_8b.model_dir"),
        (lambda b: b["tasks"]["qnli"].pop("labels"), "llama3_8b.tasks.qnli.labels"),
        (lambda b: b["tasks"]["rte"].update(labels={"0": 0, "1": 0}), "llama3_8b.tasks.rte.labels"),
        (  # a holdout splits one file: a separate test file is a contradiction
            lambda b: b["tasks"]["mnli"].update(test=["malora_nli_snli_test"]),
            "llama3_8b.tasks.mnli.holdout",
        ),
        (  # without a holdout, calibrating on the test file would leak it
            lambda b: b["tasks"]["snli"].update(calibration=["malora_nli_snli_test"]),
            "llama3_8b.tasks.snli.calibration",
        ),
        (
            lambda b: b["tasks"]["sick"].update(adapter=["malora_llama3_8b_sick_adapter_model"]),
            "llama3_8b.tasks.sick.adapter",
        ),
        (lambda b: b["tasks"]["snli"].update(test=["malora_nli_snli_tset"]), "llama3_8b"),
    ],
)
def test_nli_backbone_errors_name_the_key(edit, key):
    with pytest.raises(ConfigError, match=f"full_scale.backbones.{key}"):
        check(_nli(edit))


def test_c4_nli_is_judged_on_the_nli_backbone_at_full_scale_only():
    full = _config("full.yaml")["papers"]["malora"]
    assert full["claims"]["c4_nli"]["dataset"] in full["full_scale"]["backbones"]
    for name in ("config.yaml", "test.yaml"):
        claims = _config(name)["papers"]["malora"]["claims"]
        assert all(c["kind"] == "not_tested" for k, c in claims.items() if k.startswith("c4_nli"))


@pytest.mark.parametrize("name", ["config.yaml", "test.yaml", "full.yaml"])
def test_every_claim_carries_its_record_margins_and_controls(name):
    """Issue 34 §4: registered, controls (two sides, or none with a reason) and every margin
    of a claim are in the config, in each shipped config."""
    claims = _config(name)["papers"]["malora"]["claims"]
    for cid, spec in claims.items():
        assert len(spec["registered"]) == 10, cid
        if spec["kind"] == "not_tested":
            continue
        controls = spec["controls"]
        assert set(controls) == {"positive", "negative"}, cid
        for side in controls.values():
            assert side["about"] and side["set"], cid
        if "test" in spec["criterion"]:
            assert "delta" in spec["criterion"], cid
