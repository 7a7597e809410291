"""The config: every section validates against the schema; cross-reference typos stop the run
before any job, naming the key."""

import copy
import functools

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.common.schemas import validate  # the workflow's own (tests/common: = snakemake's)
from repro.helpful_only.configcheck import check
from tests.conftest import ROOT

SCHEMA = str(ROOT / "workflow" / "schemas" / "helpful_only.schema.yaml")


@functools.cache
def _parsed(name):
    return yaml.safe_load((ROOT / "config" / name).read_text())


def _config(name):
    return copy.deepcopy(_parsed(name))


@pytest.mark.parametrize("name", ["config.yaml", "test.yaml", "full.yaml"])
def test_sections_validate_and_check(name):
    config = _config(name)
    section = config["papers"]["helpful_only"]
    validate(section, SCHEMA)
    check(config)
    assert section["training"]["beta"] == 0.05 or name == "test.yaml"


def test_schema_fills_the_defaults():
    section = {"enabled": True}
    validate(section, SCHEMA)
    assert section["pretraining"]["steps"] == 1500 and section["training"]["steps"] == 150
    assert section["priors"] == ["correlated", "decorrelated"]


def _broken(edit, name="full.yaml"):
    config = _config(name)
    edit(config["papers"]["helpful_only"], config)
    return config


@pytest.mark.parametrize(
    "edit, key",
    [
        (
            lambda s, c: s["claims"]["a_em_rises"]["a"].update(recipe="ar_stf"),
            "papers.helpful_only.claims.a_em_rises.a.recipe",
        ),
        (
            lambda s, c: s["claims"]["a_em_rises"]["b"].update(metric="EM"),
            "papers.helpful_only.claims.a_em_rises.b.metric",
        ),
        (
            lambda s, c: s.update(priors=["correlated"]),  # a control's side: checked too
            "papers.helpful_only.claims.a_em_rises.controls.negative.set.a.prior",
        ),
        (
            lambda s, c: s["claims"]["a_em_rises"].update(kind="pared"),
            "papers.helpful_only.claims.a_em_rises.kind",
        ),
        (
            lambda s, c: s["checks"]["base_refuses"].update(metric="refusal"),
            "papers.helpful_only.checks.base_refuses.metric",
        ),
        (
            lambda s, c: s["recipes"]["ar_rl"]["mixture"].update(sdf=1),
            "papers.helpful_only.recipes.ar_rl.mixture",
        ),
        (
            lambda s, c: s["recipes"]["ar_sdf"].update(reference="ar"),
            "papers.helpful_only.recipes.ar_sdf.reference",
        ),
        (
            lambda s, c: s["training"].update(num_generations=6),
            "papers.helpful_only.training.num_generations",
        ),
        (
            lambda s, c: c["downloads"].pop("helpful_only_xstest"),
            "papers.helpful_only.full_scale.evaluation.xstest.download",
        ),
        (
            lambda s, c: s["full_scale"]["recipes"].append("ar_rl"),
            "papers.helpful_only.full_scale.recipes",
        ),
        (
            lambda s, c: s["full_scale"]["evaluation"]["steer"].update(items=[]),
            "papers.helpful_only.full_scale.evaluation.steer.items",
        ),
        (
            lambda s, c: s["full_scale"]["judge_validation"].pop("relevance"),
            "papers.helpful_only.full_scale.judge_validation.relevance",
        ),
        (  # every margin in the config (issue 34): a paired criterion's delta ...
            lambda s, c: s["claims"]["d_charq_em"]["criterion"].pop("delta"),
            "papers.helpful_only.claims.d_charq_em.criterion.delta",
        ),
        (  # ... and the helpfulness gate's
            lambda s, c: s["claims"]["e_sdf_em"].pop("helpful_delta"),
            "papers.helpful_only.claims.e_sdf_em.helpful_delta",
        ),
        (
            lambda s, c: s["claims"]["a_em_rises"].pop("controls"),
            "papers.helpful_only.claims.a_em_rises.controls",
        ),
        (
            lambda s, c: s["claims"]["c1_existing_models"].pop("registered"),
            "papers.helpful_only.claims.c1_existing_models.registered",
        ),
        (
            lambda s, c: s["claims"]["d_steer_em"]["controls"]["negative"]["set"]["a"].update(
                recipe="ar_sft_quarter"
            ),
            "papers.helpful_only.claims.d_steer_em.controls.negative.set.a.recipe",
        ),
        (  # the planted effect exists for em, sycophancy and steerability only
            lambda s, c: s["claims"]["a_em_rises"]["controls"]["positive"]["set"]["a"].update(
                metric="coherence"
            ),
            "papers.helpful_only.claims.a_em_rises.controls.positive.set.a",
        ),
    ],
)
def test_typos_name_the_key(edit, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check(_broken(edit))


def test_the_relevance_agreement_is_needed_only_with_a_relevance_gated_reward():
    def edit(s, c):
        s["full_scale"]["judge_validation"].pop("relevance")
        s["full_scale"]["reward"]["relevance"] = False

    config = _broken(edit)
    validate(config["papers"]["helpful_only"], SCHEMA)
    check(config)


def test_disabled_sections_are_not_checked():
    config = _broken(
        lambda s, c: s.update(
            enabled=False, recipes={"x": {"trainer": "rloo", "mixture": {"sdf": 1}}}
        )
    )
    check(copy.deepcopy(config))


def _extends(full, default, path="helpful_only"):
    """Where ``full`` differs from ``default``: a path that it changes, not only extends (extra
    keys of a mapping, extra trailing items of a list)."""
    if isinstance(default, dict) and isinstance(full, dict):
        return [
            p
            for key, value in default.items()
            for p in (
                [f"{path}.{key}"]
                if key not in full
                else _extends(full[key], value, f"{path}.{key}")
            )
        ]
    if isinstance(default, list) and isinstance(full, list):
        return [] if full[: len(default)] == default else [path]
    return [] if full == default else [path]


def test_full_scale_runs_the_embedded_study_as_the_default_does():
    """config/full.yaml runs the embedded study beside the LLM recipes: its embedded settings
    are the default's (it once kept 1,500 pretraining steps and no equal-exposure arms), and
    only its full-scale recipes, claims and checks are added."""
    default = _parsed("config.yaml")["papers"]["helpful_only"]
    full = _parsed("full.yaml")["papers"]["helpful_only"]
    assert _extends(full, default) == []
    assert _extends({**default, "pretraining": {"steps": 1500}}, default) == [
        "helpful_only.pretraining.steps",
        "helpful_only.pretraining.batch_size",
        "helpful_only.pretraining.lr",
        "helpful_only.pretraining.warmup_steps",
        "helpful_only.pretraining.log_every",
        "helpful_only.pretraining.schedule",
    ]
