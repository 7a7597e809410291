"""Helpers of the MaLoRA tests: a small linear world and its trained models."""

import numpy as np

from repro.malora.linear import LinearDesign, LinearWorld, train_base, train_lora

SMALL = LinearDesign(
    dim=40,
    subspace_dim=8,
    classes_per_task=3,
    n_tasks=2,
    per_class=15,
    pretrain_per_class=15,
    calib_per_class=10,
    test_per_class=20,
)


def trained_world(overlap: float, seed: int = 0, lambdas=(1e-3, 3e-3), sizes=(1, 3)):
    """Base and adapters trained on one world; data sets by task (0 = pre-training)."""
    world = LinearWorld(SMALL, seed)
    train = [world.sample(0, SMALL.pretrain_per_class, 0.3, overlap, "train")]
    train += [
        world.sample(t + 1, SMALL.per_class * f, 0.3, overlap, "train") for t, f in enumerate(sizes)
    ]
    base = train_base(train[0], SMALL, weight_decay=1e-3, steps=400)
    deltas = [
        train_lora(d, base, SMALL, rank=2, lam=lam, steps=400, seed=seed).delta
        for d, lam in zip(train[1:], lambdas, strict=True)
    ]
    return world, train, base, deltas


def stack(data_sets):
    return np.concatenate([d.x for d in data_sets]), np.concatenate([d.y for d in data_sets])
