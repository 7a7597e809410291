"""Spearman ρ of quality against reliability signals with a hierarchical bootstrap.

The data are ``(seeds, n)`` arrays: the same n (line, perturbation) predictions in every
seed, each in one (encoder, line) group. One bootstrap draw resamples the predictions within
each group *and* the seeds (with replacement), so the interval carries the seed-to-seed
spread of the trained models as well as the sampling of predictions (issue 20 §3: resampling
predictions only gave ±0.05 while per-seed values spanned −0.37 to −0.69).

Statistics per signal: ρ per group (mean over seeds), the median of the group ρ (the primary
statistic: it does not depend on how distances are scaled between groups), and the pooled ρ
over all predictions; signed differences between two signals (``paired``) and the Spearman,
across groups, of group mean quality against the signed group reliability (C8).
"""

from __future__ import annotations

import numpy as np

from repro.st_reliability.reliability import (
    centred_ranks,
    partial_from,
    rank_correlation,
    spearman,
)


class _Ranks:
    """Centred ranks of ``x[:, index]`` for (seeds, n) arrays, each array ranked once:
    quality and the magnitude enter many ρ with the same draws (the ranks are the costly
    part), and a partial ρ reuses its distance's and magnitude's ranks."""

    def __init__(self, index):
        self.index, self.cache = index, {}

    def __call__(self, x: np.ndarray) -> np.ndarray:
        key = id(x)
        if key not in self.cache:
            self.cache[key] = (x, centred_ranks(x[:, self.index]))  # x kept: its id stays
        return self.cache[key][1]

    def rho(self, q: np.ndarray, signal) -> np.ndarray:
        """ρ(q, signal) on these columns; a (d, m) pair gives the partial ρ given m."""
        if isinstance(signal, tuple):
            d, m = signal
            rq, rd, rm = self(q), self(d), self(m)
            return partial_from(
                rank_correlation(rq, rd), rank_correlation(rq, rm), rank_correlation(rd, rm)
            )
        return rank_correlation(self(q), self(signal))


def resamples(groups: np.ndarray, n_seeds: int, n_boot: int, rng: np.random.Generator):
    """(predictions (n_boot, n) resampled within each group, seeds (n_boot, n_seeds))."""
    idx = np.empty((n_boot, len(groups)), dtype=int)
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        idx[:, members] = rng.choice(members, (n_boot, len(members)), replace=True)
    return idx, rng.integers(0, n_seeds, size=(n_boot, n_seeds))


def seed_mean(per_seed_draws: np.ndarray, seed_idx: np.ndarray) -> np.ndarray:
    """(seeds, n_boot) per-seed values of each draw → (n_boot,) means over resampled seeds."""
    return np.nanmean(np.take_along_axis(per_seed_draws.T, seed_idx, axis=1), axis=1)


def _summary(value, point_per_seed, draws: np.ndarray, alpha: float, key="rho") -> dict:
    """The point value, its percentile interval over the draws and the per-seed values."""
    low, high = np.nanquantile(draws, [alpha, 1 - alpha])
    return {
        key: float(value),
        "low": float(low),
        "high": float(high),
        "per_seed": [float(v) for v in point_per_seed],
    }


def _ratio(a, b):
    """ρ_a / ρ_b where the reference ρ_b is negative, else −∞."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b < 0, a / b, -np.inf)


def bootstrap_rho(
    q: np.ndarray,
    signals: dict,
    groups: np.ndarray,
    *,
    n_boot: int,
    confidence: float,
    rng: np.random.Generator,
    pooled: dict | None = None,
    paired: dict[str, tuple[str, str]] | None = None,
    aggregate: tuple[str, ...] = (),
    ratios: dict[str, tuple[str, str]] | None = None,
    resample_seeds: bool = True,
) -> dict:
    """Hierarchical bootstrap of ρ(q, signal) (see the module doc).

    ``signals`` (name -> (seeds, n), or a (d, m) pair for the partial ρ given m) give ρ per
    group and its median over groups; ``pooled`` (name -> (seeds, n), e.g. normalised per
    group) the pooled ρ over all predictions. ``paired`` (name -> (a, b)) adds the signed
    advantage −ρ_a − ρ_b of distance ``a`` (trusted when small) over score ``b`` (trusted
    when large), per group and as the median over groups. ``aggregate`` names the signals
    for which the Spearman across groups of (group mean q, group −ρ) is computed (C8).
    ``resample_seeds=False`` keeps every seed in every draw (predictions only: the old
    interval, which leaves the seed-to-seed spread out; kept for the coverage test).
    Returns {"groups": {g: {name: {rho, low, high, per_seed}, "mean_quality", "n"}},
    "median_group": {...}, "pooled": {...}, "aggregate": {...}, "ratio": {...},
    "seeds_resampled"}.
    """
    n_seeds = q.shape[0]
    idx, seed_idx = resamples(groups, n_seeds, n_boot, rng)
    if not resample_seeds:
        seed_idx = np.tile(np.arange(n_seeds), (n_boot, 1))
    alpha = (1 - confidence) / 2
    names = sorted(set(groups))
    cols = {g: np.flatnonzero(groups == g) for g in names}
    point = {name: [] for name in signals}  # name -> (G, seeds)
    draws = {name: [] for name in signals}  # name -> (G, n_boot), seeds resampled
    for g in names:
        at_point, at_draws = _Ranks(cols[g]), _Ranks(idx[:, cols[g]])
        for name, s in signals.items():
            point[name].append(at_point.rho(q, s))
            draws[name].append(seed_mean(at_draws.rho(q, s), seed_idx))
    point = {name: np.array(v) for name, v in point.items()}
    draws = {name: np.array(v) for name, v in draws.items()}
    q_point = np.array([q[:, cols[g]].mean(1) for g in names])  # (G, seeds)
    q_draws = np.array([seed_mean(q[:, idx[:, cols[g]]].mean(-1), seed_idx) for g in names])
    for name, (a, b) in (paired or {}).items():
        point[name] = -point[a] - point[b]
        draws[name] = -draws[a] - draws[b]
    out = {
        "groups": {
            g: {
                "mean_quality": float(q_point[i].mean()),
                "n": len(cols[g]),
                **{
                    name: _summary(point[name][i].mean(), point[name][i], draws[name][i], alpha)
                    for name in point
                },
            }
            for i, g in enumerate(names)
        },
        "median_group": {
            name: _summary(
                np.median(point[name].mean(1)),
                np.median(point[name], 0),
                np.median(draws[name], 0),
                alpha,
            )
            for name in point
        },
        "pooled": {},
        "aggregate": {},
        "ratio": {},
        "seeds_resampled": resample_seeds,
    }
    at_all, at_draws = _Ranks(slice(None)), _Ranks(idx)
    for name, s in (pooled or {}).items():
        per_seed = at_all.rho(q, s)
        boot = seed_mean(at_draws.rho(q, s), seed_idx)
        out["pooled"][name] = _summary(per_seed.mean(), per_seed, boot, alpha)
    for name, (a, b) in (ratios or {}).items():
        medians = {k: (np.median(point[k], 0), np.median(draws[k], 0)) for k in (a, b)}
        out["ratio"][name] = _summary(
            _ratio(np.median(point[a].mean(1)), np.median(point[b].mean(1))),
            _ratio(medians[a][0], medians[b][0]),
            _ratio(medians[a][1], medians[b][1]),
            alpha,
            key="ratio",
        )
    for name in aggregate:
        value = spearman(q_point.mean(1), -point[name].mean(1))  # across groups
        per_seed = spearman(q_point.T, -point[name].T)
        boot = spearman(q_draws.T, -draws[name].T)
        out["aggregate"][name] = _summary(value, per_seed, boot, alpha, key="spearman")
    return out
