"""The estimator study's driver (repro.plsa.study's ``main``, ``run``, ``one_repetition`` and
``_solver_summary``) by value: the config ``main`` reads from the workflow config, the file
``run`` writes and the mean errors it logs, a repetition's row recomputed from its own
draws (pair shares counted edge by edge, estimators called directly), run times read from a
fake clock, and the solver summaries of hand-made solver records."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import yaml
from sklearn.linear_model import LogisticRegression

from repro.plsa import calibration, em, estimators, study
from repro.plsa.csbm import sample_csbm, shift_setting


def test_solver_summary_of_a_qp_record_keeps_status_and_kkt_only():
    info = {"status": "optimal_inaccurate", "kkt_residual": 3e-9, "iterations": 12}
    assert study._solver_summary(info) == {
        "status": "optimal_inaccurate",
        "kkt_residual": 3e-9,
    }
    assert study._solver_summary({}) == {}


@pytest.mark.parametrize(
    "trace, monotone",
    [
        ([-3.0, -2.0, -1.5, -1.5], True),  # rising, then flat
        ([0.0, -1e-12], True),  # a fall of 1e-12 is rounding
        ([0.0, -2e-12], False),
        ([-3.0, -2.0, -2.5, -1.0], False),
    ],
)
def test_solver_summary_of_an_em_record(trace, monotone):
    info = {"loglik_trace": trace, "converged": False, "iterations": 7}
    assert study._solver_summary(info) == {
        "converged": False,
        "iterations": 7,
        "monotone": monotone,
    }


class _Clock:
    """perf_counter that advances one second per reading: every timed block lasts 1 s."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def _shares(graph, k=3):
    counts = np.zeros((k, k))
    for u, v in graph.edge_index.T:
        counts[graph.y[u], graph.y[v]] += 1
    return counts / counts.sum()


def test_one_repetition_row_against_its_own_draws(monkeypatch):
    """Seed 11, 240 nodes, degree 6, ridge 2.5, 40 % held out: the row's graph size,
    accuracy and every estimator's L1 error recomputed from the same draws; the moment
    estimators' run time includes the confusion matrix's (1 s + 1 s on the fake clock)."""
    cfg = study.EstimatorStudyConfig(avg_degree=6.0, ridge=2.5, calibration_fraction=0.4)
    monkeypatch.setattr(study, "time", _Clock())
    row = study.one_repetition("gss", 0.8, 240, 11, cfg)

    rng = np.random.default_rng(11)
    source_spec, target_spec = shift_setting("gss", n=240, sigma=0.8, avg_degree=6.0)
    source, target = sample_csbm(source_spec, rng=rng), sample_csbm(target_spec, rng=rng)
    probs, temperature, report = study._calibrated_probabilities(source, target, 0.4, rng)
    p_target = probs["target"]
    pi_target, pi_source = _shares(target), _shares(source)
    prior = np.array([np.sum(source.y == c) for c in range(3)]) / len(source.y)
    confusion = estimators.pair_confusion(probs["source"], source.y, source.edge_index, 3)
    estimates = {
        "hard_label": estimators.hard_label_estimate(p_target, target.edge_index, 3),
        "moment_matching": estimators.moment_matching_estimate(
            p_target, target.edge_index, confusion, pi_source, lam=0.0
        )[0],
        "moment_matching_ridge": estimators.moment_matching_estimate(
            p_target, target.edge_index, confusion, pi_source, lam=2.5
        )[0],
        "plsa": em.plsa_estimate(p_target, target.edge_index, prior)[0],
        "source": pi_source,
    }
    assert {k: row[k] for k in ("shift", "sigma", "n", "seed")} == {
        "shift": "gss",
        "sigma": 0.8,
        "n": 240,
        "seed": 11,
    }
    assert row["edges"] == target.edge_index.shape[1]
    assert row["temperature"] == temperature
    assert row["accuracy"] == np.mean(p_target.argmax(axis=1) == target.y)
    assert {k: row[k] for k in report} == report
    for name, pi_hat in estimates.items():
        assert row["error"][name] == pytest.approx(np.abs(pi_hat - pi_target).sum(), rel=1e-9)
    assert row["error"]["moment_matching"] != row["error"]["moment_matching_ridge"]
    assert row["seconds"] == {
        "hard_label": 1.0,
        "moment_matching": 2.0,
        "moment_matching_ridge": 2.0,
        "plsa": 1.0,
    }
    assert set(row["solver"]["moment_matching"]) == {"status", "kkt_residual"}
    assert set(row["solver"]["plsa"]) == {"converged", "iterations", "monotone"}
    assert row["solver"]["hard_label"] == {}


def test_calibrated_probabilities_are_the_temperature_scaled_softmax():
    """Fit on 70 % of the source nodes (the permutation's tail), temperature on the held
    30 %, then exp(z / T) / Σ exp(z / T) of every node's logits z, written out."""
    rng = np.random.default_rng(5)
    source, target = (sample_csbm(s, rng=rng) for s in shift_setting("gss", n=300, sigma=0.8))
    probs, temperature, _ = study._calibrated_probabilities(
        source, target, 0.3, np.random.default_rng(9)
    )
    order = np.random.default_rng(9).permutation(300)
    held, fit = order[:90], order[90:]
    model = LogisticRegression(max_iter=1000).fit(source.x[fit], source.y[fit])
    logits = model.decision_function(source.x[held])
    assert temperature == calibration.fit_temperature(logits, source.y[held])
    assert abs(temperature - 1.0) > 1e-3  # the scaling shows
    for name, graph in (("source", source), ("target", target)):
        z = model.decision_function(graph.x).astype(float) / temperature  # float32 features
        expected = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(probs[name], expected, rtol=1e-9)


def _config(tmp_path, section: dict) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"papers": {"plsa": section}}))
    return str(path)


def test_main_reads_the_named_study_section_into_the_config(tmp_path, monkeypatch):
    """The named section's lists become the config's tuples, its other keys stay as they
    are, the other study's section is not read; an absent section runs the defaults."""
    seen = []
    monkeypatch.setattr(study, "run", lambda cfg, output: seen.append((cfg, output)))
    config = _config(
        tmp_path,
        {
            "estimator_study": {"shifts": ["css"], "n_nodes": [50, 70], "repetitions": 2},
            "shift_study": {"sigmas": [0.3], "first_seed": 9},
        },
    )
    assert study.main(["--config", config, "shift_study", "out.json"]) == 0
    assert study.main(["--config", config, "estimator_study", "other.json"]) == 0
    empty = _config(tmp_path, {"end_to_end": {}})
    assert study.main(["--config", empty, "estimator_study", "x.json"]) == 0
    with pytest.raises(SystemExit):  # a misspelt study is refused, not run with defaults
        study.main(["--config", config, "estimator-study", "y.json"])
    assert seen == [
        (study.EstimatorStudyConfig(sigmas=(0.3,), first_seed=9), "out.json"),
        (
            study.EstimatorStudyConfig(shifts=("css",), n_nodes=(50, 70), repetitions=2),
            "other.json",
        ),
        (study.EstimatorStudyConfig(), "x.json"),
    ]


def test_main_writes_the_study_and_logs_mean_errors(tmp_path, caplog):
    """A tiny study end to end through ``main``: the written rows are the seeds and sizes
    asked for, the slopes are numpy's least squares over the written rows, the provenance
    keeps the config, and the log gives each size's mean error over its repetitions."""
    config = _config(
        tmp_path,
        {
            "estimator_study": {
                "sigmas": [0.8],
                "n_nodes": [120, 240],
                "repetitions": 2,
                "first_seed": 4,
            }
        },
    )
    output = tmp_path / "study.json"
    with caplog.at_level(logging.INFO, logger="repro.plsa.study"):
        assert study.main(["--config", config, "estimator_study", str(output)]) == 0
    written = json.loads(output.read_text())
    rows = written["rows"]
    assert [(r["n"], r["seed"]) for r in rows] == [(120, 4), (120, 5), (240, 4), (240, 5)]
    x = np.log([r["edges"] for r in rows])
    for name in study.ESTIMATORS:
        reference = np.polyfit(x, np.log([r["error"][name] for r in rows]), 1)[0]
        assert written["slopes"]["gss/0.8"][name] == pytest.approx(reference, rel=1e-9)
    assert written["provenance"]["config"]["n_nodes"] == [120, 240]
    assert written["provenance"]["config"]["first_seed"] == 4
    logged = [r.getMessage() for r in caplog.records if r.name == "repro.plsa.study"]
    expected = []
    for n, pair in ((120, rows[:2]), (240, rows[2:])):
        means = ", ".join(
            f"{e} {(pair[0]['error'][e] + pair[1]['error'][e]) / 2:.3f}" for e in study.ESTIMATORS
        )
        expected.append(f"gss sigma 0.80 n {n}: {means}")
    assert logged == expected
