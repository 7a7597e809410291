"""Full scale: the four CRISPRi lines (Replogle 2022 K562 and RPE1, Nadig 2025 HepG2 and
Jurkat) from their raw single-cell files, renormalised uniformly into one cell table.

Every line goes through the same steps: raw counts (checked), normalise_total, log1p,
perturbations with fewer than ``min_cells`` cells dropped, then shared HVGs chosen across
the lines (scanpy, ``batch_key`` = line), so no line arrives pre-normalised differently
(the Arc mirror mixes raw and normalised files, state issue #253).
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


def load_line(name: str, source: LineSource, min_cells: int) -> ad.AnnData:
    """One line's raw counts with the cell-eval columns; rare perturbations dropped."""
    adata = ad.read_h5ad(source.path)
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
    adata = adata[keep].copy()
    adata.obs = pd.DataFrame(
        {"pert_name": pert[keep].to_numpy(), "celltype_name": name}, index=adata.obs_names
    )
    adata.obs_names = [f"{name}:{c}" for c in adata.obs_names]
    if source.gene_column:
        if source.gene_column not in adata.var:
            raise ValueError(f"{source.path}: var has no {source.gene_column!r} column")
        adata.var_names = adata.var[source.gene_column].astype(str).to_numpy()
        adata.var_names_make_unique()
    log.info("%s: %d cells, %d perturbations kept", name, adata.n_obs, counts.size)
    return adata


def preprocess_lines(
    lines: dict[str, ad.AnnData], cfg: Preprocessing, families: pd.Series | None = None
) -> ad.AnnData:
    """Normalise each line the same way, keep genes shared by all, pick shared HVGs."""
    import scanpy as sc  # 1.6 s of import, only at full scale

    genes = sorted(set.intersection(*(set(a.var_names) for a in lines.values())))
    if not genes:
        raise ValueError("the lines share no gene names")
    parts = []
    for adata in lines.values():
        adata = adata[:, genes].copy()
        sc.pp.normalize_total(adata, target_sum=cfg.target_sum)
        sc.pp.log1p(adata)
        parts.append(adata)
    combined = ad.concat(parts, join="inner")
    n_hvg = min(cfg.n_hvg, combined.n_vars)
    sc.pp.highly_variable_genes(combined, n_top_genes=n_hvg, batch_key="celltype_name")
    combined = combined[:, combined.var["highly_variable"].to_numpy()].copy()
    if sparse.issparse(combined.X):
        combined.X = combined.X.toarray()
    combined.X = np.asarray(combined.X, dtype=np.float32)
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
