"""The SBD part of config/test.yaml, run for real, and its download path from a local server."""

from __future__ import annotations

import copy
import hashlib
import json

import matplotlib.image as mpimg
import numpy as np
import pytest
import yaml

from repro.sbd.factors import Decomposition
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.pipeline import load_graph
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.recovery import recovery_metrics
from tests.conftest import ROOT, assert_claims_report_lists, snakemake
from tests.sbd.test_sbd_graphs import write_snap, write_suitesparse

pytestmark = pytest.mark.workflow

TEST_CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
P = TEST_CONFIG["papers"]["sbd"]


def _json(run, name):
    return json.loads((run / "sbd" / name).read_text())


def test_decompositions_reconstruct_the_data_and_metrics_recompute(test_run):
    for dataset in P["datasets"]:
        A, truth = load_graph(test_run / f"sbd/data/{dataset}.npz")
        metrics = _json(test_run, f"metrics/{dataset}.json")
        assert list(metrics["methods"]) == P["datasets"][dataset].get("methods", list(P["methods"]))
        for method, entry in metrics["methods"].items():
            dec = Decomposition.load(test_run / f"sbd/decompositions/{dataset}/{method}.npz")
            assert (dec.to_sparse() != A).nnz == 0
            assert entry["mismatched_cells"] == 0
            assert entry["cf"] == pytest.approx(A.nnz / (dec.factor_entries + dec.residual.nnz))
            assert entry["trace"][-1]["cost"] == dec.cost
            assert [r["d"] for r in entry["spmm"]] == P["evaluation"]["dims"]
            for timing in entry["spmm"]:
                assert timing["rel_error_sbd_scipy"] < 1e-5 and timing["scipy_csr"]["min_ms"] > 0
            if truth is not None and len(truth["rows"]):  # the random graph has no blocks
                found = {"rows": dec.rows, "cols": dec.cols, "signs": dec.signs}
                assert entry["recovery"] == pytest.approx(recovery_metrics(truth, found))
            if not P["methods"][method]["signed"]:
                assert set(dec.signs.tolist()) <= {1}


def _study(run, name):
    """A study's rows, joined from its per-method files."""
    methods = P[name]["methods"]
    return [row for m in methods for row in _json(run, f"metrics/{name}/{m}.json")["rows"]]


def test_noise_study_row_recomputes(test_run):
    rows, cfg = _study(test_run, "noise_study"), P["noise_study"]
    assert len(rows) == (
        len(cfg["deletions"]) * len(cfg["backgrounds"]) * len(cfg["seeds"]) * len(cfg["methods"])
    )
    row = rows[-1]
    A, truth = plant(
        PlantedConfig(
            **cfg["graph"], deletion=row["deletion"], background=row["background"], seed=row["seed"]
        )
    )
    greedy = {**P["greedy"], **P["methods"][row["method"]], "minhash_seed": row["seed"]}
    dec = decompose(A, GreedyConfig(**greedy))
    again = recovery_metrics(truth, {"rows": dec.rows, "cols": dec.cols, "signs": dec.signs})
    assert row["mean_best_jaccard"] == pytest.approx(again["mean_best_jaccard"])
    assert row["cf"] == pytest.approx(dec.compression_factor)


def test_sign_study_pairs_the_methods_on_the_same_graphs(test_run):
    rows, cfg = _study(test_run, "sign_study"), P["sign_study"]
    graphs = {}
    for r in rows:
        graphs.setdefault((r["setting"], r["seed"]), set()).add(r["nnz"])
    assert len(graphs) == len(cfg["settings"]) * len(cfg["seeds"])
    assert all(len(nnz) == 1 for nnz in graphs.values())  # both methods saw the same matrix
    row = next(r for r in rows if r["method"] == "vnm_unsigned")
    spec = {**cfg["graph"], **cfg["settings"][row["setting"]], "seed": row["seed"]}
    A, _ = plant(PlantedConfig(**spec))
    dec = decompose(
        A, GreedyConfig(**{**P["greedy"], "signed": False, "minhash_seed": row["seed"]})
    )
    assert row["cf"] == pytest.approx(dec.compression_factor) and set(dec.signs.tolist()) <= {1}


def test_claims_follow_from_the_metrics(test_run):
    results = {c["id"]: c for c in _json(test_run, "claims.json")}
    assert {k for k, c in results.items() if c["type"] == "claim"} == set(P["claims"])
    assert {k for k, c in results.items() if c["type"] == "check"} == set(P["checks"])
    planted = _json(test_run, "metrics/planted.json")["methods"]
    cf = planted["sbd"]["cf"]
    compression = results["compression_planted"]
    assert compression["measured"] == pytest.approx(cf)
    assert (compression["own_verdict"] or compression["verdict"]) == (
        "reproduced" if cf > 10 else "contradicted"
    )
    truth = _json(test_run, "metrics/planted.json")["planted_truth"]["cf"]
    positive, negative = compression["controls"]  # the planted truth's CF, the random graph's
    assert positive["measured"] == pytest.approx(truth)
    assert negative["measured"] == pytest.approx(
        _json(test_run, "metrics/random.json")["methods"]["sbd"]["cf"]
    )
    if truth <= 10:  # the truth itself cannot reach the criterion
        assert compression["verdict"] == "uninformative"
    assert "exploration, not the verdict: dense: CF" in results["compression_planted"]["details"]
    nested = [r for r in _study(test_run, "sign_study") if r["setting"] == "nested_only"]
    cf_by = {m: {r["seed"]: r["cf"] for r in nested if r["method"] == m} for m in P["methods"]}
    diffs = [cf_by["sbd"][s] - cf_by["vnm_unsigned"][s] for s in P["sign_study"]["seeds"]]
    assert results["signed_beats_unsigned"]["measured"] == pytest.approx(np.mean(diffs))
    assert len(results["signed_beats_unsigned"]["interval"]) == 2
    assert results["exact_reconstruction"]["verdict"] == "passed"
    assert results["gpu_speedup_torch"]["verdict"] == "not tested at this scale"  # CPU run
    assert_claims_report_lists(test_run, "sbd", results)


def test_figures_are_real_images(test_run):
    names = [
        "compression_speedup",
        "speedup_vs_cf",
        "greedy_trace",
        "recovery_heatmap",
        "sign_study",
        "time_vs_edges",
    ]
    for name in names:
        image = mpimg.imread(test_run / f"sbd/figures/{name}.png")
        assert image.shape[0] > 200 and image[..., :3].std() > 0.05
        assert (test_run / f"sbd/figures/{name}.pdf").read_bytes()[:4] == b"%PDF"


def test_download_then_prepare_from_local_server(tmp_path, http_server):
    """A SNAP edge list (sha256 pinned) and a SuiteSparse tarball (sha256 null) through the
    real download rules into prepared matrices."""
    root, base = http_server
    write_snap(root / "toy.txt.gz")
    M = np.kron(np.eye(3, dtype=np.int64), np.ones((4, 4), dtype=np.int64))
    import scipy.sparse as sp

    write_suitesparse(root / "toyco.tar.gz", "toyco", sp.coo_matrix(M))
    digest = hashlib.sha256((root / "toy.txt.gz").read_bytes()).hexdigest()
    config = copy.deepcopy(TEST_CONFIG)
    config["downloads"] = {
        "sbd_toy": {"url": f"{base}/toy.txt.gz", "sha256": digest},
        "sbd_toyco": {"url": f"{base}/toyco.tar.gz", "sha256": None},
    }
    config["papers"]["sbd"]["datasets"].update(
        toy={
            "kind": "download",
            "download": "sbd_toy",
            "format": "snap_edgelist",
            "symmetrize": True,
        },
        toyco={
            "kind": "download",
            "download": "sbd_toyco",
            "format": "matrix_market",
            "symmetrize": False,
        },
    )
    path = tmp_path / "download.yaml"
    path.write_text(yaml.safe_dump(config))
    targets = ["results/sbd/data/toy.npz", "results/sbd/data/toyco.npz"]
    snakemake(
        "--cores",
        "1",
        "--configfile",
        str(path),
        "--replace-workflow-config",
        *targets,
        workdir=tmp_path,
        timeout=300,
    )
    toy, _ = load_graph(tmp_path / targets[0])
    np.testing.assert_array_equal(toy.toarray(), [[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    toyco, _ = load_graph(tmp_path / targets[1])
    np.testing.assert_array_equal(toyco.toarray(), M)
    assert (tmp_path / "results/downloads/sbd_toyco/toyco.tar.gz").exists()
