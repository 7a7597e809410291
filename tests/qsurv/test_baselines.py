"""repro.qsurv.baselines and the optimiser every arm shares, on tiny Gompertz data.

* Weight decay: one optimiser step of every gradient-trained arm (QSurv's three networks,
  LogisticHazard, DeepHit, CoxTime with either network) with and without decay differs by
  exactly lr·wd·p (PyTorch's AdamW), not wd·p (torchtuples' decoupled decay, which the
  same check rejects).
* Cosine learning-rate decay, epoch by epoch, in every arm.
* Survival curves start at 1 and never rise, for every method; each is read as the model
  defines it: discrete models are steps at their cuts, equal to the product-limit / pmf
  formulas from the network's own outputs given T > 0; CoxPH is lifelines' Breslow step
  function, not lifelines' linear interpolation between its times.
* CoxTime's Time-LoRA network is QSurv's logit at v = t / t_max; FiLM and concat train.
"""

import math

import numpy as np
import pandas as pd
import pytest
import torch
import torchtuples as tt

from repro.qsurv import baselines, neural
from repro.qsurv.evaluate import interval_hazard
from repro.qsurv.metrics import curve_l1
from repro.qsurv.model import TimeLoRAHazard

CPU = torch.device("cpu")
SMALL = dict(hidden=(16, 16), rank=4, alpha=4.0, time_width=8, time_depth=2, patience=1000)
PYCOX_ARMS = [
    ("logistic_hazard", "time_lora"),
    ("deephit", "time_lora"),
    ("coxtime", "time_lora"),
    ("coxtime", "concat"),
]
NEURAL_ARMS = ["time_lora", "film", "concat"]


def fit_baseline(split, family, conditioning="time_lora", **overrides):
    cfg = baselines.BaselineConfig(
        family=family, conditioning=conditioning, **{**SMALL, "epochs": 4, **overrides}
    )
    return baselines.fit(cfg, split, seed=0, device=CPU)


def fit_neural(split, conditioning, tmp_path, **overrides):
    cfg = neural.NeuralConfig(conditioning=conditioning, nodes=5, **{**SMALL, **overrides})
    checkpoint = tmp_path / f"run{len(list(tmp_path.iterdir()))}.pt"  # a fresh run each time
    return neural.fit(cfg, split, seed=0, device=CPU, checkpoint=checkpoint)


def one_step_weights(train_one, lr: float, weight_decay: float) -> dict[str, np.ndarray]:
    state = train_one(lr=lr, weight_decay=weight_decay, epochs=1, batch_size=100_000)
    return {k: v.detach().double().numpy() for k, v in state.items() if v.is_floating_point()}


def assert_decay_is_lr_times_wd(train_one, lr=1e-3, weight_decay=50.0) -> None:
    """AdamW: p1 = p0 (1 - lr wd) - lr u with |u| <= 1 at step 1, u the same with or without
    decay. So p1(wd) - p1(0) = -lr wd p0 = -lr wd p1(0) up to lr² wd."""
    plain = one_step_weights(train_one, lr, 0.0)
    decayed = one_step_weights(train_one, lr, weight_decay)
    assert plain.keys() == decayed.keys()
    for key, p in plain.items():
        np.testing.assert_allclose(
            decayed[key] - p, -lr * weight_decay * p, rtol=0, atol=lr**2 * weight_decay * 1.01
        )
    moved = max(np.abs(decayed[k] - plain[k]).max() for k in plain)
    assert moved > 10 * lr**2 * weight_decay  # the decay is really there


@pytest.mark.parametrize("family,conditioning", PYCOX_ARMS)
def test_pycox_arms_decay_like_pytorch_adamw(tiny_split, family, conditioning):
    def train_one(**kw):
        return fit_baseline(tiny_split, family, conditioning, **kw)[1]["state_dict"]

    assert_decay_is_lr_times_wd(train_one)


@pytest.mark.parametrize("conditioning", NEURAL_ARMS)
def test_neural_arms_decay_like_pytorch_adamw(tiny_split, tmp_path, conditioning):
    def train_one(**kw):
        return fit_neural(tiny_split, conditioning, tmp_path, **kw)[0].state_dict()

    assert_decay_is_lr_times_wd(train_one)


def test_the_decay_check_rejects_torchtuples_decoupled_decay(tiny_split):
    """What the baselines used before: tt.optim.AdamW(decoupled_weight_decay=wd) shrinks by
    wd per step whatever lr is, so the same check fails on it."""
    from pycox.models import LogisticHazard

    def train_one(lr, weight_decay, epochs, batch_size):
        torch.manual_seed(0)
        labtrans = LogisticHazard.label_transform(10)
        y = labtrans.fit_transform(tiny_split["t_train"], tiny_split["e_train"])
        net = tt.practical.MLPVanilla(
            1, [16], labtrans.out_features, batch_norm=False, w_init_=None
        )
        optimizer = tt.optim.AdamW(lr=lr, decoupled_weight_decay=weight_decay)
        model = LogisticHazard(net, optimizer, duration_index=labtrans.cuts)
        model.fit(tiny_split["x_train"], y, batch_size, epochs, verbose=False)
        return net.state_dict()

    with pytest.raises(AssertionError):
        assert_decay_is_lr_times_wd(train_one, weight_decay=0.5)


def cosine(lr: float, epochs: int) -> list[float]:
    return [lr * (1 + math.cos(math.pi * e / epochs)) / 2 for e in range(epochs)]


@pytest.mark.parametrize("family,conditioning", PYCOX_ARMS)
def test_pycox_arms_use_cosine_decay(tiny_split, family, conditioning):
    _, info = fit_baseline(tiny_split, family, conditioning, lr=2e-3)
    assert info["epochs"] == 4
    assert info["lrs"] == pytest.approx(cosine(2e-3, 4), rel=1e-12)


def test_neural_arm_uses_cosine_decay(tiny_split, tmp_path):
    _, history = fit_neural(tiny_split, "film", tmp_path, epochs=5, lr=3e-3)
    assert history["lrs"] == pytest.approx(cosine(3e-3, 5), rel=1e-12)


def grid_with_zero(split, n=60):
    return np.concatenate([[0.0], np.linspace(1e-3, 1.2 * split["t_test"].max(), n)])


@pytest.mark.parametrize("family,conditioning", [*PYCOX_ARMS, ("coxph", "time_lora")])
def test_baseline_survival_starts_at_one_and_never_rises(tiny_split, family, conditioning):
    predict, _ = fit_baseline(tiny_split, family, conditioning)
    surv = predict(tiny_split["x_test"], grid_with_zero(tiny_split))
    assert np.all(surv[:, 0] == 1.0)
    assert np.all(np.diff(surv, axis=1) <= 1e-12)
    assert surv.min() >= 0 and surv[:, -1].max() < 1  # and it does fall


@pytest.mark.parametrize("conditioning", NEURAL_ARMS)
def test_neural_survival_starts_at_one_and_never_rises(tiny_split, tmp_path, conditioning):
    net, history = fit_neural(tiny_split, conditioning, tmp_path, epochs=3)
    grid = grid_with_zero(tiny_split)
    surv = neural.predict_survival(
        net, tiny_split["x_test"], grid, t_max=history["t_max"], nodes=5, device=CPU
    )
    assert np.all(surv[:, 0] == 1.0)
    assert np.all(np.diff(surv, axis=1) <= 0) and surv[:, -1].max() < 1


def discrete_reference(family, state_dict, cuts, x):
    """S at the cuts from the network's own outputs, given T > 0 (output 0 = time 0):
    LogisticHazard Π_{1≤k≤j}(1 − h_k); DeepHit (1 − Σ_{k≤j} f_k) / (1 − f_0), with f the
    softmax over the outputs and pycox's extra "later" column."""
    net = baselines._mlp(baselines.BaselineConfig(family=family, **SMALL), x.shape[1], len(cuts))
    net.load_state_dict(state_dict)
    with torch.no_grad():
        out = net(torch.as_tensor(x, dtype=torch.float32)).double()
    if family == "logistic_hazard":
        hazard = torch.sigmoid(out)
        hazard[:, 0] = 0.0
        return torch.cumprod(1 - hazard, dim=1).numpy()
    pmf = torch.softmax(torch.cat([out, torch.zeros(len(out), 1, dtype=out.dtype)], 1), 1)
    return ((1 - pmf[:, :-1].cumsum(1)) / (1 - pmf[:, :1])).numpy()


@pytest.mark.parametrize("family", ["logistic_hazard", "deephit"])
def test_discrete_models_are_steps_at_their_cuts(tiny_split, family):
    predict, info = fit_baseline(tiny_split, family, bins=8)
    cuts = info["cuts"]
    assert cuts[0] == 0 and len(cuts) <= 8
    x = tiny_split["x_test"]
    expected = discrete_reference(family, info["state_dict"], cuts, x)
    np.testing.assert_allclose(predict(x, cuts), expected, rtol=1e-5, atol=1e-6)
    # constant up to the next cut (right-continuous), and constant after the last one
    inside = np.concatenate([cuts[1:] - 1e-6 * np.diff(cuts), [2 * cuts[-1]]])
    np.testing.assert_array_equal(predict(x, inside), predict(x, cuts))


def test_coxph_is_the_breslow_step_function(tiny_split):
    from lifelines import CoxPHFitter

    predict, _ = fit_baseline(tiny_split, "coxph")
    frame = pd.DataFrame({"x0": tiny_split["x_train"][:, 0]})
    frame["duration"], frame["event"] = tiny_split["t_train"], tiny_split["e_train"]
    fitter = CoxPHFitter(penalizer=0.01).fit(frame, "duration", "event")
    x = tiny_split["x_test"]
    times = fitter.baseline_survival_.index.to_numpy()
    breslow = fitter.predict_survival_function(pd.DataFrame({"x0": x[:, 0]})).to_numpy().T
    np.testing.assert_allclose(predict(x, times), breslow, rtol=1e-10)
    middle = (times[1:] + times[:-1]) / 2
    np.testing.assert_allclose(predict(x, middle), breslow[:, :-1], rtol=1e-10)
    # lifelines' own ``times=`` interpolates linearly, which is not the estimator
    linear = fitter.predict_survival_function(pd.DataFrame({"x0": x[:, 0]}), times=middle)
    assert np.abs(linear.to_numpy().T - breslow[:, :-1]).max() > 1e-3


def test_coxtime_time_lora_is_qsurvs_logit_at_normalised_time():
    torch.manual_seed(0)
    hazard_net = TimeLoRAHazard(in_features=3, hidden=[8], rank=2, alpha=2.0, time_width=6)
    with torch.no_grad():
        for p in hazard_net.parameters():
            p.normal_(0, 0.5)
    g = baselines.CoxTimeLoRA(hazard_net, t_max=40.0)
    x, t = torch.randn(7, 3), torch.rand(7, 1) * 40
    torch.testing.assert_close(g(x, t), hazard_net.logit(x, t / 40.0))
    torch.testing.assert_close(
        torch.nn.functional.softplus(g(x, t)).clamp(1e-8, 30), hazard_net(x, t / 40.0)
    )


def test_coxtime_on_backbone_features_gives_the_same_curves(tiny_split):
    """Breslow's estimator and the prediction through ``on_features`` (the backbone once per
    subject) equal pycox's own loop over (subject, time) pairs with the full network."""
    from pycox.models import CoxTime

    torch.manual_seed(0)
    x, x_test = tiny_split["x_train"], tiny_split["x_test"]
    labtrans = CoxTime.label_transform(with_mean=False, with_std=False)
    y = labtrans.fit_transform(tiny_split["t_train"], tiny_split["e_train"])
    hazard_net = TimeLoRAHazard(in_features=1, hidden=[8], rank=2, alpha=2.0, time_width=6)
    g = baselines.CoxTimeLoRA(hazard_net, t_max=tiny_split["t_train"].max())
    model = CoxTime(g, tt.optim.Adam(lr=1e-2), labtrans=labtrans)
    model.fit(x, y, batch_size=64, epochs=3, verbose=False)
    model.compute_baseline_hazards()  # pycox's own: its training data, the full network
    naive = model.predict_surv_df(x_test)
    order = np.argsort(y[0], kind="stable")
    model.net = g.on_features()
    model.compute_baseline_hazards(input=g.features(x)[order], target=(y[0][order], y[1][order]))
    fast = model.predict_surv_df(g.features(x_test))
    np.testing.assert_array_equal(fast.index, naive.index)
    np.testing.assert_allclose(fast.to_numpy(), naive.to_numpy(), rtol=1e-5, atol=1e-7)
    assert naive.to_numpy().min() < 0.9  # the curves do fall
    # at mixed times (one per subject, more than the shared-grid shortcut takes) too
    features = torch.as_tensor(g.features(x))
    t = torch.as_tensor(tiny_split["t_train"], dtype=torch.float32)[:, None]
    with torch.no_grad():
        torch.testing.assert_close(model.net(features, t), g(torch.as_tensor(x), t))
        torch.testing.assert_close(model.net(features[:5], t[:5]), g(torch.as_tensor(x[:5]), t[:5]))


@pytest.fixture(scope="module")
def gbsg2_split(tmp_path_factory):
    """GBSG2's first seed through repro.qsurv.prepare: durations in days, with ties and with
    times at which only censorings fall."""
    from repro.common.io import read_npz
    from repro.qsurv.prepare import PrepareConfig, prepare

    out = tmp_path_factory.mktemp("gbsg2") / "gbsg2.npz"
    prepare(PrepareConfig(dataset="gbsg2", source="bundled", seeds=(0,)), str(out))
    return {k: v[0] for k, v in read_npz(out).items() if k != "seeds"}


@pytest.mark.parametrize("network", ["time_lora", "concat"])
def test_coxtime_predicts_at_event_times_only_with_pycoxs_numbers(gbsg2_split, network):
    """coxtime_predictor passes pycox only the event times' baseline hazards: its curves are
    bit for bit pycox's own prediction at every training time read as the same step
    function, on any grid, for a second grid of the same subjects (kept from the first
    pass) and for other subjects after them."""
    split = gbsg2_split
    cfg = baselines.BaselineConfig(family="coxtime", conditioning=network, **SMALL, epochs=1)
    model_class, net, labtrans = baselines._coxtime(
        cfg, split["x_train"].shape[1], split["t_train"]
    )
    x = split["x_train"].astype(np.float32)
    y = labtrans.fit_transform(split["t_train"], split["e_train"])
    torch.manual_seed(0)
    model = model_class(net, tt.optim.Adam(lr=1e-2), labtrans=labtrans)
    model.fit(x, y, batch_size=128, epochs=1, verbose=False)
    model.compute_baseline_hazards()
    hazards = model.baseline_hazards_.to_numpy()
    assert (hazards == 0).sum() > 100 and (hazards > 0).sum() > 50  # censored-only times
    predict = baselines.coxtime_predictor(model, lambda x: x.astype(np.float32))
    times = labtrans.map_scaled_to_orig(model.baseline_hazards_.index.to_numpy())
    grid = np.sort(np.concatenate([[0.0], times, np.linspace(1, 1.1 * times.max(), 97)]))
    for subjects in (split["x_test"][:40], split["x_test"][:40], split["x_val"][:30]):
        full = model.predict_surv_df(subjects.astype(np.float32))  # every training time
        expected = baselines.step_survival(full.index.to_numpy(), full.to_numpy().T, grid)
        np.testing.assert_array_equal(predict(subjects, grid), expected)
        np.testing.assert_array_equal(predict(subjects, grid[::3]), expected[:, ::3])
    assert expected[:, -1].max() < 1  # the curves do fall


def test_coxtime_variants_use_different_networks(tiny_split):
    lora = fit_baseline(tiny_split, "coxtime", "time_lora", epochs=1)[1]["state_dict"]
    concat = fit_baseline(tiny_split, "coxtime", "concat", epochs=1)[1]["state_dict"]
    assert "net.up.weight" in lora and "net.time.out.weight" in lora
    assert not any("up" in k for k in concat)
    with pytest.raises(ValueError, match="unknown CoxTime network"):
        fit_baseline(tiny_split, "coxtime", "film")
    with pytest.raises(ValueError, match="unknown baseline"):
        fit_baseline(tiny_split, "pmf")


@pytest.mark.parametrize("conditioning", ["film", "concat"])
def test_film_and_concat_learn_the_hazard(tiny_split, tmp_path, conditioning):
    """After 40 epochs each ablation's hazard error on the truth grid is far below that of
    the same network untrained (a flat softplus(-5) hazard)."""
    grid = tiny_split["truth_grid"]
    true_hazard = interval_hazard(np.exp(-tiny_split["true_cumhaz"]), grid)
    mid = (grid[1:] + grid[:-1]) / 2
    cfg = neural.NeuralConfig(conditioning=conditioning, nodes=5, **SMALL)
    torch.manual_seed(0)
    untrained = neural.build(cfg, tiny_split["x_train"].shape[1])
    trained, history = fit_neural(tiny_split, conditioning, tmp_path, epochs=40, lr=1e-2)
    errors = []
    for net in (untrained, trained):
        surv = neural.predict_survival(
            net, tiny_split["x_test"], grid, t_max=history["t_max"], nodes=5, device=CPU
        )
        errors.append(curve_l1(interval_hazard(surv, grid), true_hazard, mid))
    assert errors[1] < 0.3 * errors[0], errors


def test_coxph_leaves_out_a_column_constant_on_the_training_split(tiny_split):
    """A missingness indicator that is 0 on every training row (SUPPORT2) made lifelines' Newton
    steps NaN; left out, the fit equals the fit without that column, and the test rows' own
    values of it do not matter."""
    with_constant = dict(tiny_split)
    for part in ("train", "val", "test"):
        x = tiny_split[f"x_{part}"]
        column = np.zeros((len(x), 1)) if part == "train" else np.ones((len(x), 1))
        with_constant[f"x_{part}"] = np.hstack([column, x])
    predict_constant, info = fit_baseline(with_constant, "coxph")
    predict, reference = fit_baseline(tiny_split, "coxph")
    np.testing.assert_allclose(info["coefficients"], reference["coefficients"])
    grid = np.linspace(0.1, tiny_split["t_train"].max(), 7)
    np.testing.assert_allclose(
        predict_constant(with_constant["x_test"], grid), predict(tiny_split["x_test"], grid)
    )
