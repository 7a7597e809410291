"""repro.common.stats.paired_difference at its edges, by hand and against scipy: the text,
the argument checks, missing values, one and two seeds, and the bootstrap's own draws."""

import math

import numpy as np
import pytest
from scipy import stats

from repro.common.stats import PairedDifference, paired_difference


def test_text_by_hand():
    d = PairedDifference(0.123456, 0.0512345, 0.1953, 3, "t", 0.9, (0.1, 0.1, 0.1))
    assert d.text() == "+0.123 [+0.0512, +0.195] (90% t interval, n = 3, half-width 0.072)"


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_confidence_outside_the_open_unit_interval_is_refused(confidence):
    with pytest.raises(ValueError, match=rf"^confidence must be in \(0, 1\), got {confidence}$"):
        paired_difference([1.0, 2.0], [0.0, 0.0], confidence=confidence)


def test_bad_method_and_shapes_are_refused_with_their_reason():
    with pytest.raises(ValueError, match=r"^method must be one of \('t', 'bootstrap'\), got 'z'$"):
        paired_difference([1.0, 2.0], [0.0, 0.0], method="z")
    # a mapping beside a sequence whose values happen to be the mapping's keys
    with pytest.raises(ValueError, match="^paired values need the same seeds"):
        paired_difference({0: 1.0, 1: 2.0}, [0, 1])
    with pytest.raises(ValueError, match="^paired values must be two equally long, non-empty"):
        paired_difference([[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="^paired values must be two equally long, non-empty"):
        paired_difference([], [])


def test_a_missing_value_gives_no_interval():
    for a, b in (([0.5, None, 0.7], [0.4, 0.3, 0.2]), ([0.5, 0.6, 0.7], [0.4, None, 0.2])):
        d = paired_difference(a, b)
        assert math.isnan(d.mean) and math.isnan(d.low) and math.isnan(d.high)


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_one_seed_gives_no_interval_with_either_method(method):
    d = paired_difference([0.7], [0.5], method=method)
    assert d.mean == pytest.approx(0.2) and math.isnan(d.low) and math.isnan(d.high)


def test_two_seeds_get_scipys_t_interval():
    a, b = [0.71, 0.64], [0.6, 0.62]
    ref = stats.ttest_rel(a, b).confidence_interval(confidence_level=0.95)
    d = paired_difference(a, b)
    assert (d.low, d.high) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_bootstrap_is_the_percentile_interval_of_its_seeded_draws():
    """The seeds resampled with numpy's generator from ``seed`` (10,000 resamples by
    default), the interval the 2.5 % and 97.5 % percentiles of the resampled means."""
    diffs = np.random.default_rng(4).normal(0.2, 0.3, 12)  # resampled means nearly all distinct
    zeros = [0.0] * 12
    rng = np.random.default_rng(0)
    means = diffs[rng.integers(0, 12, size=(10_000, 12))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    d = paired_difference(diffs, zeros, method="bootstrap")
    assert (d.low, d.high) == pytest.approx((low, high), rel=1e-12)
    again = paired_difference(diffs, zeros, method="bootstrap", seed=0, n_resamples=10_000)
    assert (again.low, again.high) == (d.low, d.high)
