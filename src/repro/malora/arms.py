"""The per-seed numbers a MaLoRA paired claim compares: a merge rule of the run, or an arm
built from the same run for the claims' controls (``repro.common.controls`` names them in a
claim's ``set``):

- ``oracle`` (linear): α maximising the test split's union margin, an upper reference that
  uses test labels (never reported as a method);
- ``malora_exact_margins`` (linear, primary setting): MaLoRA's rule with the margins of the
  test split itself, the theory's exact α = m_0 / m_t (the calibration-size ablation's
  ``test`` entry);
- ``best_baseline``: on each seed the best of the claim's baselines (an oracle pick on the
  test metric): at least as good as every baseline by construction;
- ``worst_rule``: on each seed the worst rule of the study that has a value there: no
  better than any baseline by construction (the value a failed seed is scored with under
  ``failed_seed: loss``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

ORACLE = "oracle"
EXACT_MARGINS = "malora_exact_margins"
BEST_BASELINE = "best_baseline"
WORST_RULE = "worst_rule"
ARMS = (ORACLE, EXACT_MARGINS, BEST_BASELINE, WORST_RULE)  # the linear study has every arm
ANY_STUDY = (BEST_BASELINE, WORST_RULE)  # digits and the full-scale benchmarks


def _value(v) -> float | None:
    return None if v is None or math.isnan(float(v)) else float(v)


def rule_values(block: dict, name: str, metric: str) -> list[float | None]:
    """A configured rule's per-seed values (seed order), None where it has none."""
    return [_value(v) for v in block["methods"][name][metric]["per_seed"]]


def _per_seed_pick(columns: Sequence[list], pick) -> list[float | None]:
    """``pick`` (max or min) over the columns of each seed that have a value."""
    out = []
    for row in zip(*columns, strict=True):
        found = [v for v in row if v is not None]
        out.append(pick(found) if found else None)
    return out


def arm_values(
    block: dict, name: str, metric: str, baselines: Sequence[str], *, higher_is_better: bool
) -> list[float | None]:
    """The per-seed values of a rule or control arm (see the module text) in ``block`` (a
    summary block: ``methods``, and for linear blocks ``oracle`` and ``ablations``)."""
    if name == ORACLE:
        if metric != "union_margin":
            raise KeyError(f"the oracle has only a union margin, not {metric}")
        return [_value(v) for v in block["oracle"]["per_seed"]]
    if name == EXACT_MARGINS:
        if metric != "union_margin":
            raise KeyError(f"MaLoRA with exact margins has only a union margin, not {metric}")
        return [_value(v) for v in block["ablations"]["calibration_size"]["test"]["per_seed"]]
    best, worst = (max, min) if higher_is_better else (min, max)
    if name == BEST_BASELINE:  # a seed where a baseline has no value has no best either
        columns = [rule_values(block, b, metric) for b in baselines]
        return [None if None in row else best(row) for row in zip(*columns, strict=True)]
    if name == WORST_RULE:
        return _per_seed_pick([rule_values(block, r, metric) for r in block["methods"]], worst)
    return rule_values(block, name, metric)
