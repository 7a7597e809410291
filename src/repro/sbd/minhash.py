"""Candidate row groups from min-hash signatures of row supports (VNM-style LSH).

Rows whose supports have Jaccard similarity J share a band of ``rows_per_band`` min-hashes
with probability J^rows_per_band, so each band groups similar rows in O(nnz) without an
all-pairs scan.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_PRIME = np.int64(2_147_483_647)


def signatures(pattern: sp.csr_matrix, n_hashes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows with ≥ 2 entries, their n_hashes min-hashes of the column support)."""
    degree = np.diff(pattern.indptr)
    active = np.flatnonzero(degree >= 2)
    if len(active) == 0:
        return active, np.zeros((0, n_hashes), dtype=np.int64)
    sub = pattern[active]
    rng = np.random.default_rng(seed)
    a = rng.integers(1, _PRIME, size=n_hashes, dtype=np.int64)
    b = rng.integers(0, _PRIME, size=n_hashes, dtype=np.int64)
    cols = sub.indices.astype(np.int64)
    sig = np.empty((len(active), n_hashes), dtype=np.int64)
    for h in range(n_hashes):
        hashed = (a[h] * cols + b[h]) % _PRIME  # a, cols < 2^31: no int64 overflow
        sig[:, h] = np.minimum.reduceat(hashed, sub.indptr[:-1])
    return active, sig


def minhash_groups(
    pattern: sp.csr_matrix, *, bands: int, rows_per_band: int, limit: int, seed: int
) -> list[np.ndarray]:
    """Distinct groups of ≥ 2 rows that agree on a whole band, largest first, at most
    ``limit`` of them."""
    active, sig = signatures(pattern, bands * rows_per_band, seed)
    groups: dict[bytes, np.ndarray] = {}
    for band in range(bands):
        block = sig[:, band * rows_per_band : (band + 1) * rows_per_band]
        _, key = np.unique(block, axis=0, return_inverse=True)
        order = np.argsort(key, kind="stable")
        bounds = np.flatnonzero(np.diff(key[order])) + 1
        for members in np.split(order, bounds):
            if len(members) >= 2:
                rows = np.sort(active[members])
                groups.setdefault(rows.tobytes(), rows)
    return sorted(groups.values(), key=len, reverse=True)[:limit]
