"""Checks of papers.malora that JSON Schema cannot express (cross-references between keys).

Reads only this paper's section; every message names the full key path.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from repro.common.configcheck import ConfigError, check_claim_specs
from repro.malora import arms
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
        grid = spec.get("tune_grid", {})
        if grid and not spec.get("tune"):
            raise ConfigError(f"{where}.tune_grid: only with tune: true")
        if set(grid) - accepted:
            raise ConfigError(
                f"{where}.tune_grid: {sorted(set(grid) - accepted)} are not parameters of "
                f"{spec['rule']} ({sorted(accepted)})"
            )
        points = int(np.prod([len(v) for v in grid.values()])) if grid else 0
        budget = len(section["merge_rules"]["scale_grid"])
        if points > budget:
            raise ConfigError(
                f"{where}.tune_grid: {points} points exceed the calibration budget "
                f"(len(scale_grid) = {budget})"
            )
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


def _references_of(section):
    """The names a claim may refer to: the methods and metrics of the experiment (or
    full-scale backbone) it names, the linear overlaps, the SVMs."""
    backbones = section.get("full_scale", {}).get("backbones", {})

    def references(spec):
        exp = spec.get("dataset", "linear")
        if exp in backbones:
            methods, metrics = section["full_scale"].get("methods", []), FULL_METRICS
        else:
            methods = section.get(exp, {}).get("methods", [])
            metrics = METRICS.get(exp, ())
        out = {
            "method": [*methods, *(arms.ARMS if exp == "linear" else arms.ANY_STUDY)],
            "reference": methods,
            "fallback": methods,
            "reference_fallback": methods,
            "baselines": methods,
            "overlaps": section.get("linear", {}).get("overlaps", []),
            "setting": list(section.get("linear", {}).get("settings", {})),
            "svm": SVMS,
        }
        if spec["kind"] in ("paired_comparison", "scale_or_direction"):
            out["dataset"] = [e for e in EXPERIMENTS if e in section] + list(backbones)
            out["metric"] = metrics
        return out

    return references


def check(config: dict[str, Any]) -> None:
    from repro.common.claims import claim_kinds
    from repro.malora.claims import KINDS

    section = config.get("papers", {}).get(PAPER)
    if not section or not section.get("enabled", False):
        return
    key = f"papers.{PAPER}"
    methods = _rules(section, key)
    _experiments(section, key, methods)
    check_claim_specs(
        PAPER,
        section,
        claim_kinds(KINDS),
        references_of=_references_of(section),
        require_controls=True,
    )
    for group in ("claims", "checks"):
        for cid, spec in section.get(group, {}).items():
            _margins_written(f"{key}.{group}.{cid}", spec)
            if (
                spec["kind"] == "paired_comparison"
                and spec.get("dataset") == "linear"
                and (not spec.get("overlaps"))
            ):
                raise ConfigError(
                    f"{key}.{group}.{cid}.overlaps: a linear comparison names its overlaps"
                )
            if spec.get("failed_seed") == "fallback":
                needs = ["fallback"] + (["reference_fallback"] if "reference" in spec else [])
                for field in needs:
                    if not spec.get(field):
                        raise ConfigError(
                            f"{key}.{group}.{cid}.{field}: failed_seed: fallback names the "
                            "rule to fall back to"
                        )
    _full_scale(section, key, config.get("downloads", {}), methods)


def _margins_written(where, spec) -> None:
    """Every margin a claim is judged by is in its config entry (issue 34): a paired
    criterion's ``delta``, a trade-off's ``retention_floor``; none lives in the code."""
    criterion = spec.get("criterion", {})
    if "test" in criterion and "delta" not in criterion:
        raise ConfigError(f"{where}.criterion.delta: a paired criterion writes its margin here")
    if spec["kind"] == "tradeoff" and "retention_floor" not in spec:
        raise ConfigError(f"{where}.retention_floor: the pre-training margin's floor")


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
        nli = spec.get("kind", "clip") == "nli"
        needed = "model_dir" if nli else "model_files"
        if not spec.get(needed):
            raise ConfigError(
                f"{where}.{needed}: required for a {spec.get('kind', 'clip')} backbone"
            )
        names = list(spec.get("model_files", []))
        for task, t in spec.get("tasks", {}).items():
            if len(t.get("adapter", [])) != 2:
                raise ConfigError(f"{where}.tasks.{task}.adapter: [config, weights] downloads")
            (_nli_task if nli else _clip_task)(f"{where}.tasks.{task}", t)
            names += t["adapter"] + t.get("calibration", []) + t.get("test", [])
            names += [t["holdout"]["indices"]] if "indices" in t.get("holdout", {}) else []
        for name in names:
            if name not in downloads:
                raise ConfigError(f"{where}: download {name!r} is not under downloads")


def _clip_task(where, t) -> None:
    """KnOTS's vision protocol: calibration images come from the held-out validation part of
    the test split (the adapters were trained on the whole training split), never from a
    separate file."""
    for field in ("rows", "holdout", "templates"):
        if field not in t:
            raise ConfigError(f"{where}.{field}: required for a clip task")
    if "calibration" in t:
        raise ConfigError(
            f"{where}.calibration: a clip task calibrates on the holdout of its test split "
            "(the adapters were trained on the training split)"
        )


def _nli_task(where, t) -> None:
    if "calibration" not in t:
        raise ConfigError(f"{where}.calibration: required for an NLI task")
    for field in ("columns", "labels"):
        if field not in t:
            raise ConfigError(f"{where}.{field}: required for an NLI task")
    if len(set(t["labels"].values())) < 2:
        raise ConfigError(f"{where}.labels: the task needs at least two classes of the head")
    if t.get("holdout") and t["calibration"] != t["test"]:
        raise ConfigError(f"{where}.holdout: splits one file, so calibration must equal test")
    if not t.get("holdout") and t["calibration"] == t["test"]:
        raise ConfigError(f"{where}.calibration: the test file itself; give a holdout")
