"""The one place where a compute device is chosen (config key ``device: auto|cpu|cuda``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a device is chosen, not by the Snakefile
    import torch

CHOICES = ("auto", "cpu", "cuda")


def select_device(name: str = "auto") -> torch.device:
    """``auto`` means CUDA when available, else CPU; ``cuda`` without a GPU is an error.

    On a SLURM node with a fake GRES, ``CUDA_VISIBLE_DEVICES`` may be set with no device
    behind it: ``torch.cuda.is_available()`` is then false and ``auto`` falls back to CPU.
    """
    import torch

    if name not in CHOICES:
        raise ValueError(f"device must be one of {CHOICES}, got {name!r}")
    if name == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda")
    if name == "cuda":
        raise RuntimeError(f"device: cuda, but no CUDA device is available ({granted()})")
    return torch.device("cpu")


# What the scheduler gave the job: the variables SLURM sets for a job granted GPUs
# (--gres/--gpus) and the one CUDA reads.
GRANT_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "SLURM_JOB_ID",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_GPUS",
    "SLURM_GPUS_ON_NODE",
    "SLURM_STEP_GPUS",
)


def granted() -> str:
    """The GPU grant as this process sees it, for error messages: each variable of
    GRANT_VARIABLES with its value, or "unset"."""
    import os

    return ", ".join(
        f"{k}={os.environ[k]!r}" if k in os.environ else f"{k} unset" for k in GRANT_VARIABLES
    )


def job_device(configured: str, gpus: int) -> str:
    """The device setting a job runs with: ``cuda`` (a GPU required, as at full scale) holds
    only for jobs that request a GPU; a job requesting none runs with ``auto``."""
    return "auto" if configured == "cuda" and not gpus else configured


def require_cuda(rule: str) -> None:
    """Stop a job at its start, before any work, when ``device: cuda`` finds no CUDA device:
    at full scale a GPU job on the CPU would run until its time limit."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(
            f"rule {rule}: device: cuda, but no CUDA device is available to this job "
            f"({granted()}); the rule requests a GPU (resources: gpu), so the scheduler granted "
            "none or the node's driver does not see it: check the GPU request in "
            "workflow/profiles/slurm/config.yaml (gres, gpu_model), or set device: auto to let "
            "GPU rules fall back to the CPU"
        )


def visible_gpu_count() -> int:
    """GPUs this process may use, without importing torch (the Snakefile calls this).

    ``CUDA_VISIBLE_DEVICES`` wins when set; otherwise ``nvidia-smi -L`` lists the devices;
    no driver means no GPU.
    """
    import os
    import shutil
    import subprocess

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [e for e in visible.split(",") if e.strip()]
        return 0 if not entries or entries[0].strip() == "-1" else len(entries)
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        listing = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in listing.splitlines() if line.startswith("GPU "))
