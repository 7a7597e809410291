"""Checks of the delta_mem config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.delta_mem.claims import KINDS

# full scale: the conditions each adapter runs (rules/delta_mem_helpers.smk,
# delta_mem_full_conditions); the base adapter (zero heads) is the base model
FULL_RUNS = {
    "base": ("truncated", "history_replay", "official_prompt"),
    "released": ("state_only", "history_replay", "official_prompt"),
    "trained": ("state_only", "history_replay", "official_prompt"),
}
# conditions each method kind is evaluated under (repro.delta_mem.evaluate)
CONDITIONS = {
    "delta_mem": (
        "truncated",
        "full",
        "state_only",
        "zeroed",
        "other_state",
        "other_replay",
        "history_replay",
        "official_prompt",
    ),
    "lora": ("truncated", "full", "lora_truncated", "lora_full"),
}
METHOD_KIND = {  # the method kind each claim kind reads
    "paired_conditions": "delta_mem",
    "beats_baseline": "delta_mem",
    "zeroed_state": "delta_mem",
    "lora_chance": "lora",
}


def _check_full_claim(spec: dict, full: dict, key: str) -> None:
    """The backbone, adapter and conditions a locomo_ratio / mab_ratio claim names."""
    for field in ("dataset", "method", "metric"):
        if field not in spec:
            raise ConfigError(f"{key}.{field}: a {spec['kind']} claim names it")
    backbone = full.get("backbones", {}).get(spec["dataset"])
    if full and backbone is None:
        raise ConfigError(f"{key}.dataset: not a backbone under papers.delta_mem.full_scale")
    adapter = spec["method"]
    if adapter not in FULL_RUNS or (backbone and adapter not in backbone["adapters"]):
        raise ConfigError(
            f"{key}.method: the adapter, one of {tuple(FULL_RUNS)} run for that backbone"
        )
    parts = spec["metric"].split("/")
    if len(parts) != 2 or parts[0] not in FULL_RUNS[adapter] or parts[1] not in FULL_RUNS["base"]:
        raise ConfigError(
            f"{key}.metric: write it as adapter condition/base condition: the adapter's from "
            f"{FULL_RUNS[adapter]}, the base's from {FULL_RUNS['base']}"
        )


def _check_margins(spec: dict, key: str) -> None:
    """Every paired criterion names its margin in the config (no table in the code)."""
    criterion = spec.get("criterion", {})
    if "test" in criterion and "delta" not in criterion:
        raise ConfigError(f"{key}.criterion.delta: a paired criterion names its margin")


def _control_specs(spec: dict, key: str):
    """(key, spec) of the claim and of each of its controls (the claim with ``set`` applied)."""
    yield key, spec
    for side, entry in (spec.get("controls") or {}).items():
        if isinstance(entry, dict) and "set" in entry:
            yield f"{key}.controls.{side}.set", {**spec, **entry["set"]}


def _check_analogue(spec: dict, methods: dict, key: str) -> None:
    """A not_tested claim's embedded analogue (method, metric a/b) is computed: check it."""
    if methods.get(spec.get("method"), {}).get("kind") != "delta_mem":
        raise ConfigError(f"{key}.method: the embedded analogue needs a δ-Mem method")
    parts = spec["metric"].split("/")
    if len(parts) != 2 or set(parts) - set(CONDITIONS["delta_mem"]):
        raise ConfigError(f"{key}.metric: write it as a/b from {CONDITIONS['delta_mem']}")


def _references(paper: dict):
    methods = paper["methods"]

    def of(spec: dict) -> dict:
        kind, refs = spec["kind"], {}
        want = METHOD_KIND.get(kind)
        names = {m for m, s in methods.items() if s["kind"] == (want or "delta_mem")}
        if "method" in spec or want:
            refs["method"] = names
        if kind == "beats_baseline":
            refs["baselines"] = set(methods) - {spec.get("method")}
            base_kinds = {methods[b]["kind"] for b in spec.get("baselines", []) if b in methods}
            refs["baseline_condition"] = {c for k in base_kinds for c in CONDITIONS[k]}
            refs["condition"] = CONDITIONS["delta_mem"]
        if kind == "paired_conditions":
            refs["conditions"] = CONDITIONS["delta_mem"]
        if "exploration" in spec:
            refs["exploration"] = {m for m, s in methods.items() if s["kind"] == "delta_mem"}
        return refs

    return of


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
    full = paper.get("full_scale", {})
    embedded = _references(paper)

    def references_of(spec: dict) -> dict:
        if spec["kind"] in ("locomo_ratio", "mab_ratio"):
            return {}
        return embedded(spec)

    check_claim_specs(
        "delta_mem", paper, claim_kinds(KINDS), references_of=references_of, require_controls=True
    )
    for group in ("claims", "checks"):
        for cid, spec in paper.get(group, {}).items():
            key = f"papers.delta_mem.{group}.{cid}"
            _check_margins(spec, key)
            if spec["kind"] in ("locomo_ratio", "mab_ratio"):
                for where, judged in _control_specs(spec, key):
                    _check_full_claim(judged, full, where)
            elif spec["kind"] == "not_tested" and "metric" in spec:
                _check_analogue(spec, methods, key)
    stop = paper["pretraining"].get("stop_accuracy")
    if stop is not None and paper["sanity"]["backbone_accuracy"] > stop:
        raise ConfigError(
            "papers.delta_mem.sanity.backbone_accuracy: above pretraining.stop_accuracy, so a "
            "backbone that stopped there would fail"
        )
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
