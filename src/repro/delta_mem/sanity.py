"""Per-seed sanity of the embedded runs: a broken run fails a check, it does not widen an
interval.

A seed's run failed when its backbone never built the copy circuit (the mean accuracy of
its last pretraining batches, the number ``pretraining.stop_accuracy`` stops on, is below
``sanity.backbone_accuracy``), or when the method's training ended with a loss that is not
finite or not below ``sanity.max_final_loss`` (ln 16, the uniform guess over the 16 values:
it did not train). The thresholds are ``papers.delta_mem.sanity``; the records are the
``backbone`` and ``train`` entries of each seed's row in ``metrics/<method>.json``
(:func:`repro.delta_mem.evaluate.evaluate_method`). A claim that reads a failed seed is
"not reproduced", naming the seed and the reason; the ``sane_runs`` check fails.
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def seed_failure(row: Mapping, thresholds: Mapping) -> str:
    """Why one seed's run failed its sanity check, or "" when it passed."""
    backbone = row.get("backbone", {}).get("final_accuracy")
    floor = thresholds["backbone_accuracy"]
    if backbone is None or not backbone >= floor:
        steps = row.get("backbone", {}).get("steps")
        return (
            f"its backbone ended pretraining at accuracy {backbone} after {steps} steps, below "
            f"{floor} (no copy circuit)"
        )
    loss = row.get("train", {}).get("final_loss")
    ceiling = thresholds["max_final_loss"]
    if loss is None or not math.isfinite(loss) or not loss < ceiling:
        return f"its training ended at loss {loss}, not finite and below {ceiling:g} (untrained)"
    return ""


def failed_runs(metrics: Mapping, thresholds: Mapping | None) -> dict[int, str]:
    """seed -> reason, for every seed of one method's metrics document that failed (none
    without thresholds)."""
    if not thresholds:
        return {}
    found = {row["seed"]: seed_failure(row, thresholds) for row in metrics["per_seed"]}
    return {seed: reason for seed, reason in found.items() if reason}
