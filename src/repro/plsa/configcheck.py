"""Checks of the PLSA config that JSON Schema cannot express (cross-references)."""

from __future__ import annotations

from typing import Any

from repro.common.claims import claim_kinds
from repro.common.configcheck import ConfigError, check_claim_specs
from repro.plsa.claims import KINDS
from repro.plsa.runs_summary import SUMMARY_KEYS

# metrics of results/plsa/metrics/<dataset>.json (runs_summary imports no torch)
METRICS = SUMMARY_KEYS
# file names of the estimator studies' metrics, which a data set must not take
RESERVED = ("estimator_rate", "estimator_shift")
# the estimators of the estimator studies: repro.plsa.study.ESTIMATORS (a test keeps them
# equal; study imports scikit-learn, which the DAG-time check need not)
ESTIMATORS = (
    "hard_label",
    "moment_matching",
    "moment_matching_ridge",
    "plsa",
    "population",
    "source",
)
# the training schema's defaults of the keys checked below (the check also reads raw files)
EPOCHS, REFRESH_EVERY = 150, 10


def check(config: dict[str, Any]) -> None:
    plsa = config["papers"].get("plsa")
    if not plsa or not plsa.get("enabled"):
        return
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
    for metric in plsa.get("figures", {}).get("table_metrics", []):
        if metric not in METRICS:
            raise ConfigError(
                f"papers.plsa.figures.table_metrics: {metric!r} is not one of {list(METRICS)}"
            )
    _check_training(plsa["end_to_end"].get("training", {}))
    methods = plsa["end_to_end"]["methods"]
    datasets = plsa["end_to_end"]["datasets"]
    for name, spec in datasets.items():
        for method in spec.get("methods", []):
            if method not in methods:
                raise ConfigError(
                    f"papers.plsa.end_to_end.datasets.{name}.methods: {method!r} is not in "
                    "papers.plsa.end_to_end.methods"
                )

    def trained_on(spec):  # a comparison's methods must be trained on its data set
        dataset = datasets.get(spec.get("dataset"), {})
        chosen = dataset.get("methods", methods)
        return {"method": chosen, "baselines": chosen} if "dataset" in spec else {}

    check_claim_specs(
        "plsa",
        plsa,
        claim_kinds(KINDS),
        {
            "dataset": datasets,
            "method": methods,
            "baselines": methods,
            "metric": METRICS,
            "estimator": ESTIMATORS,
            "against": ESTIMATORS,
            "estimators": ESTIMATORS,
        },
        references_of=trained_on,
    )
    _check_margins(plsa)


def _check_training(training: dict[str, Any]) -> None:
    """Fewer epochs than ``refresh_every`` leave every reweighting method without a single
    estimate (no π̂, no weights): a config error, not a run whose checks cannot compute."""
    epochs = training.get("epochs", EPOCHS)
    refresh = training.get("refresh_every", REFRESH_EVERY)
    if epochs < refresh:
        raise ConfigError(
            f"papers.plsa.end_to_end.training.epochs: {epochs} < refresh_every {refresh}: "
            "no method would ever re-estimate π̂ (train at least refresh_every epochs)"
        )


def _check_margins(plsa: dict[str, Any]) -> None:
    """Every paired criterion names its margin in the config (no hidden minimum effect)."""
    for group in ("claims", "checks"):
        for cid, spec in plsa.get(group, {}).items():
            criterion = spec.get("criterion", {})
            if "test" in criterion and "delta" not in criterion:
                raise ConfigError(
                    f"papers.plsa.{group}.{cid}.criterion.delta: missing: write the margin "
                    "of the paired test in the config"
                )
