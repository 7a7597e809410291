"""Checks of the SBD config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.sbd.claims import KINDS
from repro.sbd.oracles import PLANTED_TRUTH

# file names of the studies' metrics, which a data set must not take
STUDIES = ("noise_study", "sign_study", "scaling_study")


def _study_methods(sbd: dict, methods: dict) -> None:
    for key in STUDIES:
        study = sbd.get(key, {})
        for name in study.get("methods", []) + ([study["method"]] if "method" in study else []):
            if name not in methods:
                raise ConfigError(f"papers.sbd.{key}: method {name!r} is not in papers.sbd.methods")


def _by_kind(sbd: dict):
    """What a claim (or a control's replaced keys) may name, by kind: a planted_recovery
    claim's (deletion, background) must be a cell of the noise study; the recovery claims'
    method one of its methods or oracles; the signed claims' one of the sign study's methods;
    a compression claim's a method or the planted truth."""
    grid, sign = sbd.get("noise_study", {}), sbd.get("sign_study", {})
    noise_methods = grid.get("methods", []) + grid.get("oracles", [])

    def references(spec):
        kind = spec["kind"]
        if kind == "planted_recovery":
            return {
                "method": noise_methods,
                "deletion": grid.get("deletions", []),
                "background": grid.get("backgrounds", []),
            }
        if kind == "recovery_degradation":
            return {"method": noise_methods}
        if kind == "signed_vs_unsigned":
            return {"method": sign.get("methods", []), "baseline": sign.get("methods", [])}
        if kind == "compression":
            return {"method": [*sbd["methods"], PLANTED_TRUTH]}
        return {}

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
        for method in spec.get("methods", []):
            if method not in methods:
                raise ConfigError(
                    f"papers.sbd.datasets.{name}.methods: {method!r} is not in papers.sbd.methods"
                )
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
        references_of=_by_kind(sbd),
        require_controls=True,
    )
