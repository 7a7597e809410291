"""The evaluation reads the cell table one line at a time (repro.st_reliability.lines): its
pieces equal the whole-table expressions the evaluation used before, for dense and CSR X,
and no read of X materialises more than one line's cells (counted at h5py's reads)."""

import json

import anndata as ad
import h5py
import numpy as np
import pandas as pd
import pytest
import torch
from scipy import sparse

from repro.st_reliability import lines
from repro.st_reliability.data import CONTROL, HELD_OUT, pair_table, read_cells, true_deltas
from repro.st_reliability.evaluate import EvalConfig, evaluate_seed, run
from repro.st_reliability.model import ModelConfig
from repro.st_reliability.train import TrainConfig, Variant, train_variant


def x_reads(monkeypatch) -> list[tuple[str, int]]:
    """Every read of X from an .h5ad file, as (dataset, length): rows of a dense X, stored
    values of a CSR X (its ``data``). Wraps h5py's read, so any code path is counted."""
    reads, original = [], h5py.Dataset.__getitem__

    def counted(self, key):
        out = original(self, key)
        if self.name in ("/X", "/X/data"):
            reads.append((self.name, int(np.shape(out)[0]) if np.ndim(out) else 1))
        return out

    monkeypatch.setattr(h5py.Dataset, "__getitem__", counted)
    return reads


def write_table(adata, path, fmt: str):
    adata = adata.copy()
    if fmt == "csr":
        adata.X = sparse.csr_matrix(adata.X)
    adata.write_h5ad(path)
    return path


def per_line_bound(adata, fmt: str) -> int:
    """The most rows (dense) or stored values (CSR) one line has."""
    x = sparse.csr_matrix(adata.X)
    sizes = [
        (x[rows].nnz if fmt == "csr" else len(rows))
        for rows in (lines.line_rows(adata, c) for c in adata.obs["celltype_name"].unique())
    ]
    return max(sizes)


@pytest.fixture
def interleaved(tiny_cells):
    """The tiny table with its rows shuffled: lines and perturbations interleaved."""
    adata, _ = tiny_cells
    perm = np.random.default_rng(0).permutation(adata.n_obs)
    return adata[perm].copy()


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_line_reads_equal_the_whole_table(tiny_cells, interleaved, tmp_path, fmt, shuffled):
    """scan and line_cells against the whole-table expressions of the evaluation before
    (true_deltas, X.max(), the control subset, boolean masks of X), bit for bit."""
    adata = interleaved if shuffled else tiny_cells[0]
    path = write_table(adata, tmp_path / "cells.h5ad", fmt)
    whole = read_cells(path)
    dense = whole.X.toarray() if fmt == "csr" else whole.X
    control = (whole.obs["pert_name"] == CONTROL).to_numpy()
    held = pair_table(whole)
    held = held[held["split"].isin(HELD_OUT)]
    with lines.open_cells(path) as backed:
        assert backed.isbacked
        for table in (backed, whole):  # X on disk, and X in memory
            got = lines.scan(table)
            pd.testing.assert_frame_equal(got.deltas, true_deltas(whole), check_exact=True)
            assert got.deltas.to_numpy().tobytes() == true_deltas(whole).to_numpy().tobytes()
            assert got.ceiling == float(whole.X.max())
            np.testing.assert_array_equal(got.controls.X, dense[control])
            pd.testing.assert_frame_equal(got.controls.obs, pd.DataFrame(whole[control].obs))
            for line, g in held.groupby(level=0):
                perts = [CONTROL, *g.index.get_level_values(1)]
                cells = lines.line_cells(table, line, perts)
                in_line = (whole.obs["celltype_name"] == line).to_numpy()
                for p in perts:
                    old = dense[in_line & (whole.obs["pert_name"] == p).to_numpy()]
                    assert cells[p].dtype == old.dtype and cells[p].tobytes() == old.tobytes()
        # any rows in any order, in blocks smaller than a line
        rows = np.random.default_rng(1).choice(whole.n_obs, 200, replace=False)
        np.testing.assert_array_equal(lines.read_rows(backed, rows, block=7), dense[rows])
    assert lines.scan(whole, controls=False).controls is None


def test_scan_checks_values(tiny_cells, tmp_path):
    adata = tiny_cells[0].copy()
    adata.X[-1, 0] = -1.0  # in the last line
    adata.write_h5ad(tmp_path / "neg.h5ad")
    with lines.open_cells(tmp_path / "neg.h5ad") as backed, pytest.raises(ValueError, match="neg"):
        lines.scan(backed)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_evaluation_reads_one_line_at_a_time(tiny_cells, tmp_path, monkeypatch, fmt):
    """evaluate.run on a trained model: every read of X (h5py) holds at most one line, and
    every rows request of the reader lies in one line; the whole-table read the step made
    before (data.read_cells) fails the same bound. Its output equals evaluate_seed's on
    the table held in memory."""
    adata, _ = tiny_cells
    model = ModelConfig(hidden=16, layers=1, heads=2, intermediate=32, cell_set_len=8)
    train = TrainConfig(steps=5, batch_sets=4, log_every=5)
    out = train_variant(adata, Variant(encoder="hvg"), model, train, seed=0)
    ckpt = str(tmp_path / "hvg.pt")
    torch.save(out["checkpoint"], ckpt)
    path = write_table(adata, tmp_path / "cells.h5ad", fmt)
    cfg = EvalConfig(n_sentences=2, de_metrics=False)
    expected = evaluate_seed(read_cells(path), {"hvg": ckpt}, cfg, seed=0)

    line_of = adata.obs["celltype_name"].astype(str).to_numpy()
    requests, read_rows = [], lines.read_rows

    def recorded(table, rows, **kw):
        requests.append(set(line_of[np.asarray(rows)]))
        return read_rows(table, rows, **kw)

    monkeypatch.setattr(lines, "read_rows", recorded)
    reads = x_reads(monkeypatch)
    run(str(path), {"hvg": ckpt}, cfg, seed=0, out=str(tmp_path / "eval.json"), device="cpu")
    bound = per_line_bound(adata, fmt)
    assert reads and max(n for _, n in reads) <= bound < sum(n for _, n in reads)
    assert requests and all(len(touched) == 1 for touched in requests)
    got = json.loads((tmp_path / "eval.json").read_text())
    assert got["pairs"] == json.loads(json.dumps(expected["pairs"]))
    assert got["audit"] == json.loads(json.dumps(expected["audit"]))

    reads.clear()  # the old step began with the whole table: the bound catches it
    read_cells(path)
    assert max(n for _, n in reads) > bound


def test_read_rows_in_memory_equals_indexing(tiny_cells):
    adata, _ = tiny_cells
    rows = np.array([5, 3, 700, 4, 4, 11, 9, 9, 20, 21, 22])  # repeats, gaps, whole blocks
    for x in (adata.X, sparse.csr_matrix(adata.X)):
        table = ad.AnnData(x, obs=adata.obs, var=adata.var)
        for block in (1, 2, 3, 10_000):
            got = lines.read_rows(table, rows, block=block)
            np.testing.assert_array_equal(got, np.asarray(adata.X)[rows])
