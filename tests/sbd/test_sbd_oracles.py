"""The controls' oracles (the planted truth and its thinned copy) against dense arithmetic
and explicit cell sets; the noise study's oracle rows and the evaluation's planted-truth
entry; and a decomposition that does not reproduce its graph reported as a failed run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from repro.sbd import pipeline, study
from repro.sbd.factors import Decomposition
from repro.sbd.oracles import oracle_metrics, thinned, truth_decomposition
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.recovery import best_match
from tests.conftest import ROOT
from tests.sbd.test_sbd_cli import run_pipeline
from tests.sbd.test_sbd_recovery import _naive

TEST_CONFIG = ROOT / "config" / "test.yaml"
SMALL = PlantedConfig(m=60, n=50, blocks=5, side_min=5, side_max=15, negative_fraction=0.4,
                      deletion=0.1, background=0.02, seed=3)  # fmt: skip


def _dense_cf(A, truth) -> float:
    """nnz(A) / (Σ|u|+|v| + nnz(A − Σ s u vᵀ)) with dense arrays and a loop over blocks."""
    low_rank = np.zeros(A.shape, dtype=np.int64)
    for U, V, s in zip(truth["rows"], truth["cols"], truth["signs"], strict=True):
        low_rank[np.ix_(U, V)] += s
    residual = A.toarray() - low_rank
    entries = sum(len(U) + len(V) for U, V in zip(truth["rows"], truth["cols"], strict=True))
    return np.count_nonzero(A.toarray()) / (entries + np.count_nonzero(residual))


def test_the_truth_decomposition_is_exact_and_its_cf_the_dense_one():
    A, truth = plant(SMALL)
    dec = truth_decomposition(A, truth)
    assert (dec.to_sparse() != A).nnz == 0
    assert dec.compression_factor == pytest.approx(_dense_cf(A, truth), rel=1e-12)
    metrics = oracle_metrics(A, truth, truth)
    assert metrics["mean_best_jaccard"] == 1.0 and metrics["mismatched_cells"] == 0
    assert metrics["cf"] == pytest.approx(_dense_cf(A, truth), rel=1e-12)


@pytest.mark.parametrize("keep", [1.0, 0.6, 0.3])
def test_the_thinned_truth_against_explicit_cell_sets(keep):
    A, truth = plant(SMALL)
    found = thinned(truth, keep)
    scores = best_match(truth, found)
    np.testing.assert_allclose(scores, _naive(truth, found), rtol=0, atol=1e-12)
    own = [math.ceil(keep * len(U)) / len(U) for U in truth["rows"]]  # its own thinned copy
    assert np.all(scores >= np.asarray(own) - 1e-12)
    assert oracle_metrics(A, truth, found)["mismatched_cells"] == 0  # the residual absorbs it


def test_noise_oracles_rows_on_the_studys_graphs(tmp_path):
    cfg = yaml.safe_load(TEST_CONFIG.read_text())["papers"]["sbd"]["noise_study"]
    study.noise_oracles(cfg, tmp_path / "oracles.json")
    rows = json.loads((tmp_path / "oracles.json").read_text())["rows"]
    points = len(cfg["deletions"]) * len(cfg["backgrounds"]) * len(cfg["seeds"])
    assert len(rows) == points * len(cfg["oracles"])
    for row in rows:
        A, truth = plant(PlantedConfig(**cfg["graph"], deletion=row["deletion"],
                                       background=row["background"], seed=row["seed"]))  # fmt: skip
        if row["method"] == "planted_truth":
            assert row["mean_best_jaccard"] == 1.0
            assert row["cf"] == pytest.approx(_dense_cf(A, truth), rel=1e-12)
        else:
            found = thinned(truth, 1 - row["deletion"])
            assert row["mean_best_jaccard"] == pytest.approx(_naive(truth, found).mean())
        assert row["mismatched_cells"] == 0


def test_evaluation_reports_the_planted_truths_cf(tmp_path):
    """A planted data set's metrics carry the truth's CF beside the methods (a bundled one,
    without truth, does not: test_sbd_cli)."""
    metrics = run_pipeline(tmp_path, "planted")
    A, truth = pipeline.load_graph(tmp_path / "planted.npz")
    assert metrics["planted_truth"]["cf"] == pytest.approx(_dense_cf(A, truth), rel=1e-12)
    assert metrics["planted_truth"]["rank"] == len(truth["rows"])


def test_a_decomposition_that_misses_cells_is_a_failed_run(monkeypatch):
    """The study's row counts the cells the factors plus residual get wrong."""
    A, truth = plant(SMALL)

    def broken(A, cfg):  # the truth with its last factor dropped and the residual kept
        dec = truth_decomposition(A, truth)
        return Decomposition(A.shape, dec.rows[:-1], dec.cols[:-1], dec.signs[:-1],
                             dec.residual, source_nnz=A.nnz)  # fmt: skip

    monkeypatch.setattr(study, "decompose", broken)
    row = study._decompose(A, truth, {}, {"signed": True}, seed=0)
    last = len(truth["rows"][-1]) * len(truth["cols"][-1])
    assert 0 < row["mismatched_cells"] <= last
