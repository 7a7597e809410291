"""The per-run sanity check of the end-to-end runs: a broken run fails a check, it does not
widen an interval.

A run (data set, method, seed) is sane when its target accuracy exceeds the best constant
predictor's on the same target test nodes (the majority class's share,
``constant_accuracy``) by at least ``above_constant`` (``papers.plsa.end_to_end.sanity``).
A GNN that collapsed to one class, or never trained, is at most at that share; every method
of this workflow, the ones that lose to ERM included, is well above it on the CSBMs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from repro.common.claims import missing_seeds


def failed_runs(
    metrics: Mapping[str, dict],
    above_constant: float,
    *,
    dataset: str | None = None,
    methods: Iterable[str] | None = None,
) -> list[str]:
    """Every run of ``metrics`` (data set -> metrics document) that fails the check, as
    "<data set> <method> seed <s>: <reason>"; only ``dataset`` and ``methods`` when given."""
    failed = []
    for name, document in metrics.items():
        if dataset is not None and name != dataset:
            continue
        chosen = document["methods"] if methods is None else methods
        for method in chosen:
            rows = document["methods"].get(method, {}).get("per_seed", [])
            for seed, row in zip(document["seeds"], rows, strict=True):
                reason = _reason(row, above_constant)
                if reason:
                    failed.append(f"{name} {method} seed {seed}: {reason}")
    return failed


def _reason(row: Mapping, above_constant: float) -> str:
    accuracy, constant = row.get("target_accuracy"), row.get("constant_accuracy")
    missing = missing_seeds({"target_accuracy": accuracy, "constant_accuracy": constant})
    if missing:
        return f"no value of {missing}"
    if accuracy < constant + above_constant:
        return (
            f"target accuracy {accuracy:.4f} is not above the constant predictor's "
            f"{constant:.4f} + {above_constant:g}"
        )
    return ""
