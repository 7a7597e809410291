"""The sparse residual R and the exact gain of a factor on it (brief §2.2–2.3).

R is kept as CSR (row gathers) and CSC (column gathers) and rebuilt once per batch of
accepted factors, so a factor's search touches only the rows and columns it involves.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from repro.sbd.factors import canonical


def gather(indptr: np.ndarray, select: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the stored entries of the selected rows (CSR) or columns (CSC), and
    for each position the index of its row/column within ``select``."""
    starts = indptr[select]
    lengths = indptr[select + 1] - starts
    owner = np.repeat(np.arange(len(select)), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets, owner


class Residual:
    def __init__(self, A: sp.spmatrix):
        self.csr = canonical(A)
        self.csc = self.csr.tocsc()
        self.shape = self.csr.shape

    @property
    def nnz(self) -> int:
        return int(self.csr.nnz)

    def scores(self, side: str, chosen: np.ndarray, s: int, signed: bool):
        """Per row (side="rows": V fixed = ``chosen``) or column (side="cols": U fixed) that
        touches ``chosen``: its index and Σ_{j∈chosen} g_ij, where g = +1 on cells equal to s,
        -1 on zero cells (signed) and 0 elsewhere. Unsigned (VNM proxy): a line is eligible
        only if every chosen cell is ≥ 1 (no -1 may be created), and scores the cells = 1.
        Lines that touch nothing score -|chosen| and are never worth adding."""
        M = self.csc if side == "rows" else self.csr
        positions, _ = gather(M.indptr, chosen)
        lines, values = M.indices[positions], M.data[positions]
        touched, inverse = np.unique(lines, return_inverse=True)
        equal = np.bincount(inverse, weights=values == s, minlength=len(touched))
        if signed:
            nonzero = np.bincount(inverse, minlength=len(touched))
            return touched, equal - (len(chosen) - nonzero)
        covered = np.bincount(inverse, weights=values >= 1, minlength=len(touched))
        return touched, np.where(covered == len(chosen), equal, -len(chosen))

    def best_side(self, side: str, chosen: np.ndarray, s: int, signed: bool):
        """The exact maximiser of the gain over the other side (lines scoring > 1), and the
        gain it gives: Σ (score - 1) over the chosen lines minus |chosen|."""
        lines, score = self.scores(side, chosen, s, signed)
        keep = score > 1
        return lines[keep], float((score[keep] - 1).sum()) - len(chosen)

    def gain(self, U: np.ndarray, V: np.ndarray, s: int, signed: bool = True) -> int:
        """The gain of the factor s·1_U 1_Vᵀ on R (U, V index arrays); -inf if unsigned
        and the factor would create a -1 cell."""
        lines, score = self.scores("rows", V, s, signed)
        if not signed and (len(np.setdiff1d(U, lines)) or (score[np.isin(lines, U)] < 0).any()):
            return -np.inf
        on_u = np.isin(lines, U)
        missing = len(U) - int(on_u.sum())  # rows of U with no entry in V: all cells zero
        return int(score[on_u].sum()) - missing * len(V) - len(U) - len(V)

    def subtract(self, factors: list[tuple[np.ndarray, np.ndarray, int]]) -> None:
        """R -= Σ s·1_U 1_Vᵀ over cell-disjoint factors, in one rebuild."""
        rows = [np.repeat(U, len(V)) for U, V, _ in factors]
        cols = [np.tile(V, len(U)) for U, V, _ in factors]
        vals = [np.full(len(U) * len(V), -s, dtype=np.int64) for U, V, s in factors]
        update = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=self.shape
        )
        self.csr = canonical(self.csr + update)
        self.csc = self.csr.tocsc()

    def sign_support(self, s: int) -> sp.csr_matrix:
        """The rows' entries with sign s, as a CSR pattern."""
        keep = self.csr.copy()
        keep.data = (keep.data * s > 0).astype(np.int64)
        keep.eliminate_zeros()
        return keep
