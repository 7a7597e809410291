"""reweight.estimate per method, against the estimators called by hand on the same inputs.

* strurw is StruRW as published: B̂_T / B_S from hard pseudo-labels (target-validation
  nodes take their true labels under selection "target"), no label weights.
* pa_official reads raw logits (no temperature), ridge 1, β from BBSE on the uncalibrated
  softmax of all nodes; scaling the logits moves it, while pa (calibrated probabilities)
  does not move.
* plsa, end to end, gives a cell without source edges its target mass (EM from uniform).
* accuracies count only the nodes of eval_mask (MAG's merged class left out).
"""

import dataclasses

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from repro.common.seeding import seed_everything
from repro.plsa import estimators
from repro.plsa.calibration import softmax
from repro.plsa.csbm import CSBMSpec, pair_distribution, sample_csbm, shift_setting
from repro.plsa.gnn import WeightedSAGE
from repro.plsa.reweight import Context, estimate
from repro.plsa.train import TrainConfig, run, split_nodes


def _context(source, target, seed=0, features=False):
    rng = np.random.default_rng(seed)
    train_s, val_s = split_nodes(source.num_nodes, 0.2, rng)
    _, val_t = split_nodes(target.num_nodes, 0.2, rng)
    k = source.num_classes
    truth = {
        "pi_s": pair_distribution(source.edge_index, source.y, k),
        "pi_t": pair_distribution(target.edge_index, target.y, k),
        "prior_s": np.bincount(source.y, minlength=k) / source.num_nodes,
        "prior_t": np.bincount(target.y, minlength=k) / target.num_nodes,
    }
    feature_logits = None
    if features:
        model = LogisticRegression(max_iter=1000).fit(source.x[train_s], source.y[train_s])
        feature_logits = (model.decision_function(source.x), model.decision_function(target.x))
    return Context(source, target, train_s, val_s, val_t, truth, feature_logits)


@pytest.fixture(scope="module")
def gss():
    rng = np.random.default_rng(0)
    source_spec, target_spec = shift_setting("gss", n=2000, sigma=0.8)
    source, target = sample_csbm(source_spec, rng=rng), sample_csbm(target_spec, rng=rng)
    # logits of a noisy, over-confident predictor: 4 x (one-hot + noise)
    logits = tuple(
        4.0 * (np.eye(3)[g.y] + 0.7 * rng.standard_normal((g.num_nodes, 3)))
        for g in (source, target)
    )
    return _context(source, target), logits


@pytest.mark.parametrize("selection", ["source", "target"])
def test_strurw_is_the_published_ratio_without_label_weights(gss, selection):
    ctx, logits = gss
    cfg = TrainConfig(method="strurw", selection=selection)
    result = estimate(cfg, ctx, logits, np.ones(3))
    pred = logits[1].argmax(axis=1)  # temperature scaling leaves the argmax alone
    if selection == "target":
        pred[ctx.val_t] = ctx.target.y[ctx.val_t]
    expected = estimators.strurw_edge_ratio(
        pred, ctx.target.edge_index, ctx.source.y, ctx.source.edge_index, 3
    )
    np.testing.assert_allclose(result.cell_weights, expected, rtol=1e-14)
    np.testing.assert_array_equal(result.beta, np.ones(3))
    np.testing.assert_allclose(result.pi_hat, pair_distribution(ctx.target.edge_index, pred, 3))


def test_pa_official_reads_raw_logits_and_pa_does_not_care_about_their_scale(gss):
    ctx, logits = gss
    source, target = ctx.source, ctx.target
    result = estimate(TrainConfig(method="pa_official"), ctx, logits, np.ones(3))
    confusion = estimators.pair_confusion(logits[0], source.y, source.edge_index, 3)
    pi_hat, info = estimators.moment_matching_estimate(
        logits[1], target.edge_index, confusion, ctx.truth["pi_s"], lam=1.0
    )
    assert info["status"] == "optimal"
    np.testing.assert_allclose(result.pi_hat, pi_hat, atol=1e-12)
    beta = estimators.label_weights_bbse(
        softmax(logits[0]), source.y, softmax(logits[1]), 3, lam=0.005
    )
    np.testing.assert_allclose(result.beta, beta, atol=1e-12)
    scaled = tuple(3.0 * z for z in logits)
    moved = estimate(TrainConfig(method="pa_official"), ctx, scaled, np.ones(3))
    assert estimators.l1_error(moved.pi_hat, result.pi_hat) > 0.01
    pa = [estimate(TrainConfig(method="pa"), ctx, z, np.ones(3)).pi_hat for z in (logits, scaled)]
    np.testing.assert_allclose(pa[0], pa[1], atol=1e-5)  # the temperature absorbs the scale


def test_end_to_end_plsa_gives_an_empty_source_cell_its_target_mass():
    rng = np.random.default_rng(3)
    block = ((0.8, 0.0, 0.2), (0.0, 0.8, 0.2), (0.2, 0.2, 0.8))
    source = sample_csbm(CSBMSpec(n=6000, prior=(1 / 3,) * 3, block=block, sigma=0.4), rng=rng)
    target = sample_csbm(shift_setting("css", n=6000, sigma=0.4)[1], rng=rng)
    ctx = _context(source, target, features=True)
    assert ctx.truth["pi_s"][0, 1] == 0
    result = estimate(TrainConfig(method="plsa_features"), ctx, (None, None), np.ones(3))
    # measured (seeds 3-5) within 0.002 of pi^T (≈ 0.11); started at pi^S, EM kept 0 there
    assert result.pi_hat[0, 1] == pytest.approx(ctx.truth["pi_t"][0, 1], abs=0.015)


def test_accuracy_leaves_out_nodes_outside_the_eval_mask(tmp_path):
    rng = np.random.default_rng(4)
    source_spec, target_spec = shift_setting("gss", n=800, sigma=0.6)
    source, target = sample_csbm(source_spec, rng=rng), sample_csbm(target_spec, rng=rng)
    merged = 2  # plays MAG's class 19: trained on, not scored
    target = dataclasses.replace(target, eval_mask=target.y != merged)
    cfg = TrainConfig(method="erm", epochs=20, device="cpu")
    result = run(cfg, source, target, checkpoint=str(tmp_path / "best.pt"))
    split_rng = seed_everything(cfg.seed)  # the splits run() draws
    split_nodes(source.num_nodes, cfg.val_fraction, split_rng)
    test_t, _ = split_nodes(target.num_nodes, cfg.val_fraction, split_rng)
    scored = test_t[target.y[test_t] != merged]
    assert result["n_target_test"] == scored.size < test_t.size
    model = WeightedSAGE(in_features=3, num_classes=3, hidden=cfg.hidden, layers=cfg.layers)
    model.load_state_dict(torch.load(tmp_path / "best.pt", weights_only=True))
    with torch.no_grad():
        pred = model.eval()(torch.as_tensor(target.x), torch.as_tensor(target.edge_index))
    pred = pred.argmax(1).numpy()
    assert result["target_accuracy"] == pytest.approx(np.mean(pred[scored] == target.y[scored]))
    assert result["target_accuracy"] != pytest.approx(np.mean(pred[test_t] == target.y[test_t]))
