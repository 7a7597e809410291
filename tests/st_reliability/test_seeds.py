"""Every seed key of papers.st_reliability reaches what it seeds (issue 34 §4): changing it
changes the result, and the same seed gives the same result. The coverage regime's and the
planted control's seeds are tested beside their steps (test_coverage, test_planted); the
list of keys and their tests is tests/common/test_seed_keys.py."""

import dataclasses

import numpy as np
import pandas as pd
import torch

from repro.st_reliability.analysis import AnalysisConfig, rho_tables
from repro.st_reliability.audit_summary import gene_maps
from repro.st_reliability.data import assign_split
from repro.st_reliability.simulate import simulate
from repro.st_reliability.swap_control import SwapControlConfig, planted_model
from repro.st_reliability.train import Variant, train_variant
from tests.st_reliability.conftest import TINY
from tests.st_reliability.test_swap_control import ARCH
from tests.st_reliability.test_train import MODEL, TRAIN


def frame(n_groups=3, n=30, seeds=(0, 1)):
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for g in range(n_groups):
            for p in range(n):
                q = rng.normal()
                rows.append(
                    {
                        "model": f"m{g}",
                        "line": "l0",
                        "pert": f"p{p}",
                        "seed": seed,
                        "pearson_delta": q,
                        "group": f"m{g}|l0",
                        **{
                            k: abs(rng.normal()) + 0.1
                            for k in (
                                "nn_l2",
                                "nn_cosine",
                                "oracle_l2",
                                "oracle_cosine",
                                "magnitude",
                                "nn_l2_per_magnitude",
                                "random",
                                "true_magnitude",
                                "scale_l2",
                                "scale_cosine",
                                "scale_magnitude",
                            )
                        },
                    }
                )
    return pd.DataFrame(rows)


def test_bootstrap_seed_changes_the_intervals_only():
    df = frame()
    a = rho_tables(df, AnalysisConfig(n_boot=100, bootstrap_seed=0))
    b = rho_tables(df, AnalysisConfig(n_boot=100, bootstrap_seed=1))
    ra, rb = a["median_group"]["nn_l2"], b["median_group"]["nn_l2"]
    assert ra["rho"] == rb["rho"]  # the point does not depend on the draws
    assert (ra["low"], ra["high"]) != (rb["low"], rb["high"])


def test_control_seed_changes_the_permuted_programme_control():
    programs = np.array(["cycling"] * 5 + ["p53"] * 5 + ["none"] * 30)
    rng = np.random.default_rng(1)
    line = {
        key: rng.normal(size=40).tolist()
        for key in ("gene_map", "regression_map", "gene_map_attention", "gene_map_residual")
    }
    line["enrichment"] = {}
    evals = [{"audit": {"hvg": {"lines": {"line0": line, "line1": line}}}}]
    key = "median_abs_cos_shuffled_program_regression_map_per_seed"
    a, b = gene_maps(evals, programs, ["hvg"], 0), gene_maps(evals, programs, ["hvg"], 1)
    assert a[key] != b[key]
    assert a["median_abs_cos_stress_regression_map"] == b["median_abs_cos_stress_regression_map"]


def test_model_seed_changes_the_trained_model(tiny_cells):
    """papers.st_reliability.seeds: a model's initialisation and its batches."""
    adata, _ = tiny_cells
    steps = dataclasses.replace(TRAIN, steps=2)  # the first batch and init are enough

    def weights(seed):
        out = train_variant(adata, Variant(encoder="hvg"), MODEL, steps, seed=seed)
        return out["checkpoint"]["model"]

    first, again, other = weights(0), weights(0), weights(1000)
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)


def test_simulator_seed_changes_the_cells():
    (first, _), (again, _), (other, _) = (simulate(TINY, seed=s) for s in (0, 0, 1000))
    np.testing.assert_array_equal(first.X, again.X)
    assert first.X.shape == other.X.shape and not np.array_equal(first.X, other.X)


def test_split_seed_changes_the_held_out_perturbations():
    """datasets.<name>.seed of the real lines: the few-shot split (data.assign_split)."""
    adata, _ = simulate(TINY, seed=3)

    def held_out(seed):
        cells = adata.copy()
        assign_split(cells, holdout_fraction=0.3, c4_families=2, seed=seed)
        return cells.obs["split"].astype(str).to_numpy()

    assert np.array_equal(held_out(0), held_out(0))
    assert not np.array_equal(held_out(0), held_out(1000))


def test_swap_control_seed_changes_the_planted_model():
    cfg = SwapControlConfig(n_perts=10, n_control=32, doses=(0.0, 2.0))

    def weights(seed):
        return planted_model(ARCH, cfg, kind="positive", beta=cfg.beta, seed=seed).state_dict()

    first, again, other = weights(0), weights(0), weights(1000)
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not all(torch.equal(first[k], other[k]) for k in first)
