"""Incremental rounds: the in-place residual, candidate reuse, top-k seeds and min-hash index."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from repro.sbd import candidates
from repro.sbd.candidates import Candidates, Refined, top_rows
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.minhash import MinHashIndex
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.residual import Residual


def _random_int(rng, m, n, density):
    return sp.random(
        m, n, density=density, random_state=rng, data_rvs=lambda k: rng.integers(-2, 3, k)
    )


def test_in_place_subtraction_matches_a_dense_residual():
    """Rounds of cell-disjoint signed factors (unsorted index arrays, cells that vanish,
    appear and reappear): both orientations, nnz and per-sign degrees stay exact."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        m, n = rng.integers(1, 25, 2)
        R = Residual(_random_int(rng, m, n, rng.uniform(0, 0.6)))
        dense = R.csr.toarray()
        for _ in range(6):
            taken, factors = np.zeros((m, n), bool), []
            for _ in range(3):
                U = rng.choice(m, rng.integers(1, m + 1), replace=False)
                V = rng.choice(n, rng.integers(1, n + 1), replace=False)
                if not taken[np.ix_(U, V)].any():
                    taken[np.ix_(U, V)] = True
                    s = int(rng.choice([-1, 1]))
                    factors.append((U, V, s))
                    dense[np.ix_(U, V)] -= s
            R.subtract(factors)
            by_col = sp.csc_matrix((R.by_col.data, R.by_col.indices, R.by_col.indptr), (m, n))
            np.testing.assert_array_equal(R.csr.toarray(), dense)
            np.testing.assert_array_equal(by_col.toarray(), dense)
            assert R.nnz == np.count_nonzero(dense)
            for s in (1, -1):
                np.testing.assert_array_equal(R.degree[s], (np.sign(dense) == s).sum(axis=1))
            for lines in (R.by_row, R.by_col):  # indices stay sorted within each line
                assert all(
                    np.all(np.diff(seg) > 0) for seg in np.split(lines.indices, lines.indptr[1:-1])
                )


def _factors(dec):
    return [
        (u.tolist(), v.tolist(), int(s))
        for u, v, s in zip(dec.rows, dec.cols, dec.signs, strict=True)
    ]


CONFIGS = {
    "signed": GreedyConfig(per_round=0, round_ratio=0.5),
    "unsigned": GreedyConfig(signed=False, per_round=0, round_ratio=0.5),
    "both_starts": GreedyConfig(per_round=0, round_ratio=0.5, starts=("support", "grow")),
    "minhash": GreedyConfig(per_round=0, round_ratio=0.5, minhash_bands=6, minhash_candidates=300),
    "plain_greedy": GreedyConfig(per_round=1, degree_seeds=5),
}
GRAPH = PlantedConfig(m=300, blocks=12, side_min=8, side_max=30, negative_fraction=0.25,
                      deletion=0.05, background=0.003, seed=5)  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_reuse_gives_the_factors_of_refining_every_start_anew(name, monkeypatch):
    A, _ = plant(GRAPH)
    incremental = decompose(A, CONFIGS[name])
    counts = {}
    original = Candidates.round

    def count(self, R, round_):
        out = original(self, R, round_)
        counts.update(reused=self.reused, refined=self.refined)
        return out

    monkeypatch.setattr(Candidates, "round", count)
    decompose(A, CONFIGS[name])
    assert counts["reused"] > 0  # reuse happened, so the comparison below means something
    monkeypatch.setattr(Candidates, "_valid", lambda self, entry: False)
    from_scratch = decompose(A, CONFIGS[name])
    assert _factors(incremental) == _factors(from_scratch)
    assert (incremental.to_sparse() != A).nnz == 0


def test_stale_reuse_is_caught(monkeypatch):
    """Reusing every candidate whatever changed gives other factors, so the comparison above
    can fail."""
    A, _ = plant(GRAPH)
    cfg = dataclasses.replace(CONFIGS["minhash"], max_factors=60)  # stale gains never run out
    right = decompose(A, cfg)
    monkeypatch.setattr(Candidates, "_valid", lambda self, entry: True)
    wrong = decompose(A, cfg)
    assert _factors(wrong) != _factors(right)


def test_a_candidate_is_stale_once_a_row_or_column_it_read_changes():
    R = Residual(sp.csr_matrix(np.ones((10, 10), dtype=np.int64)))
    pool = Candidates(R, GreedyConfig())
    entry = Refined(1, 5.0, np.array([0, 1]), np.array([5]), np.array([0, 1]), np.array([5, 6]))
    assert pool._valid(entry)
    for factor, stale in (
        ((np.array([7]), np.array([6])), True),  # a column it read, in a row it did not
        ((np.array([1]), np.array([9])), True),  # a row it read
        ((np.array([8, 9]), np.array([0, 1])), False),  # neither
    ):
        pool.row_changed[:] = pool.col_changed[:] = -1
        pool.changed(R, [(*factor, 1)], round_=1)
        assert pool._valid(entry) is not stale
    pool.changed(R, [(np.array([0]), np.array([5]), 1)], round_=0)  # before it was computed
    pool.row_changed[:] = pool.col_changed[:] = -1
    pool.changed(R, [(np.array([0]), np.array([5]), 1)], round_=0)
    assert pool._valid(entry)


def test_top_rows_equals_a_stable_sort():
    rng = np.random.default_rng(2)
    for _ in range(200):
        degree = rng.integers(0, rng.integers(1, 6), rng.integers(1, 40))
        k = int(rng.integers(0, 45))
        np.testing.assert_array_equal(top_rows(degree, k), np.argsort(-degree, kind="stable")[:k])


def _naive_signature(R, row, s, index):
    cols = R.row_support(row, s).astype(np.int64)
    return np.array([((a * cols + b) % candidates.MinHashIndex.__init__.__globals__["_PRIME"]).min()
                     for a, b in zip(index.a, index.b, strict=True)])  # fmt: skip


def test_minhash_index_signatures_and_groups_follow_the_residual():
    """Signatures equal min over the hashed support, after updates too; groups are exactly
    the distinct sets of ≥ 2 rows agreeing on a band, largest first."""
    rng = np.random.default_rng(3)
    base = np.zeros((40, 30), dtype=np.int64)
    base[:12, :10] = 1  # twelve identical rows: one group in every band
    base[20:26, 15:25] = -1
    R = Residual(sp.csr_matrix(base + _random_int(rng, 40, 30, 0.05).toarray()))
    index = MinHashIndex(R, 1, bands=4, rows_per_band=2, seed=7)
    R.subtract([(np.arange(3), np.arange(10), 1)])  # rows 0-2 lose their block
    index.update(R, np.arange(3))
    for row in range(40):
        support = R.row_support(row, 1)
        assert index.active[row] == (len(support) >= 2)
        if len(support):
            np.testing.assert_array_equal(index.sig[row], _naive_signature(R, row, 1, index))
    expected = {}
    for band in range(4):
        keys = {}
        for row in np.flatnonzero(index.active):
            keys.setdefault(tuple(index.sig[row, 2 * band : 2 * band + 2]), []).append(row)
        for rows in keys.values():
            if len(rows) >= 2:
                expected.setdefault(tuple(rows), None)
    groups = index.groups(limit=1000)
    assert sorted(tuple(g.tolist()) for _, g in groups) == sorted(expected)
    assert [len(g) for _, g in groups] == sorted((len(g) for _, g in groups), reverse=True)
    assert tuple(range(3, 12)) in [tuple(g.tolist()) for _, g in groups]
    assert [len(g) for _, g in index.groups(limit=2)] == [len(g) for _, g in groups[:2]]
