"""The sparse residual R, updated in place, and the exact gain of a factor on it (§2.2–2.3).

R is held by rows (CSR) and by columns (CSC), so a factor's search reads only the rows and
columns it involves. Subtracting a round's factors changes their cells in place: cells that
become zero stay stored as explicit zeros (tombstones, compacted once they are a quarter of
the stored entries) and cells that were absent are merged in with one insertion per array,
so a round costs O(changed cells + nnz) copying and never a sort of the whole matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from repro.sbd.factors import canonical


def gather(indptr: np.ndarray, select: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the stored entries of the selected lines (rows of a CSR, columns of a
    CSC), and for each position the index of its line within ``select``."""
    starts = indptr[select]
    lengths = indptr[select + 1] - starts
    owner = np.repeat(np.arange(len(select)), lengths)
    first = np.cumsum(lengths) - lengths
    return np.arange(lengths.sum()) + (starts - first)[owner], owner


class Lines:
    """One orientation of R: line k holds ``indices``/``data[indptr[k]:indptr[k + 1]]``,
    indices sorted, explicit zeros allowed."""

    def __init__(self, M: sp.csr_matrix | sp.csc_matrix, n_other: int):
        M.sort_indices()
        self.indptr = M.indptr.astype(np.int64)
        self.indices, self.data, self.n_other = M.indices, M.data, n_other

    def locate(self, lines: np.ndarray, others: np.ndarray):
        """The cells lines × others (both sorted): (stored positions of the present ones,
        their line indices within ``lines``) and, for the absent ones, (line, other,
        insertion position)."""
        pos, owner = gather(self.indptr, lines)
        keys = owner * self.n_other + self.indices[pos]  # increasing: lines and indices sorted
        cell_line = np.repeat(np.arange(len(lines)), len(others))
        cell_other = np.tile(others, len(lines))
        at = np.searchsorted(keys, cell_line * self.n_other + cell_other)
        hit = at < len(keys)
        hit[hit] = keys[at[hit]] == (cell_line * self.n_other + cell_other)[hit]
        miss = ~hit
        lengths = np.diff(self.indptr)[lines]
        line_first = np.cumsum(lengths) - lengths  # each line's first slot in ``keys``
        li = cell_line[miss]
        insert_at = self.indptr[lines[li]] + at[miss] - line_first[li]
        return (pos[at[hit]], cell_line[hit]), (lines[li], cell_other[miss], insert_at)

    def insert(self, lines, others, values, at) -> None:
        """Store new entries (cells absent until now) at their insertion positions."""
        order = np.lexsort((others, lines))  # equal positions: in index order
        self.indices = np.insert(self.indices, at[order], others[order])
        self.data = np.insert(self.data, at[order], values[order])
        self.indptr[1:] += np.cumsum(np.bincount(lines, minlength=len(self.indptr) - 1))

    def compact(self) -> None:
        """Drop the explicit zeros."""
        keep = self.data != 0
        self.indptr = np.concatenate([[0], np.cumsum(keep)])[self.indptr]
        self.indices, self.data = self.indices[keep], self.data[keep]


class Residual:
    def __init__(self, A: sp.spmatrix):
        csr = canonical(A)
        self.shape = csr.shape
        self.by_row = Lines(csr, self.shape[1])
        self.by_col = Lines(csr.tocsc(), self.shape[0])
        self.nnz = int(csr.nnz)
        signs = np.sign(self.by_row.data)
        self.degree = {s: np.diff(np.concatenate([[0], np.cumsum(signs == s)])[self.by_row.indptr])
                       for s in (1, -1)}  # fmt: skip
        # scratch space for numbering the distinct lines of a gather without sorting
        self._slots = {"rows": np.zeros(self.shape[0], np.int64),
                       "cols": np.zeros(self.shape[1], np.int64)}  # fmt: skip

    @property
    def csr(self) -> sp.csr_matrix:
        """R as a CSR matrix (explicit zeros possible)."""
        r = self.by_row
        return sp.csr_matrix((r.data, r.indices, r.indptr), shape=self.shape)

    def support(self, rows: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
        """(index within ``rows``, column) of every cell of those rows with s·R_ij ≥ 1."""
        pos, owner = gather(self.by_row.indptr, rows)
        keep = self.by_row.data[pos] * s >= 1
        return owner[keep], self.by_row.indices[pos[keep]]

    def row_support(self, row: int, s: int) -> np.ndarray:
        """Columns j of one row with s·R_ij ≥ 1, sorted."""
        r = self.by_row
        a, b = r.indptr[row], r.indptr[row + 1]
        return r.indices[a:b][r.data[a:b] * s >= 1]

    def _distinct(self, side: str, lines: np.ndarray):
        """(distinct values of ``lines``, index of each entry's value among them), in O(k)
        with a scratch array: the last writer of each slot stands for its value."""
        slot, index = self._slots[side], np.arange(len(lines))
        slot[lines] = index
        representative = slot[lines]
        first = representative == index
        return lines[first], (np.cumsum(first) - 1)[representative]

    def scores(self, side: str, chosen: np.ndarray, s: int, signed: bool):
        """Per row (side="rows": V fixed = ``chosen``) or column (side="cols": U fixed) that
        touches ``chosen``: its index and Σ_{j∈chosen} g_ij, where g = +1 on cells equal to s,
        -1 on zero cells (signed) and 0 elsewhere. Unsigned (VNM proxy): a line is eligible
        only if every chosen cell is ≥ 1 (no -1 may be created), and scores the cells = 1.
        Lines that touch nothing score -|chosen| and are never worth adding."""
        M = self.by_col if side == "rows" else self.by_row
        pos, _ = gather(M.indptr, chosen)
        values = M.data[pos]
        touched, inverse = self._distinct(side, M.indices[pos])  # explicit zeros score -k
        k = len(chosen)
        if signed:  # Σ [R_ij = s] - Σ [R_ij = 0] = Σ ([R_ij = s] + [R_ij ≠ 0]) - k
            hits = (values == s).astype(np.int64) + (values != 0)
            return touched, np.bincount(inverse, hits, len(touched)) - k
        equal = np.bincount(inverse, values == 1, len(touched))
        covered = np.bincount(inverse, values >= 1, len(touched))
        return touched, np.where(covered == k, equal, -k)

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
        """R -= Σ s·1_U 1_Vᵀ over cell-disjoint factors, in place."""
        rows, old, step = [], [], []  # every changed cell: its row, old value and -s
        absent = {"rows": [], "cols": []}
        for U, V, s in factors:
            U, V = np.sort(U), np.sort(V)
            for side, lines, others, M in (
                ("rows", U, V, self.by_row),
                ("cols", V, U, self.by_col),
            ):
                (pos, line), (new_lines, new_others, at) = M.locate(lines, others)
                if side == "rows":
                    rows += [lines[line], new_lines]
                    old += [M.data[pos], np.zeros(len(new_lines), np.int64)]
                    step.append(np.full(len(pos) + len(new_lines), -s, np.int64))
                M.data[pos] -= s
                absent[side].append((new_lines, new_others, at, np.full(len(at), -s)))
        for side, M in (("rows", self.by_row), ("cols", self.by_col)):
            lines, others, at, values = (np.concatenate(x) for x in zip(*absent[side], strict=True))
            if len(lines):
                M.insert(lines, others.astype(M.indices.dtype), values.astype(M.data.dtype), at)
        self._count(np.concatenate(rows), np.concatenate(old), np.concatenate(step))
        if len(self.by_row.data) - self.nnz > len(self.by_row.data) // 4:
            self.by_row.compact()
            self.by_col.compact()

    def _count(self, rows: np.ndarray, old: np.ndarray, step: np.ndarray) -> None:
        """Update nnz and the per-sign row degrees for cells changed from old to old + step."""
        new = old + step
        self.nnz += int(np.count_nonzero(new) - np.count_nonzero(old))
        for s in (1, -1):
            change = (np.sign(new) == s).astype(np.int64) - (np.sign(old) == s)
            self.degree[s] += np.bincount(rows, change, self.shape[0]).astype(np.int64)
