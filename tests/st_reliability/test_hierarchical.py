"""repro.st_reliability.hierarchical.bootstrap_rho against a naive bootstrap: three groups of
unequal size and strength (the mean of the group ρ differs from their median), three seeds."""

import numpy as np
import pytest
from scipy import stats

from repro.st_reliability.hierarchical import bootstrap_rho, resamples

SIZES, NOISE, SEEDS, N_BOOT = {"a": 9, "b": 14, "c": 11}, {"a": 0.2, "b": 1.0, "c": 4.0}, 3, 150


def _data():
    rng = np.random.default_rng(12)
    groups = np.concatenate([[g] * n for g, n in SIZES.items()])
    z = rng.normal(size=(SEEDS, len(groups)))
    noise = np.array([NOISE[g] for g in groups])
    return groups, z + noise * rng.normal(size=z.shape), -z


def _naive_median_and_mean_rho(q, s, groups):
    """Median and mean over groups of (mean over seeds of scipy's Spearman ρ)."""
    per_group = [
        np.mean([stats.spearmanr(q[k, groups == g], s[k, groups == g])[0] for k in range(SEEDS)])
        for g in SIZES
    ]
    return np.median(per_group), np.mean(per_group)


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_median_group_rho_and_its_interval_equal_a_naive_bootstrap(confidence):
    groups, q, s = _data()
    out = bootstrap_rho(
        q, {"s": s}, groups, n_boot=N_BOOT, confidence=confidence, rng=np.random.default_rng(5)
    )["median_group"]["s"]
    median, mean = _naive_median_and_mean_rho(q, s, groups)
    assert abs(median - mean) > 0.05  # the case tells the median from the mean
    assert out["rho"] == pytest.approx(median, rel=1e-12)
    # the same draws (predictions within groups, seeds), each recomputed with scipy
    idx, seed_idx = resamples(groups, SEEDS, N_BOOT, np.random.default_rng(5))
    draws = []
    for b in range(N_BOOT):
        per_group = []
        for g in SIZES:
            cols = idx[b, groups == g]
            rhos = [stats.spearmanr(q[k, cols], s[k, cols])[0] for k in seed_idx[b]]
            per_group.append(np.mean(rhos))
        draws.append(np.median(per_group))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    assert (out["low"], out["high"]) == pytest.approx((low, high), rel=1e-10)


def test_signed_advantage_aggregate_and_per_seed_medians_against_scipy():
    """The signed advantage −ρ_a − ρ_b per group; the Spearman across the three groups of
    (group mean quality, −group ρ) (C8); the median over groups per seed."""
    groups, q, s = _data()
    noise = np.random.default_rng(13).normal(size=q.shape)
    out = bootstrap_rho(
        q, {"s": s, "noise": noise}, groups, n_boot=20, confidence=0.95,
        rng=np.random.default_rng(5), paired={"adv": ("s", "noise")}, aggregate=("s",),
    )  # fmt: skip

    def rho(signal, g, k):
        return stats.spearmanr(q[k, groups == g], signal[k, groups == g])[0]

    group_rho = {g: np.mean([rho(s, g, k) for k in range(SEEDS)]) for g in SIZES}
    for g in SIZES:
        advantage = [-rho(s, g, k) - rho(noise, g, k) for k in range(SEEDS)]
        assert out["groups"][g]["adv"]["rho"] == pytest.approx(np.mean(advantage), rel=1e-10)
    quality = [np.mean(q[:, groups == g]) for g in SIZES]
    expected = stats.spearmanr(quality, [-group_rho[g] for g in SIZES])[0]
    assert out["aggregate"]["s"]["spearman"] == pytest.approx(expected, rel=1e-12)
    per_seed = [np.median([rho(s, g, k) for g in SIZES]) for k in range(SEEDS)]
    np.testing.assert_allclose(out["median_group"]["s"]["per_seed"], per_seed, rtol=1e-10)
