"""Full scale: the four CRISPRi lines (Replogle 2022 K562 and RPE1, Nadig 2025 HepG2 and
Jurkat) from their raw single-cell files, renormalised uniformly into one cell table.

Every line goes through the same steps: raw counts (checked), normalise_total, log1p,
perturbations with fewer than ``min_cells`` cells dropped, then shared HVGs chosen across
the lines (scanpy's choice, ``batch_key`` = line), so no line arrives pre-normalised
differently (the Arc mirror mixes raw and normalised files, state issue #253). The files are
read in row chunks (repro.st_reliability.linestream), never whole.
"""

from __future__ import annotations

import dataclasses
import logging

import anndata as ad
import numpy as np
import pandas as pd
from scipy import sparse

from repro.st_reliability.data import CONTROL

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LineSource:
    path: str
    perturbation_column: str = "gene"
    control: str = "non-targeting"
    gene_column: str | None = "gene_name"  # var column with gene symbols (None: var_names)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Preprocessing:
    n_hvg: int = 2000
    target_sum: float = 1e4
    min_cells: int = 20
    chunk_cells: int = 10_000  # rows read at a time (linestream): ≈ 0.35 GB at 8,563 genes


@dataclasses.dataclass(frozen=True)
class LineLabels:
    """One line's cells to keep (rare perturbations dropped), their cell-eval labels, and
    its gene names (made unique), read from obs and var only."""

    keep: np.ndarray
    obs: pd.DataFrame
    genes: pd.Index


def line_labels(name: str, source: LineSource, adata: ad.AnnData, min_cells: int) -> LineLabels:
    """The checks and labels of one line's file, opened whole or backed (the first 500 rows
    of X are read to check that it holds raw counts)."""
    from anndata.utils import make_index_unique

    if source.perturbation_column not in adata.obs:
        raise ValueError(
            f"{source.path}: obs has no {source.perturbation_column!r} column "
            f"(columns: {list(adata.obs.columns)[:12]})"
        )
    sample = adata.X[: min(adata.n_obs, 500)]
    values = sample.data if sparse.issparse(sample) else np.asarray(sample).ravel()
    if values.size and (values.min() < 0 or not np.allclose(values, np.round(values))):
        raise ValueError(f"{source.path}: X is not raw counts; the lines are renormalised here")
    pert = adata.obs[source.perturbation_column].astype(str)
    pert = pert.where(pert != source.control, CONTROL)
    counts = pert.value_counts()
    keep = pert.map(counts).to_numpy() >= min_cells
    if not (pert[keep] == CONTROL).any():
        raise ValueError(f"{source.path}: no control cells labelled {source.control!r}")
    obs = pd.DataFrame(
        {"pert_name": pert[keep].to_numpy(), "celltype_name": name},
        index=[f"{name}:{c}" for c in adata.obs_names[keep]],
    )
    genes = adata.var_names
    if source.gene_column:
        if source.gene_column not in adata.var:
            raise ValueError(f"{source.path}: var has no {source.gene_column!r} column")
        genes = make_index_unique(pd.Index(adata.var[source.gene_column].astype(str)))
    log.info("%s: %d cells, %d perturbations kept", name, int(keep.sum()), counts.size)
    return LineLabels(keep, obs, pd.Index(genes))


def load_line(name: str, source: LineSource, min_cells: int) -> ad.AnnData:
    """One line's raw counts, read whole, with the cell-eval columns; rare perturbations
    dropped (the SE-600M embedding reads every gene of the kept cells)."""
    adata = ad.read_h5ad(source.path)
    labels = line_labels(name, source, adata, min_cells)
    adata = adata[labels.keep].copy()
    adata.obs = labels.obs
    adata.var_names = labels.genes
    return adata


def label_cells(combined: ad.AnnData, families: pd.Series | None = None) -> ad.AnnData:
    """The cell table's labels: perturbation families (controls apart), categorical obs, and
    each gene's program."""
    pert = combined.obs["pert_name"]
    fam = pert.map(families) if families is not None else pd.Series("unknown", index=pert.index)
    combined.obs["family"] = np.where(pert == CONTROL, "control", fam.fillna("unknown"))
    for col in ("pert_name", "celltype_name", "family"):
        combined.obs[col] = combined.obs[col].astype("category")
    combined.var = pd.DataFrame(
        {"program": program_labels(combined.var_names)}, index=combined.var_names
    )
    return combined


def program_labels(genes) -> np.ndarray:
    """var ``program``: the offline cycling and p53 lists (brief §2.3.6), else ``none``."""
    from repro.st_reliability.simulate import CYCLING_GENES, P53_GENES

    label = {**dict.fromkeys(CYCLING_GENES, "cycling"), **dict.fromkeys(P53_GENES, "p53")}
    return np.array([label.get(str(g), "none") for g in genes], dtype=object)
