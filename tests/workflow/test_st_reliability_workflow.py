"""The ST-reliability part of config/test.yaml, run for real; the numbers in its outputs are
checked against recomputations from the written data and checkpoints."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from scipy.spatial.distance import cdist

from repro.st_reliability.data import pair_table, read_cells, true_deltas
from repro.st_reliability.predict import load, predict_line
from repro.st_reliability.sentences import CellIndex, basal_sentences
from tests.conftest import ROOT, assert_claims_report_lists

pytestmark = pytest.mark.workflow

P = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]["st_reliability"]
STRONG, NEGATIVE = "shared_program_strong", "no_shared_program"


def _json(run, name):
    return json.loads((run / "st_reliability" / name).read_text())


def test_generator_self_check_and_split(test_run):
    strong, negative = (
        _json(test_run, f"data/{STRONG}/prepare.json"),
        _json(test_run, f"data/{NEGATIVE}/prepare.json"),
    )
    assert strong["passed"] and strong["eta_used"] >= P["datasets"][STRONG]["eta"]
    assert not negative["passed"] and negative["eta_used"] == 0.0
    cells = read_cells(test_run / f"st_reliability/data/{STRONG}/cells.h5ad")
    assert cells.n_vars == P["simulator"]["n_genes"]
    assert len(cells.uns["split"]["c4_families"]) == P["split"]["c4_families"]


def test_quality_is_cell_evals_and_signals_recompute_from_the_checkpoint(test_run):
    seed = P["seeds"][0]
    evaluation = _json(test_run, f"eval/{STRONG}/seed{seed}.json")
    rows = [r for r in evaluation["pairs"] if r["model"] == "hvg"]
    # cell-eval's per-perturbation pearson_delta equals a direct Pearson of Δ̂ and Δ (up to
    # float32 rounding: the test model's Δ̂ are differences of nearly equal means)
    ours, theirs = [r["pearson_own"] for r in rows], [r["pearson_delta"] for r in rows]
    np.testing.assert_allclose(theirs, ours, atol=1e-3)
    cells = read_cells(test_run / f"st_reliability/data/{STRONG}/cells.h5ad")
    model = load(str(test_run / f"st_reliability/models/{STRONG}/seed{seed}/part0/hvg.pt"))
    index = CellIndex.build(cells, model.encoder.encode(cells.X))
    basal = basal_sentences(
        index,
        n_sentences=P["evaluation"]["n_sentences"],
        set_len=P["architecture"]["cell_set_len"],
        seed=10_000 + seed,
    )
    deltas, pairs = true_deltas(cells), pair_table(cells)
    line = "line0"
    mine = [r for r in rows if r["line"] == line]
    _, delta_hat, _ = predict_line(
        model, index, basal[line], [r["pert"] for r in mine], ceiling=float(cells.X.max())
    )
    train = (
        deltas.loc[line].loc[pairs.loc[line].index[pairs.loc[line]["split"] == "train"]].to_numpy()
    )
    for metric, name in (("l2", "euclidean"), ("cosine", "cosine")):
        brute = cdist(delta_hat, train, name).min(1)
        np.testing.assert_allclose([r[f"nn_{metric}"] for r in mine], brute, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        [r["magnitude"] for r in mine], np.linalg.norm(delta_hat, axis=1), rtol=1e-4
    )


def test_audit_against_the_nulls(test_run):
    spectra = _json(test_run, f"metrics/{STRONG}.json")["spectra"]
    s = P["architecture"]["cell_set_len"]
    for layer in spectra["self_only"]["layers"]:  # each cell attends only to itself
        assert layer["kl_uniform"]["mean"] == pytest.approx(math.log(s), rel=1e-6)
        assert layer["rank1_energy"]["mean"] == pytest.approx(1 / s, rel=1e-6)
    for name, spec in spectra.items():
        if name == "uniform":
            continue
        for layer in spec["layers"]:
            assert 1 / s - 1e-9 <= layer["rank1_energy"]["mean"] <= 1 + 1e-9
            assert len(layer["pc1_fraction"]["per_seed"]) == len(P["seeds"])
    assert set(spectra) >= {"hvg", "hvg__untrained", "pca", "ae", "self_only", "shuffled"}
    for name in ("hvg", "pca", "ae"):  # the within-model swap, the causal check, PCA of Δ̂
        means = spectra[name]["layer_mean_per_seed"]
        assert all(v >= 0 for v in means["variance"] + means["variance_uniform"])
        # uniform and identity attention give the same set-mean update (column means 1/S)
        np.testing.assert_allclose(
            means["pc1_fraction_uniform"], means["pc1_fraction_identity"], atol=1e-5
        )
        causal = spectra[name]["causal_per_seed"]
        assert set(causal) == {"none", "project_v1", "project_random", "mean_row", "uniform"}
        pca = spectra[name]["delta_pca_per_seed"]
        assert all(
            0 < f <= 1 for f in pca["pc1_fraction_delta_hat"] + pca["pc1_fraction_true_delta"]
        )


def test_reliability_tables_and_claims(test_run):
    metrics = _json(test_run, f"metrics/{STRONG}.json")
    groups = metrics["rho"]["groups"]
    assert sorted(groups) == sorted(f"{m}|line{c}" for m in P["audited"] for c in range(2))
    assert metrics["rho"]["seeds_resampled"] and sorted(metrics["rho_novel"]["groups"]) == sorted(
        groups
    )
    for signal in ("nn_l2", "nn_cosine"):  # the median of the group ρ, the primary statistic
        median = metrics["rho"]["median_group"][signal]
        assert median["rho"] == pytest.approx(np.median([groups[g][signal]["rho"] for g in groups]))
        assert median["low"] <= median["high"]
        assert -1 <= metrics["rho"]["pooled_raw"][signal]["rho"] <= 1
    for signal in ("nn_l2", "nn_cosine", "oracle_l2", "oracle_cosine", "magnitude"):
        r = metrics["rho"]["pooled"][signal]
        assert -1 <= r["low"] <= r["high"] <= 1 and len(r["per_seed"]) == len(P["seeds"])
        assert r["rho"] == pytest.approx(np.mean(r["per_seed"]))
    for key, table in metrics["loo"].items():
        assert set(table["groups"]) == set(groups), key
        assert all(set(v["directions"]) <= {"<=", ">="} for v in table["groups"].values())
    assert metrics["c4"]["available"] and len(metrics["c4"]["family_drop"]) == len(P["seeds"])
    claims = {c["id"]: c for c in _json(test_run, "claims.json")}
    assert set(claims) == set(P["claims"]) | set(P["checks"])
    assert {claims[c]["type"] for c in P["checks"]} == {"check"}
    assert claims["self_check_strong"]["verdict"] == "passed"
    assert claims["self_check_negative"]["verdict"] == "passed"
    assert claims["self_only_identity"]["verdict"] == "passed"
    assert claims["swap_detects_planted"]["verdict"] == "passed", claims["swap_detects_planted"]
    assert_claims_report_lists(test_run, "st_reliability", claims)


COVERAGE = "coverage_graded"


def test_coverage_regime_magnitude_and_generator_record(test_run):
    """The coverage regime: its generator record, and ‖Δ‖ of the truth (its self-check's
    signal) recomputed from the written cells."""
    record = _json(test_run, f"data/{COVERAGE}/prepare.json")
    levels = P["datasets"][COVERAGE]["coverage"]["levels"]
    per = P["datasets"][COVERAGE]["coverage"]["perts_per_family"]
    assert all(line["n_held_out"] == levels * per for line in record["generator"].values())
    cells = read_cells(test_run / f"st_reliability/data/{COVERAGE}/cells.h5ad")
    deltas = true_deltas(cells)
    seed = P["seeds"][0]
    rows = _json(test_run, f"eval/{COVERAGE}/seed{seed}.json")["pairs"]
    assert {r["split"] for r in rows} == {"fewshot"}
    for r in rows[:20]:
        truth = deltas.loc[(r["line"], r["pert"])].to_numpy()
        assert r["true_magnitude"] == pytest.approx(np.linalg.norm(truth), rel=1e-4)
    metrics = _json(test_run, f"metrics/{COVERAGE}.json")
    for name in ("oracle_l2/oracle_l2", "oracle_cosine/oracle_cosine"):  # the oracle over itself
        r = metrics["rho"]["ratio"][name]
        assert r["ratio"] == pytest.approx(1.0) or r["ratio"] is None  # None: oracle ρ ≥ 0
    claims = {c["id"]: c for c in _json(test_run, "claims.json")}
    for cid, spec in P["claims"].items():
        if spec.get("dataset") == COVERAGE:
            assert [c["side"] for c in claims[cid]["controls"]] == ["positive", "negative"]


def test_planted_control_and_shuffled_null_in_the_summary(test_run):
    """C1's controls reach the summary: the planted dependence at every dose (its causal
    check against its own predictions, so q unedited = 1) and the shuffled null's causal
    check."""
    spectra = _json(test_run, f"metrics/{STRONG}.json")["spectra"]
    planted = P["evaluation"]["planted"]
    for beta in planted["doses"]:
        rec = spectra[f"{planted['model']}__planted_beta{float(beta):g}"]
        np.testing.assert_allclose(rec["causal_per_seed"]["none"], 1.0, atol=1e-6)
        means = rec["layer_mean_per_seed"]
        assert len(means["pc1_fraction"]) == len(P["seeds"])
    assert set(spectra["shuffled"]["causal_per_seed"]) >= {"none", "project_v1", "project_random"}
