"""The factored form A = Σ_k s_k u_k v_kᵀ + R, its exact reconstruction, sizes and SpMM.

Factors are stored as two binary incidence matrices (U: m×r, V: n×r, column k holds u_k /
v_k) and a sign per factor; R is an integer CSR matrix. Every product goes through them.
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from repro.common.io import read_npz, write_npz


def canonical(A) -> sp.csr_matrix:
    """Integer CSR with duplicates summed, explicit zeros dropped and indices sorted."""
    A = sp.csr_matrix(A, dtype=np.int64, copy=True)
    A.sum_duplicates()
    A.eliminate_zeros()
    A.sort_indices()
    return A


def incidence(index_sets: list[np.ndarray], size: int) -> sp.csc_matrix:
    """size × len(index_sets) binary matrix whose column k is the indicator of set k."""
    lengths = [len(s) for s in index_sets]
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = np.concatenate(index_sets).astype(np.int64) if index_sets else np.zeros(0, int)
    data = np.ones(len(indices), dtype=np.int64)
    return sp.csc_matrix((data, indices, indptr), shape=(size, len(index_sets)))


def _int_width(values: np.ndarray) -> int:
    """Bytes of the smallest signed integer type holding every value (1, 2, 4 or 8)."""
    top = int(np.abs(values).max()) if len(values) else 0
    for width in (1, 2, 4):
        if top < 2 ** (8 * width - 1):
            return width
    return 8


def csr_bytes(M: sp.csr_matrix) -> int:
    """int32 row pointers and column indices, values in the narrowest signed integer type."""
    return 4 * (M.shape[0] + 1) + (4 + _int_width(M.data)) * M.nnz


@dataclasses.dataclass
class Decomposition:
    shape: tuple[int, int]
    rows: list[np.ndarray]  # u_k as sorted row indices
    cols: list[np.ndarray]  # v_k as sorted column indices
    signs: np.ndarray  # s_k ∈ {+1, -1}
    residual: sp.csr_matrix  # R, integer
    source_nnz: int | None = None  # nnz of the decomposed matrix (None: of the reconstruction)
    trace: list = dataclasses.field(default_factory=list, repr=False)  # the greedy's steps
    _operands: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @property
    def rank(self) -> int:
        return len(self.rows)

    @cached_property
    def U(self) -> sp.csc_matrix:
        return incidence(self.rows, self.shape[0])

    @cached_property
    def V(self) -> sp.csc_matrix:
        return incidence(self.cols, self.shape[1])

    @property
    def factor_entries(self) -> int:
        return int(sum(len(u) + len(v) for u, v in zip(self.rows, self.cols, strict=True)))

    @property
    def cost(self) -> int:
        """The description cost Σ_k (|u_k| + |v_k|) + nnz(R) (brief §2.1)."""
        return self.factor_entries + int(self.residual.nnz)

    def to_sparse(self) -> sp.csr_matrix:
        """Σ_k s_k u_k v_kᵀ + R in exact integer arithmetic (canonical CSR)."""
        low_rank = (
            self.U @ sp.diags(np.asarray(self.signs, dtype=np.int64), dtype=np.int64)
        ) @ self.V.T
        return canonical(low_rank + self.residual)

    @property
    def compression_factor(self) -> float:
        """nnz(A) / (Σ|u|+|v| + nnz(R)): entries, as in the brief's CF."""
        nnz = self.source_nnz if self.source_nnz is not None else self.to_sparse().nnz
        return nnz / max(self.cost, 1)

    def compression_factor_bytes(self, A: sp.csr_matrix) -> float:
        """bytes(CSR of A) / bytes(factors + signs + residual CSR).

        Byte model (brief §8, our choice): int32 indices and pointers everywhere; values in
        the narrowest signed integer type (1/2/4/8 bytes) that holds them; factors stored as
        two pointer+index lists (U and V), signs packed one bit per factor.
        """
        factors = 2 * 4 * (self.rank + 1) + 4 * self.factor_entries + (self.rank + 7) // 8
        return csr_bytes(canonical(A)) / (factors + csr_bytes(self.residual))

    def sizes(self, A: sp.csr_matrix) -> dict:
        """What a metrics file records of a decomposition of A: sizes, CFs, and the cells
        where the factors plus residual differ from A (0 unless something is broken)."""
        return {
            "nnz": int(A.nnz),
            "shape": list(A.shape),
            "rank": self.rank,
            "factor_entries": self.factor_entries,
            "residual_nnz": int(self.residual.nnz),
            "cost": self.cost,
            "cf": self.compression_factor,
            "cf_bytes": self.compression_factor_bytes(A),
            "mismatched_cells": int((self.to_sparse() != A).nnz),
        }

    # --- products -------------------------------------------------------------------
    def spmm_scipy(self, X: np.ndarray) -> np.ndarray:
        """A @ X as U_s (Vᵀ X) + R X with scipy (three sparse-dense products)."""
        key = ("scipy", np.dtype(X.dtype).str)
        if key not in self._operands:
            dtype = X.dtype
            self._operands[key] = (
                sp.csr_matrix(self.U @ sp.diags(self.signs.astype(dtype))).astype(dtype),
                sp.csr_matrix(self.V.T).astype(dtype),
                self.residual.astype(dtype),
            )
        Us, Vt, R = self._operands[key]
        return Us @ (Vt @ X) + R @ X

    def torch_operands(self, device, dtype):
        """U_s, Vᵀ and R as torch sparse CSR tensors (int32 indices), built once per device."""
        key = (str(device), str(dtype))
        if key not in self._operands:
            signed = sp.csr_matrix(self.U @ sp.diags(self.signs.astype(np.float64)))
            self._operands[key] = tuple(
                to_torch_csr(M, device, dtype)
                for M in (signed, sp.csr_matrix(self.V.T), self.residual)
            )
        return self._operands[key]

    def spmm(self, X):
        """A @ X for a torch tensor on any device (torch sparse CSR), or a NumPy array."""
        if isinstance(X, np.ndarray):
            return self.spmm_scipy(X)
        import torch

        Us, Vt, R = self.torch_operands(X.device, X.dtype)
        return torch.sparse.mm(Us, torch.sparse.mm(Vt, X)) + torch.sparse.mm(R, X)

    def row_sums(self) -> np.ndarray:
        """Row sums of A (out-degrees) from the factors: U_s |v| + R 1, no reconstruction."""
        sizes = np.array([len(v) for v in self.cols], dtype=np.int64)
        return self.U @ (self.signs * sizes) + np.asarray(self.residual.sum(axis=1)).ravel()

    def col_sums(self) -> np.ndarray:
        """Column sums of A (in-degrees): V_s |u| + 1ᵀR."""
        sizes = np.array([len(u) for u in self.rows], dtype=np.int64)
        return self.V @ (self.signs * sizes) + np.asarray(self.residual.sum(axis=0)).ravel()

    def spmm_normalized(self, X, norm: str):
        """D_out^{-1/2} A D_in^{-1/2} X (``sym``) or D_out^{-1} A X (``rw``), with D_out the
        row sums (out-degrees) and D_in the column sums (in-degrees) of A, as scalings of X
        before and of the product after (brief §2.4). For a symmetric A both are the degree
        matrix D; a directed or rectangular A needs the two. Degrees ≤ 0 give zeros."""
        if norm not in ("sym", "rw"):
            raise ValueError(f"norm must be 'sym' or 'rw', got {norm!r}")

        def inverse(degree, power):
            degree = degree.astype(np.float64)
            return np.divide(1.0, degree**power, out=np.zeros_like(degree), where=degree > 0)

        def scale(v, M):
            if isinstance(M, np.ndarray):
                return v.astype(M.dtype)[:, None] * M
            import torch

            return torch.as_tensor(v, dtype=M.dtype, device=M.device)[:, None] * M

        if norm == "rw":
            return scale(inverse(self.row_sums(), 1.0), self.spmm(X))
        Y = self.spmm(scale(inverse(self.col_sums(), 0.5), X))
        return scale(inverse(self.row_sums(), 0.5), Y)

    # --- files ------------------------------------------------------------------------
    def save(self, path) -> None:
        R = self.residual
        write_npz(
            path,
            shape=np.asarray(self.shape),
            row_ptr=np.asarray(self.U.indptr),
            row_idx=np.asarray(self.U.indices),
            col_ptr=np.asarray(self.V.indptr),
            col_idx=np.asarray(self.V.indices),
            signs=np.asarray(self.signs, dtype=np.int8),
            r_indptr=R.indptr,
            r_indices=R.indices,
            r_data=R.data,
            source_nnz=np.asarray(-1 if self.source_nnz is None else self.source_nnz),
        )

    @classmethod
    def load(cls, path) -> Decomposition:
        z = read_npz(path)
        shape = tuple(int(x) for x in z["shape"])

        def split(ptr, idx):
            return [idx[ptr[k] : ptr[k + 1]] for k in range(len(ptr) - 1)]

        residual = sp.csr_matrix((z["r_data"], z["r_indices"], z["r_indptr"]), shape=shape)
        return cls(
            shape=shape,
            rows=split(z["row_ptr"], z["row_idx"]),
            cols=split(z["col_ptr"], z["col_idx"]),
            signs=z["signs"].astype(np.int64),
            residual=residual,
            source_nnz=int(z["source_nnz"]) if int(z.get("source_nnz", -1)) >= 0 else None,
        )


def to_torch_csr(M: sp.spmatrix, device, dtype):
    """A scipy matrix as a torch sparse CSR tensor with int32 indices on ``device``."""
    import torch

    M = sp.csr_matrix(M)
    with warnings.catch_warnings():  # torch's one-time "CSR support is in beta" notice
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(
            torch.from_numpy(M.indptr.astype(np.int32)),
            torch.from_numpy(M.indices.astype(np.int32)),
            torch.from_numpy(M.data.astype(np.float64)).to(dtype),
            size=M.shape,
            device=device,
            check_invariants=False,  # built from canonical scipy CSR
        )
