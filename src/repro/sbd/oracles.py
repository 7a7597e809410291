"""Decompositions built from a planted graph's truth instead of found by a method: the
claims' controls (``papers.sbd.claims.<id>.controls``) judge them with the claims' own
handlers.

- ``planted_truth``: the planted blocks as the factors and the rest of A (deleted cells as
  −1, background edges, overlaps) as the residual. Its CF is the most a decomposition that
  recovers every block exactly reaches on that graph, and it recovers itself perfectly.
- ``thinned_truth``: each planted block keeps only its first ⌈(1 − deletion) |U|⌉ rows, so
  its best-match Jaccard against the truth is about 1 − deletion: a recovery that degrades
  with the deletion rate by a known amount.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from repro.sbd.factors import Decomposition, canonical
from repro.sbd.planted import block_sum
from repro.sbd.recovery import recovery_metrics

PLANTED_TRUTH, THINNED_TRUTH = "planted_truth", "thinned_truth"
ORACLES = (PLANTED_TRUTH, THINNED_TRUTH)


def truth_decomposition(A: sp.csr_matrix, truth: dict) -> Decomposition:
    """The truth's blocks as factors plus the residual A − Σ_k s_k u_k v_kᵀ: exact by
    construction."""
    low_rank = block_sum(truth["rows"], truth["cols"], truth["signs"], A.shape)
    return Decomposition(
        shape=A.shape,
        rows=list(truth["rows"]),
        cols=list(truth["cols"]),
        signs=np.asarray(truth["signs"], dtype=np.int64),
        residual=canonical(sp.csr_matrix(A, dtype=np.int64) - low_rank.tocsr()),
        source_nnz=int(A.nnz),
    )


def thinned(truth: dict, keep: float) -> dict:
    """Every block with only its first ⌈keep · |U|⌉ rows (at least one)."""
    rows = [u[: max(1, math.ceil(keep * len(u)))] for u in truth["rows"]]
    return {"rows": rows, "cols": list(truth["cols"]), "signs": truth["signs"]}


def oracle_truth(name: str, truth: dict, deletion: float) -> dict:
    """The factors the oracle ``name`` reports on a graph planted with ``deletion``."""
    if name == PLANTED_TRUTH:
        return truth
    if name == THINNED_TRUTH:
        return thinned(truth, 1.0 - deletion)
    raise ValueError(f"unknown oracle {name!r}; choose from {ORACLES}")


def oracle_metrics(A: sp.csr_matrix, truth: dict, found: dict) -> dict:
    """Sizes, CF, exactness and recovery of the factors ``found`` taken as a decomposition
    of A (the residual absorbs the rest)."""
    return {**truth_decomposition(A, found).sizes(A), **recovery_metrics(truth, found)}
