"""Checks of papers.st_reliability that JSON Schema cannot express (cross-references).

Runs when the workflow loads, so a bad config stops before any job, naming the key.
"""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.st_reliability.claims import KINDS

SIGNALS = ("nn_l2", "nn_cosine")
NULLS = ("untrained", "self_only", "shuffled")


def _check_models(paper: dict) -> None:
    for name, spec in paper["datasets"].items():
        key = f"papers.st_reliability.datasets.{name}"
        for i, model in enumerate(spec["models"]):
            if model not in paper["models"]:
                raise ConfigError(
                    f"{key}.models[{i}]: {model!r} is not under papers.st_reliability.models"
                )
        if spec["source"] == "simulator" and "eta" not in spec:
            raise ConfigError(f"{key}.eta: a simulator data set sets the shared-program strength")
        if spec["source"] == "crispri" and not spec.get("lines"):
            raise ConfigError(f"{key}.lines: a crispri data set names its cell lines")


def _check_downloads(config: dict, paper: dict) -> None:
    downloads = config.get("downloads", {})
    for name, spec in paper["datasets"].items():
        needed = {
            f"lines.{line}.download": s["download"] for line, s in spec.get("lines", {}).items()
        }
        if spec.get("families_download"):
            needed["families_download"] = spec["families_download"]
        for field, download in needed.items():
            if download not in downloads:
                raise ConfigError(
                    f"papers.st_reliability.datasets.{name}.{field}: {download!r} is not a key "
                    "under downloads"
                )


def _check_se600m(config: dict, paper: dict) -> None:
    se = paper.get("se600m") or {}
    embedded = se.get("datasets", [])
    for name, spec in paper["datasets"].items():  # a model reading SE-600M needs its step
        for i, model in enumerate(spec["models"]):
            if paper["models"][model].get("encoder") == "se600m" and name not in embedded:
                raise ConfigError(
                    f"papers.st_reliability.datasets.{name}.models[{i}]: {model!r} reads SE-600M "
                    f"embeddings (encoder se600m); {name!r} is not under "
                    "papers.st_reliability.se600m.datasets"
                )
    if not se:
        return
    key = "papers.st_reliability.se600m"
    for field in ("checkpoint", "protein_embeddings", "config"):
        if se.get(field) and se[field] not in config.get("downloads", {}):
            raise ConfigError(f"{key}.{field}: {se[field]!r} is not a key under downloads")
    if "se_embed" not in paper.get("resources", {}):
        raise ConfigError("papers.st_reliability.resources.se_embed: needed with se600m")
    for i, name in enumerate(se["datasets"]):
        if paper["datasets"].get(name, {}).get("source") != "crispri":
            raise ConfigError(f"{key}.datasets[{i}]: {name!r} is not a crispri data set")


def _references(paper: dict):
    datasets = set(paper["datasets"])
    audited = set(paper["audited"])

    def of(spec: dict) -> dict:
        refs = {"dataset": datasets, "negative_dataset": datasets, "signal": SIGNALS}
        if spec["kind"] == "attention_vs_nulls":
            refs["method"] = audited
        if spec["kind"] == "self_only_identity":
            refs["method"] = set(paper["models"])
        return refs

    return of


def _check_nulls(paper: dict) -> None:
    for group in ("claims", "checks"):
        for cid, spec in paper.get(group, {}).items():
            for field in ("comparisons", "reported"):
                for i, comparison in enumerate(spec.get(field, [])):
                    key = f"papers.st_reliability.{group}.{cid}.{field}[{i}].null"
                    null = comparison.get("null")  # swaps and causal edits name no model
                    if null is not None and null != "untrained" and null not in paper["models"]:
                        raise ConfigError(f"{key}: {null!r} is neither 'untrained' nor a model")


def _judged(criterion: dict) -> dict:
    return {k: v for k, v in criterion.items() if k != "description"}


def _check_swap_control(paper: dict) -> None:
    """A claim gated by the swap's controls needs a swap_control check on its criterion."""
    controls = [spec for spec in paper.get("checks", {}).values() if spec["kind"] == "swap_control"]
    for cid, spec in paper.get("claims", {}).items():
        if not spec.get("swap_control"):
            continue
        key = f"papers.st_reliability.claims.{cid}.swap_control"
        if not any(_judged(c["criterion"]) == _judged(spec["criterion"]) for c in controls):
            raise ConfigError(f"{key}: no check of kind swap_control with this claim's criterion")


def check(config: dict[str, Any]) -> None:
    paper = config["papers"].get("st_reliability")
    if not paper or not paper.get("enabled"):
        return
    _check_models(paper)
    _check_downloads(config, paper)
    _check_se600m(config, paper)
    for i, model in enumerate(paper["audited"]):
        if model not in paper["models"]:
            raise ConfigError(f"papers.st_reliability.audited[{i}]: {model!r} is not a model")
    for design, model in paper["c4_designs"].items():
        if model not in paper["models"]:
            raise ConfigError(
                f"papers.st_reliability.c4_designs.{design}: {model!r} is not a model"
            )
    check_claim_specs("st_reliability", paper, claim_kinds(KINDS), references_of=_references(paper))
    _check_nulls(paper)
    _check_swap_control(paper)
