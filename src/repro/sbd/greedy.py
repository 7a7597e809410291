"""Gain-based greedy SBD (brief §2.3): seeds → alternating exact maximisation → accept.

Each round refines every candidate on the current residual, then accepts the best ones
in order of gain as long as their cells are disjoint from those already accepted in the
round (so each accepted gain is still exact), up to ``per_round`` factors and down to
``round_ratio`` × the round's best gain; with ``per_round = 1`` this is the plain greedy.
Rounds stop when no candidate has gain ≥
``min_gain`` or ``max_factors`` are taken (fixed-rank mode).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

from repro.sbd.factors import Decomposition, canonical
from repro.sbd.minhash import minhash_groups
from repro.sbd.residual import Residual

log = logging.getLogger(__name__)
GROW_POOL = 200  # unsigned seeds: rows tried, by overlap with the seed row


@dataclasses.dataclass(frozen=True)
class GreedyConfig:
    signed: bool = True  # False: the unsigned VNM proxy (positive factors, no -1 cells)
    max_factors: int | None = None  # fixed-rank mode: stop after this many factors
    min_gain: int = 1  # accept a factor only if its gain is at least this (> 0)
    degree_seeds: int = 20  # rows of highest residual degree per sign, per round
    max_iter: int = 10  # alternating updates per candidate
    minhash_bands: int = 0  # 0: degree seeds only; else LSH bands of min-hash signatures
    minhash_rows: int = 2  # hashes per band
    minhash_candidates: int = 500  # largest distinct min-hash groups refined per round
    per_round: int = 1  # factors accepted per round (0: as many as are cell-disjoint)
    round_ratio: float = 0.0  # accept only gains ≥ this × the round's best gain
    seed: int = 0


def alternate(R: Residual, s: int, cfg: GreedyConfig, *, V=None, U=None):
    """Alternate the exact U- and V-updates from a start (V or U) until the gain stops
    rising; returns (gain, U, V). Each half-step is an exact maximisation, so the gain of
    successive pairs never decreases."""
    if U is not None:  # a start from rows: their exact best columns first
        V, _ = R.best_side("cols", U, s, cfg.signed)
    best = (-np.inf, None, None)
    for _ in range(cfg.max_iter):
        if len(V) == 0:
            break
        U, _ = R.best_side("rows", V, s, cfg.signed)
        if len(U) == 0:
            break
        V, gain = R.best_side("cols", U, s, cfg.signed)
        if gain <= best[0]:
            break
        best = (gain, U, V)
    return best


def _grow(R: Residual, seed_row: int, pool: int):
    """Unsigned start: add rows by overlap with the seed row's ≥1 support, shrinking the
    shared columns, and keep the prefix with the largest exact-biclique proxy gain."""
    V = R.csr.indices[R.csr.indptr[seed_row] : R.csr.indptr[seed_row + 1]]
    V = V[R.csr.data[R.csr.indptr[seed_row] : R.csr.indptr[seed_row + 1]] >= 1]
    if len(V) < 2:
        return None
    lines, overlap = R.scores("rows", V, 1, signed=True)  # overlap-ish order only
    order = lines[np.argsort(-overlap, kind="stable")][:pool]
    best, shared, rows = (-1, V), V, [seed_row]
    for row in order[order != seed_row]:
        supp = R.csr.indices[R.csr.indptr[row] : R.csr.indptr[row + 1]]
        shared = np.intersect1d(
            shared, supp[R.csr.data[R.csr.indptr[row] : R.csr.indptr[row + 1]] >= 1]
        )
        rows.append(row)
        score = len(rows) * len(shared) - len(rows) - len(shared)
        if len(shared) < 2:
            break
        if score > best[0]:
            best = (score, shared)
    return best[1]


def _candidates(R: Residual, cfg: GreedyConfig, round_: int):
    """(sign, start) pairs: degree seeds (start V) and min-hash groups (start U)."""
    signs = (1, -1) if cfg.signed else (1,)
    for s in signs:
        support = R.sign_support(s)
        degree = np.diff(support.indptr)
        top = np.argsort(-degree, kind="stable")[: cfg.degree_seeds]
        for row in top[degree[top] >= 2]:
            if cfg.signed:
                yield s, {"V": support.indices[support.indptr[row] : support.indptr[row + 1]]}
            else:
                V = _grow(R, int(row), pool=GROW_POOL)
                if V is not None:
                    yield s, {"V": V}
        if cfg.minhash_bands:
            for group in minhash_groups(
                support,
                bands=cfg.minhash_bands,
                rows_per_band=cfg.minhash_rows,
                limit=cfg.minhash_candidates,
                seed=cfg.seed * 1_000_003 + round_,
            ):
                yield s, {"U": group}


def _disjoint(U, V, accepted, by_row) -> bool:
    """Whether U×V shares no cell with the factors accepted in this round."""
    others = {k for i in U.tolist() for k in by_row.get(i, ())}
    return not any(np.intersect1d(V, accepted[k][1], assume_unique=True).size for k in others)


def decompose(A: sp.spmatrix, cfg: GreedyConfig = GreedyConfig()):
    """Greedy SBD of an integer matrix; returns (Decomposition, trace rows)."""
    R = Residual(A)
    nnz_a = R.nnz
    rows, cols, signs, trace = [], [], [], []
    cost, round_, start = nnz_a, 0, time.perf_counter()
    while cfg.max_factors is None or len(rows) < cfg.max_factors:
        found = []
        for s, init in _candidates(R, cfg, round_):
            gain, U, V = alternate(R, s, cfg, **init)
            if gain >= cfg.min_gain:
                found.append((gain, s, U, V))
        found.sort(key=lambda f: (-f[0], -len(f[2]) * len(f[3])))
        accepted, by_row = [], defaultdict(list)
        room = np.inf if cfg.max_factors is None else cfg.max_factors - len(rows)
        limit = min(room, cfg.per_round or np.inf)
        for gain, s, U, V in found:
            if len(accepted) >= limit or gain < cfg.round_ratio * found[0][0]:
                break
            if _disjoint(U, V, accepted, by_row):
                for i in U.tolist():
                    by_row[i].append(len(accepted))
                accepted.append((U, V, s))
                cost -= int(gain)
                rows.append(U)
                cols.append(V)
                signs.append(s)
                trace.append(
                    {
                        "factor": len(rows),
                        "round": round_,
                        "gain": int(gain),
                        "cost": cost,
                        "cf": nnz_a / max(cost, 1),
                        "rows": len(U),
                        "cols": len(V),
                        "sign": s,
                        "seconds": time.perf_counter() - start,
                    }
                )
        if not accepted:
            break
        R.subtract(accepted)
        round_ += 1
        log.debug("round %d: %d factors, cost %d", round_, len(rows), cost)
    dec = Decomposition(
        shape=R.shape,
        rows=[np.sort(u) for u in rows],
        cols=[np.sort(v) for v in cols],
        signs=np.asarray(signs, dtype=np.int64),
        residual=canonical(R.csr),
    )
    return dec, trace
