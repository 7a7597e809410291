"""Full-scale loaders on tiny local .h5ad files, downloaded from a local HTTP server."""

import anndata as ad
import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from repro.common.download import download, sha256_of
from repro.st_reliability.data import CONTROL, read_cells
from repro.st_reliability.fullscale import LineSource, Preprocessing, load_line
from repro.st_reliability.prepare import SplitConfig, prepare_full

GENES = ["MKI67", "TOP2A", "CDKN1A", "MDM2"] + [f"G{i}" for i in range(36)]


def raw_line(seed: int, genes: list[str], perts: dict[str, int]) -> ad.AnnData:
    """Raw counts in the Replogle/Nadig layout: obs ``gene``, var ``gene_name`` (ids as index)."""
    rng = np.random.default_rng(seed)
    labels = [p for p, n in perts.items() for _ in range(n)]
    counts = rng.poisson(rng.gamma(2.0, 2.0, len(genes)), (len(labels), len(genes)))
    adata = ad.AnnData(sparse.csr_matrix(counts.astype(np.float32)))
    adata.obs["gene"] = pd.Categorical(labels)
    adata.obs_names = [f"cell{i}" for i in range(len(labels))]
    adata.var_names = [f"ENSG{i:05d}" for i in range(len(genes))]
    adata.var["gene_name"] = genes
    return adata


def test_four_line_loader_from_local_server(http_server, tmp_path):
    root, url = http_server
    perts = {"non-targeting": 60, **{f"P{i}": 25 for i in range(8)}, "RARE": 5}
    lines = {"k562": raw_line(0, GENES, perts), "hepg2": raw_line(1, GENES[::-1] + ["ONLY"], perts)}
    sources = {}
    for name, adata in lines.items():
        adata.write_h5ad(root / f"{name}_raw_singlecell_01.h5ad")
        pinned = sha256_of(root / f"{name}_raw_singlecell_01.h5ad")
        path = download(
            f"{url}/{name}_raw_singlecell_01.h5ad",
            tmp_path / "dl" / f"{name}.h5ad",
            sha256=pinned,
            retries=1,
        )
        sources[name] = LineSource(path=str(path))
    families = tmp_path / "families.tsv"
    pd.DataFrame(
        {
            "perturbation": [f"P{i}" for i in range(8)],
            "family": ["a", "a", "b", "b", "c", "c", "d", "d"],
        }
    ).to_csv(families, sep="\t", index=False)
    out = tmp_path / "out"
    record = prepare_full(
        sources,
        Preprocessing(n_hvg=20, min_cells=20),
        SplitConfig(c4_families=2),
        seed=0,
        families=str(families),
        cells_out=str(out / "cells.h5ad"),
        programs_out=str(out / "programs.tsv"),
        record_out=str(out / "record.json"),
    )
    cells = read_cells(out / "cells.h5ad")
    assert cells.n_vars == 20 and "ONLY" not in cells.var_names  # shared genes only, then HVGs
    assert set(cells.obs["celltype_name"]) == {"k562", "hepg2"}
    assert "RARE" not in set(cells.obs["pert_name"])  # fewer than min_cells
    assert (cells.obs["pert_name"] == CONTROL).sum() == 120
    assert set(cells.obs.loc[cells.obs["pert_name"] == "P0", "family"]) == {"a"}
    # uniform renormalisation: log1p(count / total · 1e4) of the raw file, cell by cell
    raw = lines["k562"]
    gene = cells.var_names[0]
    col = list(raw.var["gene_name"]).index(gene)
    x = raw.X.toarray()
    expected = np.log1p(x[0, col] / x[0].sum() * 1e4)
    assert cells["k562:cell0", gene].X[0, 0] == pytest.approx(expected, rel=1e-5)
    assert set(cells.obs["split"]) == {"control", "train", "fewshot"}
    assert len(record["split"]["c4_families"]) == 2
    programs = pd.read_csv(out / "programs.tsv", sep="\t")
    assert set(programs["source"]) <= {"cycling", "p53"}
    assert record["program_genes_found"] == len(programs)


def test_loader_rejects_normalised_files_and_missing_columns(tmp_path):
    adata = raw_line(0, GENES, {"non-targeting": 30, "P0": 30})
    adata.X = adata.X / 3.0
    adata.write_h5ad(tmp_path / "norm.h5ad")
    with pytest.raises(ValueError, match="not raw counts"):
        load_line("x", LineSource(path=str(tmp_path / "norm.h5ad")), 20)
    with pytest.raises(ValueError, match="no 'target' column"):
        load_line(
            "x", LineSource(path=str(tmp_path / "norm.h5ad"), perturbation_column="target"), 20
        )
    no_ctrl = raw_line(0, GENES, {"NT": 30, "P0": 30})
    no_ctrl.write_h5ad(tmp_path / "noctrl.h5ad")
    with pytest.raises(ValueError, match="no control cells"):
        load_line("x", LineSource(path=str(tmp_path / "noctrl.h5ad")), 20)


def _in_memory_reference(sources, cfg):
    """The table as scanpy builds it from the whole files: every line read whole, normalised
    over the shared genes, concatenated, HVGs chosen with batch_key (flavor seurat)."""
    import scanpy as sc

    lines = {name: load_line(name, src, cfg.min_cells) for name, src in sources.items()}
    genes = sorted(set.intersection(*(set(a.var_names) for a in lines.values())))
    parts = []
    for adata in lines.values():
        adata = adata[:, genes].copy()
        sc.pp.normalize_total(adata, target_sum=cfg.target_sum)
        sc.pp.log1p(adata)
        parts.append(adata)
    combined = ad.concat(parts, join="inner")
    sc.pp.highly_variable_genes(combined, n_top_genes=cfg.n_hvg, batch_key="celltype_name")
    return combined[:, combined.var["highly_variable"].to_numpy()]


def test_streamed_lines_match_scanpy_on_the_whole_files(tmp_path, monkeypatch):
    """Three lines (sparse and dense X, different depths, gene orders and rare perturbations)
    read backed in chunks of 7 rows: the same cells, genes and values as scanpy in memory."""
    from repro.st_reliability import linestream

    rng = np.random.default_rng(5)
    perts = {"non-targeting": 30, **{f"P{i}": 22 for i in range(4)}, "RARE": 6}
    genes = GENES + [f"H{i}" for i in range(60)]
    lines = {
        "k562": raw_line(0, genes, perts),
        "rpe1": raw_line(1, genes[::-1], {**perts, "P9": 25}),
        "jurkat": raw_line(2, genes[5:] + ["ONLY"], perts),
    }
    lines["rpe1"].X = lines["rpe1"].X.toarray() * rng.integers(1, 4, size=(1, len(genes)))
    sources = {}
    for name, adata in lines.items():
        adata.write_h5ad(tmp_path / f"{name}.h5ad")
        sources[name] = LineSource(path=str(tmp_path / f"{name}.h5ad"))
    cfg = Preprocessing(n_hvg=25, min_cells=20, chunk_cells=7)
    opened = []
    real_read = ad.read_h5ad
    monkeypatch.setattr(
        linestream.ad, "read_h5ad", lambda path, **kw: opened.append(kw) or real_read(path, **kw)
    )
    got = linestream.stream_lines(sources, cfg)
    assert opened == [{"backed": "r"}] * 3  # never read whole
    monkeypatch.setattr(linestream.ad, "read_h5ad", real_read)
    want = _in_memory_reference(sources, cfg)
    assert list(got.var_names) == list(want.var_names) and got.n_vars == 25
    assert list(got.obs_names) == list(want.obs_names)
    assert (got.obs["pert_name"].to_numpy() == want.obs["pert_name"].to_numpy()).all()
    np.testing.assert_allclose(got.X, np.asarray(want.X.todense()), rtol=1e-6, atol=1e-6)
