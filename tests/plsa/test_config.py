"""PLSA's config: the schema, the config check and the code name the same methods and metrics,
and a wrong name is a ConfigError that names its key."""

import copy

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.plsa import configcheck
from repro.plsa.end_to_end import SUMMARY_KEYS
from repro.plsa.reweight import METHODS
from repro.plsa.train import TrainConfig
from tests.conftest import ROOT

SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "plsa.schema.yaml").read_text())
END_TO_END = SCHEMA["properties"]["end_to_end"]["properties"]


def _config(name: str) -> dict:
    return yaml.safe_load((ROOT / "config" / name).read_text())


def test_schema_and_code_agree_on_methods_metrics_and_training_keys():
    assert END_TO_END["methods"]["items"]["enum"] == list(METHODS)
    assert configcheck.METRICS == SUMMARY_KEYS
    training = set(END_TO_END["training"]["properties"])
    assert training == set(TrainConfig.__dataclass_fields__) - {"method", "seed", "device"} - {
        "val_fraction"
    }


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_shipped_configs_pass_and_a_wrong_name_is_caught(name):
    config = _config(name)
    configcheck.check(config)
    bad = copy.deepcopy(config)
    bad["papers"]["plsa"]["figures"]["table_metrics"].append("accuracy")
    with pytest.raises(ConfigError, match="papers.plsa.figures.table_metrics"):
        configcheck.check(bad)
    bad = copy.deepcopy(config)
    claim = next(c for c in bad["papers"]["plsa"]["claims"].values() if c["kind"] == "comparison")
    claim["baselines"] = [*claim["baselines"], "dann"]
    with pytest.raises(ConfigError, match="papers.plsa.claims"):
        configcheck.check(bad)


def test_a_data_set_trains_a_subset_and_its_claims_use_only_that():
    config = _config("config.yaml")
    section = config["papers"]["plsa"]
    css = section["end_to_end"]["datasets"]["csbm_css"]
    assert "pa_hard" not in css["methods"] and set(css["methods"]) <= set(
        section["end_to_end"]["methods"]
    )
    bad = copy.deepcopy(config)
    bad["papers"]["plsa"]["claims"]["plsa_improves_over_erm_css"]["baselines"] = ["pa_features"]
    with pytest.raises(ConfigError, match="plsa_improves_over_erm_css.baselines: 'pa_features'"):
        configcheck.check(bad)
    bad = copy.deepcopy(config)
    bad["papers"]["plsa"]["end_to_end"]["datasets"]["csbm_css"]["methods"].append("dann")
    with pytest.raises(ConfigError, match="datasets.csbm_css.methods: 'dann'"):
        configcheck.check(bad)
