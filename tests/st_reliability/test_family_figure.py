"""Claim C4's statistics as Fig. F draws them (repro.st_reliability.family_figure.c4_drops):
family drop − pool drop and family drop − 0 per seed, with their paired t interval, against
scipy on a hand-made case of three seeds with unequal drops."""

import numpy as np
import pytest
from scipy import stats

from repro.st_reliability.family_figure import c4_drops


def test_drops_and_their_t_intervals_against_scipy():
    c4 = {"seeds": [2, 0, 5], "family_drop": [0.12, 0.02, 0.30], "pool_drop": [0.01, 0.04, 0.05]}
    drops = c4_drops(c4)
    assert drops["family"] == {2: 0.12, 0: 0.02, 5: 0.30}
    family, pool = np.array([0.02, 0.12, 0.30]), np.array([0.04, 0.01, 0.05])  # seeds 0, 2, 5
    d = drops["family_minus_pool"]
    low, high = stats.ttest_rel(family, pool).confidence_interval(0.95)
    assert (d.mean, d.low, d.high) == pytest.approx(((family - pool).mean(), low, high))
    d = drops["family_above_zero"]
    low, high = stats.ttest_1samp(family, 0.0).confidence_interval(0.95)
    assert (d.mean, d.low, d.high) == pytest.approx((family.mean(), low, high))
