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
        raise RuntimeError("device: cuda was requested but torch.cuda.is_available() is false")
    return torch.device("cpu")


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
