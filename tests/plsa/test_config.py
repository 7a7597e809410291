"""PLSA's config: the schema, the config check and the code name the same methods and metrics,
and a wrong name is a ConfigError that names its key."""

import copy

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.plsa import configcheck
from repro.plsa.reweight import METHODS
from repro.plsa.train import TrainConfig
from tests.conftest import ROOT

SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "plsa.schema.yaml").read_text())
END_TO_END = SCHEMA["properties"]["end_to_end"]["properties"]


def _config(name: str) -> dict:
    return yaml.safe_load((ROOT / "config" / name).read_text())


def test_schema_and_code_agree_on_methods_and_training_keys():
    assert END_TO_END["methods"]["items"]["enum"] == list(METHODS)
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


def test_study_estimators_agree_with_the_code_and_schema():
    from repro.plsa.study import ESTIMATORS

    assert configcheck.ESTIMATORS == ESTIMATORS
    assert SCHEMA["$defs"]["study_estimator"]["enum"] == list(ESTIMATORS)


def test_fewer_epochs_than_refresh_every_is_a_config_error():
    """Issue 39 item 10: no method would ever re-estimate (the oracle_exact check used to
    fail 'not computable' at run time instead)."""
    config = _config("test.yaml")
    training = config["papers"]["plsa"]["end_to_end"]["training"]
    training.update(epochs=9, refresh_every=10)
    with pytest.raises(ConfigError, match="training.epochs: 9 < refresh_every 10"):
        configcheck.check(config)
    training["epochs"] = 10  # one estimate, at the last epoch: allowed
    configcheck.check(config)
    del training["refresh_every"]  # the schema default 10 applies
    training["epochs"] = 5
    with pytest.raises(ConfigError, match="training.epochs: 5 < refresh_every 10"):
        configcheck.check(config)


@pytest.mark.parametrize("name", ["config.yaml", "full.yaml", "test.yaml"])
def test_every_claim_has_controls_registration_and_its_margin(name):
    """Issue 34 §4: every claim has controls (unless not tested), registered, and every
    paired criterion its margin (delta) in the config; the config check rejects each one
    missing."""
    config = _config(name)
    for cid, spec in config["papers"]["plsa"]["claims"].items():
        assert "registered" in spec, cid
        if spec["kind"] != "not_tested":
            assert set(spec["controls"]) == {"positive", "negative"}, cid
        if "test" in spec.get("criterion", {}):
            assert "delta" in spec["criterion"], cid
    cid, spec = next(
        (c, s) for c, s in config["papers"]["plsa"]["claims"].items() if s["kind"] == "comparison"
    )
    for key, message in (
        ("controls", f"claims.{cid}.controls: missing"),
        ("registered", f"claims.{cid}.registered: missing"),
        ("delta", f"claims.{cid}.criterion.delta: missing"),
    ):
        bad = copy.deepcopy(config)
        entry = bad["papers"]["plsa"]["claims"][cid]
        (entry["criterion"] if key == "delta" else entry).pop(key)
        with pytest.raises(ConfigError, match=message):
            configcheck.check(bad)


def test_a_control_naming_an_unknown_estimator_or_untrained_method_is_caught():
    config = _config("config.yaml")
    bad = copy.deepcopy(config)
    claims = bad["papers"]["plsa"]["claims"]
    claims["consistent_rate"]["controls"]["positive"]["set"]["estimators"] = ["oracle"]
    with pytest.raises(ConfigError, match="consistent_rate.controls.positive.set.estimators"):
        configcheck.check(bad)
    bad = copy.deepcopy(config)
    claims = bad["papers"]["plsa"]["claims"]
    claims["plsa_improves_over_erm_css"]["controls"]["positive"]["set"]["method"] = "pa_features"
    with pytest.raises(
        ConfigError, match="plsa_improves_over_erm_css.controls.positive.set.method"
    ):
        configcheck.check(bad)
