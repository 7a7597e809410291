"""ST reliability: the cost of the reliability statistics on CPU; prints ratios, asserts nothing.

1. predicted_nn_distance (one matrix product) against scipy's cdist + min and a Python loop,
   at the embedded size (56 predictions × 104 training Δ × 200 genes) and at full scale
   (2000 × 6000 × 2000).
2. The bootstrap of ρ (1000 resamples, 3 seeds, 12 groups of 56 predictions) vectorised
   over resamples against scipy.stats.spearmanr in a loop.
3. One training step of State's model at the embedded size (the embedded run's unit of work).

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/st_reliability_signals.py
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats
from scipy.spatial.distance import cdist

from repro.common.timing import best_time
from repro.st_reliability.hierarchical import bootstrap_rho
from repro.st_reliability.reliability import predicted_nn_distance


def nn_distances() -> None:
    rng = np.random.default_rng(0)
    print("1. predicted-NN-distance (L2 and cosine), best of 5")
    for n_pred, n_train, genes in ((56, 104, 200), (2000, 6000, 2000)):
        pred, train = rng.normal(size=(n_pred, genes)), rng.normal(size=(n_train, genes))
        for metric, name in (("l2", "euclidean"), ("cosine", "cosine")):
            ours = best_time(lambda: predicted_nn_distance(pred, train, metric))  # noqa: B023
            ref = best_time(lambda: cdist(pred, train, name).min(1), repeats=2)  # noqa: B023
            size = f"{n_pred}×{n_train}×{genes}"
            line = f"   {size} {metric}: {1e3 * ours:8.2f} ms, cdist {ref / ours:5.1f}x slower"
            if n_pred <= 56:
                naive = lambda: [min(np.linalg.norm(p - t) for t in train) for p in pred]  # noqa: B023, E731
                loop = best_time(naive, 1)
                line += f", Python loop {loop / ours:6.0f}x slower"
            print(line)


def bootstrap() -> None:
    rng = np.random.default_rng(1)
    seeds, n, groups = 3, 12 * 56, np.repeat(np.arange(12), 56)
    q, s = rng.normal(size=(seeds, n)), rng.normal(size=(seeds, n))
    ours = best_time(
        lambda: bootstrap_rho(
            q,
            {},
            groups,
            n_boot=1000,
            confidence=0.95,
            rng=np.random.default_rng(0),
            pooled={"s": s},
        ),
        3,
    )

    def loop():
        r = np.random.default_rng(0)
        for _ in range(1000):
            idx = np.concatenate([r.choice(np.flatnonzero(groups == g), 56) for g in range(12)])
            [stats.spearmanr(q[k, idx], s[k, idx])[0] for k in range(seeds)]

    ref = best_time(loop, 1)
    print(
        f"2. bootstrap of pooled ρ: {1e3 * ours:.0f} ms vectorised, "
        f"scipy loop {ref / ours:.1f}x slower"
    )


def training_step() -> None:
    from repro.st_reliability.model import ModelConfig, build_model

    cfg = ModelConfig()
    model = build_model(cfg, input_dim=200, pert_dim=161, gene_space=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    n = 16 * cfg.cell_set_len
    batch = {
        "ctrl_cell_emb": torch.rand(n, 200),
        "pert_cell_emb": torch.rand(n, 200),
        "pert_emb": torch.nn.functional.one_hot(torch.randint(161, (n,)), 161).float(),
    }

    def step():
        loss = model.training_step(batch, 0)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()
    t = best_time(step, 20)
    print(
        f"3. one training step (16 sets × 32 cells, hidden 64): {1e3 * t:.1f} ms; "
        f"500 steps ≈ {500 * t:.1f} s"
    )


if __name__ == "__main__":
    torch.set_num_threads(1)
    nn_distances()
    bootstrap()
    training_step()
