"""The four CRISPRi lines renormalised without reading a raw file whole (≈ 45 GB of h5ad, ≈ 1 M
cells; the prepare job is a CPU job): each file is opened backed (anndata, ``backed="r"``) and
read in row chunks twice, once for the per-gene moments that choose the shared HVGs and once
for the HVG columns of the kept cells. Peak memory: the output table (cells × n_hvg float32,
≈ 8 GB at 1 M cells × 2,000 genes) and one chunk (``chunk_cells`` × the line's genes).

The HVG choice is scanpy's ``highly_variable_genes`` (flavor ``seurat``, ``n_top_genes``,
``batch_key`` = line) computed from those moments: per line, the mean and variance of the
normalised counts of the genes expressed in it (expm1 of the log1p data), dispersions
normalised within 20 mean bins, the line's top genes; across lines, genes ranked by the number
of lines that chose them, ties broken by the mean normalised dispersion.
"""

from __future__ import annotations

import dataclasses
import logging

import anndata as ad
import numpy as np
import pandas as pd
from scipy import sparse

from repro.st_reliability.fullscale import LineLabels, LineSource, Preprocessing, line_labels

log = logging.getLogger(__name__)
N_BINS = 20  # scanpy's default for flavor seurat


@dataclasses.dataclass
class Moments:
    """Per-gene sums over one line's kept cells of the normalised counts x: n, Σx, Σx², #x>0."""

    n: int
    total: np.ndarray
    squares: np.ndarray
    expressed: np.ndarray


def _chunks(adata: ad.AnnData, labels: LineLabels, columns: np.ndarray, cfg: Preprocessing):
    """log1p(normalize_total) of the kept cells over ``columns``, ``chunk_cells`` rows at a
    time (scanpy's own functions: both act cell by cell, so chunks give the same values)."""
    import scanpy as sc  # 1.6 s of import, only at full scale

    for start in range(0, adata.n_obs, cfg.chunk_cells):
        stop = min(start + cfg.chunk_cells, adata.n_obs)
        keep = labels.keep[start:stop]
        if not keep.any():
            continue
        x = adata.X[start:stop]
        x = x.toarray() if sparse.issparse(x) else np.asarray(x)
        part = ad.AnnData(np.asarray(x[keep][:, columns], dtype=np.float32))
        sc.pp.normalize_total(part, target_sum=cfg.target_sum)
        sc.pp.log1p(part)
        yield part.X


def _moments(adata, labels, columns, cfg) -> Moments:
    m = Moments(0, *(np.zeros(len(columns)) for _ in range(3)))
    for logx in _chunks(adata, labels, columns, cfg):
        x = np.expm1(logx.astype(np.float64))
        m.n += x.shape[0]
        m.total += x.sum(axis=0)
        m.squares += (x * x).sum(axis=0)
        m.expressed += (logx > 0).sum(axis=0)
    return m


def _line_dispersions(m: Moments, n_top: int) -> pd.DataFrame:
    """One line's normalised dispersions and top-gene flags (scanpy's single batch, genes
    expressed in no cell of the line: zeros and not chosen)."""
    mean = m.total / m.n
    var = (m.squares / m.n - mean**2) * (m.n / (m.n - 1))
    expressed = m.expressed > 0
    frame = pd.DataFrame(0.0, index=np.arange(len(mean)), columns=["dispersions_norm"])
    frame["highly_variable"] = False
    mean, var = mean[expressed], var[expressed]
    mean[mean == 0] = 1e-12
    dispersion = var / mean
    dispersion[dispersion == 0] = np.nan
    df = pd.DataFrame({"means": np.log1p(mean), "dispersions": np.log(dispersion)})
    df["mean_bin"] = pd.cut(df["means"], bins=N_BINS)
    stats = df.groupby("mean_bin", observed=True)["dispersions"].agg(avg="mean", dev="std")
    single = stats["dev"].isnull()  # a bin of one gene: normalised dispersion 1
    stats.loc[single, "dev"] = stats.loc[single, "avg"]
    stats.loc[single, "avg"] = 0
    stats = stats.loc[df["mean_bin"]].set_index(df.index)
    norm = ((df["dispersions"] - stats["avg"]) / stats["dev"]).to_numpy()
    finite = norm[~np.isnan(norm)]
    cutoff = np.sort(finite)[::-1][min(n_top, finite.size) - 1]
    frame.loc[expressed, "dispersions_norm"] = norm
    frame.loc[expressed, "highly_variable"] = np.nan_to_num(norm, nan=-np.inf) >= cutoff
    return frame


def shared_hvgs(moments: dict[str, Moments], n_top: int) -> np.ndarray:
    """Indices (ascending) of the ``n_top`` genes chosen across lines, as scanpy's batched
    selection ranks them."""
    frames = [_line_dispersions(m, n_top) for m in moments.values()]
    combined = (
        pd.concat(frames)
        .groupby(level=0)
        .agg(dispersions_norm=("dispersions_norm", "mean"), n_lines=("highly_variable", "sum"))
    )
    ranked = combined.sort_values(
        ["n_lines", "dispersions_norm"], ascending=False, na_position="last"
    )
    return np.sort(ranked.index.to_numpy()[: min(n_top, len(ranked))])


def stream_lines(sources: dict[str, LineSource], cfg: Preprocessing) -> ad.AnnData:
    """The lines' kept cells over the shared HVGs, log1p-normalised per line over the genes
    all lines share: the table ``fullscale.preprocess_lines`` builds, before its labels."""
    files = {name: ad.read_h5ad(src.path, backed="r") for name, src in sources.items()}
    try:
        labels = {n: line_labels(n, sources[n], a, cfg.min_cells) for n, a in files.items()}
        genes = sorted(set.intersection(*(set(lab.genes) for lab in labels.values())))
        if not genes:
            raise ValueError("the lines share no gene names")
        columns = {n: lab.genes.get_indexer(genes) for n, lab in labels.items()}
        moments = {n: _moments(a, labels[n], columns[n], cfg) for n, a in files.items()}
        chosen = shared_hvgs(moments, min(cfg.n_hvg, len(genes)))
        log.info("%d shared genes, %d HVGs", len(genes), chosen.size)
        n_cells = sum(m.n for m in moments.values())
        x = np.empty((n_cells, chosen.size), dtype=np.float32)
        row = 0
        for name, adata in files.items():
            for logx in _chunks(adata, labels[name], columns[name], cfg):
                x[row : row + logx.shape[0]] = logx[:, chosen]
                row += logx.shape[0]
    finally:
        for adata in files.values():
            adata.file.close()
    obs = pd.concat([lab.obs for lab in labels.values()])
    return ad.AnnData(x, obs=obs, var=pd.DataFrame(index=np.asarray(genes)[chosen]))
