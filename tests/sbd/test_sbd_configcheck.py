"""Cross-checks of the SBD config: a bad value stops the run and names its key."""

from __future__ import annotations

import copy

import pytest
import yaml

from repro.common.configcheck import ConfigError
from repro.sbd.configcheck import check
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def _broken(edit):
    config = copy.deepcopy(CONFIG)
    edit(config["papers"]["sbd"], config)
    return config


def test_shipped_configs_pass():
    for name in ("config.yaml", "test.yaml", "full.yaml"):
        check(yaml.safe_load((ROOT / "config" / name).read_text()))


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (
            lambda s, c: s["datasets"].update(noise_study={"kind": "bundled"}),
            "papers.sbd.datasets.noise_study",
        ),
        (
            lambda s, c: s["datasets"].update(sign_study={"kind": "bundled"}),
            "papers.sbd.datasets.sign_study",
        ),
        (
            lambda s, c: s["datasets"].update(
                web={
                    "kind": "download",
                    "download": "nowhere",
                    "format": "snap_edgelist",
                    "symmetrize": True,
                }
            ),
            "papers.sbd.datasets.web.download",
        ),
        (lambda s, c: s["noise_study"].update(methods=["sbd", "asso"]), "papers.sbd.noise_study"),
        (lambda s, c: s["sign_study"].update(methods=["slugger"]), "papers.sbd.sign_study"),
        (
            lambda s, c: s["claims"]["signed_beats_unsigned"].update(setting="nested"),
            "papers.sbd.claims.signed_beats_unsigned.setting",
        ),
        (
            lambda s, c: s["claims"]["compression_planted"].update(explorations=["dense"]),
            "papers.sbd.claims.compression_planted.explorations",
        ),
        (  # a cell that is not in the noise study's grid
            lambda s, c: s["claims"]["planted_recovery"].update(deletion=0.07),
            "papers.sbd.claims.planted_recovery.deletion",
        ),
        (lambda s, c: s["claims"]["cpu_speedup"].update(d=128), "papers.sbd.claims.cpu_speedup.d"),
        (
            lambda s, c: s["claims"]["compression_planted"].update(dataset="karate"),
            "papers.sbd.claims.compression_planted.dataset",
        ),
        (
            lambda s, c: s["claims"]["signed_beats_unsigned"].update(baseline="slugger"),
            "papers.sbd.claims.signed_beats_unsigned.baseline",
        ),
        (
            lambda s, c: s["checks"]["spmm_correct"].update(kind="comparison"),
            "papers.sbd.checks.spmm_correct.kind",
        ),
    ],
)
def test_bad_value_names_its_key(edit, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check(_broken(edit))
