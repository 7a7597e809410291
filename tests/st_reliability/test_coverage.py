"""The coverage regime's generator plants what it says (closed forms), and its split."""

import dataclasses

import numpy as np
import pytest

from repro.st_reliability.coverage import CoverageConfig, line_map, plant, simulate_coverage
from repro.st_reliability.data import pair_table, true_deltas
from repro.st_reliability.prepare import coverage_record

# 3 anchors, 4 levels per line, 3 perturbations per family, 2 lines: seconds
SMALL = CoverageConfig(
    n_genes=60,
    n_lines=2,
    n_control=80,
    cells_per_pert=24,
    anchor_families=3,
    levels=4,
    perts_per_family=3,
    family_genes=10,
)


def test_programmes_at_graded_similarity_and_one_norm():
    planted = plant(SMALL, np.random.default_rng(0))
    norms = np.linalg.norm(planted.programmes, axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-12)  # every programme one unit vector
    for f, t in planted.similarity.items():
        cos = planted.programmes[f] @ planted.programmes[planted.anchor_of[f]]
        assert cos == pytest.approx(np.sqrt(1 - t**2), abs=1e-12)  # √(1 − t²) by design
    levels = sorted(planted.similarity.values())
    assert levels == sorted([k / 3 for k in range(4)] * 2)  # every line gets every level


def test_magnitude_does_not_depend_on_similarity():
    # every response is scaled to a_p · norm: with one magnitude (sd 0) every ‖Δ‖ is the
    # norm exactly, whatever t, the idiosyncratic effects and the line map
    cfg = dataclasses.replace(SMALL, effect_logsd=0.0)
    planted = plant(cfg, np.random.default_rng(1))
    norms = np.linalg.norm(planted.delta, axis=2)
    np.testing.assert_allclose(norms, cfg.programme_norm, rtol=1e-12)


def test_line_map_is_sparse_and_keeps_the_norm_on_average():
    w = line_map(np.random.default_rng(5), 200, 4)
    assert ((w != 0).sum(0) == 4).all()  # four genes per column
    v = np.random.default_rng(6).normal(size=(500, 200))
    ratio = np.linalg.norm(v @ w.T, axis=1) / np.linalg.norm(v, axis=1)
    assert abs(ratio.mean() - 1) < 0.1


def test_line_maps_differ_between_lines_and_keep_the_programme():
    cfg = dataclasses.replace(SMALL, idio_sd=0.0, effect_logsd=0.0, line_specificity=1.0)
    planted = plant(cfg, np.random.default_rng(2))
    unit = planted.programmes[planted.family] * cfg.programme_norm
    for c in range(cfg.n_lines):
        # R_c(v) ∝ v + γ W v: the cosine with v is 1/√2 at γ = 1, up to W's own (random,
        # small) alignment with v
        along = np.einsum("pg,pg->p", planted.delta[c], unit) / (unit**2).sum(1)
        assert np.all(np.abs(along - 1 / np.sqrt(2)) < 0.35)
    cross = np.einsum("pg,pg->p", planted.delta[0], planted.delta[1]) / (
        np.linalg.norm(planted.delta[0], axis=1) * np.linalg.norm(planted.delta[1], axis=1)
    )
    assert np.median(cross) < 0.8  # the lines answer the same programme differently


def test_split_holds_each_graded_family_out_in_one_line_only():
    adata, planted = simulate_coverage(SMALL, seed=0)
    pairs = pair_table(adata)
    for f, line in planted.held_in.items():
        rows = pairs[pairs["family"] == f"family{f}"]
        held = rows[rows["split"] == "fewshot"].index.get_level_values(0)
        assert set(held) == {f"line{line}"}  # whole family, in its line
        assert len(held) == SMALL.perts_per_family
        trained = rows[rows["split"] == "train"].index.get_level_values(0)
        assert set(trained) == {f"line{c}" for c in range(SMALL.n_lines)} - {f"line{line}"}
    anchors = pairs[pairs["family"].isin([f"family{a}" for a in range(SMALL.anchor_families)])]
    assert set(anchors["split"]) == {"train"}
    t = adata.obs.groupby(["celltype_name", "pert_name"], observed=True)["similarity"].first()
    fewshot = pairs.index[pairs["split"] == "fewshot"]
    assert t.loc[fewshot].notna().all() and t.drop(fewshot).isna().all()


def test_data_recover_the_planted_responses():
    cfg = dataclasses.replace(SMALL, cells_per_pert=400, n_control=800, baseline=10.0)
    adata, planted = simulate_coverage(cfg, seed=4)
    assert (adata.X == 0).sum() == 0  # no clipping: the means are linear
    deltas = true_deltas(adata)
    se = np.sqrt((0.35**2 + 0.4**2) * (1 / 400 + 1 / 800))
    for c in range(cfg.n_lines):
        got = deltas.loc[f"line{c}"].loc[[f"P{p:03d}" for p in range(len(planted.family))]]
        assert np.abs(got.to_numpy() - planted.delta[c]).max() < 5 * se


def test_oracle_distance_grows_with_t_and_magnitude_does_not():
    """The generator's record (no model): the oracle NN distance of the true Δ ranks the
    held-out pairs by t in every line; ‖Δ‖ does not."""
    record = coverage_record(simulate_coverage(CoverageConfig(), seed=0)[0])
    for line in record.values():
        assert line["n_held_out"] == 48
        assert line["spearman_t_oracle_cosine"] > 0.8
        assert line["spearman_t_oracle_l2"] > 0.7
        assert abs(line["spearman_t_magnitude"]) < 0.35


def test_seed_changes_the_data():
    a, _ = simulate_coverage(SMALL, seed=0)
    b, _ = simulate_coverage(SMALL, seed=1)
    assert not np.array_equal(a.X, b.X)
