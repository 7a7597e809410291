"""Per-seed sanity check of every trained method: a broken run fails a check and its claims,
instead of widening an interval.

A (method, seed) run of a data set passes when

* its concordance (``cindex_ipcw``, the claims' C-index) is finite and above chance by
  ``cindex_margin``: 0.5 + margin (a model that ranks no better than a coin is broken);
* its loss (``loss`` in the config) is finite, and, where ``loss_margin`` is a number, at
  most the trivial model's on the same seed plus that margin: the training Kaplan-Meier
  curve, which ignores the covariates (:mod:`repro.qsurv.reference`). The embedded default
  sets no margin: a calibrated but poorly calibrated method (DeepHit's IBS) is a weak
  method, not a broken run; a run that ranks no better than chance is.

The thresholds are ``papers.qsurv.sanity`` in the config. The reference arms themselves are
not checked (the Kaplan-Meier curve ranks every pair as a tie, C = 0.5, by construction).
A failing run makes every claim comparing that method on that data set "not reproduced",
naming the seed and the reason (:mod:`repro.qsurv.claims`), and fails the check
``seed_sanity``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from repro.qsurv.catalog import KAPLAN_MEIER

CHANCE = 0.5
CINDEX = "cindex_ipcw"


def _finite(value) -> bool:
    return value is not None and math.isfinite(float(value))


def run_failure(row: Mapping[str, Any], trivial: Mapping[str, Any], thresholds) -> str:
    """Why one (method, seed) run fails, or "" when it passes; ``trivial`` is the
    Kaplan-Meier row of the same seed."""
    reasons = []
    floor = CHANCE + float(thresholds["cindex_margin"])
    cindex = row.get(CINDEX)
    if not _finite(cindex) or float(cindex) <= floor:
        reasons.append(f"C-index {_text(cindex)} ≤ {floor:g} (chance + margin)")
    loss, reference = row.get(thresholds["loss"]), trivial.get(thresholds["loss"])
    if thresholds.get("loss_margin") is None:
        if not _finite(loss):
            reasons.append(f"{thresholds['loss']} {_text(loss)} is not finite")
        return "; ".join(reasons)
    ceiling = float(reference) + float(thresholds["loss_margin"]) if _finite(reference) else None
    if not _finite(loss) or ceiling is None or float(loss) > ceiling:
        reasons.append(
            f"{thresholds['loss']} {_text(loss)} > Kaplan-Meier's {_text(reference)} + "
            f"{float(thresholds['loss_margin']):g}"
        )
    return "; ".join(reasons)


def _text(value) -> str:
    return f"{float(value):.4g}" if value is not None else "missing"


def seed_failures(document: Mapping[str, Any], thresholds) -> dict[str, dict[int, str]]:
    """method -> {seed: reason} for every trained method of a metrics document and every
    seed whose run fails (methods and seeds that pass are absent)."""
    references = set(document.get("reference_arms", ()))
    trivial = document["methods"][KAPLAN_MEIER]["per_seed"]
    failures: dict[str, dict[int, str]] = {}
    for method, entry in document["methods"].items():
        if method in references:
            continue
        for seed, row, km in zip(document["seeds"], entry["per_seed"], trivial, strict=True):
            reason = run_failure(row, km, thresholds)
            if reason:
                failures.setdefault(method, {})[int(seed)] = reason
    return failures


def describe(dataset: str, failures: Mapping[str, Mapping[int, str]]) -> list[str]:
    """One line per failed run: "flchain coxph seed 1001: C-index 0.376 ≤ 0.52 ..."."""
    return [
        f"{dataset} {method} seed {seed}: {reason}"
        for method, seeds in failures.items()
        for seed, reason in seeds.items()
    ]
