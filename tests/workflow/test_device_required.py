"""`device: cuda` (full scale) on a machine without CUDA: a job that requests a GPU stops at
its start naming the rule and the grant; a job that requests none runs on the CPU."""

from __future__ import annotations

import pytest
import torch
import yaml

from tests.conftest import ROOT, snakemake

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA"),
]
TARGET = "results/qsurv/runs/loglogistic/part0"  # one QSurv training job of the tiny config
LOG = "logs/qsurv/train/loglogistic/part0.log"


def _config(tmp_path, gpu: int):
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["device"] = "cuda"
    config["papers"]["qsurv"]["resources"]["train"]["gpu"] = gpu
    path = tmp_path / f"gpu{gpu}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_gpu_job_without_cuda_stops_at_once_naming_rule_and_grant(tmp_path):
    args = ("--cores", "1", TARGET, "--configfile", str(_config(tmp_path, 1)))
    env = {"CUDA_VISIBLE_DEVICES": "", "SLURM_JOB_GPUS": "3"}  # what a scheduler exported
    result = snakemake(*args, workdir=tmp_path, env=env, check=False, timeout=600)
    assert result.returncode != 0
    log = (tmp_path / LOG).read_text()
    assert "rule qsurv_train: device: cuda, but no CUDA device is available" in log
    assert "CUDA_VISIBLE_DEVICES=''" in log and "SLURM_JOB_GPUS='3'" in log
    assert "SLURM_GPUS_ON_NODE unset" in log
    assert not (tmp_path / TARGET).exists()


def test_a_job_requesting_no_gpu_runs_on_the_cpu(tmp_path):
    args = ("--cores", "1", TARGET, "--configfile", str(_config(tmp_path, 0)))
    snakemake(*args, workdir=tmp_path, timeout=600)
    assert (tmp_path / TARGET).is_dir()
