"""benchmarks/gpu_smoke.sh's structure, on the CPU: --dry-run lists one step per paper and
checks that every Snakemake target and Python entry point it would run exists."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from tests.conftest import ROOT, snakemake_env

pytestmark = pytest.mark.workflow


def test_dry_run_lists_eight_steps_one_per_paper(tmp_path):
    out = tmp_path / "smoke"
    result = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "gpu_smoke.sh"), "--dry-run", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=snakemake_env({"PYTHON": sys.executable}),
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    steps = re.findall(r"^  (\d)\. (\w+): ", result.stdout, flags=re.M)
    papers = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]
    assert [int(i) for i, _ in steps] == list(range(1, 9))
    assert sorted(p for _, p in steps) == sorted(papers) and len(papers) == 8
    assert "cuSPARSE" in result.stdout and "chunk 64" in result.stdout
    assert result.stdout.rstrip().endswith("every Python step imports")
    assert f"outputs under {out}" in result.stdout and out.is_dir()
