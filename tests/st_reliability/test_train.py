"""Training State's model on the simulator: the loss falls, checkpoints round-trip, the C4
pools remove what they say."""

import dataclasses

import numpy as np
import pytest
import torch

from repro.st_reliability.data import CONTROL, c4_probes, pair_table
from repro.st_reliability.encoders import AEConfig, PCAEncoder, load_encoder
from repro.st_reliability.model import ModelConfig
from repro.st_reliability.predict import load, predict_line
from repro.st_reliability.sentences import CellIndex, basal_sentences
from repro.st_reliability.train import TrainConfig, Variant, train_variant, training_pairs

MODEL = ModelConfig(hidden=16, layers=1, heads=2, intermediate=32, cell_set_len=8)
TRAIN = TrainConfig(
    steps=60, batch_sets=8, lr=3e-3, latent_dim=8, log_every=30, ae=AEConfig(steps=50, hidden=16)
)


def test_training_lowers_energy_loss_and_checkpoint_round_trips(tiny_cells, tmp_path):
    adata, _ = tiny_cells
    out = train_variant(adata, Variant(encoder="hvg"), MODEL, TRAIN, seed=0)
    losses = out["record"]["losses"]
    assert np.mean(losses[-10:]) < 0.8 * np.mean(losses[:10])
    path = tmp_path / "hvg.pt"
    torch.save(out["checkpoint"], path)
    trained, untrained = load(str(path)), load(str(path), untrained=True)
    index = CellIndex.build(adata, trained.encoder.encode(adata.X))
    basal = basal_sentences(index, n_sentences=2, set_len=8, seed=0)["line0"]
    perts = index.vocabulary[1:3]
    cells, deltas, _ = predict_line(trained, index, basal, perts, ceiling=float(adata.X.max()))
    again, _, _ = predict_line(load(str(path)), index, basal, perts, ceiling=float(adata.X.max()))
    np.testing.assert_array_equal(cells[perts[0]], again[perts[0]])  # deterministic, same weights
    assert set(cells) == {CONTROL, *perts} and cells[CONTROL].shape == (16, adata.n_vars)
    np.testing.assert_allclose(
        deltas[0], cells[perts[0]].mean(0) - cells[CONTROL].mean(0), atol=1e-6
    )
    _, init_deltas, _ = predict_line(untrained, index, basal, perts, ceiling=float(adata.X.max()))
    assert not np.allclose(init_deltas, deltas)


def test_foreach_adam_equals_the_loop_adam_bit_for_bit(tiny_cells, monkeypatch):
    """train_variant's multi-tensor Adam gives the per-parameter loop's weights exactly."""
    adata, _ = tiny_cells
    cfg = dataclasses.replace(TRAIN, steps=15)
    out = train_variant(adata, Variant(), MODEL, cfg, seed=4)["checkpoint"]
    fast, init = out["model"], out["init"]
    adam = torch.optim.Adam
    monkeypatch.setattr(torch.optim, "Adam", lambda *a, **k: adam(*a, **{**k, "foreach": False}))
    loop = train_variant(adata, Variant(), MODEL, cfg, seed=4)["checkpoint"]["model"]
    assert all(torch.equal(fast[k], loop[k]) for k in loop)
    assert not all(torch.equal(fast[k], init[k]) for k in init)  # the steps moved the weights


@pytest.mark.parametrize("encoder", ["pca", "ae"])
def test_latent_encoders_train_and_decode(tiny_cells, encoder):
    adata, _ = tiny_cells
    cfg = dataclasses.replace(TRAIN, steps=5, ae=AEConfig(steps=400, hidden=32))
    out = train_variant(adata, Variant(encoder=encoder), MODEL, cfg, seed=1)
    enc = load_encoder(out["checkpoint"]["encoder"])
    assert enc.dim == 8 and not enc.gene_space
    x = adata.X[:50]
    recon = enc.decode(torch.as_tensor(enc.encode(x))).detach().numpy()
    # 8 latent dims of 60 genes keep the cell mean structure: better than the mean cell
    assert ((recon - x) ** 2).mean() < ((x - adata.X.mean(0)) ** 2).mean()


def test_pca_is_exact_on_low_rank_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 10)) + 5
    enc = PCAEncoder.fit(x, 3)
    np.testing.assert_allclose(enc.decode(torch.as_tensor(enc.encode(x))).numpy(), x, atol=1e-4)


def test_c4_pools(tiny_cells):
    adata, _ = tiny_cells
    split = adata.uns["split"]
    full, _ = training_pairs(adata, "full", 0.5, seed=0)
    pairs = pair_table(adata)
    for family, line in zip(split["c4_families"], split["c4_lines"], strict=True):
        removed, n_removed = training_pairs(adata, "family_removed", 0.5, seed=0)
        fam_of = pairs["family"].to_dict()
        gone = set(full) - set(removed)
        assert all(fam_of[p] in split["c4_families"] for p in gone)
        assert not any(c == line and fam_of[(c, p)] == family for c, p in removed)
        assert any(
            c != line and fam_of[(c, p)] == family for c, p in removed
        )  # other lines keep it
        matched, n_matched = training_pairs(adata, "size_matched", 0.5, seed=0)
        assert n_matched == n_removed and len(matched) == len(removed)
        assert all(fam_of[(c, p)] != family or c != line for c, p in set(full) - set(matched))
        shrunk, n_shrunk = training_pairs(adata, "pool_shrunk", 0.5, seed=0)
        kept_mates = [p for p in shrunk if p[0] == line and fam_of[p] == family]
        assert len(kept_mates) == sum(1 for p in full if p[0] == line and fam_of[p] == family)
    assert len(c4_probes(pairs, split)) > 0
    with pytest.raises(ValueError, match="unknown pool"):
        training_pairs(adata, "bogus", 0.5, seed=0)


def test_shuffled_labels_null_learns_no_perturbation_identity(tiny_cells):
    adata, _ = tiny_cells
    cfg = dataclasses.replace(TRAIN, steps=80)
    true = train_variant(adata, Variant(), MODEL, cfg, seed=2)["record"]["losses"]
    shuffled = train_variant(adata, Variant(labels="shuffled"), MODEL, cfg, seed=2)["record"][
        "losses"
    ]
    assert np.mean(true[-20:]) < np.mean(shuffled[-20:])


def test_c4_controls_against_a_naive_reference(tiny_cells):
    """C4's control predictors from the true Δ: the family mean of the pool (the pool mean
    when the design removed the family) and the pool mean, scored on the C4 probes."""
    from repro.st_reliability.data import split_info, true_deltas
    from repro.st_reliability.summarize import c4_controls

    adata, _ = tiny_cells
    deltas, pairs = true_deltas(adata), pair_table(adata)
    out = c4_controls(deltas, pairs, adata, [0, 1], 0.5)
    probes = c4_probes(pairs, split_info(adata))
    for name in ("family_mean", "other_mean"):
        for k, seed in enumerate((0, 1)):
            for pool in ("full", "family_removed", "size_matched", "pool_shrunk"):
                kept = set(training_pairs(adata, pool, 0.5, seed)[0])
                scores = []
                for (line, pert), row in probes.iterrows():
                    pool_rows = [(c, p) for c, p in kept if c == line]
                    mates = [cp for cp in pool_rows if pairs.loc[cp, "family"] == row["family"]]
                    others = [cp for cp in pool_rows if cp not in mates]
                    use = (mates or pool_rows) if name == "family_mean" else others
                    pred = np.mean([deltas.loc[cp].to_numpy() for cp in use], axis=0)
                    scores.append(np.corrcoef(pred, deltas.loc[(line, pert)].to_numpy())[0, 1])
                assert out[name]["mean_quality"][pool][k] == pytest.approx(np.mean(scores))
    # family identity decides the family-mean predictor's quality; the other families' mean
    # never reads it (its drops come only from which other pairs a design removes)
    assert min(out["family_mean"]["family_drop"]) > 0.05
    assert max(out["other_mean"]["family_drop"]) < 0.05
