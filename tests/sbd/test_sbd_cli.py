"""Every step a rule runs has ``python -m repro.sbd.<step> --help``, and the steps run from
the command line on a config file as the rules run them."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from repro.sbd import pipeline, study
from repro.sbd.factors import Decomposition
from tests.conftest import ROOT

TEST_CONFIG = str(ROOT / "config" / "test.yaml")


@pytest.mark.parametrize(
    "step",
    [["pipeline"], ["pipeline", "prepare"], ["pipeline", "decompose"], ["pipeline", "evaluate"],
     ["study"], ["figures"], ["claims"]],
)  # fmt: skip
def test_help(step, capsys):
    module = importlib.import_module(f"repro.sbd.{step[0]}")
    with pytest.raises(SystemExit) as done:
        module.main([*step[1:], "--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage:")


def test_a_step_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "repro.sbd.claims", "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert "--results" in done.stdout


def test_steps_run_from_the_command_line(tmp_path):
    args = ["--config", TEST_CONFIG]
    pipeline.main([*args, "prepare", "davis", str(tmp_path / "davis.npz")])
    for method in ("sbd", "vnm_unsigned"):
        out = [str(tmp_path / f"{method}.npz"), str(tmp_path / f"{method}.json")]
        pipeline.main([*args, "decompose", str(tmp_path / "davis.npz"), method, *out])
    pipeline.main([*args, "evaluate", "davis", str(tmp_path / "davis.npz"), str(tmp_path),
                   str(tmp_path / "metrics.json"), "--device", "cpu"])  # fmt: skip
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    dec = Decomposition.load(tmp_path / "sbd.npz")
    assert metrics["methods"]["sbd"]["cf"] == pytest.approx(89 / dec.cost)
    study.main([*args, "sign_study", str(tmp_path / "sign.json"), "--method", "sbd"])
    rows = json.loads((tmp_path / "sign.json").read_text())["rows"]
    assert {r["method"] for r in rows} == {"sbd"} and len(rows) == 2 * 3  # settings x seeds
