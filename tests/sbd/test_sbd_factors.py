"""The factored form: exact reconstruction, products, sizes and files."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from repro.sbd.factors import Decomposition, canonical, csr_bytes
from repro.sbd.greedy import GreedyConfig, decompose


def _random(rng, m, n, density, low=-3, high=4):
    A = sp.random(
        m, n, density=density, random_state=rng, data_rvs=lambda k: rng.integers(low, high, k)
    )
    return canonical(A)


ADVERSARIAL = {
    "empty_rows_cols": sp.csr_matrix(([1, 1, 1, 1], ([0, 0, 3, 3], [1, 4, 1, 4])), shape=(6, 7)),
    "negative": sp.csr_matrix(-np.ones((4, 5), dtype=np.int64)),
    "duplicates": sp.coo_matrix(
        ([1, 1, 2, -1, 1], ([0, 0, 1, 1, 2], [0, 0, 1, 1, 2])), shape=(3, 3)
    ),
    "rectangular_block": sp.csr_matrix(np.pad(np.ones((5, 9), dtype=np.int64), ((2, 0), (0, 30)))),
    "all_zero": sp.csr_matrix((5, 4), dtype=np.int64),
    "single_entry": sp.csr_matrix(([7], ([2], [3])), shape=(4, 5)),
    "large_weights": sp.csr_matrix(np.kron(np.eye(2, dtype=np.int64), np.full((6, 6), 2**40))),
    "dense_blocks_with_holes": sp.csr_matrix(
        np.ones((12, 12), dtype=np.int64)
        - np.pad(np.ones((4, 4), dtype=np.int64), ((3, 5), (3, 5)))
    ),
}


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_round_trip(name, signed):
    A = ADVERSARIAL[name]
    dec = decompose(A, GreedyConfig(signed=signed, per_round=0))
    assert (dec.to_sparse() != canonical(A)).nnz == 0
    assert dec.cost <= canonical(A).nnz


@pytest.mark.parametrize("seed", range(4))
def test_random_round_trip_and_products(seed):
    rng = np.random.default_rng(seed)
    A = _random(rng, 60, 45, 0.15)
    dec = decompose(A, GreedyConfig())
    assert (dec.to_sparse() != A).nnz == 0
    X = rng.standard_normal((45, 7))
    np.testing.assert_allclose(dec.spmm(X), A @ X, rtol=1e-12, atol=1e-12)
    Xt = torch.from_numpy(X)
    np.testing.assert_allclose(dec.spmm(Xt).numpy(), A @ X, rtol=1e-12, atol=1e-12)
    X32 = torch.from_numpy(X.astype(np.float32))
    Y = dec.spmm(X32).numpy()
    assert np.abs(Y - A @ X).max() / np.abs(A @ X).max() < 1e-5


def test_block_with_hole_uses_a_negative_factor():
    """1_P 1_Pᵀ minus a nested block: two factors, no residual, CF by hand."""
    A = ADVERSARIAL["dense_blocks_with_holes"]
    dec = decompose(A, GreedyConfig())
    assert sorted(dec.signs.tolist()) == [-1, 1]
    assert dec.residual.nnz == 0
    assert dec.cost == 12 + 12 + 4 + 4
    assert dec.compression_factor == pytest.approx((144 - 16) / 32)


def test_cf_bytes_follows_the_stated_model():
    U = [np.array([0, 1]), np.array([2])]
    V = [np.array([0, 1, 2]), np.array([3])]
    R = sp.csr_matrix(([300], ([2], [0])), shape=(3, 4))
    dec = Decomposition((3, 4), U, V, np.array([1, -1]), R)
    A = dec.to_sparse()
    # A: 4 row pointers + 8 entries x (4-byte index + 2-byte values: 300 needs int16)
    assert csr_bytes(A) == 4 * 4 + 8 * (4 + 2)
    factors = 2 * 4 * 3 + 4 * (2 + 3 + 1 + 1) + 1
    residual = 4 * 4 + 1 * (4 + 2)
    assert dec.compression_factor_bytes(A) == pytest.approx(csr_bytes(A) / (factors + residual))


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(5)
    A = _random(rng, 30, 40, 0.2)
    dec = decompose(A, GreedyConfig())
    dec.save(tmp_path / "d.npz")
    again = Decomposition.load(tmp_path / "d.npz")
    assert (again.to_sparse() != A).nnz == 0
    assert again.rank == dec.rank and again.cost == dec.cost
    assert again.source_nnz == dec.source_nnz == A.nnz
    assert again.compression_factor == dec.compression_factor == A.nnz / dec.cost


def test_public_api_from_the_package():
    """repro.sbd exports decompose, Decomposition and GreedyConfig (lazily): the result
    carries its trace and its CF; a hand-made decomposition counts its reconstruction."""
    import repro.sbd as sbd

    assert set(sbd.__all__) == {"decompose", "Decomposition", "GreedyConfig"}
    A = ADVERSARIAL["dense_blocks_with_holes"]
    dec = sbd.decompose(A, sbd.GreedyConfig(per_round=0))
    assert isinstance(dec, sbd.Decomposition)
    assert [t["cost"] for t in dec.trace][-1] == dec.cost == 32
    assert dec.compression_factor == pytest.approx(128 / 32)
    hand = sbd.Decomposition(dec.shape, dec.rows, dec.cols, dec.signs, dec.residual)
    assert hand.source_nnz is None and hand.compression_factor == dec.compression_factor


@pytest.mark.parametrize("norm", ["sym", "rw"])
@pytest.mark.parametrize("shape", ["symmetric", "directed", "rectangular"])
def test_normalised_products_match_dense_scaling(norm, shape):
    """D_out^{-1/2} A D_in^{-1/2} X and D_out^{-1} A X against dense arithmetic, with out- and
    in-degrees that differ (directed, rectangular) and an isolated node (zero degree)."""
    rng = np.random.default_rng(3)
    m, n = (40, 40) if shape != "rectangular" else (40, 55)
    A = _random(rng, m, n, 0.2, low=0, high=3)
    if shape == "symmetric":
        A = A + A.T
    keep_rows, keep_cols = np.ones(m), np.ones(n)
    keep_rows[7] = keep_cols[7] = 0  # row 7 has no out-edges, column 7 no in-edges
    A = canonical(sp.diags(keep_rows) @ A @ sp.diags(keep_cols))
    dec = decompose(A, GreedyConfig())
    out_degree = A.toarray().sum(axis=1).astype(float)
    in_degree = A.toarray().sum(axis=0).astype(float)
    np.testing.assert_array_equal(dec.row_sums(), out_degree)
    np.testing.assert_array_equal(dec.col_sums(), in_degree)
    if shape == "directed":
        assert not np.array_equal(out_degree, in_degree)

    def inv(d, p):
        return np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0) ** p, 0.0)

    X = rng.standard_normal((n, 6))
    if norm == "sym":
        expected = np.diag(inv(out_degree, 0.5)) @ A.toarray() @ np.diag(inv(in_degree, 0.5)) @ X
    else:
        expected = np.diag(inv(out_degree, 1.0)) @ A.toarray() @ X
    np.testing.assert_allclose(dec.spmm_normalized(X, norm), expected, atol=1e-12)
    Y = dec.spmm_normalized(torch.from_numpy(X), norm).numpy()
    np.testing.assert_allclose(Y, expected, atol=1e-12)
