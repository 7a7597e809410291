"""The cell table between rules: .h5ad round trip and clear errors on bad files."""

import stat

import numpy as np
import pandas as pd
import pytest

from repro.st_reliability.data import read_cells, write_h5ad


def test_h5ad_round_trip(tiny_cells, tmp_path):
    adata, _ = tiny_cells
    path = tmp_path / "cells.h5ad"
    write_h5ad(adata, path)
    back = read_cells(path)
    np.testing.assert_array_equal(back.X, adata.X)
    pd.testing.assert_frame_equal(back.obs, adata.obs)
    pd.testing.assert_frame_equal(back.var, adata.var)
    assert list(back.obs["split"].cat.categories) == ["control", "train", "fewshot", "novel"]
    assert list(back.uns["split"]["c4_families"]) == adata.uns["split"]["c4_families"]
    np.testing.assert_array_equal(back.varm["stress"], adata.varm["stress"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert [p.name for p in tmp_path.iterdir()] == ["cells.h5ad"]  # no temporary left


def test_read_cells_names_what_is_wrong(tiny_cells, tmp_path):
    adata, _ = tiny_cells
    bad = adata.copy()
    del bad.obs["celltype_name"]
    write_h5ad(bad, tmp_path / "a.h5ad")
    with pytest.raises(ValueError, match=r"a\.h5ad: obs lacks \['celltype_name'\]"):
        read_cells(tmp_path / "a.h5ad")
    neg = adata.copy()
    neg.X[0, 0] = -1.0
    write_h5ad(neg, tmp_path / "b.h5ad")
    with pytest.raises(ValueError, match="negative expression"):
        read_cells(tmp_path / "b.h5ad")
    (tmp_path / "c.h5ad").write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match=r"c\.h5ad: not a readable \.h5ad"):
        read_cells(tmp_path / "c.h5ad")
