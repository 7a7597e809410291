"""Contextual stochastic block model (CSBM) graphs and the shift settings of the brief (§6).

A graph has n nodes with labels drawn from a class prior (counts realised exactly), features
``e_y + N(0, sigma^2 I)`` and, independently for every unordered node pair {u, v}, an edge
with probability ``B[y_u, y_v] = avg_degree / n * M[y_u, y_v]``. Note that ``avg_degree``
is the scale of B, not the realised degree: a node of class a has expected degree
``avg_degree * sum_b prior_b M_ab`` (4 for the source block below, 5 for M = 0.5).

Edges are drawn per class pair without an n x n matrix: the edge count of the pair block
is Binomial(#node pairs, B_ab) and that many distinct node pairs are drawn uniformly, which
is exactly the distribution of independent Bernoulli edges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHIFTS = ("none", "css", "degree", "gss")
SOURCE_BLOCK = ((0.8, 0.2, 0.2), (0.2, 0.8, 0.2), (0.2, 0.2, 0.8))
FLAT_BLOCK = ((0.5, 0.5, 0.5),) * 3
GSS_PRIOR = (0.5, 0.3, 0.2)
UNIFORM3 = (1 / 3, 1 / 3, 1 / 3)


@dataclass(frozen=True, eq=False)  # eq=False: element-wise array equality is not a bool
class Graph:
    x: np.ndarray  # (n, d) float32
    y: np.ndarray  # (n,) int64
    edge_index: np.ndarray  # (2, E) int64, both directions of every undirected edge
    eval_mask: np.ndarray | None = None  # (n,) bool: nodes whose accuracy counts; None: all

    @property
    def num_classes(self) -> int:
        return int(self.y.max()) + 1 if self.y.size else 0

    @property
    def num_nodes(self) -> int:
        return int(self.y.shape[0])


@dataclass(frozen=True)
class CSBMSpec:
    n: int
    prior: tuple[float, ...]
    block: tuple[tuple[float, ...], ...]  # k x k matrix M; edge probability B = avg_degree/n * M
    avg_degree: float = 10.0
    sigma: float = 0.55

    def edge_probabilities(self) -> np.ndarray:
        b = self.avg_degree / self.n * np.asarray(self.block, dtype=float)
        if b.shape != (len(self.prior),) * 2 or not np.allclose(b, b.T):
            raise ValueError("block must be a symmetric k x k matrix with k = len(prior)")
        if b.min() < 0 or b.max() > 1:
            raise ValueError(f"edge probabilities outside [0, 1]: max {b.max():.3g}")
        return b


def class_counts(n: int, prior) -> np.ndarray:
    """round(n * prior) by largest remainder, so the counts sum to n exactly."""
    prior = np.asarray(prior, dtype=float)
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"prior must be a probability vector, got {prior}")
    raw = n * prior
    counts = np.floor(raw).astype(np.int64)
    short = n - counts.sum()
    counts[np.argsort(-(raw - counts), kind="stable")[:short]] += 1
    return counts


def expected_pair_distribution(spec: CSBMSpec) -> np.ndarray:
    """E[directed edge count] per class pair, normalised: n_a (n_b - [a=b]) M_ab / total.

    Exact for the realised class counts (the diagonal excludes self pairs); for large n it
    is the textbook pi_ab ∝ prior_a prior_b M_ab.
    """
    counts = class_counts(spec.n, spec.prior).astype(float)
    pairs = np.outer(counts, counts) - np.diag(counts)
    expected = pairs * np.asarray(spec.block, dtype=float)
    return expected / expected.sum()


def _distinct_pairs(rng, m: int, first: np.ndarray, second: np.ndarray | None) -> np.ndarray:
    """m distinct unordered node pairs, uniform: across two groups, or within ``first``.

    Draw pairs with replacement, canonicalise, deduplicate, top up until m are distinct,
    then keep a uniformly random m of them (a uniform subset of a uniform set).
    """
    other = first if second is None else second
    n_total = int(max(first.max(), other.max())) + 1
    keys = np.empty(0, dtype=np.int64)
    while keys.size < m:
        draw = int(1.1 * (m - keys.size)) + 16
        u = first[rng.integers(0, first.size, draw)]
        v = other[rng.integers(0, other.size, draw)]
        keep = u != v
        lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
        keys = np.unique(np.concatenate([keys, lo * n_total + hi]))
    if keys.size > m:
        keys = rng.choice(keys, size=m, replace=False)
    return np.stack([keys // n_total, keys % n_total])


def _sample_edges(labels: np.ndarray, b: np.ndarray, rng) -> np.ndarray:
    members = [np.flatnonzero(labels == a) for a in range(b.shape[0])]
    blocks = []
    for a in range(b.shape[0]):
        for c in range(a, b.shape[0]):
            na, nc = members[a].size, members[c].size
            n_pairs = na * (na - 1) // 2 if a == c else na * nc
            m = int(rng.binomial(n_pairs, b[a, c])) if n_pairs else 0
            if m:
                second = None if a == c else members[c]
                blocks.append(_distinct_pairs(rng, m, members[a], second))
    if not blocks:
        return np.empty((2, 0), dtype=np.int64)
    und = np.concatenate(blocks, axis=1)
    return np.concatenate([und, und[::-1]], axis=1).astype(np.int64)


def sample_csbm(spec: CSBMSpec, *, rng: np.random.Generator, means: np.ndarray | None = None):
    """One CSBM graph; ``means`` (k, d) overrides the one-hot class means e_y."""
    k = len(spec.prior)
    b = spec.edge_probabilities()
    y = np.repeat(np.arange(k, dtype=np.int64), class_counts(spec.n, spec.prior))
    y = rng.permutation(y)
    means = np.eye(k) if means is None else np.asarray(means, dtype=float)
    if means.shape[0] != k:
        raise ValueError(f"means needs {k} rows, got {means.shape}")
    x = means[y] + spec.sigma * rng.standard_normal((spec.n, means.shape[1]))
    return Graph(x=x.astype(np.float32), y=y, edge_index=_sample_edges(y, b, rng))


def shift_setting(
    name: str, *, n: int, sigma: float, avg_degree: float = 10.0
) -> tuple[CSBMSpec, CSBMSpec]:
    """(source, target) specs for k = 3; the source is M_S (0.8 diagonal, 0.2 off), uniform.

    * ``none``: target = source.
    * ``css``: M_T = 0.5 everywhere, uniform prior (the class-pair edge distribution shifts).
    * ``gss``: ``css`` plus label shift, target prior (0.5, 0.3, 0.2).
    * ``degree``: M_T = 2 M_S, uniform prior. pi_ab ∝ prior_a prior_b M_ab is invariant to
      scaling M, so pi^T = pi^S (gamma = 1, no structure shift in the brief's sense) while
      every node's expected degree doubles (4 -> 8 at avg_degree 10): only density changes.
    """
    source = CSBMSpec(n=n, prior=UNIFORM3, block=SOURCE_BLOCK, avg_degree=avg_degree, sigma=sigma)
    targets = {
        "none": source,
        "css": CSBMSpec(n=n, prior=UNIFORM3, block=FLAT_BLOCK, avg_degree=avg_degree, sigma=sigma),
        "gss": CSBMSpec(n=n, prior=GSS_PRIOR, block=FLAT_BLOCK, avg_degree=avg_degree, sigma=sigma),
        "degree": CSBMSpec(
            n=n,
            prior=UNIFORM3,
            block=tuple(tuple(2 * v for v in row) for row in SOURCE_BLOCK),
            avg_degree=avg_degree,
            sigma=sigma,
        ),
    }
    if name not in targets:
        raise ValueError(f"unknown shift {name!r}; choose from {SHIFTS}")
    return source, targets[name]


def pair_distribution(edge_index: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """pi_ij = share of directed edges (u, v) with (y_u, y_v) = (i, j); one index per edge."""
    if edge_index.shape[1] == 0:
        raise ValueError("no edges")
    cell = y[edge_index[0]].astype(np.int64) * k + y[edge_index[1]]
    return np.bincount(cell, minlength=k * k).reshape(k, k) / edge_index.shape[1]
