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
            lambda s: s["claims"]["c1_alignment_nuclear"].update(kind="alignment"),
            "claims.c1_alignment_nuclear.kind",
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
