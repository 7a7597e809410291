"""Typed study configs from the ``papers.malora`` config section (scripts and CLIs alike)."""

from __future__ import annotations

import numpy as np

from repro.malora.linear import LinearDesign
from repro.malora.linear_merge import LinearMergeConfig, ScaleSetting
from repro.malora.sweep import SweepConfig


def _axis(spec) -> tuple[float, ...]:
    return tuple(np.geomspace(spec["low"], spec["high"], spec["points"]))


def _methods(section, names) -> dict:
    rules = section["merge_rules"]["methods"]
    return {name: dict(rules[name]) for name in names}


def sweep_config(section: dict) -> SweepConfig:
    lin = section["linear"]
    return SweepConfig(
        design=LinearDesign(**lin["design"]),
        overlaps=tuple(lin["overlaps"]),
        lambdas=tuple(lin["sweep"]["lambdas"]),
        task=lin["sweep"]["task"],
        rank=lin["rank"],
        lora_steps=lin["lora_steps"],
        base_steps=lin["base_steps"],
        base_weight_decay=lin["base_weight_decay"],
        snapshot_steps=tuple(lin["sweep"]["snapshot_steps"]),
    )


def linear_merge_config(section: dict) -> LinearMergeConfig:
    lin = section["linear"]
    return LinearMergeConfig(
        design=LinearDesign(**lin["design"]),
        overlaps=tuple(lin["overlaps"]),
        settings={
            name: ScaleSetting(tuple(s["size_factors"]), tuple(s["lambdas"]))
            for name, s in lin["settings"].items()
        },
        methods=_methods(section, lin["methods"]),
        scale_grid=tuple(section["merge_rules"]["scale_grid"]),
        test_noises=tuple(lin["test_noises"]),
        rank=lin["rank"],
        base_steps=lin["base_steps"],
        base_weight_decay=lin["base_weight_decay"],
        oracle_axis=_axis(lin["oracle_axis"]),
        landscape_axis=_axis(lin["landscape_axis"]),
        margin_stats=dict(lin["ablations"]["margin_stats"]),
        calibration_sizes=tuple(lin["ablations"]["calibration_sizes"]),
        primary_setting=lin["primary_setting"],
    )


def digits_config(section: dict):
    """The digits study's config (imports torch: only the digits step asks for it)."""
    from repro.malora.digits import DigitsDesign
    from repro.malora.digits_study import DigitsConfig

    dig = section["digits"]
    design = dict(dig["design"])
    design["hidden"] = tuple(design.get("hidden", (64, 32)))
    return DigitsConfig(
        design=DigitsDesign(**design),
        methods=_methods(section, dig["methods"]),
        scale_grid=tuple(section["merge_rules"]["scale_grid"]),
        calibration_per_task=dig["calibration_per_task"],
        margin=dict(dig["margin"]),
        margin_stats=dict(dig["ablations"]["margin_stats"]),
        calibration_sizes=tuple(dig["ablations"]["calibration_sizes"]),
    )
