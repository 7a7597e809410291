"""Every step a rule runs has ``python -m repro.sbd.<step> --help``, and the steps run from
the command line on a config file as the rules run them."""

from __future__ import annotations

import json

import pytest

from repro.sbd import pipeline, study
from repro.sbd.factors import Decomposition
from tests.conftest import ROOT, assert_steps_answer_help

TEST_CONFIG = str(ROOT / "config" / "test.yaml")


def test_every_step_answers_help():
    steps = ["pipeline", "pipeline prepare", "pipeline decompose", "pipeline evaluate", "study",
             "figures", "claims"]  # fmt: skip
    usage = assert_steps_answer_help("sbd", steps)
    assert "--results" in usage["claims"] and "--config" in usage["study"]


def run_pipeline(tmp_path, dataset: str) -> dict:
    """prepare, decompose (both methods) and evaluate one data set of config/test.yaml from
    the command line; the metrics document."""
    args = ["--config", TEST_CONFIG]
    pipeline.main([*args, "prepare", dataset, str(tmp_path / f"{dataset}.npz")])
    for method in ("sbd", "vnm_unsigned"):
        out = [str(tmp_path / f"{method}.npz"), str(tmp_path / f"{method}.json")]
        pipeline.main([*args, "decompose", str(tmp_path / f"{dataset}.npz"), method, *out])
    pipeline.main([*args, "evaluate", dataset, str(tmp_path / f"{dataset}.npz"), str(tmp_path),
                   str(tmp_path / "metrics.json"), "--device", "cpu"])  # fmt: skip
    return json.loads((tmp_path / "metrics.json").read_text())


def test_steps_run_from_the_command_line(tmp_path):
    args = ["--config", TEST_CONFIG]
    metrics = run_pipeline(tmp_path, "davis")
    assert "planted_truth" not in metrics  # a real graph has no truth
    dec = Decomposition.load(tmp_path / "sbd.npz")
    assert metrics["methods"]["sbd"]["cf"] == pytest.approx(89 / dec.cost)
    study.main([*args, "sign_study", str(tmp_path / "sign.json"), "--method", "sbd"])
    rows = json.loads((tmp_path / "sign.json").read_text())["rows"]
    assert {r["method"] for r in rows} == {"sbd"} and len(rows) == 2 * 3  # settings x seeds
