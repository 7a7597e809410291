"""Checks of papers.r3_adapter that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.r3_adapter.claims import KINDS
from repro.r3_adapter.names import DIAGNOSTICS, METRICS

NEEDS = {
    "collapse": ("method", "severity", "criterion"),
    "paired": ("method", "baselines", "metric"),
    "budget": ("method", "baselines"),
    "scalar": ("method", "metric"),
}


def metric_names(section: dict[str, Any]) -> set[str]:
    """Every flat metric a metrics document has: <domain>/<metric>, <domain>/layer<i>/<d>."""
    severities = len(section.get("low_light", {}).get("gain", [0.5, 0.3, 0.2]))
    domains = ["clean"] + [f"severity{k}" for k in range(1, severities + 1)]
    depth = section.get("model", {}).get("depth", 3)
    names = {f"{d}/{m}" for d in domains for m in METRICS}
    return names | {f"{d}/layer{i}/{g}" for d in domains for i in range(depth) for g in DIAGNOSTICS}


def _check_entries(section: dict[str, Any]) -> None:
    severities = len(section["low_light"]["gain"])
    for group in ("claims", "checks"):
        for cid, spec in section.get(group, {}).items():
            key = f"papers.r3_adapter.{group}.{cid}"
            needs = NEEDS.get(spec["kind"], ())
            if "backbone" in spec or "dataset" in spec:  # a full-scale entry names both
                needs = (*needs, "backbone", "dataset")
            for field in needs:
                if field not in spec:
                    raise ConfigError(f"{key}.{field}: a {spec['kind']} entry names it")
            controls = spec.get("controls") or {}
            sets = {"": spec} | {
                f".controls.{side}.set": c["set"]
                for side, c in controls.items()
                if isinstance(c, dict) and "set" in c
            }
            for where, keys in sets.items():
                if keys.get("severity", 1) > severities:
                    raise ConfigError(
                        f"{key}{where}.severity: only {severities} severities are configured"
                    )


def check(config: dict[str, Any]) -> None:
    section = config["papers"].get("r3_adapter")
    if not section or not section.get("enabled"):
        return
    methods = section["methods"]
    low_light = section["low_light"]
    if len(low_light["gain"]) != len(low_light["noise"]):
        raise ConfigError("papers.r3_adapter.low_light.noise: one entry per gain (severity)")
    if section["splits"]["adapt_severity"] > len(low_light["gain"]):
        raise ConfigError("papers.r3_adapter.splits.adapt_severity: not a configured severity")
    if section["model"]["dim"] % section["model"]["heads"]:
        raise ConfigError("papers.r3_adapter.model.heads: must divide model.dim")
    for role, names in section["roles"].items():
        for name in names if isinstance(names, list) else [names]:
            if name not in methods:
                raise ConfigError(f"papers.r3_adapter.roles.{role}: {name!r} is not a method")
    for name, spec in methods.items():
        adapters = spec.get("adapters") or {}
        if "lora" in adapters and "dora" in adapters:
            raise ConfigError(f"papers.r3_adapter.methods.{name}.adapters: lora or dora")
    if len(section["seeds"]) < 2 and section.get("claims"):
        raise ConfigError("papers.r3_adapter.seeds: paired claims need at least two seeds")
    full = section.get("full_scale", {})
    check_claim_specs(
        "r3_adapter",
        section,
        claim_kinds(KINDS),
        {
            "method": methods,
            "baselines": methods,
            "metric": metric_names(section),
            "dataset": full.get("datasets", {}),  # full-scale entries: a data set and
            "backbone": full.get("backbones", {}),  # a backbone of the grid
        },
        require_controls=True,
    )
    _check_entries(section)
    _check_full(config, section)


def _check_full(config: dict[str, Any], section: dict[str, Any]) -> None:
    full = section.get("full_scale")
    if not full:
        return
    downloads = config.get("downloads", {})
    for name in full["methods"]:
        if name not in section["methods"]:
            raise ConfigError(f"papers.r3_adapter.full_scale.methods: {name!r} is not a method")
    for backbone, spec in full["backbones"].items():
        keys = [spec["code"], spec["checkpoint"], *spec.get("submodules", {}).values()]
        for key in keys:
            if key not in downloads:
                raise ConfigError(
                    f"papers.r3_adapter.full_scale.backbones.{backbone}: {key!r} is not under "
                    "downloads"
                )
    for dataset, spec in full["datasets"].items():
        prefix = f"papers.r3_adapter.full_scale.datasets.{dataset}"
        if spec["format"] == "gated" and not spec.get("instructions"):
            raise ConfigError(f"{prefix}.instructions: gated data say how to obtain them")
        for key in spec.get("downloads", []):
            if key not in downloads:
                raise ConfigError(f"{prefix}.downloads: {key!r} is not under downloads")
