"""Observed two-view batches: scenes seen through a domain (clean or a low-light severity).

A seed fixes three disjoint scene sets: the few-shot adaptation set, a validation set (for
the learning-rate search) and the test set; every test scene is observed in every domain
(same geometry and texture, independent noise), so domains differ only by the shift.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from repro.r3_adapter.names import domain_name
from repro.r3_adapter.scenes import SceneConfig, Scenes, make_scenes
from repro.r3_adapter.shift import LowLight, observe


@dataclasses.dataclass
class Observed:
    """Model inputs and targets for a batch of scenes in one domain."""

    obs1: torch.Tensor  # (B, N, C)
    obs2: torch.Tensor  # (B, N, C)
    scenes: Scenes

    def __len__(self) -> int:
        return self.obs1.shape[0]

    def inputs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.obs1, self.scenes.xyz1, self.obs2

    def subset(self, index) -> Observed:
        return Observed(self.obs1[index], self.obs2[index], self.scenes.subset(index))

    def to(self, device) -> Observed:
        s = self.scenes
        fields = {f.name: getattr(s, f.name).to(device) for f in dataclasses.fields(s)}
        return Observed(self.obs1.to(device), self.obs2.to(device), Scenes(**fields))


def observed(scenes: Scenes, severity: int, shift: LowLight, rng: np.random.Generator) -> Observed:
    return Observed(
        observe(scenes.texture1, severity, shift, rng),
        observe(scenes.texture2, severity, shift, rng),
        scenes,
    )


@dataclasses.dataclass(frozen=True)
class SplitConfig:
    fewshot: int = 256
    validation: int = 128
    test: int = 512
    adapt_severity: int = 2  # the shifted domain that adaptation sees


def make_splits(
    scene: SceneConfig, shift: LowLight, split: SplitConfig, seed: int
) -> dict[str, np.ndarray]:
    """Arrays of the few-shot, validation and test sets of one seed (test in every domain)."""
    rng = np.random.default_rng([seed, 7])  # distinct from the pretraining stream
    arrays: dict[str, np.ndarray] = {}
    for name, n in (("fewshot", split.fewshot), ("validation", split.validation)):
        data = observed(make_scenes(scene, n, rng), split.adapt_severity, shift, rng)
        arrays |= _flatten(name, data)
    test = make_scenes(scene, split.test, rng)
    for severity in (0, *shift.severities):
        arrays |= _flatten(f"test/{domain_name(severity)}", observed(test, severity, shift, rng))
    return arrays


def _flatten(prefix: str, data: Observed) -> dict[str, np.ndarray]:
    out = {f"{prefix}/obs1": data.obs1.numpy(), f"{prefix}/obs2": data.obs2.numpy()}
    return out | {f"{prefix}/{k}": v for k, v in data.scenes.arrays().items()}


def split_from_arrays(arrays: dict[str, np.ndarray], prefix: str) -> Observed:
    """The ``prefix`` set (``fewshot``, ``validation``, ``test/<domain>``) of make_splits."""
    fields = {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + "/")}
    if not fields:
        raise KeyError(f"no split {prefix!r}; have {sorted({k.rsplit('/', 1)[0] for k in arrays})}")
    obs1, obs2 = (torch.from_numpy(fields.pop(k)) for k in ("obs1", "obs2"))
    return Observed(obs1, obs2, Scenes.from_arrays(fields))


def domains(arrays: dict[str, np.ndarray]) -> list[str]:
    """The test domains stored in make_splits' arrays, clean first."""
    names = {k.split("/")[1] for k in arrays if k.startswith("test/")}
    return sorted(names, key=lambda n: (n != "clean", n))
