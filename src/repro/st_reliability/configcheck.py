"""Checks of papers.st_reliability that JSON Schema cannot express (cross-references).

Runs when the workflow loads, so a bad config stops before any job, naming the key.
"""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.st_reliability.claims import KINDS

# the signals a claim may name (repro.st_reliability.analysis): the predicted-NN distance,
# the oracle (its positive control), the random signal (its negative control), their
# partial ρ given ‖Δ̂‖, and ‖Δ‖ of the truth (a check)
SIGNALS = (
    "nn_l2",
    "nn_cosine",
    "oracle_l2",
    "oracle_cosine",
    "random",
    *(f"partial_{n}" for n in ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine")),
    "true_magnitude",
)
ORACLES = ("oracle_l2", "oracle_cosine")
NULLS = ("untrained", "self_only", "shuffled")


def _check_models(paper: dict) -> None:
    for name, spec in paper["datasets"].items():
        key = f"papers.st_reliability.datasets.{name}"
        for i, model in enumerate(spec["models"]):
            if model not in paper["models"]:
                raise ConfigError(
                    f"{key}.models[{i}]: {model!r} is not under papers.st_reliability.models"
                )
        if spec["source"] == "coverage" and "coverage" not in spec:
            raise ConfigError(f"{key}.coverage: a coverage data set sets its generator")
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
    planted = (paper.get("evaluation") or {}).get("planted")
    # C1 judges an audited model, or (its controls) a null model or the planted dependence
    judged = audited | set(paper["models"])
    if planted:
        judged |= {f"{planted['model']}__planted_beta{float(b):g}" for b in planted["doses"]}

    def of(spec: dict) -> dict:
        refs = {
            "dataset": datasets,
            "negative_dataset": datasets,
            "signal": SIGNALS,
            "reference": ORACLES,
        }
        if spec["kind"] == "attention_vs_nulls":
            refs["method"] = judged
        if spec["kind"] == "self_only_identity":
            refs["method"] = set(paper["models"])
        return refs

    return of


def _check_evaluation(paper: dict) -> None:
    """The planted model and the causal nulls name configured models of the right role."""
    key = "papers.st_reliability.evaluation"
    evaluation = paper.get("evaluation") or {}
    planted = evaluation.get("planted")
    if planted and planted["model"] not in paper["audited"]:
        raise ConfigError(f"{key}.planted.model: {planted['model']!r} is not an audited model")
    if planted and planted["dataset"] not in paper["datasets"]:
        raise ConfigError(f"{key}.planted.dataset: {planted['dataset']!r} is not a data set")
    for i, name in enumerate(evaluation.get("causal_nulls", [])):
        if name not in paper["models"] or name in paper["audited"]:
            raise ConfigError(f"{key}.causal_nulls[{i}]: {name!r} is not a null model")


def _check_margins(paper: dict) -> None:
    """Every paired criterion writes its margin (``delta``): none is declared in code."""
    for group in ("claims", "checks"):
        for cid, spec in paper.get(group, {}).items():
            criterion = spec.get("criterion") or {}
            if "test" in criterion and "delta" not in criterion:
                raise ConfigError(
                    f"papers.st_reliability.{group}.{cid}.criterion.delta: missing (the margin "
                    "of a paired criterion is written in the config)"
                )


def _check_nulls(paper: dict) -> None:
    for cid, spec in paper.get("claims", {}).items():  # C1 itself judges an audited model
        if spec["kind"] == "attention_vs_nulls" and spec["method"] not in paper["audited"]:
            raise ConfigError(
                f"papers.st_reliability.claims.{cid}.method: {spec['method']!r} is not an "
                "audited model (only its controls judge a null or a planted model)"
            )
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
    _check_evaluation(paper)
    for design, model in paper["c4_designs"].items():
        if model not in paper["models"]:
            raise ConfigError(
                f"papers.st_reliability.c4_designs.{design}: {model!r} is not a model"
            )
    check_claim_specs(
        "st_reliability",
        paper,
        claim_kinds(KINDS),
        references_of=_references(paper),
        require_controls=True,
    )
    _check_nulls(paper)
    _check_margins(paper)
    _check_swap_control(paper)
