"""Checks of papers.malora that JSON Schema cannot express (cross-references between keys).

Reads only this paper's section; every message names the full key path.
"""

from __future__ import annotations

import inspect
from typing import Any

from repro.common.configcheck import ConfigError
from repro.malora.names import DIGITS_METRICS, FULL_METRICS, LINEAR_METRICS, SVMS

PAPER = "malora"
EXPERIMENTS = ("linear", "digits")
METRICS = {"linear": LINEAR_METRICS, "digits": DIGITS_METRICS}


def _rules(section, key) -> dict:
    from repro.malora.baselines import RULES

    methods = section.get("merge_rules", {}).get("methods", {})
    for name, spec in methods.items():
        where = f"{key}.merge_rules.methods.{name}"
        if spec["rule"] not in RULES:
            raise ConfigError(f"{where}.rule: {spec['rule']!r} is not one of {sorted(RULES)}")
        accepted = set(inspect.signature(RULES[spec["rule"]]).parameters) - {"problem"}
        unknown = set(spec.get("params", {})) - accepted
        if unknown:
            raise ConfigError(
                f"{where}.params: {sorted(unknown)} are not parameters of "
                f"{spec['rule']} ({sorted(accepted)})"
            )
        if spec.get("tune") and "scale" not in accepted:
            raise ConfigError(f"{where}.tune: {spec['rule']} has no scale to tune")
    return methods


def _experiments(section, key, methods) -> None:
    for exp in EXPERIMENTS:
        for name in section.get(exp, {}).get("methods", []):
            if name not in methods:
                raise ConfigError(
                    f"{key}.{exp}.methods: {name!r} is not under {key}.merge_rules.methods"
                )
        if exp in section and "malora" not in section[exp]["methods"]:
            raise ConfigError(f"{key}.{exp}.methods: must include malora (the reference)")
    linear = section.get("linear")
    if not linear:
        return
    if "malora_layerwise" in linear["methods"]:
        raise ConfigError(f"{key}.linear.methods: malora_layerwise needs layers (digits only)")
    n_tasks = linear["design"]["n_tasks"]
    for name, setting in linear["settings"].items():
        for field in ("size_factors", "lambdas"):
            if len(setting[field]) != n_tasks:
                raise ConfigError(
                    f"{key}.linear.settings.{name}.{field}: one per fine-tuning task ({n_tasks})"
                )
    if linear["primary_setting"] not in linear["settings"]:
        raise ConfigError(f"{key}.linear.primary_setting: not a key of {key}.linear.settings")
    if not 1 <= linear["sweep"]["task"] <= n_tasks:
        raise ConfigError(f"{key}.linear.sweep.task: a fine-tuning task, 1..{n_tasks}")


def _claim(section, where, spec) -> None:
    overlaps = section.get("linear", {}).get("overlaps", [])
    for value in spec.get("overlaps", []):
        if value not in overlaps:
            raise ConfigError(f"{where}.overlaps: {value} is not in linear.overlaps {overlaps}")
    if "svm" in spec and spec["svm"] not in SVMS:
        raise ConfigError(f"{where}.svm: one of {SVMS}")
    backbones = section.get("full_scale", {}).get("backbones", {})
    if spec["kind"] == "paired_comparison" and spec.get("dataset") in backbones:
        if spec.get("metric") not in FULL_METRICS:
            raise ConfigError(f"{where}.metric: one of {FULL_METRICS} at full scale")
        full_methods = section["full_scale"].get("methods", [])
        for name in [spec.get("method"), *spec.get("baselines", [])]:
            if name not in full_methods:
                raise ConfigError(f"{where}: {name!r} is not in full_scale.methods")
        return
    if spec["kind"] == "paired_comparison":
        exp = spec.get("dataset")
        if exp not in EXPERIMENTS or exp not in section:
            raise ConfigError(
                f"{where}.dataset: one of the experiments run, {EXPERIMENTS}, "
                f"or a full-scale backbone {sorted(backbones)}"
            )
        if spec.get("metric") not in METRICS[exp]:
            raise ConfigError(f"{where}.metric: one of {METRICS[exp]} for {exp}")
        if exp == "linear" and not spec.get("overlaps"):
            raise ConfigError(f"{where}.overlaps: a linear comparison names its overlaps")
    experiment = section.get(spec.get("dataset", "linear"), {})
    for field in ("method", "baselines"):
        names = spec.get(field, [])
        for name in [names] if isinstance(names, str) else names:
            if name not in experiment.get("methods", []):
                raise ConfigError(f"{where}.{field}: {name!r} is not a method of that experiment")


def check(config: dict[str, Any]) -> None:
    from repro.common.claims import claim_kinds
    from repro.malora.claims import KINDS

    section = config.get("papers", {}).get(PAPER)
    if not section or not section.get("enabled", False):
        return
    key = f"papers.{PAPER}"
    methods = _rules(section, key)
    _experiments(section, key, methods)
    allowed = claim_kinds(KINDS)
    for group in ("claims", "checks"):
        for cid, spec in section.get(group, {}).items():
            where = f"{key}.{group}.{cid}"
            if spec["kind"] not in allowed:
                raise ConfigError(
                    f"{where}.kind: {spec['kind']!r} is not a MaLoRA kind; choose from {allowed}"
                )
            _claim(section, where, spec)
    _full_scale(section, key, config.get("downloads", {}), methods)


def _full_scale(section, key, downloads, methods) -> None:
    full = section.get("full_scale")
    if not full:
        return
    for name in full.get("methods", []):
        if name not in methods:
            raise ConfigError(f"{key}.full_scale.methods: {name!r} is not a merge rule")
        if name == "individual":
            raise ConfigError(f"{key}.full_scale.methods: 'individual' is reserved")
    for backbone, spec in full.get("backbones", {}).items():
        where = f"{key}.full_scale.backbones.{backbone}"
        names = list(spec.get("model_files", []))
        for task, t in spec.get("tasks", {}).items():
            if len(t.get("adapter", [])) != 2:
                raise ConfigError(f"{where}.tasks.{task}.adapter: [config, weights] downloads")
            names += t["adapter"] + t.get("calibration", []) + t.get("test", [])
        for name in names:
            if name not in downloads:
                raise ConfigError(f"{where}: download {name!r} is not under downloads")
