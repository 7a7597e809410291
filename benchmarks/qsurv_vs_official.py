"""QSurv side by side with the official code (hyungrok-do/qsurv at cf45454), run by hand.

Run: ``python benchmarks/qsurv_vs_official.py --official /path/to/qsurv-checkout``.
The official repository is imported from that path; nothing of it is in this project.
torchvision and torchdiffeq (imaging and SODEN only) are replaced by empty stand-ins when
they are not installed, and numpy 2's missing ``np.trapz`` by ``np.trapezoid``.

* ``gbsg2``: the official loader and split (80/20 stratified by event, then 75/25 of the
  training part; test times clipped to the training maximum) per seed, and the official
  fixed hyper-parameters for both implementations (2x128 Tanh MLP, dropout 0.1, Time-LoRA
  rank 32 / alpha 32, time MLP 64 wide and 3 deep, 15 GL nodes, AdamW lr 1e-3 wd 1e-5,
  cosine, batch 128, gradient clip 1, best validation loss over 50 epochs). Both are scored
  with the official metric functions (``tools/eval.py``) and with ours
  (:mod:`repro.qsurv.ipcw`): C-index and IBS at the "full" horizon. Prints per-seed values
  and paired differences (ours - official, 95% t intervals).
* ``gompertz``: the official simulation's Gompertz data (n = 2000 + 2000, 20% censoring,
  its run seeds 0, 100, ...), the official QSurv with its simulation settings against ours
  with the embedded config's settings, in four variants that locate the hazard-error gap:
  the hazard per unit of normalised time v (before) or of raw time t (now, as the
  official), and a Tanh or SiLU time network. Prints hazard L1 by both definitions.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from repro.common.stats import paired_difference
from repro.qsurv import ipcw, neural
from repro.qsurv.evaluate import interval_hazard
from repro.qsurv.metrics import curve_l1

CPU = torch.device("cpu")
GBSG2_SETTINGS = dict(
    hidden=(128, 128),
    dropout=0.1,
    rank=32,
    alpha=32.0,
    time_width=64,
    time_depth=3,
    nodes=15,
    eval_nodes=15,
    lr=1e-3,
    weight_decay=1e-5,
    batch_size=128,
    grad_clip=1.0,
)
# the embedded config's synthetic settings (config/config.yaml, papers.qsurv.training)
GOMPERTZ_SETTINGS = dict(
    hidden=(32, 32), rank=16, alpha=16.0, time_width=32, time_depth=3, nodes=15, eval_nodes=15
)
GOMPERTZ_VARIANTS = {
    "ours: h per unit of v, Tanh (before)": dict(per_v=True, time_activation="tanh"),
    "ours: h per unit of v, SiLU": dict(per_v=True, time_activation="silu"),
    "ours: h per unit of t, Tanh": dict(per_v=False, time_activation="tanh"),
    "ours: h per unit of t, SiLU (now)": dict(per_v=False, time_activation="silu"),
}


def import_official(path: Path) -> None:
    for name, submodules in (("torchvision", ("models", "transforms")), ("torchdiffeq", ())):
        try:
            importlib.import_module(name)
        except ImportError:
            stand_in = types.ModuleType(name)
            for sub in submodules:
                sys.modules[f"{name}.{sub}"] = types.ModuleType(f"{name}.{sub}")
                setattr(stand_in, sub, sys.modules[f"{name}.{sub}"])
            stand_in.odeint = stand_in.odeint_adjoint = None
            sys.modules[name] = stand_in
    if not hasattr(np, "trapz"):
        np.trapz = np.trapezoid
    sys.path.insert(0, str(path.resolve()))


def sorted_predictor(predict):
    """surv_fn(times) for any times (unsorted, repeated) from a predictor on sorted grids."""

    def surv_fn(times):
        times = np.asarray(times, dtype=float)
        unique, inverse = np.unique(times, return_inverse=True)
        return predict(unique)[:, inverse]

    return surv_fn


def fit_ours(cfg: neural.NeuralConfig, split: dict, seed: int, wrap=None):
    with tempfile.TemporaryDirectory() as tmp:
        if wrap is not None:  # swap the network for a wrapped one, inside neural.fit only
            build = neural.build
            neural.build = lambda c, p: wrap(build(c, p), float(split["t_train"].max()))
        try:
            net, history = neural.fit(cfg, split, seed=seed, device=CPU, checkpoint=Path(tmp) / "c")
        finally:
            if wrap is not None:
                neural.build = build

    def predict(grid):
        return neural.predict_survival(
            net, split["x_test"], grid, t_max=history["t_max"], nodes=cfg.eval_nodes, device=CPU
        )

    return predict


def official_gbsg2_split(seed: int):
    from data.tabular import get_gbsg
    from sklearn.model_selection import train_test_split

    train_x, train_e, train_t, test_x, test_e, test_t = get_gbsg(train_prop=0.8, seed=seed)
    test_t = np.clip(test_t, a_min=None, a_max=train_t.max())
    parts = train_test_split(
        train_x, train_t, train_e, test_size=0.25, stratify=train_e, random_state=seed
    )
    names = ("x_train", "x_val", "t_train", "t_val", "e_train", "e_val")
    split = {name: np.asarray(part) for name, part in zip(names, parts, strict=True)}
    split.update(x_test=test_x, t_test=test_t.astype(float), e_test=test_e.astype(float))
    split["t_full"], split["e_full"] = train_t.astype(float), train_e.astype(float)
    return split


def fit_official_gbsg2(split: dict, seed: int, epochs: int):
    import main as official

    official.set_global_seed(seed * 100_000)  # trial 0 of the official search
    params = dict(
        hidden_dims=[128, 128],
        dropout=0.1,
        batch_norm=False,
        lr=1e-3,
        weight_decay=1e-5,
        batch_size=128,
        optimizer_class=torch.optim.AdamW,
        t_hidden=64,
        rank=32,
        alpha=32,
        n_nodes=15,
        conditioning="lora",
        mu_t=0.0,
        sigma_t=float(split["t_train"].max()),
    )
    model = official.get_model("qsurv", split["x_train"].shape[1], seed, epochs, params)
    as_tensor = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float32)  # noqa: E731
    model.fit(
        x=as_tensor(split["x_train"]),
        t=as_tensor(split["t_train"])[:, None],
        e=as_tensor(split["e_train"])[:, None],
        val_x=as_tensor(split["x_val"]),
        val_t=as_tensor(split["t_val"])[:, None],
        val_e=as_tensor(split["e_val"])[:, None],
    )
    x_test = as_tensor(split["x_test"])

    def surv_fn(times):
        with torch.no_grad():
            s = model.predict_survival_probability(x_test, as_tensor(times)).numpy()
        return np.clip(s, 0.0, 1.0)

    return surv_fn


def score(surv_fn, split: dict) -> dict[str, float]:
    """C-index and IBS at the full horizon, by the official functions and by ours."""
    from tools.eval import get_tau_quantiles, integrated_brier_score, ipcw_uno_concordance_index

    train = split["t_full"], split["e_full"]
    test = split["t_test"], split["e_test"]
    tau = get_tau_quantiles(*train, (0.001,))[0]
    ours = ipcw.official_metrics(surv_fn, *train, *test)
    return {
        "C (official fn)": ipcw_uno_concordance_index(*train, *test, surv_fn, tau, max_weight=10),
        "C (our fn)": ours["cindex_ipcw"],
        "IBS (official fn)": integrated_brier_score(
            *train, *test, surv_fn, tau, n_points=500, max_weight=10
        ),
        "IBS (our fn)": ours["ibs_ipcw"],
    }


def print_paired(title: str, rows: dict[str, list[dict]], key: str, a: str, b: str) -> None:
    diff = paired_difference([r[key] for r in rows[a]], [r[key] for r in rows[b]])
    print(f"  {title}: {a} - {b} = {diff.text(3)}")


def gbsg2(args) -> None:
    cfg = neural.NeuralConfig(**GBSG2_SETTINGS, epochs=args.epochs, patience=args.epochs)
    rows = {"ours": [], "official": []}
    print(f"GBSG2, official loader and split, {args.epochs} epochs, seeds {args.seeds}")
    for seed in args.seeds:
        split = official_gbsg2_split(seed)
        ours = sorted_predictor(fit_ours(cfg, split, seed))
        rows["ours"].append(score(ours, split))
        rows["official"].append(score(fit_official_gbsg2(split, seed, args.epochs), split))
        for name in rows:
            values = ", ".join(f"{k} {v:.4f}" for k, v in rows[name][-1].items())
            print(f"  seed {seed} {name:>8}: {values}")
    gap = max(
        abs(r[f"{m} (our fn)"] - r[f"{m} (official fn)"])
        for name in rows
        for r in rows[name]
        for m in ("C", "IBS")
    )
    print(f"  largest |our metric function - official function|: {gap:.2g}")
    for key in rows["ours"][0]:
        print_paired(key, rows, key, "ours", "official")


class PerV(torch.nn.Module):
    """Before: the network's output is the hazard per unit of v = t / t_max."""

    def __init__(self, net: torch.nn.Module, t_max: float):
        super().__init__()
        self.net, self.t_max = net, t_max

    def forward(self, x, v):
        return self.net(x, v) / self.t_max


def hazard_errors(surv: np.ndarray, scenario, x_test, grid) -> dict[str, float]:
    true_hazard = scenario.true_hazard(x_test, grid).T
    true_bar = interval_hazard(scenario.true_survival(x_test, grid).T, grid)
    estimate = interval_hazard(surv, grid)
    mid = (grid[1:] + grid[:-1]) / 2
    return {
        "hazard L1 (official def.)": curve_l1(estimate, true_hazard[:, :-1], grid[:-1]),
        "hazard L1 (ours)": curve_l1(estimate, true_bar, mid),
    }


def gompertz(args) -> None:
    import simulation
    from models.qsurv import QSurv
    from networks.lora import BaseMLP, TimeLoRASurvivalWrapper
    from sklearn.model_selection import train_test_split

    rows = {name: [] for name in [*GOMPERTZ_VARIANTS, "official"]}
    seeds = [100 * s for s in args.seeds]
    print(f"Gompertz (official simulation), run seeds {seeds}")
    for seed in seeds:
        scenario = simulation.GompertzScenario(n_train=2000, n_test=2000, censoring_rate=0.2)
        x, t, e, x_test, t_test, e_test = scenario.generate(seed=seed)
        grid = np.linspace(t.min(), t.max(), 50).astype(float)
        simulation.set_global_seed(seed)
        backbone = BaseMLP(1, [32, 32], output_dim=32, activation=torch.nn.Tanh)
        net = TimeLoRASurvivalWrapper(
            backbone, feature_dim=32, sigma=float(t.max()), rank=16, alpha=16, t_depth=3
        )
        model = QSurv(net, n_nodes=15, epochs=args.sim_epochs, lr=1e-2, time_norm_mode="min_max")
        model.fit(torch.as_tensor(x), torch.as_tensor(t), torch.as_tensor(e))
        with torch.no_grad():
            surv = model.predict_survival_probability(
                torch.as_tensor(x_test), torch.as_tensor(grid)
            )
        rows["official"].append(hazard_errors(surv.numpy(), scenario, x_test, grid))
        # the official fit's own 80/20 split (its random_state 42) for ours too
        train, val = train_test_split(np.arange(len(t)), test_size=0.2, stratify=e, random_state=42)
        split = dict(x_train=x[train], t_train=t[train].astype(float), e_train=e[train])
        split |= dict(x_val=x[val], t_val=t[val].astype(float), e_val=e[val], x_test=x_test)
        for name, variant in GOMPERTZ_VARIANTS.items():
            cfg = neural.NeuralConfig(
                **GOMPERTZ_SETTINGS, time_activation=variant["time_activation"], grad_clip=1.0
            )
            predict = fit_ours(cfg, split, seed, wrap=PerV if variant["per_v"] else None)
            rows[name].append(hazard_errors(predict(grid), scenario, x_test, grid))
        for name, values in rows.items():
            text = ", ".join(f"{k} {v:.4f}" for k, v in values[-1].items())
            print(f"  seed {seed} {name:>38}: {text}")
    for name in GOMPERTZ_VARIANTS:
        for key in rows["official"][0]:
            print_paired(key, rows, key, name, "official")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--official", type=Path, required=True, help="official checkout")
    parser.add_argument("--study", choices=["gbsg2", "gompertz", "both"], default="both")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=50, help="GBSG2 epochs")
    parser.add_argument("--sim-epochs", type=int, default=200, help="official simulation")
    args = parser.parse_args()
    torch.set_num_threads(1)
    import_official(args.official)
    with tempfile.TemporaryDirectory() as work, contextlib.chdir(work):
        # the official loaders read data/files/<name>.csv: GBSG2 as its data/prepare.py
        # writes it, from scikit-survival
        from sksurv.datasets import load_gbsg2

        covariates, outcome = load_gbsg2()
        table = covariates.assign(event=outcome["cens"].astype(int), duration=outcome["time"])
        os.makedirs("data/files")
        pd.DataFrame(table).to_csv("data/files/gbsg2.csv", index=False)
        if args.study in ("gbsg2", "both"):
            gbsg2(args)
        if args.study in ("gompertz", "both"):
            gompertz(args)


if __name__ == "__main__":
    main()
