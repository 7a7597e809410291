"""Checks of the PLSA config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.configcheck import ConfigError, check_claim_kinds

CLAIM_KINDS = ("small_edges_win", "rate_slope", "hard_label_floor", "comparison", "not_tested")
# file names of the estimator studies' metrics, which a data set must not take
RESERVED = ("estimator_rate", "estimator_shift")


def check(config: dict[str, Any]) -> None:
    plsa = config["papers"].get("plsa")
    if not plsa or not plsa.get("enabled"):
        return
    qsurv = config["papers"].get("qsurv", {})
    clash = set(plsa["end_to_end"]["datasets"]) & (
        set(qsurv.get("synthetic", {}).get("scenarios", [])) | set(qsurv.get("real_datasets", {}))
    )
    if clash:
        raise ConfigError(
            f"papers.plsa.end_to_end.datasets: {sorted(clash)} also name QSurv data sets"
        )
    downloads = config.get("downloads", {})
    for name, spec in plsa["end_to_end"]["datasets"].items():
        for domain in ("source", "target"):
            if domain in spec and spec[domain] not in downloads:
                raise ConfigError(
                    f"papers.plsa.end_to_end.datasets.{name}.{domain}: "
                    f"{spec[domain]!r} is not a key under downloads"
                )
    for name in set(plsa["end_to_end"]["datasets"]) & set(RESERVED):
        raise ConfigError(f"papers.plsa.end_to_end.datasets.{name}: the name is reserved")
    check_claim_kinds("plsa", plsa["claims"], CLAIM_KINDS)
    methods = plsa["end_to_end"]["methods"]
    for cid, claim in plsa["claims"].items():
        key = f"papers.plsa.claims.{cid}"
        if claim["kind"] != "comparison" or claim["dataset"] not in plsa["end_to_end"]["datasets"]:
            continue
        for name in [claim["method"], *claim["baselines"]]:
            if name not in methods:
                raise ConfigError(
                    f"{key}: method {name!r} is not in papers.plsa.end_to_end.methods"
                )
