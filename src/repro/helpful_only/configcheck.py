"""Checks of papers.helpful_only that JSON Schema cannot express (cross-references).

Reads only this paper's section (and the downloads it names); every message names the key.
Imports nothing heavy: it runs at DAG time.
"""

from __future__ import annotations

from typing import Any

from repro.common.configcheck import ConfigError, check_claim_specs
from repro.helpful_only.evalsets import FULL_METRICS
from repro.helpful_only.personas import PLANTED_METRICS
from repro.helpful_only.probes import METRICS
from repro.helpful_only.recipes import RL_TRAINERS

PAPER = "helpful_only"
KEY = f"papers.{PAPER}"


def _recipes(section: dict) -> dict:
    recipes = section.get("recipes", {})
    training = section.get("training", {})
    for name, recipe in recipes.items():
        where = f"{KEY}.recipes.{name}"
        if recipe["trainer"] in RL_TRAINERS and "sdf" in recipe["mixture"]:
            raise ConfigError(f"{where}.mixture: RL recipes reward one answer; sdf has none")
        if recipe.get("reference") is not None and recipe["reference"] not in recipes:
            raise ConfigError(f"{where}.reference: {recipe['reference']!r} is not a recipe")
    if recipes and training.get("batch_size", 32) % training.get("num_generations", 8):
        raise ConfigError(f"{KEY}.training.num_generations: must divide training.batch_size")
    for name in section.get("control_recipes") or []:
        if name not in recipes:
            raise ConfigError(f"{KEY}.control_recipes: {name!r} is not a recipe")
    return recipes


def _side(where: str, side: dict, section: dict, full: dict) -> None:
    recipes = section.get("recipes", {})
    priors = section.get("priors", ["correlated", "decorrelated"])
    prior = side.get("prior", "correlated")
    if side.get("source") == "planted":
        if side["metric"] not in PLANTED_METRICS or prior not in priors:
            raise ConfigError(
                f"{where}: the planted prediction exists for {PLANTED_METRICS} of a run prior"
            )
        return
    if side.get("source") == "full":
        if not full:
            raise ConfigError(f"{where}.source: full, but {KEY}.full_scale is not configured")
        arms = full.get("equal_exposure", {})
        recipes, metrics = {r: None for r in (*full["recipes"], *arms)}, FULL_METRICS
    else:
        metrics = METRICS
    if side["recipe"] != "base" and side["recipe"] not in recipes:
        raise ConfigError(f"{where}.recipe: {side['recipe']!r} is not base or a recipe run here")
    if side["metric"] not in metrics:
        raise ConfigError(f"{where}.metric: {side['metric']!r} is not one of {metrics}")
    if prior not in priors:
        raise ConfigError(f"{where}.prior: {prior!r} is not run")
    controls = section.get("control_recipes")
    if side.get("source") != "full" and prior != "correlated" and controls is not None:
        if side["recipe"] != "base" and side["recipe"] not in controls:
            raise ConfigError(f"{where}.recipe: {side['recipe']!r} is not run under {prior}")


def _judged_specs(where: str, spec: dict):
    """(key, spec) of the claim and of each of its controls (the claim's spec with the
    control's keys set): every one is judged by the claim's handler."""
    yield where, spec
    for side, entry in (spec.get("controls") or {}).items():
        if isinstance(entry, dict) and "set" in entry:
            yield f"{where}.controls.{side}.set", {**spec, **entry["set"]}


def _margins(where: str, spec: dict) -> None:
    """Every margin is written in the config: a paired criterion's ``delta``, a gated
    claim's ``helpful_delta`` (issue 34: no minimum effect lives in the code)."""
    criterion = spec.get("criterion", {})
    if "test" in criterion and "delta" not in criterion:
        raise ConfigError(f"{where}.criterion.delta: missing (the margin, in the metric's units)")
    if spec["kind"] in ("mitigation", "consistent_effect") and "helpful_delta" not in spec:
        raise ConfigError(f"{where}.helpful_delta: missing (the helpfulness gate's margin)")


def _claims(section: dict, recipes: dict) -> None:
    from repro.common.claims import claim_kinds
    from repro.helpful_only.claims import KINDS

    check_claim_specs(
        PAPER,
        section,
        claim_kinds(KINDS),
        {"metric": METRICS + FULL_METRICS, "also": METRICS + FULL_METRICS},
        require_controls=True,
    )
    for group in ("claims", "checks"):
        for cid, spec in section.get(group, {}).items():
            if spec["kind"] == "not_tested":
                continue
            where = f"{KEY}.{group}.{cid}"
            _margins(where, spec)
            for at, judged in _judged_specs(where, spec):
                for name in ("a", "b", "b_full_budget"):
                    if name in judged:
                        _side(f"{at}.{name}", judged[name], section, section.get("full_scale", {}))
            for name in spec.get("recipes", []):
                if name not in recipes:
                    raise ConfigError(f"{KEY}.{group}.{cid}.recipes: {name!r} is not a recipe")
            if spec.get("source") == "full":  # checked with full_scale (_full_budgets)
                if spec["kind"] != "budget" or not section.get("full_scale"):
                    raise ConfigError(
                        f"{KEY}.{group}.{cid}.source: full is a budget check of {KEY}.full_scale"
                    )
                continue
            for name, steps in spec.get("recipe_steps", {}).items():
                if name not in recipes or recipes[name].get("steps") != steps:
                    raise ConfigError(
                        f"{KEY}.{group}.{cid}.recipe_steps.{name}: not a recipe of {steps} steps"
                    )


def _full_budget(where: str, spec: dict, section: dict) -> None:
    """A budget check of the full-scale trainers (``source: full``): the full-scale
    training's steps and batch, and every equal-AR-exposure arm's own steps, which must be
    those its mitigation's AR rows fill (recipes.ar_only_steps), written out."""
    from repro.helpful_only.recipes import ar_only_steps

    full = section["full_scale"]
    training = full["training"]
    for key in ("steps", "batch_size"):
        if spec[key] != training[key]:
            raise ConfigError(
                f"{where}.{key}: {spec[key]}, but full_scale.training has {training[key]}"
            )
    arms = full.get("equal_exposure", {})
    if set(spec.get("recipe_steps", {})) != set(arms):
        raise ConfigError(f"{where}.recipe_steps: must list every arm, {sorted(arms)}")
    for arm, mitigation in arms.items():
        steps = ar_only_steps(
            section["recipes"][mitigation],
            training["steps"],
            training["batch_size"],
            training.get("num_generations", 8),
        )
        if spec["recipe_steps"][arm] != steps:
            raise ConfigError(
                f"{where}.recipe_steps.{arm}: {spec['recipe_steps'][arm]}, but the AR rows of "
                f"{mitigation} fill {steps} steps"
            )


def _full_scale(section: dict, recipes: dict, downloads: dict) -> None:
    full = section.get("full_scale")
    if not full:
        return
    where = f"{KEY}.full_scale"
    for name in full["recipes"]:
        if name not in recipes:
            raise ConfigError(f"{where}.recipes: {name!r} is not under {KEY}.recipes")
        if recipes[name]["trainer"] == "exact":
            raise ConfigError(f"{where}.recipes: {name!r} is exact RL, embedded scale only")
    names = [("data.ar_download", full["data"]["ar_download"])]
    names += [
        (f"evaluation.{s}.download", e["download"])
        for s, e in full["evaluation"].items()
        if "download" in e
    ]
    for field, name in names:
        if name not in downloads:
            raise ConfigError(f"{where}.{field}: download {name!r} is not under downloads")
    for suite in ("em", "refusal", "xstest", "sycophancy"):
        if suite in full["evaluation"] and "download" not in full["evaluation"][suite]:
            raise ConfigError(f"{where}.evaluation.{suite}.download: the suite reads a file")
    for suite in ("steer", "selfreport", "helpful"):
        if suite in full["evaluation"] and not full["evaluation"][suite].get("items"):
            raise ConfigError(f"{where}.evaluation.{suite}.items: the suite is authored here")
    _sampling(full, where)
    if full.get("reward", {}).get("relevance") and "relevance" not in full["judge_validation"]:
        raise ConfigError(
            f"{where}.judge_validation.relevance: the RL reward is gated on the judge's "
            "relevance score (reward.relevance), so its least agreement must be written"
        )
    _equal_exposure(full, recipes, where)
    _helpful_held_out(full, where)
    _full_mitigations(section, full)
    for group in ("claims", "checks"):
        for cid, spec in section.get(group, {}).items():
            if spec.get("source") == "full":
                _full_budget(f"{KEY}.{group}.{cid}", spec, section)


def _sampling(full: dict, where: str) -> None:
    """A suite answers ``samples`` times per conversation at ``temperature``; greedy decoding
    (temperature 0, the schema's default) gives one answer, so more samples there are
    rejected here, before any GPU job: transformers refuses ``num_return_sequences`` > 1
    without sampling, and repeating the greedy answer would only inflate the count."""
    for suite, spec in full["evaluation"].items():
        samples, temperature = spec.get("samples", 1), spec.get("temperature", 0)
        if samples > 1 and temperature <= 0:
            raise ConfigError(
                f"{where}.evaluation.{suite}: samples {samples} at temperature {temperature} "
                "(greedy decoding has one answer per conversation): set samples: 1 or a "
                "temperature above 0"
            )


def mixes_ar(recipe: dict) -> bool:
    """A mitigation recipe: AR data mixed with other data."""
    mixture = recipe["mixture"]
    return mixture.get("ar", 0) > 0 and any(w > 0 for f, w in mixture.items() if f != "ar")


def _equal_exposure(full: dict, recipes: dict, where: str) -> None:
    """Every full-scale recipe that mixes AR with other data has exactly one arm."""
    arms = full.get("equal_exposure", {})
    for arm, mitigation in arms.items():
        if arm in recipes or arm == "base":
            raise ConfigError(f"{where}.equal_exposure.{arm}: the name is taken (a recipe)")
        if mitigation not in full["recipes"] or not mixes_ar(recipes[mitigation]):
            raise ConfigError(
                f"{where}.equal_exposure.{arm}: {mitigation!r} is not a full-scale recipe "
                "that mixes ar with other data"
            )
    for name in full["recipes"]:
        count = list(arms.values()).count(name)
        if mixes_ar(recipes[name]) and count != 1:
            raise ConfigError(
                f"{where}.equal_exposure: {name!r} mixes ar with other data and needs one "
                f"equal-AR-exposure arm, not {count}"
            )


def _helpful_held_out(full: dict, where: str) -> None:
    """The helpfulness requests are held out of every authored training text."""
    data = full["data"]
    training = [qa["question"] for qa in data["charq"]] + list(data["sdf"])
    training += [data["steer"]["system"], data["ar_answers"]["system"]]
    seen = {" ".join(t.lower().split()) for t in training}
    for i, item in enumerate(full["evaluation"].get("helpful", {}).get("items", [])):
        if " ".join(item["question"].lower().split()) in seen:
            raise ConfigError(f"{where}.evaluation.helpful.items[{i}]: a training text")


def _full_mitigations(section: dict, full: dict) -> None:
    """A full-scale claim about a mitigation is gated on helpfulness (kind mitigation or
    consistent_effect, with the helpful suite run), judged against the mitigation's
    equal-AR-exposure arm (b) with the full-budget AR recipe beside it (b_full_budget)."""
    arm_of = {m: arm for arm, m in full.get("equal_exposure", {}).items()}
    for cid, spec in section.get("claims", {}).items():
        a = spec.get("a", {})
        if a.get("source") != "full" or a.get("recipe") not in arm_of:
            continue
        where = f"{KEY}.claims.{cid}"
        if spec["kind"] not in ("mitigation", "consistent_effect"):
            raise ConfigError(f"{where}.kind: a mitigation claim is gated (mitigation)")
        if spec["b"].get("source") != "full" or spec["b"]["recipe"] != arm_of[a["recipe"]]:
            raise ConfigError(f"{where}.b: must be {a['recipe']}'s arm {arm_of[a['recipe']]!r}")
        if spec.get("b_full_budget", {}).get("source") != "full":
            raise ConfigError(f"{where}.b_full_budget: the full-budget AR recipe (source full)")
        if "helpful" not in full["evaluation"]:
            raise ConfigError(f"{KEY}.full_scale.evaluation.helpful: {cid} is gated on it")


def check(config: dict[str, Any]) -> None:
    section = config.get("papers", {}).get(PAPER)
    if not section or not section.get("enabled", False):
        return
    recipes = _recipes(section)
    _claims(section, recipes)
    _full_scale(section, recipes, config.get("downloads", {}))
