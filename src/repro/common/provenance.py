"""Provenance of a step: config, git commit, device, versions, wall time, peak memory."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

REPO_ROOT = Path(__file__).resolve().parents[3]


def git_commit() -> str | None:
    """The checkout's commit (with ``-dirty`` when tracked files changed), or None."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit


class RunRecorder:
    """Measures a step (wall time, peak memory) and produces its provenance block.

    Use as ``with RunRecorder(config=cfg, device=dev) as run: ...`` and then
    ``run.provenance()``.
    """

    def __init__(self, *, config: Any, device: Any = "cpu", seed: Any = None):
        self.config = config
        self.device = torch.device(device)
        self.seed = seed
        self._start = 0.0
        self.wall_time_s: float | None = None

    def __enter__(self) -> RunRecorder:
        self.started_at = time.time()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_time_s = time.perf_counter() - self._start

    def provenance(self) -> dict[str, Any]:
        wall = self.wall_time_s
        if wall is None:  # still inside the block
            wall = time.perf_counter() - self._start
        record = {
            "config": self.config,
            "seed": self.seed,
            "git_commit": git_commit(),
            "device": str(self.device),
            "torch_version": torch.__version__,
            "hostname": platform.node(),
            # where a cluster ran the step, and which GPU it was given (None when local)
            "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "python_version": platform.python_version(),
            "platform": sys.platform,
            "started_at_unix": self.started_at,
            "wall_time_s": wall,
            # ru_maxrss is in KiB on Linux: the process's peak resident memory.
            "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
        if self.device.type == "cuda":
            record["gpu_peak_memory_mb"] = torch.cuda.max_memory_allocated(self.device) / 2**20
        return record
