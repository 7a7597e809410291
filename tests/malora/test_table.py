"""MaLoRA's table as text (repro.malora.figures.table_sections): where MaLoRA formed no model
on a seed, the difference to a rule is taken on the seeds where it did, with its n, checked
against scipy's paired t interval on a hand-made case."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repro.malora.figures import table_sections


def _stats(per_seed):
    values = [v for v in per_seed if v is not None]
    return {
        "mean": float(np.mean(values)) if values else None,
        "sd": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
        "defined": len(values),
        "per_seed": per_seed,
    }


def _method(normalised, joint):
    return {
        "normalised_accuracy": _stats(normalised),
        "joint_accuracy": _stats(joint),
        "pretrain_accuracy": _stats([0.9, 0.92, 0.91, 0.95]),
    }


NAN = {"mean": float("nan"), "low": float("nan"), "high": float("nan"), "n": 4}
MALORA_N = [0.90, None, 0.80, 0.95]  # seed 1: no MaLoRA model (a margin ≤ 0)
TA_N = [0.85, 0.70, 0.78, 0.80]


def _summary():
    linear = {
        "overlap": 0.0,
        "ablations": {},
        "methods": {"malora": {"union_margin": _stats([0.3, 0.4])}},
        "paired_vs_malora": {},
        "oracle": _stats([0.5, 0.6]),
    }
    return {
        "digits": {
            "seeds": [0, 1, 2, 3],
            "methods": {
                "malora": _method(MALORA_N, [0.7, None, 0.6, 0.72]),
                "task_arithmetic": _method(TA_N, [0.6, 0.5, 0.65, 0.6]),
            },
            "paired_vs_malora": {
                "task_arithmetic": {"normalised_accuracy": NAN, "joint_accuracy": NAN}
            },
        },
        "linear": {"settings": {"unequal": [linear]}},
    }


def test_a_failed_seed_leaves_the_difference_on_the_other_seeds_with_its_n():
    _, (digits, _) = table_sections([_summary()])
    malora, ta = digits.rows
    assert str(malora[1]) == "0.883 ± 0.076 (n = 3 of 4)"
    assert str(ta[1]) == "0.782 ± 0.062"  # every seed defined: no n
    a, b = np.array([0.90, 0.80, 0.95]), np.array([0.85, 0.78, 0.80])
    diff = a - b  # seeds 0, 2, 3: 0.05, 0.02, 0.15
    low, high = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert str(ta[4]) == (
        f"{diff.mean():+.3f} [{low:+.3f}, {high:+.3f}] (n = 3, seeds with a MaLoRA model)"
    )
    # the CSV's numbers, unrounded
    numbers = dict(ta[4].numbers)
    assert numbers["mean"] == pytest.approx(diff.mean()) and numbers["n"] == 3
    assert (numbers["low"], numbers["high"]) == pytest.approx((low, high))
    assert dict(malora[1].numbers)["mean"] == pytest.approx(np.mean([0.90, 0.80, 0.95]))
    assert malora[4] == "—"  # no difference of MaLoRA with itself


def test_fewer_than_two_seeds_with_a_model_say_so():
    summary = _summary()
    summary["digits"]["methods"]["malora"] = _method([None, None, 0.8, None], [None] * 4)
    _, (digits, _) = table_sections([summary])
    assert digits.rows[1][4] == "n/a (fewer than 2 seeds with a MaLoRA model)"
