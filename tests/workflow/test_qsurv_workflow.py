"""The QSurv DAG run for real on config/test.yaml; the numbers in its outputs are checked."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest
import yaml

from repro.common.io import read_npz
from repro.common.stats import paired_difference
from repro.qsurv.ipcw import official_metrics, step_reader
from repro.qsurv.metrics import survival_metrics
from repro.qsurv.quadrature_study import QuadratureConfig, relative_errors
from tests.conftest import ROOT, assert_claims_report_lists, snakemake

pytestmark = pytest.mark.workflow

CONFIG = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
Q = CONFIG["papers"]["qsurv"]


@pytest.fixture(scope="module")
def run(test_run):
    return test_run


def test_quadrature_metrics_equal_a_direct_computation(run):
    result = json.loads((run / "qsurv/metrics/quadrature.json").read_text())
    cfg = QuadratureConfig(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in Q["quadrature"].items()}
    )
    for family in cfg.families:
        for k in cfg.nodes:
            direct = relative_errors(family, "gauss_legendre", k, cfg)
            stored = result["families"][family]["gauss_legendre"][str(k)]
            assert stored["median"] == pytest.approx(float(np.median(direct)), rel=1e-9, abs=1e-18)
    gompertz = result["families"]["gompertz"]  # the bound itself is a check, see below
    assert gompertz["gauss_legendre"]["8"]["max"] < 1e-12 < gompertz["trapezoid"]["8"]["median"]
    assert result["gompertz_bound"]["violations"] == 0


def test_every_dataset_has_every_method_and_seed(run):
    datasets = Q["synthetic"]["scenarios"] + list(Q["real_datasets"])
    for dataset in datasets:
        metrics = json.loads((run / f"qsurv/metrics/{dataset}.json").read_text())
        expected = Q["synthetic_methods"] if metrics["synthetic"] else Q["real_methods"]
        references = ["kaplan_meier", "oracle"] if metrics["synthetic"] else ["kaplan_meier"]
        assert metrics["reference_arms"] == references
        assert list(metrics["methods"]) == expected + references
        for method in expected:
            entry = metrics["methods"][method]
            assert len(entry["per_seed"]) == len(Q["seeds"])
            ctd = [row["ctd"] for row in entry["per_seed"]]
            assert entry["mean"]["ctd"] == pytest.approx(np.mean(ctd))
            assert all(0 <= c <= 1 for c in ctd), (dataset, method)
            assert all(0 <= row["cindex_ipcw"] <= 1 for row in entry["per_seed"])
            assert all(0 < row["ibs_ipcw"] < 0.5 for row in entry["per_seed"])
            assert entry["training_provenance"]["device"] == "cpu"


def test_every_method_predicts_survival_that_starts_at_one(run):
    """S(0) = 1 and non-increasing for every method (DeepHit and CoxTime included), read on
    the prediction grid that starts at t = 0."""
    datasets = Q["synthetic"]["scenarios"] + list(Q["real_datasets"])
    for dataset in datasets:
        grid = read_npz(run / f"qsurv/data/{dataset}.npz")["metric_grid"]
        assert np.all(grid[:, 0] == 0)
        methods = (
            Q["synthetic_methods"] if dataset in Q["synthetic"]["scenarios"] else Q["real_methods"]
        )
        for method in methods:
            surv = read_npz(run / f"qsurv/runs/{dataset}/part0/{method}.npz")["surv_metric"]
            assert np.all(surv[:, :, 0] == 1.0), (dataset, method)
            assert np.all(np.diff(surv, axis=-1) <= 1e-12), (dataset, method)
            assert surv[:, :, -1].mean() < 0.9, (dataset, method)  # and it does fall


def test_real_data_sets_train_with_real_training(run):
    """On GBSG2 every trained method gets papers.qsurv.real_training over training; the
    synthetic scenario gets training alone."""
    scenario = Q["synthetic"]["scenarios"][0]
    runs = [("gbsg2", m, {**Q["training"], **Q["real_training"]}) for m in Q["real_methods"]]
    runs += [(scenario, m, Q["training"]) for m in Q["synthetic_methods"]]
    for dataset, method, keys in runs:
        log = json.loads((run / f"qsurv/runs/{dataset}/part0/{method}.json").read_text())
        training = log["provenance"]["config"]["training"]  # with the schema's defaults
        assert {k: training[k] for k in keys} == keys, (dataset, method)
        if method != "coxph":
            assert all(0 < h["epochs"] <= keys["epochs"] for h in log["history"])


def test_stored_metrics_recompute_from_predictions(run):
    data = read_npz(run / "qsurv/data/gbsg2.npz")
    pred = read_npz(run / "qsurv/runs/gbsg2/part0/qsurv.npz")
    metrics = json.loads((run / "qsurv/metrics/gbsg2.json").read_text())
    row = metrics["methods"]["qsurv"]["per_seed"][1]
    direct = survival_metrics(
        pred["surv_metric"][1],
        data["metric_grid"][1],
        data["t_test"][1],
        data["e_test"][1],
        n_grid=Q["evaluation"]["metric_grid_points"],
    )
    assert row["ctd"] == pytest.approx(direct["ctd"]) and row["ibs"] == pytest.approx(direct["ibs"])
    official = official_metrics(
        step_reader(pred["surv_metric"][1], data["metric_grid"][1]),
        np.concatenate([data["t_train"][1], data["t_val"][1]]),
        np.concatenate([data["e_train"][1], data["e_val"][1]]),
        data["t_test"][1],
        data["e_test"][1],
    )
    assert row["cindex_ipcw"] == pytest.approx(official["cindex_ipcw"])
    assert row["ibs_ipcw"] == pytest.approx(official["ibs_ipcw"])


def test_models_learn_the_synthetic_hazard(run):
    """Trained QSurv beats a model that ignores x and time (a flat hazard) on hazard error."""
    metrics = json.loads((run / "qsurv/metrics/loglogistic.json").read_text())
    data = read_npz(run / "qsurv/data/loglogistic.npz")
    qsurv = metrics["methods"]["qsurv"]["mean"]
    assert qsurv["ctd"] > 0.6
    # the best constant hazard (events / exposure) and its hazard L1 on the same grid
    grid = data["truth_grid"][0]
    rate = data["e_train"][0].sum() / data["t_train"][0].sum()
    true_hazard = np.diff(data["true_cumhaz"][0], axis=1) / np.diff(grid)
    flat_l1 = np.abs(true_hazard - rate).mean()
    assert qsurv["hazard_l1"] < 0.8 * flat_l1


def test_claims_follow_from_metrics_and_criteria(run):
    claims = {c["id"]: c for c in json.loads((run / "qsurv/claims.json").read_text())}
    assert set(claims) == set(Q["claims"]) | set(Q["checks"])
    metrics = json.loads((run / "qsurv/metrics/loglogistic.json").read_text())["methods"]
    k3 = claims["hazard_vs_trapezoid_k3"]
    # paired over the seeds, oriented so that positive means GL is better (lower hazard L1)
    per_seed = {m: [r["hazard_l1"] for r in metrics[m]["per_seed"]] for m in metrics}
    diff = paired_difference(
        [-v for v in per_seed["qsurv_k3"]], [-v for v in per_seed["trapezoid_k3"]]
    )
    assert k3["measured"] == pytest.approx(diff.mean)
    assert k3["interval"] == pytest.approx([diff.low, diff.high])
    delta = Q["claims"]["hazard_vs_trapezoid_k3"]["criterion"]["delta"]
    expected = "reproduced" if diff.low > -delta else "inconclusive"
    # the verdict of the claim's own statistic, before its controls gate it
    assert (k3["own_verdict"] or k3["verdict"]) == (
        "contradicted" if diff.high < -delta else expected
    )
    # its negative control, the Kaplan-Meier curve in GL's place, by the same statistic
    negative = {c["side"]: c for c in k3["controls"]}["negative"]
    km = paired_difference(
        [-r["hazard_l1"] for r in metrics["kaplan_meier"]["per_seed"]],
        [-v for v in per_seed["trapezoid_k3"]],
    )
    assert negative["measured"] == pytest.approx(km.mean)
    assert negative["interval"] == pytest.approx([km.low, km.high])
    assert claims["imaging"]["verdict"] == "not tested at this scale"
    bound = claims["gl_error_bound"]
    assert bound["type"] == "check" and bound["verdict"] == "passed" and bound["measured"] == 0
    assert all(claims[c]["type"] == "claim" for c in Q["claims"])
    assert_claims_report_lists(run, "qsurv", claims)


def test_figures_are_real_images(run):
    figures = sorted((run / "qsurv/figures").glob("*.png"))
    names = {f.stem for f in figures}
    assert {"quadrature_error", "metrics_table", "ablation", "hazard_curves_loglogistic"} <= names
    for png in figures:
        image = mpimg.imread(png)
        assert image.shape[0] > 200 and image.shape[1] > 300
        assert image[..., :3].std() > 0.05  # not a blank canvas
        assert png.with_suffix(".pdf").read_bytes()[:4] == b"%PDF"


def test_rerun_has_nothing_to_do_and_report_has_captions(run, test_config):
    workdir = run.parent
    args = ("--configfile", str(test_config), "--replace-workflow-config")
    dry = snakemake("-n", *args, workdir=workdir)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    # not report.html: the browser test may be writing that one on the other xdist worker
    snakemake(*args, "--report", str(workdir / "report-qsurv.html"), workdir=workdir)
    html = (workdir / "report-qsurv.html").read_text(errors="replace")
    # each figure's caption is in the report, rendered with this run's config values
    assert "cumulative-hazard error vs number of quadrature nodes" in html
    covariates = Q["quadrature"]["covariates"]
    assert f"{covariates} covariate values" in html
    scenario = Q["synthetic"]["scenarios"][0]
    assert f"&quot;{scenario}&quot; scenario" in html
    assert f"{Q['synthetic']['n_samples']} subjects" in html
