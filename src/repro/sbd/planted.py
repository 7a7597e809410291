"""Planted signed bicliques (brief §6): positive blocks, negative blocks nested inside
them, deleted cells and background edges; overlaps add up to integer weights."""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from repro.sbd.factors import canonical


@dataclasses.dataclass(frozen=True)
class PlantedConfig:
    m: int = 3000
    n: int | None = None  # None: square
    blocks: int = 25
    side_min: int = 30
    side_max: int = 120
    negative_fraction: float = 0.1  # share of blocks that are negative, nested in a positive one
    nested_fraction: tuple[float, float] = (0.2, 0.5)  # nested block side / parent side
    deletion: float = 0.05  # share of planted nonzero cells set to zero
    background: float = 5e-4  # density of +1 noise edges added anywhere
    seed: int = 0


def block_sum(rows, cols, signs, shape) -> sp.coo_matrix:
    """Σ_k s_k 1_{U_k} 1_{V_k}ᵀ as one COO matrix with duplicate cells (linear in the cells:
    adding the blocks one sparse matrix at a time is quadratic in their number)."""
    pairs = list(zip(rows, cols, strict=True))
    if not pairs:
        return sp.coo_matrix(shape, dtype=np.int64)
    values = np.repeat(np.asarray(signs, dtype=np.int64), [len(u) * len(v) for u, v in pairs])
    i = np.concatenate([np.repeat(u, len(v)) for u, v in pairs])
    j = np.concatenate([np.tile(v, len(u)) for u, v in pairs])
    return sp.coo_matrix((values, (i, j)), shape=shape)


def plant(cfg: PlantedConfig):
    """Returns (A as canonical int CSR, truth) with truth = {rows, cols, signs} lists."""
    rng = np.random.default_rng(cfg.seed)
    m, n = cfg.m, cfg.n or cfg.m
    n_neg = int(round(cfg.negative_fraction * cfg.blocks))
    rows, cols, signs = [], [], []
    for _ in range(cfg.blocks - n_neg):
        rows.append(
            np.sort(rng.choice(m, rng.integers(cfg.side_min, cfg.side_max + 1), replace=False))
        )
        cols.append(
            np.sort(rng.choice(n, rng.integers(cfg.side_min, cfg.side_max + 1), replace=False))
        )
        signs.append(1)
    for k in range(n_neg):  # nested inside a distinct positive parent where possible
        parent = k % max(len(rows), 1)
        lo, hi = cfg.nested_fraction
        for src, out in ((rows[parent], rows), (cols[parent], cols)):
            size = max(2, int(round(rng.uniform(lo, hi) * len(src))))
            out.append(np.sort(rng.choice(src, size, replace=False)))
        signs.append(-1)
    A = canonical(block_sum(rows, cols, signs, (m, n)))
    keep = rng.random(A.nnz) >= cfg.deletion
    A.data = A.data * keep
    noise = rng.binomial(m * n, cfg.background) if cfg.background else 0
    extra = sp.csr_matrix(
        (np.ones(noise, dtype=np.int64), (rng.integers(0, m, noise), rng.integers(0, n, noise))),
        shape=(m, n),
    )
    truth = {"rows": rows, "cols": cols, "signs": np.asarray(signs, dtype=np.int64)}
    return canonical(A + extra), truth
