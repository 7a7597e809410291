"""Gain-based greedy SBD (brief §2.3): seeds → alternating exact maximisation → accept.

Each round refines every candidate on the current residual, then accepts the best ones
in order of gain as long as their cells are disjoint from those already accepted in the
round (so each accepted gain is still exact), up to ``per_round`` factors and down to
``round_ratio`` × the round's best gain; with ``per_round = 1`` this is the plain greedy.
Rounds stop when no candidate has gain ≥
``min_gain`` or ``max_factors`` are taken (fixed-rank mode). Rounds are incremental: the
residual changes in place and candidates whose rows and columns no accepted factor touched
are reused (``candidates.py``), which gives the same factors as refining every start anew.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

from repro.sbd.candidates import Candidates
from repro.sbd.factors import Decomposition, canonical
from repro.sbd.residual import Residual

log = logging.getLogger(__name__)


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
    # starts from each degree seed row: "support" (its sign-s cells), "grow" (rows added by
    # overlap); None: support for the signed greedy, grow for the unsigned one
    starts: tuple[str, ...] | None = None
    minhash_seed: int = 0  # the min-hash functions (papers.sbd.greedy.minhash_seed)


def _disjoint(U, V, accepted, by_row) -> bool:
    """Whether U×V shares no cell with the factors accepted in this round."""
    others = {k for i in U.tolist() for k in by_row.get(i, ())}
    return not any(np.intersect1d(V, accepted[k][1], assume_unique=True).size for k in others)


def decompose(A: sp.spmatrix, cfg: GreedyConfig = GreedyConfig()) -> Decomposition:
    """Greedy SBD of an integer matrix: the Decomposition, with the accepted factors'
    steps (gain, cost, CF, sizes, round, seconds) in ``.trace``."""
    R = Residual(A)
    candidates = Candidates(R, cfg)
    nnz_a = R.nnz
    rows, cols, signs, trace = [], [], [], []
    cost, round_, start = nnz_a, 0, time.perf_counter()
    while cfg.max_factors is None or len(rows) < cfg.max_factors:
        found = [f for f in candidates.round(R, round_) if f[0] >= cfg.min_gain]
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
        candidates.changed(R, accepted, round_)
        log.info(
            "round %d: %d factors (+%d), cost %d, CF %.2f; %d refined, %d reused; %.1f s",
            round_, len(rows), len(accepted), cost, nnz_a / max(cost, 1),
            candidates.refined, candidates.reused, time.perf_counter() - start,
        )  # fmt: skip
        round_ += 1
    return Decomposition(
        shape=R.shape,
        rows=rows,
        cols=cols,
        signs=np.asarray(signs, dtype=np.int64),
        residual=canonical(R.csr),
        source_nnz=nnz_a,
        trace=trace,
    )
