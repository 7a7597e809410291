"""Baselines from maintained libraries, at the same width, epochs, batch and learning rate.

pycox (LogisticHazard, DeepHit, CoxTime) trains with torchtuples; CoxPH is lifelines'.
Each returns a predictor of S(t | x) on any time grid.
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

log = logging.getLogger(__name__)

FAMILIES = ("logistic_hazard", "deephit", "coxtime", "coxph")


@dataclasses.dataclass(frozen=True)
class BaselineConfig:
    family: str
    hidden: tuple[int, ...] = (32, 32)
    dropout: float = 0.0
    epochs: int = 100
    batch_size: int = 128
    lr: float = 1e-2
    weight_decay: float = 1e-4
    patience: int = 10
    bins: int = 50
    deephit_alpha: float = 0.2
    deephit_sigma: float = 0.1
    coxph_penalizer: float = 0.01


def step_survival(index: np.ndarray, surv: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Right-continuous step function S with S = 1 before the first index time: (n, M)."""
    position = np.searchsorted(index, grid, side="right") - 1
    padded = np.concatenate([np.ones((surv.shape[0], 1)), surv], axis=1)
    return padded[:, position + 1]


def _mlp(cfg: BaselineConfig, in_features: int, out_features: int):
    import torchtuples as tt

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


def _fit_pycox(cfg: BaselineConfig, split: dict[str, np.ndarray], device: torch.device):
    # torchtuples 0.2.2 uses tensor APIs that torch 2.x deprecates: noise in every log
    warnings.filterwarnings("ignore", category=UserWarning, module="torchtuples")
    import torchtuples as tt
    from pycox.models import CoxTime, DeepHitSingle, LogisticHazard
    from pycox.models.cox_time import MLPVanillaCoxTime

    x_train, x_val = split["x_train"].astype(np.float32), split["x_val"].astype(np.float32)
    targets = (split["t_train"], split["e_train"])
    val_targets = (split["t_val"], split["e_val"])
    optimizer = tt.optim.AdamW(
        lr=cfg.lr, betas=(0.9, 0.999), decoupled_weight_decay=cfg.weight_decay
    )
    if cfg.family == "coxtime":
        labtrans = CoxTime.label_transform()
        y_train = labtrans.fit_transform(*targets)
        net = MLPVanillaCoxTime(
            x_train.shape[1],
            list(cfg.hidden),
            batch_norm=False,
            dropout=cfg.dropout or None,
            activation=torch.nn.Tanh,
            w_init_=None,
        )
        model = CoxTime(net, optimizer, device=device, labtrans=labtrans)
    else:
        model_class = LogisticHazard if cfg.family == "logistic_hazard" else DeepHitSingle
        labtrans = model_class.label_transform(cfg.bins, scheme="quantiles")
        y_train = labtrans.fit_transform(*targets)  # before the model: it needs the fitted cuts
        # duplicate quantile cuts are merged, so the output size comes from the transform
        net = _mlp(cfg, x_train.shape[1], labtrans.out_features)
        kwargs = {}
        if cfg.family == "deephit":
            kwargs = dict(alpha=cfg.deephit_alpha, sigma=cfg.deephit_sigma)
        model = model_class(net, optimizer, device=device, duration_index=labtrans.cuts, **kwargs)
    y_val = labtrans.transform(*val_targets)
    with tempfile.TemporaryDirectory() as tmp:  # the callback's weight file, not the CWD
        stopper = tt.callbacks.EarlyStopping(
            patience=cfg.patience, file_path=str(Path(tmp) / "w.pt")
        )
        log_ = model.fit(
            x_train,
            y_train,
            cfg.batch_size,
            cfg.epochs,
            callbacks=[stopper],
            verbose=False,
            val_data=(x_val, y_val),
        )
    epochs = len(log_.to_pandas())
    if cfg.family == "coxtime":
        model.compute_baseline_hazards()

        def predict(x, grid):
            surv = model.predict_surv_df(x.astype(np.float32))
            return step_survival(surv.index.to_numpy(), surv.to_numpy().T, grid)
    else:

        def predict(x, grid):
            # piecewise-constant hazard inside each bin (pycox's interpolation), then linear
            surv = model.interpolate(10).predict_surv_df(x.astype(np.float32))
            index = np.concatenate([[0.0], surv.index.to_numpy()])
            values = np.concatenate([np.ones((1, surv.shape[1])), surv.to_numpy()])
            return np.stack([np.interp(grid, index, values[:, i]) for i in range(values.shape[1])])

    return predict, {"epochs": epochs, "state_dict": net.state_dict()}


def _fit_coxph(cfg: BaselineConfig, split: dict[str, np.ndarray]):
    from lifelines import CoxPHFitter

    columns = [f"x{i}" for i in range(split["x_train"].shape[1])]
    frame = pd.DataFrame(split["x_train"], columns=columns)
    frame["duration"], frame["event"] = split["t_train"], split["e_train"]
    fitter = CoxPHFitter(penalizer=cfg.coxph_penalizer).fit(frame, "duration", "event")

    def predict(x, grid):
        surv = fitter.predict_survival_function(pd.DataFrame(x, columns=columns), times=grid)
        return surv.to_numpy().T

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
