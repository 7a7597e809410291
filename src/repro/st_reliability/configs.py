"""Typed step configs from the workflow config's plain dicts (papers.st_reliability.*)."""

from __future__ import annotations

import dataclasses
from typing import Any

from repro.st_reliability.analysis import AnalysisConfig
from repro.st_reliability.encoders import AEConfig
from repro.st_reliability.evaluate import EvalConfig
from repro.st_reliability.fullscale import LineSource, Preprocessing
from repro.st_reliability.model import ModelConfig
from repro.st_reliability.prepare import SelfCheckConfig, SplitConfig
from repro.st_reliability.simulate import SimConfig
from repro.st_reliability.train import TrainConfig, Variant

TUPLES = ("stress_gains", "family_scale")


def simulator(section: dict[str, Any], dataset: dict[str, Any]) -> tuple[SimConfig, int]:
    """The shared simulator keys with the data set's own η (and overrides); and its seed."""
    values = {**section, **dataset.get("simulator", {}), "eta": dataset["eta"]}
    seed = int(values.pop("seed", 0))
    values = {k: tuple(v) if k in TUPLES else v for k, v in values.items()}
    return SimConfig(**values), seed


def training(section: dict[str, Any]) -> TrainConfig:
    values = dict(section)
    values["ae"] = AEConfig(**values.get("ae", {}))
    return TrainConfig(**values)


def line_sources(dataset: dict[str, Any], paths: dict[str, str]) -> dict[str, LineSource]:
    fields = {f.name for f in dataclasses.fields(LineSource)} - {"path"}
    return {
        name: LineSource(path=str(paths[name]), **{k: v for k, v in spec.items() if k in fields})
        for name, spec in dataset["lines"].items()
    }


__all__ = [
    "AnalysisConfig",
    "EvalConfig",
    "ModelConfig",
    "Preprocessing",
    "SelfCheckConfig",
    "SplitConfig",
    "Variant",
    "line_sources",
    "simulator",
    "training",
]
