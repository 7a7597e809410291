"""Seeding of every random source a step uses, so the same seed gives the same numbers."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy's legacy global state and torch; return a fresh NumPy Generator."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def set_threads(threads: int) -> None:
    """Pin torch's intra-op threads (numba-parallel code such as pycox resets them)."""
    torch.set_num_threads(max(1, int(threads)))
