"""Encoder se600m: the ST model reads per-cell SE embeddings (se_embed's files, looked up by
cell id) and State's gene decoder, fitted on the training cells, maps its output to genes."""

import dataclasses
import json

import numpy as np
import pytest
import torch

from repro.st_reliability.data import CONTROL
from repro.st_reliability.encoders import encode_cells
from repro.st_reliability.evaluate import EvalConfig, evaluate_seed
from repro.st_reliability.model import ModelConfig
from repro.st_reliability.predict import load, predict_line
from repro.st_reliability.se_space import (
    CellEmbeddings,
    SEDecoder,
    SEDecoderConfig,
    cell_ids_digest,
)
from repro.st_reliability.sentences import CellIndex, basal_sentences
from repro.st_reliability.train import TrainConfig, Variant, run, train_variant

MODEL = ModelConfig(hidden=16, layers=1, heads=2, intermediate=32, cell_set_len=8)
TRAIN = TrainConfig(steps=30, batch_sets=8, lr=3e-3, log_every=30)
DECODER = SEDecoderConfig(hidden=(32,), dropout=0.0, steps=300, batch_size=64, lr=3e-3)
DIM = 12


def se_files(adata, tmp_path, *, ids=None, seed=0):
    """Random SE embeddings in se_embed's format (.npy in the table's row order + record);
    a linear image of the genes plus noise, so a decoder can learn them back."""
    rng = np.random.default_rng(seed)
    x = np.asarray(adata.X)
    z = x @ rng.normal(size=(x.shape[1], DIM)) / np.sqrt(x.shape[1])
    z = (z + 0.01 * rng.normal(size=z.shape)).astype(np.float32)
    ids = adata.obs_names if ids is None else ids
    npy, record = tmp_path / "se600m.npy", tmp_path / "se600m.json"
    np.save(npy, z)
    record.write_text(json.dumps({"n_cells": len(ids), "cells_sha256": cell_ids_digest(ids)}))
    return str(npy), str(record), z


def test_lookup_is_by_cell_id_and_a_misaligned_file_raises(tiny_cells, tmp_path):
    adata, _ = tiny_cells
    npy, record, z = se_files(adata, tmp_path)
    table = CellEmbeddings.read(npy, record, adata.obs_names)
    rows = [7, 0, 3]
    np.testing.assert_array_equal(table.lookup(adata.obs_names[rows]), z[rows])
    np.testing.assert_array_equal(
        encode_cells(SEDecoder(DIM, 5, DECODER), adata[rows], table), z[rows]
    )
    with pytest.raises(KeyError, match="no SE embedding"):
        table.lookup(["not_a_cell"])
    # written for the same cells in another order (or other cells): refused
    npy, record, _ = se_files(adata, tmp_path, ids=adata.obs_names[::-1])
    with pytest.raises(ValueError, match="other cells or another order"):
        CellEmbeddings.read(npy, record, adata.obs_names)
    with pytest.raises(ValueError, match=r"for a cell table of 10 cells"):
        CellEmbeddings.read(npy, record, adata.obs_names[:10])


def test_se600m_model_trains_and_decodes_to_genes(tiny_cells, tmp_path):
    adata, _ = tiny_cells
    npy, record, z = se_files(adata, tmp_path)
    table = CellEmbeddings.read(npy, record, adata.obs_names)
    out = train_variant(
        adata, Variant(encoder="se600m"), MODEL, TRAIN, seed=0, embeddings=table, se_decoder=DECODER
    )
    assert out["checkpoint"]["encoder"]["kind"] == "se600m"
    path = tmp_path / "se.pt"
    torch.save(out["checkpoint"], path)
    loaded = load(str(path))  # weights_only
    assert loaded.encoder.dim == DIM and not loaded.encoder.gene_space
    # the decoder is a fitted regression SE → genes: better than the mean cell
    x = np.asarray(adata.X)
    recon = loaded.encoder.decode(torch.as_tensor(z)).numpy()
    assert recon.shape == x.shape
    assert ((recon - x) ** 2).mean() < 0.6 * ((x - x.mean(0)) ** 2).mean()
    # the model reads SE embeddings and predicts gene-space cells through the decoder
    index = CellIndex.build(adata, encode_cells(loaded.encoder, adata, table))
    basal = basal_sentences(index, n_sentences=2, set_len=8, seed=0)["line0"]
    perts = index.vocabulary[1:3]
    cells, deltas, _ = predict_line(loaded, index, basal, perts, ceiling=float(x.max()))
    assert cells[CONTROL].shape == (16, adata.n_vars) and deltas.shape == (2, adata.n_vars)
    # without the embeddings an se600m model cannot train
    with pytest.raises(ValueError, match="needs the data set's SE-600M embeddings"):
        train_variant(adata, Variant(encoder="se600m"), MODEL, TRAIN, seed=0)


def test_permuted_embedding_table_with_ids_trains_the_same_model(tiny_cells, tmp_path):
    """The lookup goes by cell id: the same embeddings stored in another row order (with
    their ids) give the same decoder and model, bit for bit."""
    adata, _ = tiny_cells
    npy, record, z = se_files(adata, tmp_path)
    table = CellEmbeddings.read(npy, record, adata.obs_names)
    perm = np.random.default_rng(1).permutation(adata.n_obs)
    shuffled = CellEmbeddings(adata.obs_names[perm], z[perm])
    cfg = dataclasses.replace(TRAIN, steps=5)
    kw = dict(seed=2, se_decoder=dataclasses.replace(DECODER, steps=20))
    a = train_variant(adata, Variant(encoder="se600m"), MODEL, cfg, embeddings=table, **kw)
    b = train_variant(adata, Variant(encoder="se600m"), MODEL, cfg, embeddings=shuffled, **kw)
    for part in ("model", "encoder"):
        sa, sb = a["checkpoint"][part], b["checkpoint"][part]
        sa, sb = sa.get("decoder", sa), sb.get("decoder", sb)
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
    # the same rows misread by position are other cells: another model
    wrong = CellEmbeddings(adata.obs_names, z[perm])
    c = train_variant(adata, Variant(encoder="se600m"), MODEL, cfg, embeddings=wrong, **kw)
    dec_a, dec_c = a["checkpoint"]["encoder"]["decoder"], c["checkpoint"]["encoder"]["decoder"]
    assert not all(torch.equal(dec_a[k], dec_c[k]) for k in dec_a)


def test_train_and_evaluate_steps_read_the_se_embed_files(tiny_cells, tmp_path):
    """run() of train and evaluate_seed on an se600m checkpoint: quality rows and the audit
    (gene maps through State's decoder) in gene space."""
    adata, _ = tiny_cells
    cells_path = tmp_path / "cells.h5ad"
    adata.write_h5ad(cells_path)
    npy, record, _ = se_files(adata, tmp_path)
    model_out, record_out = str(tmp_path / "se.pt"), str(tmp_path / "se.json")
    kw = dict(seed=0, model_out=model_out, record_out=record_out, device="cpu")
    with pytest.raises(ValueError, match="needs se_embeddings and se_record"):
        run(str(cells_path), Variant(encoder="se600m"), MODEL, TRAIN, **kw)
    run(str(cells_path), Variant(encoder="se600m"), MODEL, TRAIN, **kw, se_embeddings=npy,
        se_record=record, se_decoder=DECODER)  # fmt: skip
    provenance = json.loads(open(record_out).read())["provenance"]
    assert provenance["config"]["se_decoder"]["steps"] == DECODER.steps
    table = CellEmbeddings.read(npy, record, adata.obs_names)
    cfg = EvalConfig(n_sentences=2, de_metrics=False)
    result = evaluate_seed(adata, {"se": model_out}, cfg, seed=0, embeddings=table)
    rows = [r for r in result["pairs"] if r["model"] == "se"]
    assert rows and all(np.isfinite(r["pearson_delta"]) for r in rows)
    audit = result["audit"]["se"]["lines"]
    assert len(next(iter(audit.values()))["gene_map"]) == adata.n_vars
    with pytest.raises(ValueError, match="needs the data set's SE-600M embeddings"):
        evaluate_seed(adata, {"se": model_out}, cfg, seed=0)


DRIVER = """
import json, os, runpy, sys

class Named(dict):
    __getattr__ = dict.__getitem__

args = json.loads(sys.argv[1])
for script, sm in args:
    sys.path.insert(0, os.path.dirname(script))  # as Snakemake does
    sm = Named({k: Named(v) if isinstance(v, dict) else v for k, v in sm.items()})
    runpy.run_path(script, init_globals={"snakemake": sm}, run_name="__main__")
"""


def test_train_and_evaluate_scripts_pass_the_se_files_on(tiny_cells, tmp_path):
    """The rules' scripts, as Snakemake runs them (its object faked): the train job of an
    se600m model (spec with se_decoder, as st_reliability_part_models gives it) and the
    evaluate job read se_embed's files from their named inputs."""
    import subprocess
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[2] / "scripts"
    adata, _ = tiny_cells
    cells = str(tmp_path / "cells.h5ad")
    adata.write_h5ad(cells)
    npy, record, _ = se_files(adata, tmp_path)
    decoder = {"hidden": [16], "dropout": 0.0, "steps": 7, "batch_size": 32, "lr": 1e-3}
    inputs = {"cells": cells, "se_embeddings": npy, "se_record": record}
    common = {"wildcards": {"seed": "0"}, "threads": 1, "log": [str(tmp_path / "job.log")]}
    train = {
        **common,
        "rule": "st_reliability_train",
        "input": inputs,
        "output": {"models": str(tmp_path / "part0")},
        "params": {
            "models": {"se": {"encoder": "se600m", "se_decoder": decoder}},
            "architecture": dataclasses.asdict(MODEL),
            "training": {"steps": 3, "batch_sets": 4, "log_every": 3},
            "device": "cpu",
        },
    }
    evaluate = {
        **common,
        "rule": "st_reliability_evaluate",
        "input": inputs,
        "output": {"metrics": str(tmp_path / "seed0.json")},
        "params": {
            "checkpoints": {"se": str(tmp_path / "part0" / "se.pt")},
            "evaluation": {"n_sentences": 2, "de_metrics": False},
            "device": "cpu",
        },
    }
    runs = [[str(scripts / "st_reliability_train.py"), train]]
    runs.append([str(scripts / "st_reliability_evaluate.py"), evaluate])
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(runs)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ckpt = torch.load(tmp_path / "part0" / "se.pt", weights_only=True)
    assert ckpt["encoder"]["kind"] == "se600m" and ckpt["encoder"]["config"] == decoder
    metrics = json.loads((tmp_path / "seed0.json").read_text())
    assert metrics["provenance"]["config"]["se_embeddings"] == npy
    assert {r["model"] for r in metrics["pairs"]} == {"se"}
