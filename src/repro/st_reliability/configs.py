"""Typed step configs from the workflow config's plain dicts (papers.st_reliability.*)."""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repro.st_reliability.coverage import CoverageConfig
    from repro.st_reliability.fullscale import LineSource
    from repro.st_reliability.simulate import SimConfig
    from repro.st_reliability.train import TrainConfig

# every config class from the module that defines it, imported on first use: a step imports
# only its own modules (arc-state, torch and scanpy cost seconds of start-up per job)
HOMES = {
    "AnalysisConfig": "analysis",
    "EvalConfig": "evaluate",
    "ModelConfig": "model",
    "Preprocessing": "fullscale",
    "SelfCheckConfig": "prepare",
    "SplitConfig": "prepare",
    "Variant": "train",
}


def __getattr__(name: str):
    if name not in HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"repro.st_reliability.{HOMES[name]}"), name)


TUPLES = ("stress_gains", "family_scale")


def simulator(section: dict[str, Any], dataset: dict[str, Any]) -> tuple[SimConfig, int]:
    """The shared simulator keys with the data set's own η (and overrides); and its seed."""
    from repro.st_reliability.simulate import SimConfig

    values = {**section, **dataset.get("simulator", {}), "eta": dataset["eta"]}
    seed = int(values.pop("seed", 0))
    values = {k: tuple(v) if k in TUPLES else v for k, v in values.items()}
    return SimConfig(**values), seed


def coverage(section: dict[str, Any]) -> tuple[CoverageConfig, int]:
    """The coverage regime's generator keys and its seed (the data and the split)."""
    from repro.st_reliability.coverage import CoverageConfig

    values = dict(section)
    seed = int(values.pop("seed"))
    return CoverageConfig(**values), seed


def training(section: dict[str, Any]) -> TrainConfig:
    from repro.st_reliability.encoders import AEConfig
    from repro.st_reliability.train import TrainConfig

    values = dict(section)
    values["ae"] = AEConfig(**values.get("ae", {}))
    return TrainConfig(**values)


def se_inputs(decoder: dict[str, Any], embeddings: str, record: str) -> dict[str, Any]:
    """train.run's keywords for an se600m model: se_embed's files and the decoder config."""
    from repro.st_reliability.se_space import SEDecoderConfig

    decoder_cfg = SEDecoderConfig.from_dict(decoder)
    return {"se_embeddings": embeddings, "se_record": record, "se_decoder": decoder_cfg}


def line_sources(dataset: dict[str, Any], paths: dict[str, str]) -> dict[str, LineSource]:
    from repro.st_reliability.fullscale import LineSource

    fields = {f.name for f in dataclasses.fields(LineSource)} - {"path"}
    return {
        name: LineSource(path=str(paths[name]), **{k: v for k, v in spec.items() if k in fields})
        for name, spec in dataset["lines"].items()
    }


__all__ = [*HOMES, "coverage", "line_sources", "se_inputs", "simulator", "training"]
