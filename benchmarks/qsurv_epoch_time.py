"""QSurv epoch time vs pycox's LogisticHazard at equal width, and QSurv's cost vs K.

Both train on the same synthetic log-logistic data (1500 training subjects), the same
Tanh MLP width, batch size and learning rate, for the same number of epochs with a
validation pass each epoch (as in the workflow). Prints seconds per epoch and the ratios
measured in this run. Run: ``python benchmarks/qsurv_epoch_time.py [--epochs 30]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from repro.qsurv import baselines, neural
from repro.qsurv.prepare import PrepareConfig, prepare


def _qsurv_epoch_seconds(split, epochs: int, nodes: int) -> float:
    cfg = neural.NeuralConfig(nodes=nodes, epochs=epochs, patience=10**6)
    with tempfile.TemporaryDirectory() as tmp:
        _, history = neural.fit(
            cfg, split, seed=0, device=torch.device("cpu"), checkpoint=Path(tmp) / "ckpt.pt"
        )
    return history["train_seconds"] / history["epochs"]


def _logistic_hazard_epoch_seconds(split, epochs: int) -> float:
    cfg = baselines.BaselineConfig(family="logistic_hazard", epochs=epochs, patience=10**6)
    started = time.perf_counter()
    _, history = baselines.fit(cfg, split, seed=0, device=torch.device("cpu"))
    return (time.perf_counter() - started) / history["epochs"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3, help="best of N, against load noise")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        data = prepare(PrepareConfig("loglogistic", "synthetic", (0,)), f"{tmp}/data.npz")
    split = {k: v[0] for k, v in data.items() if k != "seeds"}
    print(
        f"{len(split['t_train'])} training subjects, {args.epochs} epochs, best of "
        f"{args.repeats}, 1 thread"
    )
    _qsurv_epoch_seconds(split, 2, 15)  # warm-up: first-call costs (optimiser import, JIT)
    _logistic_hazard_epoch_seconds(split, 2)
    lh = min(_logistic_hazard_epoch_seconds(split, args.epochs) for _ in range(args.repeats))
    print(f"LogisticHazard (pycox, 50 bins): {lh * 1e3:.1f} ms/epoch")
    per_k = {}
    for nodes in (3, 15, 30, 60):
        per_k[nodes] = min(
            _qsurv_epoch_seconds(split, args.epochs, nodes) for _ in range(args.repeats)
        )
        print(
            f"QSurv K={nodes:>2}: {per_k[nodes] * 1e3:.1f} ms/epoch, "
            f"ratio to LogisticHazard {per_k[nodes] / lh:.2f}x"
        )
    slope = np.polyfit(list(per_k), list(per_k.values()), 1)[0]
    print(f"QSurv(K=15) / LogisticHazard epoch time: {per_k[15] / lh:.2f}x (target <= 3x)")
    print(
        f"QSurv cost per extra node: {slope * 1e3:.3f} ms/epoch; "
        f"K=60 / K=15: {per_k[60] / per_k[15]:.2f}x"
    )


if __name__ == "__main__":
    main()
