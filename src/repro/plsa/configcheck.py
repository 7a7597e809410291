"""Checks of the PLSA config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    pass


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
    methods = plsa["end_to_end"]["methods"]
    for cid, claim in plsa["claims"].items():
        key = f"papers.plsa.claims.{cid}"
        if claim["kind"] in ("quadrature_convergence", "error_bound"):
            raise ConfigError(f"{key}.kind: {claim['kind']} is a QSurv claim kind")
        if claim["kind"] != "comparison" or claim["dataset"] not in plsa["end_to_end"]["datasets"]:
            continue
        for name in [claim["method"], *claim["baselines"]]:
            if name not in methods:
                raise ConfigError(
                    f"{key}: method {name!r} is not in papers.plsa.end_to_end.methods"
                )
