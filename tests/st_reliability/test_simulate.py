"""The simulator plants what the brief says, and the data recover it."""

import dataclasses

import numpy as np
import pytest

from repro.st_reliability.data import CONTROL, assign_split, c4_probes, pair_table, true_deltas
from repro.st_reliability.simulate import SimConfig, gene_names, simulate, simulate_setting
from tests.st_reliability.conftest import TINY


def test_planted_delta_recovered_by_differencing_means():
    # a high baseline keeps every cell off the clip at 0, so the means are exactly linear
    cfg = dataclasses.replace(TINY, cells_per_pert=400, n_control=800, baseline=10.0)
    adata, planted = simulate(cfg, seed=0)
    deltas = true_deltas(adata)
    assert (adata.X == 0).sum() == 0
    for c, line in enumerate(sorted(adata.obs["celltype_name"].unique())):
        names = [f"KD_{adata.var_names[t]}" for t in planted.targets]
        got = deltas.loc[line].loc[names].to_numpy()
        # noise sd 0.35 (+0.4 phase on cycling genes): SE of a mean difference
        se = np.sqrt((0.35**2 + 0.4**2) * (1 / 400 + 1 / 800))
        assert np.abs(got - planted.delta[c]).max() < 5 * se


def test_stress_program_in_delta_only_with_eta():
    cfg = dataclasses.replace(TINY, eta=0.0)
    _, planted = simulate(cfg, seed=1)
    _, strong = simulate(dataclasses.replace(cfg, eta=2.0), seed=1)
    stress = strong.stress
    # η adds κ_c·min(a, 2)·η·stress and nothing else
    diff = strong.delta - planted.delta
    for c, gain in enumerate(cfg.stress_gains):
        coef = diff[c] @ stress / (stress @ stress)
        np.testing.assert_allclose(diff[c], coef[:, None] * stress[None, :], atol=1e-10)
        assert np.all(coef > 0) and np.all(coef <= gain * 2 * 2.0 + 1e-9)


def test_generator_self_check_passes_strong_and_fails_negative():
    cfg = SimConfig()
    _, _, strong = simulate_setting(cfg, 0, threshold=0.8, eta_step=0.25, eta_max=4.0)
    assert strong["passed"] and min(strong["cosines"].values()) >= 0.8
    assert strong["eta_used"] >= cfg.eta and strong["tried"][0]["eta"] == cfg.eta
    _, _, negative = simulate_setting(
        dataclasses.replace(cfg, eta=0.0), 0, threshold=0.8, eta_step=0.25, eta_max=4.0
    )
    assert not negative["passed"] and max(negative["cosines"].values()) < 0.5
    assert len(negative["tried"]) == 1  # η = 0 is never raised


def test_fewshot_split(tiny_cells):
    adata, _ = tiny_cells
    pairs = pair_table(adata)
    assert set(pairs["split"]) == {"train", "fewshot"}
    for _pert, rows in pairs.groupby(level=1):
        assert "train" in set(rows["split"])  # held out in a line, always seen in another
    share = (pairs["split"] == "fewshot").groupby(level=0).mean()
    assert np.all(share > 0.15) and np.all(share < 0.45)
    assert set(adata.obs.loc[adata.obs["pert_name"] == CONTROL, "split"]) == {"control"}
    split = adata.uns["split"]
    assert len(split["c4_families"]) == 2 and split["c4_lines"] == ["line0", "line1"]
    probes = c4_probes(pairs, split)
    assert len(probes) > 0 and set(probes["split"]) == {"fewshot"}
    for (line, _p), row in probes.iterrows():
        assert row["family"] == split["c4_families"][split["c4_lines"].index(line)]


def test_split_rejects_a_holdout_that_leaves_nothing_seen():
    adata, _ = simulate(TINY, seed=0)
    with pytest.raises(ValueError, match="held out in every line"):
        assign_split(adata, holdout_fraction=0.9, c4_families=0, seed=0)


def test_novelty_split_holds_out_whole_families_and_saves_rewiring():
    cfg = dataclasses.replace(TINY, n_families=5, n_lines=3, stress_gains=(1.0, 0.7, 1.2))
    adata, planted = simulate(cfg, seed=4)
    split = assign_split(adata, holdout_fraction=0.3, c4_families=2, novel_families=1, seed=4)
    pairs = pair_table(adata)
    assert len(split["novel_families"]) == 3 and split["novel_lines"] == ["line0", "line1", "line2"]
    assert not set(split["novel_families"]) & set(split["c4_families"])
    for line, family in zip(split["novel_lines"], split["novel_families"], strict=True):
        in_line = pairs.loc[line]
        members = in_line[in_line["family"] == family]
        assert set(members["split"]) == {"novel"}  # the whole family, no member trained there
        assert set(in_line.loc[in_line["split"] == "novel", "family"]) == {family}
    for _pert, rows in pairs.groupby(level=1):
        assert "train" in set(rows["split"])  # still seen in another line
    # the rewiring flag is the planted one: the line's program is another family's
    for c in range(cfg.n_lines):
        flags = pairs.loc[f"line{c}", "rewired"]
        names = [f"KD_{gene_names(cfg.n_genes)[t]}" for t in planted.targets]
        expected = planted.used_family[c] != planted.family
        assert [flags[n] == "True" for n in names] == list(expected)
    assert 0 < (pairs["rewired"] == "True").mean() < 0.4
