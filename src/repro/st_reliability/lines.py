"""The cell table one line at a time (issue 24 §4): at full scale it holds four lines of
150k–310k cells × 2000 genes, and the steps that work line by line need not hold it whole.

``open_cells`` reads obs, var and uns and leaves X on disk (anndata's backed mode, dense or
CSR X). Every read of X goes through ``read_rows``: the rows asked for, as a dense array,
read in blocks of at most ``BLOCK_ROWS`` consecutive rows. ``scan`` passes over the lines
once for what every line needs (true Δ, the control cells, the largest value) and
``line_cells`` reads one line's cells of some perturbations. Both also take an AnnData held
in memory, with the same results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

import anndata as ad
import numpy as np
import pandas as pd
from scipy import sparse

from repro.st_reliability.data import (
    CONTROL,
    check_values,
    deltas_from_means,
    open_h5ad,
    pseudobulk,
)

BLOCK_ROWS = 8192  # rows per read of X: 64 MB at 2000 float32 genes


@contextlib.contextmanager
def open_cells(path: str | os.PathLike):
    """The cell table with X left on disk (checked as ``data.read_cells`` checks it; the
    values are checked by ``scan``, as it reads them)."""
    adata = open_h5ad(path, backed="r")
    try:
        yield adata
    finally:
        adata.file.close()


def read_rows(adata: ad.AnnData, rows, *, block: int = BLOCK_ROWS) -> np.ndarray:
    """X[rows] as a dense array, in the order given. Reads the span of the rows in blocks of
    at most ``block`` consecutive rows (skipping blocks with none asked for) and keeps only
    the rows asked for, so it holds the result and one block."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    out = np.empty((len(rows), adata.n_vars), dtype=adata.X.dtype)
    done = 0
    while done < len(rows):
        start = int(ordered[done])
        stop = min(start + block, int(ordered[-1]) + 1)
        n = int(np.searchsorted(ordered, stop)) - done
        part = adata.X[start:stop]
        part = part.toarray() if sparse.issparse(part) else np.asarray(part)
        picked = ordered[done : done + n] - start
        if not np.array_equal(picked, np.arange(stop - start)):  # not the block as it is
            part = part[picked]
        out[order[done : done + n]] = part
        done += n
        del part  # before the next block is read
    return out


def line_rows(adata: ad.AnnData, line: str) -> np.ndarray:
    return np.flatnonzero((adata.obs["celltype_name"] == line).to_numpy())


def line_cells(adata: ad.AnnData, line: str, perts: list[str]) -> dict[str, np.ndarray]:
    """The cells of ``perts`` in ``line`` (each in table order): one read of that line."""
    obs = adata.obs
    in_line = (obs["celltype_name"] == line).to_numpy()
    rows = [np.flatnonzero(in_line & (obs["pert_name"] == p).to_numpy()) for p in perts]
    x = read_rows(adata, np.concatenate(rows))
    ends = np.cumsum([len(r) for r in rows])
    return dict(zip(perts, np.split(x, ends[:-1]), strict=True))


@dataclasses.dataclass(frozen=True)
class Scan:
    deltas: pd.DataFrame  # data.true_deltas of the whole table
    ceiling: float  # the largest value in X
    controls: ad.AnnData | None  # every line's control cells, in memory, in table order


def scan(adata: ad.AnnData, *, controls: bool = True) -> Scan:
    """One pass over the lines, one line in memory at a time: each line's means (``data.
    pseudobulk`` on the line alone: a group's mean reads only its own rows, in order, so
    they equal the whole table's bit for bit), the largest value (a max is exact in any
    order), the values' check and, with ``controls``, the control cells."""
    obs = adata.obs
    is_control = (obs["pert_name"] == CONTROL).to_numpy()
    control_rows = np.flatnonzero(is_control)
    control_x = np.empty((len(control_rows), adata.n_vars), adata.X.dtype) if controls else None
    means, ceiling = [], -np.inf
    for line in sorted(obs["celltype_name"].astype(str).unique()):
        rows = line_rows(adata, line)
        x = read_rows(adata, rows)
        check_values(x, getattr(adata, "filename", None) or "the cell table")
        ceiling = max(ceiling, float(x.max()))
        means.append(pseudobulk(ad.AnnData(x, obs=obs.iloc[rows], var=adata.var)))
        if controls:
            control_x[np.searchsorted(control_rows, rows[is_control[rows]])] = x[is_control[rows]]
        del x
    held = None
    if controls:  # obs as anndata's subset gives it: unused categories dropped
        sub = obs.iloc[control_rows].copy()
        for col in sub.select_dtypes("category"):
            sub[col] = sub[col].cat.remove_unused_categories()
        held = ad.AnnData(control_x, obs=sub, var=adata.var)
    return Scan(deltas_from_means(pd.concat(means)), ceiling, held)
