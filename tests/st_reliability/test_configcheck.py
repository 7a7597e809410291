"""Config typos stop the run before any job, naming the key."""

import copy
import functools

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.st_reliability.configcheck import check
from tests.conftest import ROOT


@functools.cache
def parsed(name: str) -> dict:
    return yaml.safe_load((ROOT / "config" / name).read_text())


def config(name="config.yaml"):
    """A fresh copy of a shipped config (each parse costs ≈ 0.4 s of CPU: parsed once)."""
    return copy.deepcopy(parsed(name))


def section(cfg):
    return cfg["papers"]["st_reliability"]


@pytest.mark.parametrize("name", ["config.yaml", "test.yaml", "full.yaml"])
def test_shipped_configs_pass(name):
    check(config(name))


@pytest.mark.parametrize(
    "edit,key",
    [
        (
            lambda s: s["datasets"]["no_shared_program"]["models"].append("hvgg"),
            "papers.st_reliability.datasets.no_shared_program.models[1]",
        ),
        (
            lambda s: s["claims"]["c5_tracks_l2"].update(dataset="shared_program"),
            "papers.st_reliability.claims.c5_tracks_l2.dataset",
        ),
        (
            lambda s: s["claims"]["c2_shared_program"].update(negative_dataset="none"),
            "papers.st_reliability.claims.c2_shared_program.negative_dataset",
        ),
        (
            lambda s: s["claims"]["c1_rank1_bottleneck"].update(method="self_only"),
            "papers.st_reliability.claims.c1_rank1_bottleneck.method",
        ),
        (
            lambda s: s["claims"]["c1_rank1_bottleneck"]["reported"][3].update(
                {"null": "selfonly"}
            ),
            "papers.st_reliability.claims.c1_rank1_bottleneck.reported[3].null",
        ),
        (
            lambda s: s["claims"]["c3_smooth_l2"].update(kind="smooth"),
            "papers.st_reliability.claims.c3_smooth_l2.kind",
        ),
        (
            lambda s: s["checks"]["self_only_identity"].update(method="self"),
            "papers.st_reliability.checks.self_only_identity.method",
        ),
        (lambda s: s["audited"].append("scgpt"), "papers.st_reliability.audited[3]"),
        (lambda s: s["c4_designs"].update(full="hvg2"), "papers.st_reliability.c4_designs.full"),
        (
            lambda s: s["datasets"]["shared_program_strong"].pop("eta"),
            "papers.st_reliability.datasets.shared_program_strong.eta",
        ),
        # issue 34: margins, controls and registration in the config
        (
            lambda s: s["claims"]["c7_beats_magnitude_l2"]["criterion"].pop("delta"),
            "papers.st_reliability.claims.c7_beats_magnitude_l2.criterion.delta",
        ),
        (
            lambda s: s["claims"]["c5_tracks_l2"].pop("controls"),
            "c5_tracks_l2.controls: missing",
        ),
        (
            lambda s: s["claims"]["c6_loo_l2"].pop("registered"),
            "c6_loo_l2.registered: missing",
        ),
        (
            lambda s: s["claims"]["c3_smooth_l2"]["controls"]["positive"]["set"].update(
                signal="oracle_l3"
            ),
            "papers.st_reliability.claims.c3_smooth_l2.controls.positive.set.signal",
        ),
        (  # a planted dose the evaluation does not run
            lambda s: s["claims"]["c1_rank1_bottleneck"]["controls"]["positive"]["set"].update(
                method="hvg__planted_beta16"
            ),
            "c1_rank1_bottleneck.controls.positive.set.method",
        ),
        (
            lambda s: s["claims"]["c5_vs_oracle_l2_coverage"].update(reference="nn_l2"),
            "papers.st_reliability.claims.c5_vs_oracle_l2_coverage.reference",
        ),
        (
            lambda s: s["evaluation"]["planted"].update(model="shuffled"),
            "papers.st_reliability.evaluation.planted.model",
        ),
        (
            lambda s: s["evaluation"]["causal_nulls"].append("pca"),
            r"papers.st_reliability.evaluation.causal_nulls[1]",
        ),
        (
            lambda s: s["datasets"]["coverage_graded"].pop("coverage"),
            "papers.st_reliability.datasets.coverage_graded.coverage",
        ),
    ],
)
def test_typos_name_the_key(edit, key):
    cfg = config()
    edit(section(cfg))
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        check(cfg)


def test_full_scale_downloads_must_be_configured():
    cfg = config("full.yaml")
    del cfg["downloads"]["st_reliability_rpe1"]
    with pytest.raises(ConfigError, match=r"datasets\.crispri_four_lines\.lines\.rpe1\.download"):
        check(cfg)


def test_disabled_paper_is_not_checked():
    cfg = config()
    section(cfg)["enabled"] = False
    section(cfg)["audited"] = ["nothing"]
    check(cfg)


@pytest.mark.parametrize(
    "edit,key",
    [
        (
            lambda c: c["downloads"].pop("st_reliability_se600m_proteins"),
            r"se600m\.protein_embeddings: 'st_reliability_se600m_proteins' is not a key",
        ),
        (
            lambda c: section(c)["resources"].pop("se_embed"),
            r"resources\.se_embed: needed with se600m",
        ),
        (
            lambda c: section(c)["se600m"]["datasets"].append("no_shared_program"),
            r"se600m\.datasets\[1\]: 'no_shared_program' is not a crispri",
        ),
        (  # a model reading SE-600M on a data set the embedding step does not embed
            lambda c: section(c)["datasets"]["no_shared_program"]["models"].append("se600m"),
            r"no_shared_program\.models\[3\]: 'se600m' reads SE-600M .* not under "
            r"papers\.st_reliability\.se600m\.datasets",
        ),
        (  # ... or with no embedding step at all
            lambda c: section(c).pop("se600m"),
            r"crispri_four_lines\.models\[5\]: 'se600m' reads SE-600M",
        ),
    ],
)
def test_full_scale_se600m_references(edit, key):
    cfg = config("full.yaml")
    edit(cfg)
    with pytest.raises(ConfigError, match=key):
        check(cfg)
