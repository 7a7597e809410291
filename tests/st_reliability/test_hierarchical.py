"""repro.st_reliability.hierarchical.bootstrap_rho against a naive bootstrap: three groups of
unequal size and strength (the mean of the group ρ differs from their median), three seeds."""

import numpy as np
import pytest
from scipy import stats

from repro.st_reliability.hierarchical import _ratio, bootstrap_rho, resamples, seed_mean

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


def test_resamples_draw_with_replacement_within_each_group_and_over_every_seed():
    """Interleaved groups: each group's columns draw only its own members, each member with
    probability 1/size, repeats allowed; the seeds draw 0, 1 and 2 alike."""
    groups = np.array(["b", "a", "c", "a", "b", "c", "c", "a", "b", "c"])
    idx, seeds = resamples(groups, 3, 3000, np.random.default_rng(0))
    assert idx.shape == (3000, 10) and seeds.shape == (3000, 3)
    for g in "abc":
        members = np.flatnonzero(groups == g)
        drawn = idx[:, members]
        assert np.isin(drawn, members).all()
        share = np.array([np.mean(drawn == m) for m in members])
        np.testing.assert_allclose(share, 1 / len(members), atol=0.02)
        assert any(len(set(row)) < len(members) for row in drawn)
    np.testing.assert_allclose([np.mean(seeds == k) for k in range(3)], 1 / 3, atol=0.02)


def test_seed_mean_averages_the_drawn_seeds_skipping_nan():
    """Three seeds, two draws: draw 0 takes seeds (0, 0, 2): (0.1 + 0.1 + 0.7) / 3 = 0.3 (the
    median would be 0.1); draw 1 takes (0, 1, 1), seed 0's value NaN: 0.2."""
    per_seed = np.array([[0.1, np.nan], [0.4, 0.2], [0.7, 0.6]])
    chosen = np.array([[0, 0, 2], [0, 1, 1]])
    np.testing.assert_allclose(seed_mean(per_seed, chosen), [0.3, 0.2], rtol=1e-12)


def test_ratio_only_against_a_negative_reference():
    """ρ_a / ρ_b where ρ_b < 0; a zero or positive reference gives −∞."""
    ratio = _ratio([-0.4, 0.3, 0.2, 0.5, -0.1], [-0.8, 0.5, 0.0, -0.25, 1.0])
    np.testing.assert_array_equal(ratio, [0.5, -np.inf, -np.inf, -2.0, -np.inf])


def test_signed_advantage_and_c8_intervals_against_a_naive_bootstrap():
    """The same draws recomputed with scipy: per group and over groups (median), the
    interval of the signed advantage −ρ_s − ρ_noise; the interval of C8, the Spearman across
    the three groups of (group mean quality, −group ρ) in each draw; each group's mean
    quality and size."""
    groups, q, s = _data()
    noise = np.random.default_rng(13).normal(size=q.shape)
    n_boot, alpha = 20, 0.1
    out = bootstrap_rho(
        q, {"s": s, "noise": noise}, groups, n_boot=n_boot, confidence=0.8,
        rng=np.random.default_rng(7), paired={"adv": ("s", "noise")}, aggregate=("s",),
    )  # fmt: skip
    idx, seed_idx = resamples(groups, SEEDS, n_boot, np.random.default_rng(7))
    advantage = {g: [] for g in SIZES}
    c8 = []
    for b in range(n_boot):
        quality, minus_rho = [], []
        for g in SIZES:
            cols = idx[b, groups == g]
            rho_s = [stats.spearmanr(q[k, cols], s[k, cols])[0] for k in seed_idx[b]]
            rho_n = [stats.spearmanr(q[k, cols], noise[k, cols])[0] for k in seed_idx[b]]
            advantage[g].append(-np.mean(rho_s) - np.mean(rho_n))
            quality.append(np.mean([q[k, cols].mean() for k in seed_idx[b]]))
            minus_rho.append(-np.mean(rho_s))
        c8.append(stats.spearmanr(quality, minus_rho)[0])

    def interval(draws):
        return tuple(np.quantile(draws, [alpha, 1 - alpha]))

    for g in SIZES:
        got = out["groups"][g]
        assert (got["adv"]["low"], got["adv"]["high"]) == pytest.approx(
            interval(advantage[g]), rel=1e-10
        )
        assert got["mean_quality"] == pytest.approx(np.mean(q[:, groups == g]), rel=1e-12)
        assert got["n"] == SIZES[g]
    over_groups = np.median([advantage[g] for g in SIZES], axis=0)
    median = out["median_group"]["adv"]
    assert (median["low"], median["high"]) == pytest.approx(interval(over_groups), rel=1e-10)
    aggregate = out["aggregate"]["s"]
    assert (aggregate["low"], aggregate["high"]) == pytest.approx(interval(c8), rel=1e-10)
    per_seed = [
        stats.spearmanr(
            [q[k, groups == g].mean() for g in SIZES],
            [-stats.spearmanr(q[k, groups == g], s[k, groups == g])[0] for g in SIZES],
        )[0]
        for k in range(SEEDS)
    ]
    np.testing.assert_allclose(aggregate["per_seed"], per_seed, rtol=1e-12)


def test_pooled_rho_and_ratio_intervals_against_a_naive_bootstrap():
    """The same draws recomputed with scipy: the pooled ρ over all predictions (per seed, and
    its interval over the draws, predictions resampled within groups); the ratio of the
    median group ρ of a noisier signal to that of the signal, per seed and over the draws."""
    groups, q, s = _data()
    t = s + 1.5 * np.random.default_rng(14).normal(size=q.shape)
    n_boot, alpha = 20, 0.1
    out = bootstrap_rho(
        q, {"s": s, "t": t}, groups, n_boot=n_boot, confidence=0.8,
        rng=np.random.default_rng(8), pooled={"s": s}, ratios={"t/s": ("t", "s")},
    )  # fmt: skip
    idx, seed_idx = resamples(groups, SEEDS, n_boot, np.random.default_rng(8))

    def rho(signal, k, cols):
        return stats.spearmanr(q[k, cols], signal[k, cols])[0]

    def interval(draws):
        return tuple(np.quantile(draws, [alpha, 1 - alpha]))

    pooled_per_seed = [rho(s, k, slice(None)) for k in range(SEEDS)]
    pooled_draws = [np.mean([rho(s, k, idx[b]) for k in seed_idx[b]]) for b in range(n_boot)]
    pooled = out["pooled"]["s"]
    np.testing.assert_allclose(pooled["per_seed"], pooled_per_seed, rtol=1e-12)
    assert pooled["rho"] == pytest.approx(np.mean(pooled_per_seed), rel=1e-12)
    assert (pooled["low"], pooled["high"]) == pytest.approx(interval(pooled_draws), rel=1e-10)

    def median_over_groups(signal, k):
        return np.median([rho(signal, k, groups == g) for g in SIZES])

    per_seed = [median_over_groups(t, k) / median_over_groups(s, k) for k in range(SEEDS)]
    ratio_draws = []
    for b in range(n_boot):
        medians = [
            np.median(
                [np.mean([rho(x, k, idx[b, groups == g]) for k in seed_idx[b]]) for g in SIZES]
            )
            for x in (t, s)
        ]
        ratio_draws.append(medians[0] / medians[1])
    ratio = out["ratio"]["t/s"]
    np.testing.assert_allclose(ratio["per_seed"], per_seed, rtol=1e-10)
    assert (ratio["low"], ratio["high"]) == pytest.approx(interval(ratio_draws), rel=1e-10)
