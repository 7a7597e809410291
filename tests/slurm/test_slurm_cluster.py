"""The tiny config through the real SLURM profile on a real single-node SLURM cluster.

The cluster comes from tests/slurm/start-cluster.sh (Debian's munge/slurmctld/slurmd, a
fake GPU GRES). The profile is workflow/profiles/slurm with only the partition edited,
plus the two settings a cluster without accounting needs (squeue status, short first poll).
One run checks: (a) every non-local job went through sbatch, (b) GPU rules arrived with a
GPU and CPU rules without, (c) the outputs equal a local run's with the same seeds, and
(d) with ``training.fail_once`` every training job fails once, is resubmitted and the run
completes.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from repro.common.io import read_npz
from tests.conftest import ROOT, snakemake

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SLURM_DIR = ROOT / "tests" / "slurm"
TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
Q = TEST_CONFIG["papers"]["qsurv"]
LOCAL_RULES = {"claims_report", "download_dataset", "all", "qsurv"}


@pytest.fixture(scope="module")
def cluster():
    """Start the local cluster (installing the Debian packages when missing)."""
    start = subprocess.run(
        ["bash", str(SLURM_DIR / "start-cluster.sh")], capture_output=True, text=True, timeout=600
    )
    if start.returncode != 0:
        message = (
            f"local SLURM cluster did not start:\n{start.stdout[-2000:]}{start.stderr[-2000:]}"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    conf = re.search(r"export SLURM_CONF=(\S+)", start.stdout).group(1)
    yield {"SLURM_CONF": conf}
    subprocess.run(["bash", str(SLURM_DIR / "stop-cluster.sh")], capture_output=True, timeout=120)


def _profile(tmp_path: Path) -> Path:
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    profile["default-resources"]["slurm_partition"] = "debug"  # the one value a user edits
    profile["slurm-status-command"] = "squeue"  # no slurmdbd here: sacct cannot answer
    profile["slurm-init-seconds-before-status-checks"] = 2
    folder = tmp_path / "profile"
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump(profile))
    return folder


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slurm")
    config = copy.deepcopy(TEST_CONFIG)
    config["papers"]["qsurv"]["training"]["fail_once"] = True
    # QSurv's chain covers every kind of rule (CPU, GPU, local); the other papers' would only
    # add minutes (≈ 10 s per SLURM job here)
    for paper, section in config["papers"].items():
        section["enabled"] = paper == "qsurv"
    config_path = tmp / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    workdir = tmp / "run"
    result = snakemake(
        "--profile",
        str(_profile(tmp)),
        "--configfile",
        str(config_path),
        "--replace-workflow-config",
        workdir=workdir,
        env=cluster,
        timeout=1200,
    )
    return workdir, result.stdout + result.stderr


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("local")
    snakemake(
        "--cores",
        "2",
        "--configfile",
        str(ROOT / "config/test.yaml"),
        "--replace-workflow-config",
        "results/qsurv/claims.json",
        workdir=workdir,
    )
    return workdir


def _submitted(log: str) -> dict[str, list[str]]:
    """rule name -> SLURM job ids, from the executor's own lines (their log path names the rule)."""
    jobs: dict[str, list[str]] = {}
    pattern = r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/"
    for jobid, rule in re.findall(pattern, log):
        jobs.setdefault(rule, []).append(jobid)
    return jobs


def test_every_job_went_through_sbatch(slurm_run):
    workdir, log = slurm_run
    submitted = _submitted(log)
    datasets = len(Q["synthetic"]["scenarios"]) + len(Q["real_datasets"])
    trains = len(Q["synthetic"]["scenarios"]) * len(Q["synthetic_methods"]) + len(
        Q["real_datasets"]
    ) * len(Q["real_methods"])
    assert len(submitted["qsurv_prepare"]) == datasets
    assert len(submitted["qsurv_evaluate"]) == datasets
    assert len(submitted["qsurv_quadrature"]) == 1 and len(submitted["qsurv_claims"]) == 1
    # (d) every training job failed once (injected) and was resubmitted
    assert len(submitted["qsurv_train"]) == 2 * trains
    assert log.count("injected fault (training.fail_once)") >= trains
    assert not LOCAL_RULES & set(submitted)
    logs = workdir / ".snakemake/slurm_logs"
    for rule, ids in submitted.items():
        kept = {p.stem for p in (logs / f"rule_{rule}").rglob("*.log")}
        assert set(ids) <= kept, rule
    # every step's provenance names the SLURM job that ran it
    metrics = json.loads((workdir / "results/qsurv/metrics/gbsg2.json").read_text())
    assert metrics["provenance"]["slurm_job_id"] in submitted["qsurv_evaluate"]


def test_gpu_rules_got_a_gpu_and_cpu_rules_none(slurm_run):
    workdir, _ = slurm_run
    models = workdir / "results/qsurv/models"
    train_logs = sorted(models.glob("*/*.json"))
    assert train_logs
    for path in train_logs:
        provenance = json.loads(path.read_text())["provenance"]
        # --gpus=1 on the fake GRES: SLURM exports the device, torch finds none -> CPU
        assert provenance["cuda_visible_devices"] == "0", path
        assert provenance["device"] == "cpu"
    metrics = json.loads((workdir / "results/qsurv/metrics/gbsg2.json").read_text())
    assert metrics["provenance"]["cuda_visible_devices"] is None


def test_outputs_equal_a_local_run(slurm_run, local_run):
    workdir, _ = slurm_run
    for dataset, methods in [(d, Q["synthetic_methods"]) for d in Q["synthetic"]["scenarios"]] + [
        (d, Q["real_methods"]) for d in Q["real_datasets"]
    ]:
        for method in methods:
            name = f"results/qsurv/predictions/{dataset}/{method}.npz"
            on_slurm, local = read_npz(workdir / name), read_npz(local_run / name)
            np.testing.assert_array_equal(on_slurm["surv_metric"], local["surv_metric"])
            np.testing.assert_array_equal(on_slurm["epochs"], local["epochs"])
    claims = [
        {c["id"]: (c["measured"], c["verdict"]) for c in json.loads((d / name).read_text())}
        for d in (workdir, local_run)
        for name in ["results/qsurv/claims.json"]
    ]
    assert claims[0] == claims[1]
