"""repro.qsurv.neural (and its resume path through repro.qsurv.train) on tiny data.

* Resume: a 6-epoch run killed right after its epoch-3 checkpoint and resumed from it
  gives the same parameters, validation-loss history and cosine learning rates as an
  uninterrupted run, both through ``neural.fit`` and through ``train.train`` (whose
  checkpoint name carries a fingerprint of the config, so a *changed* config starts afresh).
* The same seed twice gives bit-identical predictions on CPU.
* ``predict_survival`` matches exp(-H) in closed form for constant and linear hazards.
"""

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from repro.common.io import read_npz
from repro.qsurv import neural, train

CPU = torch.device("cpu")
SMALL = neural.NeuralConfig(
    hidden=(16, 16),
    rank=4,
    alpha=4.0,
    time_width=8,
    time_depth=2,
    nodes=5,
    eval_nodes=5,
    batch_size=64,
    epochs=6,
    patience=100,
    lr=5e-3,
)


def fit(cfg, split, checkpoint, seed=0):
    return neural.fit(cfg, split, seed=seed, device=CPU, checkpoint=checkpoint)


def saved_state(checkpoint):
    return torch.load(checkpoint, weights_only=True)


def assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


class Killed(Exception):
    pass


def kill_after_checkpoint(monkeypatch, epoch: int) -> None:
    """Make training die right after it has written the checkpoint of ``epoch``."""
    save = neural._save_atomic

    def save_then_die(obj, path):
        save(obj, path)
        if obj["state"]["epoch"] == epoch:
            raise Killed

    monkeypatch.setattr(neural, "_save_atomic", save_then_die)


def test_resume_after_three_epochs_equals_uninterrupted(tiny_split, tmp_path, monkeypatch):
    full_net, full_history = fit(SMALL, tiny_split, tmp_path / "full.pt")
    with monkeypatch.context() as patch:
        kill_after_checkpoint(patch, 3)
        with pytest.raises(Killed):
            fit(SMALL, tiny_split, tmp_path / "resumed.pt")
    assert saved_state(tmp_path / "resumed.pt")["state"]["epoch"] == 3
    resumed_net, resumed_history = fit(SMALL, tiny_split, tmp_path / "resumed.pt")
    full, resumed = saved_state(tmp_path / "full.pt"), saved_state(tmp_path / "resumed.pt")
    assert full["state"]["epoch"] == resumed["state"]["epoch"] == 6
    assert len(full["state"]["val_losses"]) == 6
    assert full["state"]["val_losses"] == resumed["state"]["val_losses"]
    assert_same_state(full["model"], resumed["model"])  # last epoch's parameters
    assert_same_state(full_net.state_dict(), resumed_net.state_dict())  # best epoch's
    assert full_history["best_val_loss"] == resumed_history["best_val_loss"]
    assert resumed_history["epochs"] == 6
    # the schedule resumed too: cosine decay over the configured 6 epochs, epoch by epoch
    cosine = [SMALL.lr * (1 + math.cos(math.pi * e / 6)) / 2 for e in range(6)]
    assert resumed_history["lrs"] == pytest.approx(cosine, rel=1e-12)
    assert full_history["lrs"] == resumed_history["lrs"]
    # training did something: the validation loss moved
    assert full["state"]["val_losses"][0] != full["state"]["val_losses"][-1]


def test_finished_checkpoint_is_not_retrained(tiny_split, tmp_path):
    net, _ = fit(SMALL, tiny_split, tmp_path / "c.pt")
    before = (tmp_path / "c.pt").stat().st_mtime_ns
    again, history = fit(SMALL, tiny_split, tmp_path / "c.pt")
    assert (tmp_path / "c.pt").stat().st_mtime_ns == before  # no epoch ran
    assert history["epochs"] == 6
    assert_same_state(net.state_dict(), again.state_dict())


def test_same_seed_bit_identical_predictions(tiny_split, tmp_path):
    grid = tiny_split["metric_grid"]
    preds = []
    for run in range(2):
        net, history = fit(
            dataclasses.replace(SMALL, epochs=3), tiny_split, tmp_path / f"run{run}.pt", seed=7
        )
        preds.append(
            neural.predict_survival(
                net, tiny_split["x_test"], grid, t_max=history["t_max"], nodes=5, device=CPU
            )
        )
    np.testing.assert_array_equal(preds[0], preds[1])
    net, history = fit(
        dataclasses.replace(SMALL, epochs=3), tiny_split, tmp_path / "other.pt", seed=8
    )
    other = neural.predict_survival(
        net, tiny_split["x_test"], grid, t_max=history["t_max"], nodes=5, device=CPU
    )
    assert not np.array_equal(preds[0], other)
    assert preds[0].shape == (len(tiny_split["x_test"]), len(grid))
    assert np.all(np.diff(preds[0], axis=1) <= 0) and np.all((preds[0] > 0) & (preds[0] <= 1))


def covariates(n=23, p=2, seed=0):
    return np.random.default_rng(seed).normal(0, 0.5, (n, p)).astype(np.float32)


def test_predict_survival_constant_hazard(polynomial_hazard):
    """The network sees v = t / t_max and returns h per unit of t: h = c(x) gives
    S(t) = exp(-c(x) t), whatever t_max is."""
    x, t_max = covariates(), 4.0
    grid = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 6.0])  # starts at 0 and runs past t_max
    net = polynomial_hazard([0.7])
    surv = neural.predict_survival(net, x, grid, t_max=t_max, nodes=3, device=CPU, chunk=5)
    c = 0.7 * np.exp(x[:, :1].astype(float))
    np.testing.assert_allclose(surv, np.exp(-c * grid), atol=1e-6, rtol=0)


def test_predict_survival_linear_and_cubic_hazard(polynomial_hazard):
    """GL with K nodes per interval is exact for degree <= 2K-1: K = 1 for linear, 2 cubic.

    h(t) = p(t / t_max) per unit of t, so H(t) = t_max ∫_0^{t/t_max} p(u) du."""
    x, t_max = covariates(seed=1), 2.0
    grid = np.linspace(0.05, 3.0, 17)
    for coefs, nodes in (([0.2, 1.5], 1), ([0.2, 1.5, -0.4, 0.3], 2)):
        net = polynomial_hazard(coefs)
        surv = neural.predict_survival(net, x, grid, t_max=t_max, nodes=nodes, device=CPU, chunk=7)
        expected = np.exp(-t_max * net.cumulative(x, (grid / t_max)[None, :]))
        np.testing.assert_allclose(surv, expected, atol=1e-6, rtol=0)


def test_predict_survival_clamps_cumulative_hazard(polynomial_hazard):
    x = covariates(n=4)
    surv = neural.predict_survival(
        polynomial_hazard([500.0]), x, np.array([0.5, 1.0]), t_max=1.0, nodes=2, device=CPU
    )
    np.testing.assert_allclose(surv, np.exp(-30.0), rtol=1e-6)


def train_cfg(epochs: int) -> train.TrainConfig:
    spec = {
        "family": train.NEURAL_FAMILY,
        **{k: v for k, v in dataclasses.asdict(SMALL).items() if k != "epochs"},
    }
    return train.TrainConfig(method="qsurv", spec=spec, training={"epochs": epochs}, device="cpu")


def neural_cfg(epochs: int) -> neural.NeuralConfig:
    return dataclasses.replace(SMALL, epochs=epochs)


def run_train(cfg, data, out):
    out.mkdir(parents=True, exist_ok=True)
    train.train(
        cfg,
        str(data),
        str(out / "m.pt"),
        str(out / "p.npz"),
        str(out / "log.json"),
        str(out / "ckpt"),
    )
    return read_npz(out / "p.npz"), torch.load(out / "m.pt", weights_only=True)


def test_fingerprint_identifies_config_and_data(tiny_split):
    base = train._fingerprint(neural_cfg(6), tiny_split)
    assert base == train._fingerprint(neural_cfg(6), dict(tiny_split))
    assert base != train._fingerprint(neural_cfg(3), tiny_split)  # epochs are part of it
    changed = {**tiny_split, "t_train": tiny_split["t_train"] * 1.001}
    assert base != train._fingerprint(neural_cfg(6), changed)


def test_train_resumes_from_its_fingerprinted_checkpoint(
    tiny_synthetic, tiny_split, tmp_path, caplog, monkeypatch
):
    """Kill train.train right after its epoch-3 checkpoint, then run it again.

    Resuming gives the same predictions and weights as an uninterrupted run, and the
    checkpoint is removed once the run finishes.
    """
    seed = int(read_npz(tiny_synthetic)["seeds"][0])
    full_pred, full_models = run_train(train_cfg(6), tiny_synthetic, tmp_path / "full")

    resumed = tmp_path / "resumed"
    checkpoint = resumed / "ckpt" / f"seed{seed}-{train._fingerprint(neural_cfg(6), tiny_split)}.pt"
    with monkeypatch.context() as patch:
        kill_after_checkpoint(patch, 3)
        with pytest.raises(Killed):
            run_train(train_cfg(6), tiny_synthetic, resumed)
    assert saved_state(checkpoint)["state"]["epoch"] == 3
    with caplog.at_level("INFO", logger="repro.qsurv.neural"):
        pred, models = run_train(train_cfg(6), tiny_synthetic, resumed)
    assert "at epoch 3" in caplog.text  # it really resumed rather than restarting
    assert not checkpoint.exists()
    for key in ("surv_metric", "surv_truth", "epochs"):
        np.testing.assert_array_equal(pred[key], full_pred[key])
    assert_same_state(models[f"seed{seed}"], full_models[f"seed{seed}"])
    log = json.loads((resumed / "log.json").read_text())
    assert log["history"][0]["epochs"] == 6


def test_returned_model_is_the_best_validation_epoch_not_the_last(tiny_split, tmp_path):
    """Early stopping returns the weights of the epoch with the lowest validation loss: the
    returned network's validation loss, recomputed here, is the minimum of the history, and
    (a large step makes the loss rise before training stops) not the last epoch's."""
    from repro.qsurv.model import QuadratureLikelihood

    cfg = dataclasses.replace(SMALL, epochs=15, patience=3, lr=0.3)
    net, history = fit(cfg, tiny_split, tmp_path / "c.pt")
    losses = saved_state(tmp_path / "c.pt")["state"]["val_losses"]
    assert int(np.argmin(losses)) < len(losses) - 1  # the case needs a best epoch before the last
    loss_fn = QuadratureLikelihood(rule=cfg.rule, nodes=cfg.nodes, time_scale=history["t_max"])
    as_tensor = {
        k: torch.as_tensor(tiny_split[k], dtype=torch.float32) for k in ("x_val", "t_val", "e_val")
    }
    net.eval()
    with torch.no_grad():
        val = float(
            loss_fn(
                net, as_tensor["x_val"], as_tensor["t_val"] / history["t_max"], as_tensor["e_val"]
            )
        )
    assert val == pytest.approx(min(losses), rel=1e-5)
    assert history["best_val_loss"] == min(losses)
