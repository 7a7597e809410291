"""Runs that survive faults (local executor): a killed run resumes, bad inputs are named.

The same seed gives the same numbers: the killed-and-resumed run must reproduce an
uninterrupted run bit for bit (the epoch's shuffling comes from (seed, epoch) alone and the
checkpoint holds the optimiser and early-stopping state).
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from repro.common.io import read_npz
from tests.conftest import ROOT, snakemake, snakemake_command, snakemake_env

pytestmark = pytest.mark.workflow

TARGET = "results/qsurv/runs/loglogistic/part0"  # the data set's one training job
PREDICTIONS = f"{TARGET}/qsurv.npz"


@pytest.fixture(scope="module")
def long_config(tmp_path_factory) -> Path:
    """The tiny config with one long training job (no early stop) to interrupt: QSurv's
    model alone on the scenario (the job trains the data set's methods in turn; resuming
    across methods is tested in tests/qsurv/test_train_methods.py)."""
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    q = config["papers"]["qsurv"]
    q["training"].update(epochs=250, patience=250)
    q["synthetic_methods"] = ["qsurv"]
    del q["claims"]["hazard_vs_trapezoid_k3"]  # it compares two methods left out here
    path = tmp_path_factory.mktemp("config") / "long.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _args(config: Path) -> tuple[str, ...]:
    return (
        "--cores",
        "1",
        "--rerun-incomplete",
        "--configfile",
        str(config),
        "--replace-workflow-config",
        TARGET,
    )


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, long_config) -> Path:
    workdir = tmp_path_factory.mktemp("uninterrupted")
    snakemake(*_args(long_config), workdir=workdir)
    return workdir


def _checkpoint_epoch(workdir: Path) -> int:
    for path in (workdir / "results/qsurv/checkpoints/loglogistic/qsurv").glob("seed*.pt"):
        try:
            return torch.load(path, weights_only=True)["state"]["epoch"]
        except (OSError, RuntimeError, EOFError, KeyError):
            return 0  # being replaced right now
    return 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_killed_run_resumes_from_its_checkpoint_and_matches(
    tmp_path, long_config, uninterrupted, signum
):
    """SIGTERM is what a scheduler or Ctrl-C sends; SIGKILL is a dead node, after which
    Snakemake's directory lock stays behind and ``snakemake --unlock`` must run first."""
    command = snakemake_command(*_args(long_config), workdir=tmp_path)
    process = subprocess.Popen(
        command,
        env=snakemake_env(),
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while _checkpoint_epoch(tmp_path) < 30:  # well into the first seed's training
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "training never reached epoch 30"
        time.sleep(0.2)
    os.killpg(process.pid, signum)  # snakemake and its running job
    process.wait(timeout=60)
    killed_at = _checkpoint_epoch(tmp_path)
    # SIGKILL leaves the output folder behind (Snakemake cannot clean up), not the predictions
    assert not (tmp_path / PREDICTIONS).exists()
    if signum == signal.SIGKILL:
        snakemake("--unlock", *_args(long_config), workdir=tmp_path)

    rerun = snakemake(*_args(long_config), workdir=tmp_path)  # the same command again
    log = (tmp_path / "logs/qsurv/train/loglogistic/part0.log").read_text()
    assert "resuming seed 0 from" in log and f"at epoch {killed_at}" in log, log[-2000:]
    resumed = read_npz(tmp_path / PREDICTIONS)
    reference = read_npz(uninterrupted / PREDICTIONS)
    for key in ("surv_metric", "surv_truth", "epochs"):
        np.testing.assert_array_equal(resumed[key], reference[key])
    assert rerun.returncode == 0
    # the resume state is removed once the job has finished
    assert not list((tmp_path / "results/qsurv/checkpoints").rglob("seed*.pt"))


def test_truncated_input_is_named_in_the_error(tmp_path, long_config, uninterrupted):
    workdir = tmp_path / "run"
    data = Path("results/qsurv/data/loglogistic.npz")
    (workdir / data).parent.mkdir(parents=True)
    content = (uninterrupted / data).read_bytes()
    (workdir / data).write_bytes(content[: len(content) // 2])
    config = yaml.safe_load(long_config.read_text())
    short = copy.deepcopy(config)
    short["papers"]["qsurv"]["training"].update(epochs=2, patience=2)
    path = tmp_path / "short.yaml"
    path.write_text(yaml.safe_dump(short))
    result = snakemake(*_args(path), workdir=workdir, check=False)
    assert result.returncode != 0
    log = (workdir / "logs/qsurv/train/loglogistic/part0.log").read_text()
    assert str(data) in log and "cannot read" in log, log[-2000:]
    assert not (workdir / TARGET).exists()
