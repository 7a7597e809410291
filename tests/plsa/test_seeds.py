"""Every seed that feeds a PLSA claim comes from the config, and changing it changes the
result: the estimator studies' ``first_seed``, the end-to-end ``seeds`` (graph draws and
runs), the claims' ``bootstrap.seed`` and ``registered_seeds`` (the list of keys and their
tests: tests/common/test_seed_keys.py). The planted estimators of the study
are checked against independent references."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from repro.plsa import study
from repro.plsa.csbm import class_counts, sample_csbm, shift_setting
from repro.plsa.prepare import CSBMDataConfig, load_pair, prepare_csbm
from tests.plsa.test_claims import CONFIG, documents, run


def _study(tmp_path, first_seed):
    cfg = study.EstimatorStudyConfig(
        sigmas=(0.8,), n_nodes=(120, 240), repetitions=2, first_seed=first_seed
    )
    return study.run(cfg, str(tmp_path / f"study_{first_seed}.json"))["rows"]


def test_first_seed_moves_every_repetition(tmp_path):
    base, shifted = _study(tmp_path, 0), _study(tmp_path, 1000)
    assert [r["seed"] for r in base] == [0, 1, 0, 1]
    assert [r["seed"] for r in shifted] == [1000, 1001, 1000, 1001]
    for a, b in zip(base, shifted, strict=True):
        assert a["error"] != b["error"]
    again = _study(tmp_path, 0)  # and the same seed gives the same rows
    assert [r["error"] for r in again] == [r["error"] for r in base]


def test_end_to_end_seeds_draw_other_graphs(tmp_path):
    graphs = {}
    for seed in (0, 1000):
        path = str(tmp_path / f"g{seed}.npz")
        prepare_csbm(CSBMDataConfig(shift="gss", n=90, sigma=0.8, seeds=(seed,)), path)
        graphs[seed] = load_pair(path, seed)
    assert not np.array_equal(graphs[0][0].x, graphs[1000][0].x)
    assert graphs[0][1].edge_index.shape != graphs[1000][1].edge_index.shape or not (
        np.array_equal(graphs[0][1].edge_index, graphs[1000][1].edge_index)
    )


def test_end_to_end_seed_moves_the_run():
    from repro.plsa.train import TrainConfig
    from repro.plsa.train import run as train

    rng = np.random.default_rng(0)
    source, target = (sample_csbm(s, rng=rng) for s in shift_setting("gss", n=80, sigma=0.8))
    results = [
        train(TrainConfig(method="erm", epochs=12, hidden=8, seed=seed), source, target)
        for seed in (0, 1000)
    ]
    assert results[0]["curves"]["source_val"] != results[1]["curves"]["source_val"]


def test_bootstrap_seed_and_registered_seeds_move_the_claim(tmp_path):
    rate, metrics = documents(0.05)
    noise = np.random.default_rng(0).lognormal(0, 0.2, len(rate["rows"]))
    for row, factor in zip(rate["rows"], noise, strict=True):  # slopes that vary by draw
        row["error"]["plsa"] *= factor
    spec = copy.deepcopy(CONFIG["claims"]["consistent_rate"])
    first = run(tmp_path, rate, metrics, specs={"c": spec}, checks={})["c"]
    spec["bootstrap"]["seed"] += 1000
    spec["registered_seeds"] = [s + 10 for s in spec["registered_seeds"]]
    second = run(tmp_path, rate, metrics, specs={"c": spec}, checks={})["c"]
    assert first.measured == second.measured  # the slope itself does not resample
    assert first.interval != second.interval
    assert first.at_registered_seeds["seeds"] == [0, 1, 2, 3, 4]
    assert second.at_registered_seeds["seeds"] == [10, 11, 12, 13, 14]


def test_planted_estimators_against_references():
    """population: L1 between the generator's expected π^T, counted by hand from the class
    counts (n_a (n_b − [a = b]) M_ab), and the graph's own π^T; source: L1 between the two
    graphs' pair shares, counted edge by edge."""
    cfg = study.EstimatorStudyConfig(n_nodes=(300,), sigmas=(0.8,), repetitions=1)
    row = study.one_repetition("gss", 0.8, 300, 7, cfg)
    rng = np.random.default_rng(7)  # the repetition's draws, in its order
    source_spec, target_spec = shift_setting("gss", n=300, sigma=0.8)
    source, target = sample_csbm(source_spec, rng=rng), sample_csbm(target_spec, rng=rng)

    def shares(graph):
        counts = np.zeros((3, 3))
        for u, v in graph.edge_index.T:
            counts[graph.y[u], graph.y[v]] += 1
        return counts / counts.sum()

    sizes = class_counts(300, target_spec.prior)
    expected = np.array(
        [
            [sizes[a] * (sizes[b] - (a == b)) * target_spec.block[a][b] for b in range(3)]
            for a in range(3)
        ]
    )
    expected /= expected.sum()
    pi_t = shares(target)
    assert row["error"]["population"] == pytest.approx(np.abs(expected - pi_t).sum(), rel=1e-12)
    assert row["error"]["source"] == pytest.approx(np.abs(shares(source) - pi_t).sum(), rel=1e-12)
    assert set(row["seconds"]) == set(study.ESTIMATORS) - set(study.PLANTED)
