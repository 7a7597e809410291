"""The numbers δ-Mem's gain-ratio figure plots besides the ratio of means: each seed's own
ratio, on a hand-made case where the mean of the ratios differs from the ratio of the means
and one seed's denominator is 0."""

import math

import numpy as np
import pytest

from repro.delta_mem.figures import seed_ratios


def _metrics(rows):
    return {"per_seed": [{"seed": s, "accuracy": acc} for s, acc in rows]}


def test_seed_ratios_divide_each_seed_by_its_own_baseline():
    metrics = _metrics(
        [
            (0, {"state_only": {"2": 0.60, "4": 0.30}, "truncated": {"2": 0.10, "4": 0.20}}),
            (1, {"state_only": {"2": 0.90, "4": 0.25}, "truncated": {"2": 0.30, "4": 0.0}}),
            (2, {"state_only": {"2": 0.20, "4": 0.50}, "truncated": {"2": 0.05, "4": 0.25}}),
        ]
    )
    assert seed_ratios(metrics, "state_only", "truncated", 2) == pytest.approx([6.0, 3.0, 4.0])
    at_four = seed_ratios(metrics, "state_only", "truncated", 4)
    assert at_four[0] == pytest.approx(1.5) and at_four[2] == pytest.approx(2.0)
    assert math.isnan(at_four[1])  # a 0 baseline has no ratio
    # the bar (ratio of means, 1.7 / 0.45) is not the mean of the dots (13 / 3)
    assert np.mean(seed_ratios(metrics, "state_only", "truncated", 2)) == pytest.approx(13 / 3)
