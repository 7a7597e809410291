"""SE-600M encoder: a tiny random-weight release, embedded by our wrapper and by arc-state.

The release is written the way arc-state writes one (StateEmbeddingModel's own
``on_save_checkpoint`` adds the config and the protein table to a Lightning checkpoint dict;
``protein_embeddings.pt`` beside it), at d_model 8, 2 layers and 12 genes.
"""

import anndata as ad
import numpy as np
import pytest
import torch

from repro.st_reliability.se_encoder import SEEmbedder, SEFiles, release_files

GENES = [f"G{i}" for i in range(12)]
TOKEN_DIM, OUTPUT_DIM, DS_DIM = 16, 6, 10  # arc-state's dataset correction adds 10 dims


def tiny_config():
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "embeddings": {
                "current": "tiny",
                "tiny": {"all_embeddings": "unused.pt", "ds_emb_mapping": None,
                         "valid_genes_masks": None, "size": TOKEN_DIM, "num": len(GENES)},
            },
            "dataset": {
                "current": "tiny",
                "tiny": {"ds_type": "h5ad", "num_datasets": 2},
                "pad_length": 8, "pad_token_idx": 0, "cls_token_idx": 3, "P": 2, "N": 2, "S": 2,
            },
            "tokenizer": {"token_dim": TOKEN_DIM},
            "model": {"batch_size": 4, "emsize": 8, "d_hid": 16, "nhead": 2, "nlayers": 2,
                      "output_dim": OUTPUT_DIM, "rda": True, "counts": True,
                      "dataset_correction": True, "num_downsample": 1},
            "loss": {"name": "tabular"},
        }
    )  # fmt: skip


def write_release(folder, *, drop=None):
    from state.emb.nn.model import StateEmbeddingModel

    torch.manual_seed(0)
    table = {g: torch.randn(TOKEN_DIM) for g in GENES}
    model = StateEmbeddingModel(token_dim=TOKEN_DIM, d_model=8, nhead=2, d_hid=16, nlayers=2,
                                output_dim=OUTPUT_DIM, cfg=tiny_config())  # fmt: skip
    model.pe_embedding = torch.nn.Embedding.from_pretrained(torch.vstack(list(table.values())))
    model.protein_embeds = table
    state = model.state_dict()
    if drop:
        del state[drop]
    ckpt = {"state_dict": state, "hyper_parameters": dict(model.hparams),
            "pytorch-lightning_version": "2.6.6"}  # fmt: skip
    model.on_save_checkpoint(ckpt)  # arc-state's hook: cfg_yaml + protein_embeds_dict
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, folder / "tiny.ckpt")
    torch.save(table, folder / "protein_embeddings.pt")
    return release_files(str(folder), "tiny.ckpt")


def cells(n=10, seed=0, distinct=True):
    """Distinct top values: the sentence (top 7 genes) has no random choice in it."""
    rng = np.random.default_rng(seed)
    if distinct:
        row = np.r_[np.arange(1, 11) * 3.0, 0, 0]
    else:  # three expressed genes: the sentence is filled with random unexpressed genes
        row = np.r_[5.0, 9.0, 2.0, np.zeros(9)]
    x = np.stack([rng.permutation(row) for _ in range(n)]).astype(np.float32)
    adata = ad.AnnData(x)
    adata.var_names = GENES
    return adata


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("se") / "SE-tiny")


@pytest.fixture(scope="module")
def embedder(release):
    return SEEmbedder(release, device="cpu")


def upstream(release, adata, path, seed):
    """arc-state's own file path: Inference.load_model + encode_adata, as its CLI calls it."""
    from state.emb.inference import Inference

    adata.write_h5ad(path)
    inference = Inference(cfg=None, protein_embeds=torch.load(release.protein_embeddings))
    inference.load_model(release.checkpoint)
    torch.manual_seed(seed)
    return inference.encode_adata(str(path))


def test_equals_arc_state_encode_adata(release, embedder, tmp_path):
    adata = cells()
    ours = embedder.embed(adata, seed=4)
    ref = upstream(release, adata, tmp_path / "x.h5ad", seed=4)
    assert ours.shape == (10, OUTPUT_DIM + DS_DIM)
    np.testing.assert_array_equal(ours, ref)
    # the CLS part is L2-normalised by the model
    np.testing.assert_allclose(np.linalg.norm(ours[:, :OUTPUT_DIM], axis=1), 1.0, rtol=1e-5)


def test_deterministic_and_leaves_caller_rng(embedder):
    adata = cells(distinct=False)
    before = torch.get_rng_state()
    first = embedder.embed(adata, seed=1)
    assert torch.equal(before, torch.get_rng_state())
    np.testing.assert_array_equal(first, embedder.embed(adata, seed=1))
    # the sentence sampler is random here, so the seed matters: the test above is not vacuous
    assert not np.allclose(first, embedder.embed(adata, seed=2))


def test_gene_column_permutation_invariant(release, embedder, tmp_path):
    adata = cells()
    perm = np.random.default_rng(1).permutation(len(GENES))
    shuffled = adata[:, perm].copy()
    np.testing.assert_array_equal(embedder.embed(adata), embedder.embed(shuffled))
    # arc-state alone is not: its CLS token carries local gene 3's count
    a = upstream(release, adata, tmp_path / "a.h5ad", seed=0)
    b = upstream(release, shuffled, tmp_path / "b.h5ad", seed=0)
    assert not np.allclose(a, b)


def test_unknown_gene_dropped_as_arc_state_does(release, embedder, tmp_path):
    adata = cells()
    extra = ad.AnnData(np.c_[adata.X[:, :5], np.full((10, 1), 7.0), adata.X[:, 5:]])
    extra.var_names = [*GENES[:5], "NOT_A_GENE", *GENES[5:]]
    ours = embedder.embed(extra)
    np.testing.assert_array_equal(ours, embedder.embed(adata))
    # arc-state masks the unknown column inside its loader: equal up to float32 rounding
    ref = upstream(release, extra, tmp_path / "e.h5ad", seed=0)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_gene_column_and_bad_names(embedder):
    adata = cells()
    adata.var["symbol"] = list(adata.var_names)
    adata.var_names = [f"ENSG{i}" for i in range(len(GENES))]
    with pytest.raises(ValueError, match="none of the 12 genes"):
        embedder.embed(adata)
    np.testing.assert_array_equal(
        embedder.embed(adata, gene_column="symbol"), embedder.embed(cells())
    )
    adata.var["symbol"] = ["G0"] * len(GENES)
    with pytest.raises(ValueError, match="duplicate gene names"):
        embedder.embed(adata, gene_column="symbol")


def test_bad_release_files(release, tmp_path):
    with pytest.raises(FileNotFoundError, match="protein_embeddings not found"):
        SEEmbedder(
            SEFiles(checkpoint=release.checkpoint, protein_embeddings=str(tmp_path / "no.pt"))
        )
    broken = write_release(tmp_path / "broken", drop="transformer_encoder.layers.1.linear1.weight")
    with pytest.raises(ValueError, match="lacks 1 weights"):
        SEEmbedder(broken, device="cpu")
    torch.save({g: torch.randn(4) for g in GENES}, tmp_path / "narrow.pt")
    narrow = SEFiles(checkpoint=release.checkpoint, protein_embeddings=str(tmp_path / "narrow.pt"))
    with pytest.raises(ValueError, match="4 dims, the model reads 16"):
        SEEmbedder(narrow, device="cpu")


def test_embed_cells_of_a_prepared_data_set(release, embedder, tmp_path):
    """The full-scale step: raw lines with all genes, rows in cells.h5ad's (mixed) order."""
    import json

    import pandas as pd

    from repro.st_reliability.fullscale import LineSource
    from repro.st_reliability.se_embed import SEEmbedConfig, embed_cells

    raw, sources = {}, {}
    for k, name in enumerate(["k562", "rpe1"]):
        x = np.c_[cells(n=8, seed=k).X, np.full((8, 1), 2.0)]  # + a gene outside the table
        var = pd.DataFrame(
            {"gene_name": [*GENES, "NOT_A_GENE"]}, index=[f"E{i}" for i in range(13)]
        )
        obs = pd.DataFrame({"gene": ["non-targeting", "A"] * 4}, index=[f"c{i}" for i in range(8)])
        line = ad.AnnData(x.astype(np.float32), obs=obs, var=var)
        line.write_h5ad(tmp_path / f"{name}.h5ad")
        raw[name] = line
        sources[name] = LineSource(path=str(tmp_path / f"{name}.h5ad"))
    # prepare's table: a subset of the cells, lines interleaved, prefixed names
    kept = [("rpe1", 5), ("k562", 2), ("rpe1", 0), ("k562", 7), ("k562", 1)]
    prepared = ad.AnnData(np.zeros((len(kept), 2), dtype=np.float32))
    prepared.obs_names = [f"{n}:c{i}" for n, i in kept]
    prepared.obs["celltype_name"] = [n for n, _ in kept]
    prepared.write_h5ad(tmp_path / "cells.h5ad")
    out = tmp_path / "se.npy"
    cfg = SEEmbedConfig(seed=3, min_cells=1)
    record = str(tmp_path / "se.json")
    embed_cells(str(tmp_path / "cells.h5ad"), sources, release, cfg, embeddings_out=str(out),
                record_out=record, device="cpu")  # fmt: skip
    got = np.load(out)
    for name in sources:
        rows = [i for n, i in kept if n == name]
        line = ad.AnnData(raw[name].X[rows], var=pd.DataFrame(index=[*GENES, "NOT_A_GENE"]))
        mine = [j for j, (n, _) in enumerate(kept) if n == name]
        np.testing.assert_array_equal(got[mine], embedder.embed(line, seed=3))
    # what the ST models read (encoder se600m): looked up by cell id, checked against the table
    from repro.st_reliability.se_space import CellEmbeddings

    table = CellEmbeddings.read(str(out), record, prepared.obs_names)
    np.testing.assert_array_equal(table.lookup(["k562:c7", "rpe1:c5"]), got[[3, 0]])
    with pytest.raises(ValueError, match="other cells or another order"):
        CellEmbeddings.read(str(out), record, prepared.obs_names[::-1])
    record = json.loads(open(record).read())
    assert record["lines"]["k562"] == {"genes": 13, "in_protein_table": 12}


def test_weight_check_reads_legacy_checkpoints(tmp_path):
    """mmap needs torch's zip format; an old-format file is read whole and still checked."""
    from repro.st_reliability.se_encoder import _check_weights

    model, path = torch.nn.Linear(2, 2), tmp_path / "old.ckpt"
    torch.save({"state_dict": model.state_dict()}, path, _use_new_zipfile_serialization=False)
    _check_weights(model, str(path))
    torch.save({"state_dict": {"weight": model.weight}}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match=r"lacks 1 weights of the model: \['bias'\]"):
        _check_weights(model, str(path))
