"""The PLSA part of config/test.yaml, run for real; the numbers in its outputs are checked."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest
import yaml

from repro.plsa import repetitions
from repro.plsa.study import EstimatorStudyConfig, one_repetition
from tests.conftest import ROOT, assert_claims_report_lists

pytestmark = pytest.mark.workflow

P = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]["plsa"]


def _json(run, name):
    return json.loads((run / "plsa" / name).read_text())


def test_estimator_study_rows_recompute_exactly(test_run):
    study = _json(test_run, "metrics/estimator_rate.json")
    cfg = P["estimator_study"]
    assert len(study["rows"]) == len(cfg["sigmas"]) * len(cfg["n_nodes"]) * cfg["repetitions"]
    row = study["rows"][-1]
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in cfg.items()}
    again = one_repetition(
        row["shift"], row["sigma"], row["n"], row["seed"], EstimatorStudyConfig(**params)
    )
    assert again["error"] == pytest.approx(row["error"], rel=1e-9)
    assert again["edges"] == row["edges"]
    # more edges, smaller error for the consistent estimators (mean over repetitions)
    for estimator in ("moment_matching", "plsa"):
        by_n = {
            n: np.mean([r["error"][estimator] for r in study["rows"] if r["n"] == n])
            for n in cfg["n_nodes"]
        }
        assert by_n[max(by_n)] < by_n[min(by_n)], estimator


def test_end_to_end_metrics(test_run):
    for dataset, spec in P["end_to_end"]["datasets"].items():
        metrics = _json(test_run, f"metrics/{dataset}.json")
        assert list(metrics["methods"]) == spec.get("methods", P["end_to_end"]["methods"])
        # one train job per data set wrote one run file per method, and nothing else
        runs = sorted(p.stem for p in (test_run / "plsa" / "runs" / dataset).glob("*.json"))
        assert runs == sorted(metrics["methods"])
        for method, entry in metrics["methods"].items():
            accuracies = [row["target_accuracy"] for row in entry["per_seed"]]
            assert len(accuracies) == len(P["end_to_end"]["seeds"])
            assert all(1 / 3 < a <= 1 for a in accuracies), (method, accuracies)
            assert entry["mean"]["target_accuracy"] == pytest.approx(np.mean(accuracies))
            assert entry["selection"] == "source"
            if method != "erm":  # the estimator's predictor, before and after scaling
                for key in ("node_ece_before", "node_ece_after"):
                    assert 0 <= entry["mean"][key] < 0.5, (method, key)
            assert ("pair_ece_after" in entry["mean"]) == (method == "plsa_pair")
        assert "pi_l1_error" not in metrics["methods"]["erm"]["mean"]  # ERM estimates nothing
        assert metrics["methods"]["oracle"]["mean"]["pi_l1_error"] == pytest.approx(0, abs=1e-12)


def test_strurw_run_is_the_published_method(test_run):
    """StruRW: no label weights, mixing 0.5, and cell weights W = B̂_T / B_S. With B̂_T =
    counts_T / (n̂ n̂ᵀ), counts_T / (W B_S) must be the outer product of the predicted class
    sizes n̂, which sum to the target's node count (from the reported π̂ and the graphs)."""
    from repro.plsa.csbm import pair_distribution
    from repro.plsa.prepare import load_pair

    dataset = next(iter(P["end_to_end"]["datasets"]))
    document = _json(test_run, f"runs/{dataset}/strurw.json")
    for seed, result in zip(document["seeds"], document["results"], strict=True):
        source, target = load_pair(str(test_run / f"plsa/data/{dataset}.npz"), seed)
        assert result["label_weights"] is False and result["beta"] == [1.0, 1.0, 1.0]
        assert result["config"]["strurw_mix"] == 0.5
        k = source.num_classes
        sizes = np.bincount(source.y, minlength=k)
        b_s = pair_distribution(source.edge_index, source.y, k) * source.edge_index.shape[1]
        b_s = b_s / np.outer(sizes, sizes)
        counts_t = np.asarray(result["pi_hat"]) * target.edge_index.shape[1]
        outer = counts_t / (np.asarray(result["gamma"]) * b_s)
        predicted = np.sqrt(np.diag(outer))
        np.testing.assert_allclose(outer, np.outer(predicted, predicted), rtol=1e-9)
        assert predicted.sum() == pytest.approx(target.num_nodes, rel=1e-9)


def test_claims_follow_from_the_study(test_run):
    study = _json(test_run, "metrics/estimator_rate.json")
    claims = {c["id"]: c for c in _json(test_run, "claims.json")}
    largest = max(r["n"] for r in study["rows"])
    top = [r for r in study["rows"] if r["n"] == largest]
    ratio = np.mean([r["error"]["hard_label"] for r in top]) / np.mean(
        [r["error"]["plsa"] for r in top]
    )
    floor = claims["hard_label_bias"]
    assert floor["measured"] == pytest.approx(ratio)
    low, high = floor["interval"]
    assert low <= ratio <= high
    own = repetitions.verdict(
        ">=", P["claims"]["hard_label_bias"]["criterion"]["threshold"], low, high
    )
    assert (floor["own_verdict"] or floor["verdict"]) == own
    assert [c["side"] for c in floor["controls"]] == ["positive", "negative"]
    assert set(claims) == set(P["claims"]) | set(P["checks"])
    for cid in P["checks"]:  # true by construction: a failure here is a bug
        assert claims[cid]["type"] == "check" and claims[cid]["verdict"] == "passed", cid
    metrics = _json(test_run, "metrics/csbm_gss.json")
    paired = claims["plsa_improves_over_erm_gss"]
    per_seed = {
        m: np.array([row["target_accuracy"] for row in metrics["methods"][m]["per_seed"]])
        for m in ("plsa", "erm")
    }
    assert paired["measured"] == pytest.approx(np.mean(per_seed["plsa"] - per_seed["erm"]))
    low, high = paired["interval"]
    margin = P["claims"]["plsa_improves_over_erm_gss"]["criterion"]["delta"]
    expected = "reproduced" if low > margin else "contradicted" if high < margin else "inconclusive"
    assert (paired["own_verdict"] or paired["verdict"]) == expected
    oracle = paired["controls"][0]  # the positive control: the oracle arm against ERM
    per_seed["oracle"] = np.array(
        [row["target_accuracy"] for row in metrics["methods"]["oracle"]["per_seed"]]
    )
    assert oracle["measured"] == pytest.approx(np.mean(per_seed["oracle"] - per_seed["erm"]))
    assert_claims_report_lists(test_run, "plsa", claims)


def test_figures_are_real_images(test_run):
    names = {"error_vs_edges", "runtime_vs_edges", "error_vs_shift", "accuracy_table"}
    for name in names:
        image = mpimg.imread(test_run / f"plsa/figures/{name}.png")
        assert image.shape[0] > 200 and image[..., :3].std() > 0.05
        assert (test_run / f"plsa/figures/{name}.pdf").read_bytes()[:4] == b"%PDF"
