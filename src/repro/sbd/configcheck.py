"""Checks of the SBD config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.sbd.claims import KINDS

# file names of the studies' metrics, which a data set must not take
STUDIES = ("noise_study", "sign_study", "scaling_study")


def _study_methods(sbd: dict, methods: dict) -> None:
    for key in STUDIES:
        study = sbd.get(key, {})
        for name in study.get("methods", []) + ([study["method"]] if "method" in study else []):
            if name not in methods:
                raise ConfigError(f"papers.sbd.{key}: method {name!r} is not in papers.sbd.methods")


def _noise_cell(sbd: dict):
    """A planted_recovery claim's (deletion, background) must be a cell of the noise study."""
    grid = sbd.get("noise_study", {})

    def references(spec):
        if spec["kind"] != "planted_recovery":
            return {}
        return {"deletion": grid.get("deletions", []), "background": grid.get("backgrounds", [])}

    return references


def check(config: dict[str, Any]) -> None:
    sbd = config["papers"].get("sbd")
    if not sbd or not sbd.get("enabled"):
        return
    datasets, methods = sbd["datasets"], sbd["methods"]
    for name in sorted(set(datasets) & set(STUDIES)):
        raise ConfigError(f"papers.sbd.datasets.{name}: the name is reserved")
    downloads = config.get("downloads", {})
    for name, spec in datasets.items():
        if spec["kind"] == "download" and spec["download"] not in downloads:
            raise ConfigError(
                f"papers.sbd.datasets.{name}.download: {spec['download']!r} "
                "is not a key under downloads"
            )
    _study_methods(sbd, methods)
    check_claim_specs(
        "sbd",
        sbd,
        claim_kinds(KINDS),
        {
            "dataset": datasets,
            "explorations": datasets,
            "method": methods,
            "baseline": methods,
            "d": sbd["evaluation"]["dims"],
            "setting": sbd.get("sign_study", {}).get("settings", {}),
        },
        references_of=_noise_cell(sbd),
    )
