"""Checks of the QSurv config that JSON Schema cannot express (cross-references).

Runs when the Snakefile loads, so a bad config stops before any job starts, with a
message naming the key.
"""

from __future__ import annotations

import math
from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.qsurv.catalog import BUNDLED, KAPLAN_MEIER, METRICS, ORACLE, REFERENCE_ARMS
from repro.qsurv.claims import KINDS


def _methods_known(q: dict, key: str, names: list[str]) -> None:
    for i, name in enumerate(names):
        if name not in q["methods"]:
            raise ConfigError(
                f"papers.qsurv.{key}[{i}]: unknown method {name!r}; "
                f"defined under papers.qsurv.methods: {sorted(q['methods'])}"
            )


def check(config: dict[str, Any]) -> None:
    q = config["papers"].get("qsurv")
    if not q or not q.get("enabled"):
        return
    if not math.isclose(sum(q["split"]), 1.0, abs_tol=1e-9):
        raise ConfigError(f"papers.qsurv.split: fractions must sum to 1, got {q['split']}")
    scenarios = q["synthetic"]["scenarios"]
    real = q["real_datasets"]
    if "quadrature" in real:  # the quadrature study's metrics file has that name
        raise ConfigError("papers.qsurv.real_datasets.quadrature: the name is reserved")
    for name in set(scenarios) & set(real):
        raise ConfigError(
            f"papers.qsurv.real_datasets.{name}: the name is also a synthetic scenario"
        )
    for name, spec in real.items():
        key = f"papers.qsurv.real_datasets.{name}"
        if spec["source"] == "bundled":
            if name not in BUNDLED:
                raise ConfigError(
                    f"{key}: unknown bundled data set {name!r}; choose from {BUNDLED}"
                )
        elif spec.get("download") not in config.get("downloads", {}):
            raise ConfigError(
                f"{key}.download: source {spec['source']} needs a file; "
                f"{spec.get('download')!r} is not a key under downloads"
            )
    for name in set(q["methods"]) & set(REFERENCE_ARMS):
        raise ConfigError(
            f"papers.qsurv.methods.{name}: the name is reserved for a reference arm "
            "(repro.qsurv.reference)"
        )
    for key in ("synthetic_methods", "real_methods"):
        _methods_known(q, key, q[key])
    for key in ("hazard_methods", "ablation_methods"):
        _methods_known(q, f"figures.{key}", q["figures"][key])
    if scenarios and not q["synthetic_methods"]:
        raise ConfigError("papers.qsurv.synthetic_methods: empty, but scenarios are configured")
    if real and not q["real_methods"]:
        raise ConfigError("papers.qsurv.real_methods: empty, but real data sets are configured")
    runs = {
        **{s: [*q["synthetic_methods"], KAPLAN_MEIER, ORACLE] for s in scenarios},
        **{r: [*q["real_methods"], KAPLAN_MEIER] for r in real},
    }

    def methods_run_on(spec):  # a compared method must have run on the claim's data set
        run = runs.get(spec.get("dataset"), [])
        return {"method": run, "baselines": run}

    check_claim_specs(
        "qsurv",
        q,
        claim_kinds(KINDS),
        {
            "dataset": runs,
            "metric": METRICS,
            "nodes": q["quadrature"]["nodes"],
            "families": q["quadrature"]["families"],
        },
        references_of=methods_run_on,
        require_controls=True,
    )
