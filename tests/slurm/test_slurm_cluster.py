"""The tiny config through the real SLURM profile on a real single-node SLURM cluster.

The cluster comes from tests/slurm/start-cluster.sh (Debian's munge/slurmctld/slurmd, a
fake GPU GRES). The profile is workflow/profiles/slurm with only the partition edited,
plus the two settings a cluster without accounting needs (squeue status, short first poll).

By default a short chain of four jobs (QSurv's prepare on gbsg2, then gbsg2's two methods,
restricted by a config override, in one training job each as ``methods_per_job: 1`` makes
them at full scale, then gbsg2's evaluation) checks: (a) every job went through sbatch with
the profile, (b) the GPU rule was submitted with a GPU, its memory and one method's runtime,
the CPU rule without a GPU, (c) with ``training.fail_once`` each training job fails once, is
resubmitted and the run completes, which also needs (d) the squeue status polling to see
every job end, and (e) the predictions and metrics equal a local run's, whose one training
job trains both methods (the embedded default).
The same checks on QSurv's whole chain (≈ 13 SLURM jobs) are opt-in:
``pytest -m slow tests/slurm``.
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
from repro.qsurv.catalog import KAPLAN_MEIER
from tests.conftest import ROOT, snakemake

pytestmark = pytest.mark.slurm

SLURM_DIR = ROOT / "tests" / "slurm"
TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
Q = TEST_CONFIG["papers"]["qsurv"]
LOCAL_RULES = {"claims_report", "download_dataset", "all", "qsurv"}
SHORT_METHODS = ["qsurv", "coxph"]  # the time-LoRA model and a baseline, on gbsg2
# methods_per_job 1 on SLURM: one training job per method of gbsg2 (the full-scale layout);
# the local run it is compared with keeps the default, one job for both
SHORT_TARGETS = [f"results/qsurv/runs/gbsg2/part{k}" for k in range(len(SHORT_METHODS))]
SHORT_LOCAL_TARGET = "results/qsurv/runs/gbsg2/part0"
SHORT_METRICS = "results/qsurv/metrics/gbsg2.json"  # the evaluation reads both jobs' folders


def _run_file(workdir: Path, dataset: str, method: str, ext: str) -> Path:
    """A method's file, in whichever training job's folder (part) wrote it."""
    (path,) = (workdir / "results/qsurv/runs" / dataset).glob(f"part*/{method}.{ext}")
    return path


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


def _config(
    tmp: Path,
    real_methods: list[str] | None = None,
    fail_once: bool = False,
    methods_per_job: int | None = None,
) -> Path:
    config = copy.deepcopy(TEST_CONFIG)
    q = config["papers"]["qsurv"]
    q["training"]["fail_once"] = fail_once
    q["methods_per_job"] = methods_per_job
    if real_methods is not None:
        q["real_methods"] = real_methods
        del q["claims"]["competitive_ctd_gbsg2"]  # it compares methods left out here
    # QSurv's chain covers every kind of rule (CPU, GPU, local); the other papers' would only
    # add minutes (≈ 10 s per SLURM job here)
    for paper, section in config["papers"].items():
        section["enabled"] = paper == "qsurv"
    config_path = tmp / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    return config_path


def _run_on_slurm(
    cluster,
    tmp: Path,
    *targets: str,
    real_methods: list[str] | None = None,
    methods_per_job: int | None = None,
) -> tuple[Path, str]:
    config_path = _config(tmp, real_methods, fail_once=True, methods_per_job=methods_per_job)
    workdir = tmp / "run"
    result = snakemake(
        "--profile",
        str(_profile(tmp)),
        "--configfile",
        str(config_path),
        "--replace-workflow-config",
        *targets,
        workdir=workdir,
        env=cluster,
        timeout=1200,
    )
    return workdir, result.stdout + result.stderr


def _run_locally(tmp: Path, *targets: str, real_methods: list[str] | None = None) -> Path:
    workdir = tmp / "run"
    snakemake(
        "--cores",
        "2",
        "--configfile",
        str(_config(tmp, real_methods)),
        "--replace-workflow-config",
        *targets,
        workdir=workdir,
    )
    return workdir


@pytest.fixture(scope="module")
def short_run(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slurm_short")
    return _run_on_slurm(
        cluster, tmp, *SHORT_TARGETS, SHORT_METRICS, real_methods=SHORT_METHODS, methods_per_job=1
    )


@pytest.fixture(scope="module")
def short_local_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("local_short")
    return _run_locally(tmp, SHORT_LOCAL_TARGET, SHORT_METRICS, real_methods=SHORT_METHODS)


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    return _run_on_slurm(cluster, tmp_path_factory.mktemp("slurm"))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    return _run_locally(tmp_path_factory.mktemp("local"), "results/qsurv/claims.json")


def _submitted(log: str) -> dict[str, list[str]]:
    """rule name -> SLURM job ids, from the executor's own lines (their log path names the rule)."""
    jobs: dict[str, list[str]] = {}
    pattern = r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/"
    for jobid, rule in re.findall(pattern, log):
        jobs.setdefault(rule, []).append(jobid)
    return jobs


def _job(jobid: str, env: dict) -> str:
    """``scontrol show job`` of a finished job (kept for MinJobAge=300 s)."""
    done = subprocess.run(
        ["scontrol", "show", "job", jobid],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_short_chain_through_sbatch_with_resources_and_a_retry(short_run, cluster):
    workdir, log = short_run
    submitted = _submitted(log)
    assert len(submitted["qsurv_prepare"]) == 1
    # (c) each method's training job failed once (injected), was resubmitted, and the run
    # completed
    trains = len(SHORT_METHODS)  # methods_per_job 1
    assert len(submitted["qsurv_train"]) == 2 * trains
    assert log.count("injected fault (training.fail_once)") >= trains
    assert set(submitted) == {"qsurv_prepare", "qsurv_train", "qsurv_evaluate"}
    # (b) what SLURM was asked for: the GPU rule a GPU, its memory and one method's runtime
    # (resources.train.runtime per method), the CPU rule no GPU
    train = Q["resources"]["train"]
    for jobid in submitted["qsurv_train"]:
        job = _job(jobid, cluster)
        assert re.search(r"TresPerJob=gres[:/]gpu[:=]1\b", job), job
        assert f"MinMemoryNode={train['mem_mb']}M" in job, job
        assert f"TimeLimit=00:{train['runtime']:02d}:00" in job, job
    assert not re.search(r"gres[:/]gpu", _job(submitted["qsurv_prepare"][0], cluster))
    jobs = []
    for part, method in enumerate(SHORT_METHODS):  # each in its own job's folder
        assert [p.name for p in (workdir / SHORT_TARGETS[part]).glob("*.json")] == [
            f"{method}.json"
        ]
        record = json.loads((workdir / SHORT_TARGETS[part] / f"{method}.json").read_text())
        provenance = record["provenance"]
        assert provenance["slurm_job_id"] in submitted["qsurv_train"]
        jobs.append(provenance["slurm_job_id"])
        assert provenance["cuda_visible_devices"] == "0"  # fake GRES: a device, torch finds none
        assert provenance["device"] == "cpu"
    assert len(set(jobs)) == trains  # one SLURM job per method


def test_short_chain_equals_a_local_run(short_run, short_local_run):
    """One SLURM job per method gives the numbers of the local run's one job for both."""
    workdir, _ = short_run
    for method in SHORT_METHODS:
        on_slurm = read_npz(_run_file(workdir, "gbsg2", method, "npz"))
        local = read_npz(short_local_run / SHORT_LOCAL_TARGET / f"{method}.npz")
        for key in ("surv_metric", "surv_truth", "epochs"):  # all but the timings
            np.testing.assert_array_equal(on_slurm[key], local[key])
    metrics = [
        json.loads((d / SHORT_METRICS).read_text())["methods"] for d in (workdir, short_local_run)
    ]
    # the evaluation adds the reference arm (Kaplan-Meier), fitted there, not in a training job
    assert list(metrics[0]) == list(metrics[1]) == [*SHORT_METHODS, KAPLAN_MEIER]
    for method in SHORT_METHODS:
        rows = [
            [{k: v for k, v in r.items() if k != "train_seconds"} for r in m[method]["per_seed"]]
            for m in metrics
        ]
        assert rows[0] == rows[1], method


@pytest.mark.slow
def test_every_job_went_through_sbatch(slurm_run):
    workdir, log = slurm_run
    submitted = _submitted(log)
    datasets = len(Q["synthetic"]["scenarios"]) + len(Q["real_datasets"])
    trains = datasets  # one training job per data set
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


@pytest.mark.slow
def test_gpu_rules_got_a_gpu_and_cpu_rules_none(slurm_run):
    workdir, _ = slurm_run
    train_logs = sorted((workdir / "results/qsurv/runs").glob("*/part*/*.json"))
    assert train_logs
    for path in train_logs:
        provenance = json.loads(path.read_text())["provenance"]
        # --gpus=1 on the fake GRES: SLURM exports the device, torch finds none -> CPU
        assert provenance["cuda_visible_devices"] == "0", path
        assert provenance["device"] == "cpu"
    metrics = json.loads((workdir / "results/qsurv/metrics/gbsg2.json").read_text())
    assert metrics["provenance"]["cuda_visible_devices"] is None


@pytest.mark.slow
def test_outputs_equal_a_local_run(slurm_run, local_run):
    workdir, _ = slurm_run
    for dataset, methods in [(d, Q["synthetic_methods"]) for d in Q["synthetic"]["scenarios"]] + [
        (d, Q["real_methods"]) for d in Q["real_datasets"]
    ]:
        for method in methods:
            on_slurm = read_npz(_run_file(workdir, dataset, method, "npz"))
            local = read_npz(_run_file(local_run, dataset, method, "npz"))
            np.testing.assert_array_equal(on_slurm["surv_metric"], local["surv_metric"])
            np.testing.assert_array_equal(on_slurm["epochs"], local["epochs"])
    claims = [
        {c["id"]: (c["measured"], c["verdict"]) for c in json.loads((d / name).read_text())}
        for d in (workdir, local_run)
        for name in ["results/qsurv/claims.json"]
    ]
    assert claims[0] == claims[1]
