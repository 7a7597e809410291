"""The one place where a compute device is chosen (config key ``device: auto|cpu|cuda``)."""

from __future__ import annotations

import torch

CHOICES = ("auto", "cpu", "cuda")


def select_device(name: str = "auto") -> torch.device:
    """``auto`` means CUDA when available, else CPU; ``cuda`` without a GPU is an error.

    On a SLURM node with a fake GRES, ``CUDA_VISIBLE_DEVICES`` may be set with no device
    behind it: ``torch.cuda.is_available()`` is then false and ``auto`` falls back to CPU.
    """
    if name not in CHOICES:
        raise ValueError(f"device must be one of {CHOICES}, got {name!r}")
    if name == "cpu":
        return torch.device("cpu")
    if torch.cuda.is_available():
        return torch.device("cuda")
    if name == "cuda":
        raise RuntimeError("device: cuda was requested but torch.cuda.is_available() is false")
    return torch.device("cpu")
