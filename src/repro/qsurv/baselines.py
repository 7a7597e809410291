"""Baselines from maintained libraries, at the same width, epochs, batch, learning rate,
optimiser and schedule as QSurv.

pycox (LogisticHazard, DeepHit, CoxTime) trains through torchtuples, but with the optimiser,
cosine schedule and gradient clip of :mod:`repro.qsurv.optim` (torchtuples' own AdamW
decays weights 1/lr times harder). CoxTime's g(x, t) is either QSurv's Time-LoRA network
(``conditioning: time_lora``, the official code's choice) or pycox's MLP on (x, t)
(``concat``). CoxPH is lifelines' (Newton-Raphson with an L2 penalty; no optimiser to share).

Each returns a predictor of S(t | x) on any time grid, read as the model defines it:

* LogisticHazard and DeepHit are discrete: S is known at pycox's cuts and is a
  right-continuous step function between them. pycox's first cut is 0 and every duration is
  positive, so the mass the network puts on "an event at time 0" has no data; we report the
  model's survival given T > 0, S(t) / S(0), which starts at 1.
* CoxTime and CoxPH use Breslow's baseline hazard: a step function at the training times.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torchtuples as tt

from repro.qsurv import optim
from repro.qsurv.model import TimeLoRAHazard, build_from_config

log = logging.getLogger(__name__)

FAMILIES = ("logistic_hazard", "deephit", "coxtime", "coxph")
COXTIME_NETWORKS = ("time_lora", "concat")


@dataclasses.dataclass(frozen=True)
class BaselineConfig:
    family: str
    conditioning: str = "time_lora"  # CoxTime only
    hidden: tuple[int, ...] = (32, 32)
    dropout: float = 0.0
    epochs: int = 100
    batch_size: int = 128
    lr: float = 1e-2
    weight_decay: float = 1e-4
    patience: int = 10
    grad_clip: float = 0.0
    bins: int = 50
    deephit_alpha: float = 0.2
    deephit_sigma: float = 0.1
    coxph_penalizer: float = 0.01
    rank: int = 16  # Time-LoRA of CoxTime, as QSurv's
    alpha: float = 16.0
    time_width: int = 32
    time_depth: int = 3
    time_activation: str = "tanh"


def step_survival(index: np.ndarray, surv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Right-continuous step function S with S = 1 before the first index time: (n, M)."""
    position = np.searchsorted(index, grid, side="right") - 1
    padded = np.concatenate([np.ones((surv.shape[0], 1)), surv], axis=1)
    return padded[:, position + 1]


class _CosineSchedule(tt.callbacks.Callback):
    """QSurv's per-epoch cosine decay and gradient clip inside torchtuples' fit loop."""

    def __init__(self, epochs: int, grad_clip: float):
        self.epochs, self.grad_clip, self.lrs = epochs, grad_clip, []

    def on_fit_start(self):
        self.schedule = optim.cosine(self.model.optimizer.optimizer, epochs=self.epochs)

    def on_epoch_start(self):
        self.lrs.append(self.model.optimizer.param_groups[0]["lr"])

    def before_step(self):
        optim.clip_gradients(self.model.net.parameters(), self.grad_clip)
        return False

    def on_epoch_end(self):
        self.schedule.step()
        return False


class CoxTimeLoRA(torch.nn.Module):
    """g(x, t) for pycox's CoxTime: the Time-LoRA network's logit at v = t / t_max.

    In the case-control loss and in Breslow's estimator only g(x_i, t) − g(x_j, t) at a
    shared t matters, so the head bias and the time bias b(v) cancel.
    """

    def __init__(self, net: TimeLoRAHazard, t_max: float):
        super().__init__()
        self.net, self.t_max = net, float(t_max)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net.logit(x, t.reshape(-1, 1) / self.t_max)

    @torch.no_grad()
    def features(self, x: np.ndarray) -> np.ndarray:
        self.net.eval()
        device = next(self.net.parameters()).device
        x = torch.as_tensor(x, dtype=torch.float32, device=device)
        return self.net.features(x).cpu().numpy()

    def on_features(self) -> torch.nn.Module:
        """The same g(·, t) taking ``features(x)`` instead of x: Breslow's estimator and the
        prediction evaluate g at every (subject, event time) pair, and this way the backbone
        runs once per subject instead of once per pair (the same numbers)."""
        return _CoxTimeLoRAOnFeatures(self)


class _CoxTimeLoRAOnFeatures(torch.nn.Module):
    def __init__(self, g: CoxTimeLoRA):
        super().__init__()
        self.g = g

    def forward(self, features: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        v = t.reshape(-1) / self.g.t_max
        unique, inverse = torch.unique(v, return_inverse=True)
        if len(unique) > 64:  # pairs at many times: the time network per pair
            return self.g.net.logit_from_features(features, v[:, None])
        # pycox asks for one time per call: the time network runs once, on a shared grid
        per_time = self.g.net.logit_from_features(features, unique[None, :])
        return per_time.gather(1, inverse[:, None])


def coxtime_predictor(model, inputs=lambda x: x):
    """predict(x, grid) -> S (n, M) of a pycox CoxTime model with its baseline hazards set.

    Breslow's hazard is 0 at a time with censorings only, so the cumulative hazard is flat
    there: pycox's prediction at the event times alone gives the same step function, with
    the same numbers (pycox zeroes the other rows and adds them to its cumulative sum), and
    one network pass over the subjects per event time instead of per training time (NWTCO:
    269 instead of 1,899). The curves of the last ``x`` are kept, so a second grid for the
    same subjects (the truth grid of synthetic data) costs no second pass.
    """
    hazards = model.baseline_hazards_
    event_hazards = hazards[hazards.to_numpy() > 0]
    last = {}

    def predict(x, grid):
        if "x" not in last or not np.array_equal(last["x"], x):
            surv = model.predict_surv_df(inputs(x), baseline_hazards_=event_hazards)
            last.update(x=np.array(x), index=surv.index.to_numpy(), surv=surv.to_numpy().T)
        return step_survival(last["index"], last["surv"], grid)

    return predict


def _mlp(cfg: BaselineConfig, in_features: int, out_features: int):
    # Tanh and PyTorch's default init, as in the QSurv backbone: only the time handling differs.
    return tt.practical.MLPVanilla(
        in_features,
        list(cfg.hidden),
        out_features,
        batch_norm=False,
        dropout=cfg.dropout or None,
        activation=torch.nn.Tanh,
        w_init_=None,
    )


def _coxtime(cfg: BaselineConfig, in_features: int, t_train: np.ndarray):
    from pycox.models import CoxTime
    from pycox.models.cox_time import MLPVanillaCoxTime

    if cfg.conditioning == "time_lora":
        lora = build_from_config("time_lora", cfg, in_features)
        net = CoxTimeLoRA(lora, t_max=t_train.max())
        labtrans = CoxTime.label_transform(with_mean=False, with_std=False)  # raw t
    elif cfg.conditioning == "concat":
        net = MLPVanillaCoxTime(
            in_features,
            list(cfg.hidden),
            batch_norm=False,
            dropout=cfg.dropout or None,
            activation=torch.nn.Tanh,
            w_init_=None,
        )
        labtrans = CoxTime.label_transform()  # pycox's standardised t
    else:
        raise ValueError(
            f"unknown CoxTime network {cfg.conditioning!r}; choose from {COXTIME_NETWORKS}"
        )
    return CoxTime, net, labtrans


def _fit_pycox(cfg: BaselineConfig, split: dict[str, np.ndarray], device: torch.device):
    # torchtuples 0.2.2 uses tensor APIs that torch 2.x deprecates: noise in every log
    warnings.filterwarnings("ignore", category=UserWarning, module="torchtuples")
    from pycox.models import DeepHitSingle, LogisticHazard

    x_train, x_val = split["x_train"].astype(np.float32), split["x_val"].astype(np.float32)
    targets = (split["t_train"], split["e_train"])
    if cfg.family == "coxtime":
        model_class, net, labtrans = _coxtime(cfg, x_train.shape[1], split["t_train"])
        y_train = labtrans.fit_transform(*targets)
        kwargs = dict(labtrans=labtrans)
    else:
        model_class = LogisticHazard if cfg.family == "logistic_hazard" else DeepHitSingle
        labtrans = model_class.label_transform(cfg.bins, scheme="quantiles")
        y_train = labtrans.fit_transform(*targets)  # before the model: it needs the fitted cuts
        # duplicate quantile cuts are merged, so the output size comes from the transform
        net = _mlp(cfg, x_train.shape[1], labtrans.out_features)
        kwargs = dict(duration_index=labtrans.cuts)
        if cfg.family == "deephit":
            kwargs.update(alpha=cfg.deephit_alpha, sigma=cfg.deephit_sigma)
    optimizer = optim.adamw(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    model = model_class(net, optimizer, device=device, **kwargs)
    y_val = labtrans.transform(split["t_val"], split["e_val"])
    schedule = _CosineSchedule(cfg.epochs, cfg.grad_clip)
    with tempfile.TemporaryDirectory() as tmp:  # the callback's weight file, not the CWD
        stopper = tt.callbacks.EarlyStopping(
            patience=cfg.patience, file_path=str(Path(tmp) / "w.pt")
        )
        log_ = model.fit(
            x_train,
            y_train,
            cfg.batch_size,
            cfg.epochs,
            callbacks=[schedule, stopper],
            verbose=False,
            val_data=(x_val, y_val),
        )
    if cfg.family == "coxtime":
        inputs = lambda x: x.astype(np.float32)  # noqa: E731
        if isinstance(net, CoxTimeLoRA):  # from here on, g reads backbone features
            inputs, model.net = net.features, net.on_features()
        order = np.argsort(y_train[0], kind="stable")  # Breslow needs them sorted by time
        target = (y_train[0][order], y_train[1][order])
        model.compute_baseline_hazards(input=inputs(x_train)[order], target=target)
        predict = coxtime_predictor(model, inputs)
    else:

        def predict(x, grid):
            surv = model.predict_surv_df(x.astype(np.float32)).to_numpy().T  # (n, cuts)
            return step_survival(labtrans.cuts, surv / surv[:, :1], grid)

    info = {"epochs": len(log_.to_pandas()), "lrs": schedule.lrs, "state_dict": net.state_dict()}
    if cfg.family != "coxtime":
        info["cuts"] = labtrans.cuts
    return predict, info


def _fit_coxph(cfg: BaselineConfig, split: dict[str, np.ndarray]):
    from lifelines import CoxPHFitter

    # lifelines divides every covariate by its standard deviation: a column constant on the
    # training split (a missingness indicator whose only missing value fell in the test
    # split, as in SUPPORT2) would make the Newton steps NaN. It carries no information for
    # the fit, so it is left out of the fit and of the predictions.
    varying = np.flatnonzero(split["x_train"].std(axis=0) > 0)
    columns = [f"x{i}" for i in varying]
    frame = pd.DataFrame(split["x_train"][:, varying], columns=columns)
    frame["duration"], frame["event"] = split["t_train"], split["e_train"]
    fitter = CoxPHFitter(penalizer=cfg.coxph_penalizer).fit(frame, "duration", "event")

    def predict(x, grid):
        # at the baseline's own times, then as a step function (lifelines' ``times=``
        # would interpolate linearly between them)
        surv = fitter.predict_survival_function(pd.DataFrame(x[:, varying], columns=columns))
        return step_survival(surv.index.to_numpy(), surv.to_numpy().T, grid)

    return predict, {"epochs": 0, "coefficients": fitter.params_.to_numpy()}


def fit(cfg: BaselineConfig, split: dict[str, np.ndarray], *, seed: int, device: torch.device):
    """Train one baseline; return (predict(x, grid) -> S of shape (n, M), history)."""
    if cfg.family not in FAMILIES:
        raise ValueError(f"unknown baseline {cfg.family!r}; choose from {FAMILIES}")
    torch.manual_seed(seed)
    np.random.seed(seed)
    started = time.perf_counter()
    if cfg.family == "coxph":
        predict, info = _fit_coxph(cfg, split)
    else:
        predict, info = _fit_pycox(cfg, split, device)
    info["train_seconds"] = time.perf_counter() - started
    return predict, info
