"""repro.qsurv.neural (and its resume path through repro.qsurv.train) on tiny data.

* Resume: a run stopped after 3 epochs and resumed to 6 from its checkpoint gives the
  same parameters and the same validation-loss history as an uninterrupted 6-epoch run,
  both through ``neural.fit`` and through ``train.train`` (whose checkpoint name carries a
  fingerprint of the config, so a *changed* config starts afresh instead).
* The same seed twice gives bit-identical predictions on CPU.
* ``predict_survival`` matches exp(-H) in closed form for constant and linear hazards.
"""

import dataclasses
import json

import numpy as np
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


def test_resume_after_three_epochs_equals_uninterrupted(tiny_split, tmp_path):
    full_net, full_history = fit(SMALL, tiny_split, tmp_path / "full.pt")
    # "killed" after epoch 3: the same checkpoint path, then the full config again
    fit(dataclasses.replace(SMALL, epochs=3), tiny_split, tmp_path / "resumed.pt")
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
    """h = c(x) per unit of v, v = t / t_max: S(t) = exp(-c(x) t / t_max)."""
    x, t_max = covariates(), 4.0
    grid = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 6.0])  # starts at 0 and runs past t_max
    net = polynomial_hazard([0.7])
    surv = neural.predict_survival(net, x, grid, t_max=t_max, nodes=3, device=CPU, chunk=5)
    c = 0.7 * np.exp(x[:, :1].astype(float))
    np.testing.assert_allclose(surv, np.exp(-c * grid / t_max), atol=1e-6, rtol=0)


def test_predict_survival_linear_and_cubic_hazard(polynomial_hazard):
    """GL with K nodes per interval is exact for degree <= 2K-1: K = 1 for linear, 2 cubic."""
    x, t_max = covariates(seed=1), 2.0
    grid = np.linspace(0.05, 3.0, 17)
    for coefs, nodes in (([0.2, 1.5], 1), ([0.2, 1.5, -0.4, 0.3], 2)):
        net = polynomial_hazard(coefs)
        surv = neural.predict_survival(net, x, grid, t_max=t_max, nodes=nodes, device=CPU, chunk=7)
        expected = np.exp(-net.cumulative(x, (grid / t_max)[None, :]))
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
    tiny_synthetic, tiny_split, tmp_path, caplog
):
    """Kill train.train after 3 epochs: emulated by leaving the 3-epoch checkpoint under the
    6-epoch config's fingerprinted name (that is what an interrupted 6-epoch run leaves).

    Resuming gives the same predictions and weights as an uninterrupted run, and the
    checkpoint is removed once the run finishes. Calling fit with epochs=3 under train.train
    itself could not emulate this: a config with other epochs has another fingerprint, so
    train.train would (rightly) start afresh instead of resuming.
    """
    seed = int(read_npz(tiny_synthetic)["seeds"][0])
    full_pred, full_models = run_train(train_cfg(6), tiny_synthetic, tmp_path / "full")

    resumed = tmp_path / "resumed"
    checkpoint = resumed / "ckpt" / f"seed{seed}-{train._fingerprint(neural_cfg(6), tiny_split)}.pt"
    checkpoint.parent.mkdir(parents=True)
    fit(neural_cfg(3), tiny_split, checkpoint, seed=seed)
    with caplog.at_level("INFO", logger="repro.qsurv.neural"):
        pred, models = run_train(train_cfg(6), tiny_synthetic, resumed)
    assert "at epoch 3" in caplog.text  # it really resumed rather than restarting
    assert not checkpoint.exists()
    for key in ("surv_metric", "surv_truth", "epochs"):
        np.testing.assert_array_equal(pred[key], full_pred[key])
    assert_same_state(models[f"seed{seed}"], full_models[f"seed{seed}"])
    log = json.loads((resumed / "log.json").read_text())
    assert log["history"][0]["epochs"] == 6
