"""Checks of the SBD config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.configcheck import ConfigError, check_claim_kinds

CLAIM_KINDS = (
    "exact_reconstruction",
    "greedy_descent",
    "planted_recovery",
    "recovery_degradation",
    "compression",
    "signed_vs_unsigned",
    "spmm_speedup",
    "speedup_bound",
    "spmm_error",
    "not_tested",
)
# file names of the studies' metrics, which a data set must not take
RESERVED = ("noise_study", "scaling_study")


def _other_papers_names(config: dict) -> tuple[set, set]:
    """Data set and method names of the other papers (the wildcards are global)."""
    papers = config["papers"]
    q, p = papers.get("qsurv", {}), papers.get("plsa", {})
    datasets = set(q.get("synthetic", {}).get("scenarios", [])) | set(q.get("real_datasets", {}))
    datasets |= set(p.get("end_to_end", {}).get("datasets", {}))
    methods = set(q.get("methods", {})) | set(p.get("end_to_end", {}).get("methods", []))
    return datasets, methods


def check(config: dict[str, Any]) -> None:
    sbd = config["papers"].get("sbd")
    if not sbd or not sbd.get("enabled"):
        return
    datasets, methods = sbd["datasets"], sbd["methods"]
    other_datasets, other_methods = _other_papers_names(config)
    for name in sorted(set(datasets) & (other_datasets | set(RESERVED))):
        raise ConfigError(
            f"papers.sbd.datasets.{name}: the name is reserved or used by another paper"
        )
    for name in sorted(set(methods) & other_methods):
        raise ConfigError(f"papers.sbd.methods.{name}: the name is used by another paper")
    downloads = config.get("downloads", {})
    for name, spec in datasets.items():
        if spec["kind"] == "download" and spec["download"] not in downloads:
            raise ConfigError(
                f"papers.sbd.datasets.{name}.download: {spec['download']!r} "
                "is not a key under downloads"
            )
    for key in ("noise_study", "scaling_study"):
        study = sbd.get(key, {})
        for name in study.get("methods", []) + ([study["method"]] if "method" in study else []):
            if name not in methods:
                raise ConfigError(f"papers.sbd.{key}: method {name!r} is not in papers.sbd.methods")
    check_claim_kinds("sbd", sbd["claims"], CLAIM_KINDS)
    for cid, claim in sbd["claims"].items():
        key = f"papers.sbd.claims.{cid}"
        for field, known in (("dataset", datasets), ("method", methods), ("baseline", methods)):
            if field in claim and claim[field] not in known:
                raise ConfigError(f"{key}.{field}: {claim[field]!r} is not configured")
        if "d" in claim and claim["d"] not in sbd["evaluation"]["dims"]:
            raise ConfigError(f"{key}.d: {claim['d']} is not in papers.sbd.evaluation.dims")
