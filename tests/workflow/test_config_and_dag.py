"""The config is validated before any job starts; lint, format and the full-scale DAG."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, snakemake

pytestmark = pytest.mark.workflow

TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())


def _dry_run_with(tmp_path: Path, mutate) -> subprocess.CompletedProcess:
    config = copy.deepcopy(TEST_CONFIG)
    mutate(config)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return snakemake(
        "-n",
        "--configfile",
        str(path),
        "--replace-workflow-config",
        workdir=tmp_path,
        check=False,
        timeout=120,
    )


def _set(path: str, value):
    def mutate(config):
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node[key]
        node[last] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "names"),
    [
        (_set("papers.qsurv.trainig", {"epochs": 3}), ["trainig"]),
        (_set("papers.qsurv.training.epochs", "ten"), ["epochs", "ten"]),
        (_set("papers.qsurv.training.epochs", -5), ["epochs", "-5"]),
        (_set("papers.qsurv.real_datasets", {"metabrik": {"source": "bundled"}}), ["metabrik"]),
        (_set("papers.qsurv.real_methods", ["qsurv", "deepsurv"]), ["real_methods", "deepsurv"]),
        (
            _set(
                "papers.qsurv.real_datasets",
                {"metabric": {"source": "deepsurv_h5", "download": "metabric"}},
            ),
            ["metabric", "downloads"],
        ),
        (_set("device", "tpu"), ["device", "tpu"]),
    ],
    ids=[
        "unknown-key",
        "wrong-type",
        "negative-epochs",
        "unknown-dataset",
        "unknown-method",
        "missing-download",
        "bad-device",
    ],
)
def test_bad_config_stops_before_any_job_naming_the_key(tmp_path, mutate, names):
    result = _dry_run_with(tmp_path, mutate)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    for name in names:
        assert name in message, message[-3000:]
    assert "Building DAG of jobs" not in message or "Job stats" not in message
    assert not (tmp_path / "results").exists()


def test_lint_and_format_are_clean():
    lint = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "--lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    fmt = subprocess.run(
        [str(Path(sys.executable).parent / "snakefmt"), "--check", "Snakefile", "rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_full_scale_dag_builds(tmp_path):
    result = snakemake(
        "-n", "--configfile", str(ROOT / "config" / "full.yaml"), workdir=tmp_path, timeout=120
    )
    counts = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    full = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    pinned = sum(1 for spec in full["downloads"].values() if spec["sha256"])
    assert counts["download_dataset"] == pinned
    assert counts["download_unverified"] == len(full["downloads"]) - pinned
    q = full["papers"]["qsurv"]
    assert counts["qsurv_train"] == (
        len(q["synthetic"]["scenarios"]) * len(q["synthetic_methods"])
        + len(q["real_datasets"]) * len(q["real_methods"])
    )
    e2e = full["papers"]["plsa"]["end_to_end"]
    assert counts["plsa_train"] == len(e2e["datasets"]) * len(e2e["methods"])


@pytest.mark.parametrize("missing", ["qsurv", "plsa"])
def test_a_config_without_a_paper_builds_without_its_jobs(tmp_path, missing):
    """Papers slot in and out: an absent paper defaults to disabled with its defaults."""
    config = copy.deepcopy(TEST_CONFIG)
    del config["papers"][missing]
    path = tmp_path / "one_paper.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", str(path), workdir=tmp_path, timeout=120)
    jobs = {
        line.split()[0]
        for line in result.stdout.splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }
    assert not any(job.startswith(f"{missing}_") for job in jobs)
    other = "plsa" if missing == "qsurv" else "qsurv"
    assert f"{other}_claims" in jobs
