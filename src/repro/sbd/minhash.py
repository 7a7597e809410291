"""Candidate row groups from min-hash signatures of row supports (VNM-style LSH).

Rows whose supports have Jaccard similarity J share a band of ``rows_per_band`` min-hashes
with probability J^rows_per_band, so each band groups similar rows in O(m log m) without an
all-pairs scan. The hash functions are fixed for a whole decomposition, so only the rows a
round changed need new signatures.
"""

from __future__ import annotations

import numpy as np

_PRIME = np.int64(2_147_483_647)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # combines a band's hashes into one key


class MinHashIndex:
    """Signatures of the rows' sign-s supports (cells with s·R_ij ≥ 1) of a residual."""

    def __init__(self, R, s: int, *, bands: int, rows_per_band: int, seed: int):
        rng = np.random.default_rng(seed)
        n_hashes = bands * rows_per_band
        self.a = rng.integers(1, _PRIME, size=n_hashes, dtype=np.int64)
        self.b = rng.integers(0, _PRIME, size=n_hashes, dtype=np.int64)
        self.row_weight = rng.bit_generator.random_raw(R.shape[0])  # set hashes of groups
        self.s, self.bands, self.rows_per_band = s, bands, rows_per_band
        self.sig = np.zeros((R.shape[0], n_hashes), dtype=np.int64)
        self.active = np.zeros(R.shape[0], dtype=bool)  # rows with ≥ 2 cells of sign s
        self.update(R, np.arange(R.shape[0]))

    def update(self, R, rows: np.ndarray) -> None:
        """Recompute the signatures of ``rows`` from the residual as it is now."""
        owner, cols = R.support(rows, self.s)
        counts = np.bincount(owner, minlength=len(rows))
        self.active[rows] = counts >= 2
        filled = np.flatnonzero(counts)
        starts = (np.cumsum(counts) - counts)[filled]
        cols = cols.astype(np.int64)
        for h in range(len(self.a)):
            hashed = (self.a[h] * cols + self.b[h]) % _PRIME  # a, cols < 2^31: no overflow
            self.sig[rows[filled], h] = np.minimum.reduceat(hashed, starts)

    def groups(self, limit: int) -> list[tuple[int, np.ndarray]]:
        """Distinct groups of ≥ 2 rows that agree on a whole band, largest first (ties in
        band order), at most ``limit``: (set hash, sorted rows) each."""
        active = np.flatnonzero(self.active)
        if len(active) < 2:
            return []
        orders, found = [], []  # found: (set hash, size, band, first slot) of each group
        for band in range(self.bands):
            key = np.zeros(len(active), dtype=np.uint64)
            for h in range(band * self.rows_per_band, (band + 1) * self.rows_per_band):
                key = key * _MIX + self.sig[active, h].astype(np.uint64)
            order = np.argsort(key, kind="stable")
            starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
            size = np.diff(np.r_[starts, len(order)])
            big = size >= 2
            weight = np.add.reduceat(self.row_weight[active[order]], starts)  # wraps mod 2^64
            orders.append(order)
            found.append((weight[big], size[big], np.full(big.sum(), band), starts[big]))
        hashes, sizes, bands, starts = (np.concatenate(x) for x in zip(*found, strict=True))
        _, first = np.unique(hashes, return_index=True)
        first.sort()  # the first band that formed each distinct group
        top = first[np.argsort(-sizes[first], kind="stable")[:limit]]
        return [
            (int(hashes[g]), np.sort(active[orders[bands[g]][starts[g] : starts[g] + sizes[g]]]))
            for g in top
        ]
