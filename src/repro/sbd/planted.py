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
    cells = [
        sp.coo_matrix(
            (np.full(len(u) * len(v), s), (np.repeat(u, len(v)), np.tile(v, len(u)))),
            shape=(m, n),
        )
        for u, v, s in zip(rows, cols, signs, strict=True)
    ]
    A = canonical(sum(cells[1:], cells[0].tocsr()) if cells else sp.csr_matrix((m, n)))
    keep = rng.random(A.nnz) >= cfg.deletion
    A.data = A.data * keep
    noise = rng.binomial(m * n, cfg.background) if cfg.background else 0
    extra = sp.csr_matrix(
        (np.ones(noise, dtype=np.int64), (rng.integers(0, m, noise), rng.integers(0, n, noise))),
        shape=(m, n),
    )
    truth = {"rows": rows, "cols": cols, "signs": np.asarray(signs, dtype=np.int64)}
    return canonical(A + extra), truth
