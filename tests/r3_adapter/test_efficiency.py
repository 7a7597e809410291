"""The numbers 3R-Adapter's efficiency plot draws in its difference panel
(repro.r3_adapter.efficiency.paired_differences): 3R-lite − each method per seed, with the mean
and the paired 95 % t interval, against scipy on a hand-made case of three methods with
unequal spreads; a method with a failed seed gets no difference."""

import numpy as np
import pytest
from scipy import stats

from repro.r3_adapter.efficiency import paired_differences

METRIC = "severity2/accuracy"


def _doc(values):
    return {"per_seed": [{"seed": s, METRIC: v} for s, v in zip((4, 0, 7), values, strict=True)]}


def test_differences_per_seed_and_their_t_interval_against_scipy():
    docs = {
        "r3_lite": _doc([0.30, 0.28, 0.35]),
        "lora": _doc([0.25, 0.27, 0.20]),
        "vpt": _doc([0.31, 0.20, 0.33]),
        "broken": _doc([0.30, None, 0.31]),
    }
    out = paired_differences(docs, "r3_lite", METRIC)
    assert set(out) == {"lora", "vpt"}  # not itself, not the method with a failed seed
    d, diffs = out["lora"]
    # seeds in order 0, 4, 7: (0.28 − 0.27, 0.30 − 0.25, 0.35 − 0.20)
    np.testing.assert_allclose(diffs, [0.01, 0.05, 0.15])
    a, b = np.array([0.28, 0.30, 0.35]), np.array([0.27, 0.25, 0.20])
    low, high = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (d.mean, d.low, d.high) == pytest.approx(((a - b).mean(), low, high))
    d, diffs = out["vpt"]
    np.testing.assert_allclose(diffs, [0.08, -0.01, 0.02])
    assert d.mean == pytest.approx(0.03)
