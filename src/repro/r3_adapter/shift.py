"""The low-light shift of brief §6: observation = g·(M s) + b + σ ε at three severities.

Gain g, colour cast M and black level b act channel-wise and any PEFT can undo them; the
read noise σ ε can only be overcome by aggregating relational evidence (several patches
agreeing on one correspondence), which is the line the paper draws. Clean observations
are s + 0.1 ε.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch


@dataclasses.dataclass(frozen=True)
class LowLight:
    gain: tuple[float, ...] = (0.5, 0.3, 0.2)  # severity 1, 2, 3
    noise: tuple[float, ...] = (0.25, 0.30, 0.35)
    black_level: float = -0.5
    cast_strength: float = 0.3  # M = I + cast_strength · N(0, 1)
    cast_seed: int = 1234  # the cast is one fixed matrix, the same for every scene and seed
    clean_noise: float = 0.1

    def __post_init__(self):
        object.__setattr__(self, "gain", tuple(self.gain))
        object.__setattr__(self, "noise", tuple(self.noise))
        if len(self.gain) != len(self.noise):
            raise ValueError("low_light: gain and noise need one entry per severity")

    @property
    def severities(self) -> tuple[int, ...]:
        return tuple(range(1, len(self.gain) + 1))

    def cast(self, channels: int) -> torch.Tensor:
        rng = np.random.default_rng(self.cast_seed)
        noise = rng.normal(size=(channels, channels)).astype(np.float32)
        return torch.eye(channels) + self.cast_strength * torch.from_numpy(noise)


def observe(
    texture: torch.Tensor, severity: int, shift: LowLight, rng: np.random.Generator
) -> torch.Tensor:
    """What the camera records of ``texture`` (…, C) at ``severity`` (0 = clean)."""
    eps = torch.from_numpy(rng.normal(size=texture.shape).astype(np.float32))
    if severity == 0:
        return texture + shift.clean_noise * eps
    if severity not in shift.severities:
        raise ValueError(f"severity must be 0 (clean) or one of {shift.severities}")
    g, sigma = shift.gain[severity - 1], shift.noise[severity - 1]
    cast = shift.cast(texture.shape[-1])
    return g * texture @ cast.T + shift.black_level + sigma * eps
