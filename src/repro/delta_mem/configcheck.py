"""Checks of the delta_mem config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.delta_mem.claims import KINDS

ADAPTERS = ("released", "trained")
NEEDS_METHOD = {"state_gain", "zeroed_state", "full_state_no_harm", "lora_chance", "capability"}
CONDITIONS = (
    "truncated",
    "full",
    "state_only",
    "zeroed",
    "other_state",
    "full_state",
    "capability",
    "lora",
)


def _check_locomo_claim(key: str, claim: dict, full: dict) -> None:
    for field in ("dataset", "method", "metric"):
        if field not in claim:
            raise ConfigError(f"{key}.{field}: a {claim['kind']} claim names it")
    backbone = full.get("backbones", {}).get(claim["dataset"])
    if full and backbone is None:
        raise ConfigError(f"{key}.dataset: not a backbone under papers.delta_mem.full_scale")
    if claim["method"] not in ADAPTERS or (
        backbone and claim["method"] not in backbone["adapters"]
    ):
        raise ConfigError(f"{key}.method: the adapter, one of {ADAPTERS} run for that backbone")
    parts = claim["metric"].split("/")
    if (
        len(parts) != 2
        or parts[0] not in ("state_only", "full_state")
        or parts[1] not in ("truncated", "full")
    ):
        raise ConfigError(f"{key}.metric: write it as (state_only|full_state)/(truncated|full)")


def _check_claim(key: str, claim: dict, methods: dict) -> None:
    kind = claim["kind"]
    if kind in NEEDS_METHOD and "method" not in claim:
        raise ConfigError(f"{key}.method: a {kind} claim names the method it checks")
    if "method" not in claim:
        return
    if claim["method"] not in methods:
        raise ConfigError(f"{key}.method: {claim['method']!r} is not in papers.delta_mem.methods")
    want = "lora" if kind == "lora_chance" else "delta_mem"
    if kind != "not_tested" and methods[claim["method"]]["kind"] != want:
        raise ConfigError(f"{key}.method: a {kind} claim needs a method of kind {want}")
    if "metric" in claim:
        parts = claim["metric"].split("/")
        if len(parts) != 2 or set(parts) - set(CONDITIONS):
            raise ConfigError(f"{key}.metric: write it as condition/condition from {CONDITIONS}")


def check(config: dict[str, Any]) -> None:
    paper = config["papers"].get("delta_mem")
    if not paper or not paper.get("enabled"):
        return
    methods = paper["methods"]
    low, high = paper["task"]["train_facts"]
    if low > high:
        raise ConfigError("papers.delta_mem.task.train_facts: low > high")
    longest = max(
        paper["task"]["min_turns"],
        high,
        *paper["evaluation"]["n_facts"],
        *paper["evaluation"]["overwrite_facts"],
    )
    needed = 1 + 2 * (longest + 1) + 2  # BOS, turns (+ an overwrite turn), Q k*
    if needed > paper["backbone"]["max_positions"]:
        raise ConfigError(
            f"papers.delta_mem.backbone.max_positions: the longest full-context episode has "
            f"{needed} tokens"
        )
    figures = paper["figures"]
    for role, kind in (("main", "delta_mem"), ("baseline", "lora")):
        if figures[role] not in methods or methods[figures[role]]["kind"] != kind:
            raise ConfigError(f"papers.delta_mem.figures.{role}: name a method of kind {kind}")
    for name, spec in methods.items():
        if spec["kind"] == "lora" and "rank" not in spec:
            raise ConfigError(f"papers.delta_mem.methods.{name}.rank: LoRA needs a rank")
        if spec["kind"] != "lora" and figures["ablation_seed"] not in spec.get(
            "seeds", paper["seeds"]
        ):
            raise ConfigError(
                f"papers.delta_mem.figures.ablation_seed: not among methods.{name}'s seeds"
            )
    check_claim_specs("delta_mem", paper, claim_kinds(KINDS))
    full = paper.get("full_scale", {})
    for name, spec in full.get("backbones", {}).items():
        if "released" in spec["adapters"] and "released_adapter" not in spec:
            raise ConfigError(
                f"papers.delta_mem.full_scale.backbones.{name}.released_adapter: "
                "the released adapter needs its repo id"
            )
    downloads = config.get("downloads", {})
    for part in ("training", "locomo"):
        if full and full[part]["download"] not in downloads:
            raise ConfigError(
                f"papers.delta_mem.full_scale.{part}.download: not a key under downloads"
            )
    for split, spec in full.get("memoryagentbench", {}).get("splits", {}).items():
        if spec["download"] not in downloads:
            raise ConfigError(
                f"papers.delta_mem.full_scale.memoryagentbench.splits.{split}.download: "
                "not a key under downloads"
            )
    for cid, claim in paper["claims"].items():
        key = f"papers.delta_mem.claims.{cid}"
        if claim["kind"] in ("locomo_ratio", "mab_ratio"):
            _check_locomo_claim(key, claim, full)
        else:
            _check_claim(key, claim, methods)
