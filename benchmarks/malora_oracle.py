"""The MaLoRA oracle: the union margin's maximum over α by a dense grid evaluated naively
(one merged matrix per point), the same grid with exact term pruning, and Dinkelbach's
method from a coarse grid. Prints times, values and ratios against the naive grid measured
in the same run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/malora_oracle.py [--points 21]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from repro.malora.landscape import best_union_margin, product_grid, union_margins  # noqa: E402
from repro.malora.linear import LinearDesign, LinearWorld, train_base, train_lora  # noqa: E402
from repro.malora.margins import margin  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=21, help="grid points per coefficient")
    parser.add_argument("--overlap", type=float, default=0.3)
    args = parser.parse_args()
    design = LinearDesign()
    world = LinearWorld(design, 0)
    train = [world.sample(0, 40, 0.3, args.overlap, "train")]
    train += [
        world.sample(t, 40 * f, 0.3, args.overlap, "train") for t, f in ((1, 1), (2, 4), (3, 1))
    ]
    test = [world.sample(t, 60, 0.3, args.overlap, "test") for t in range(4)]
    base = train_base(train[0], design, weight_decay=1e-3, steps=2000).weight
    deltas = [
        train_lora(d, base, design, rank=4, lam=lam, steps=2000).delta
        for d, lam in zip(train[1:], (1e-4, 1e-3, 3e-3), strict=True)
    ]
    x, y = np.concatenate([d.x for d in test]), np.concatenate([d.y for d in test])
    axis = np.geomspace(0.05, 5.0, args.points)
    grid = product_grid(axis, 3)

    start = time.perf_counter()
    naive = [
        margin(x @ (base + sum(a * d for a, d in zip(p, deltas, strict=True))).T, y)
        / np.linalg.norm(base + sum(a * d for a, d in zip(p, deltas, strict=True)))
        for p in grid
    ]
    t_naive = time.perf_counter() - start
    start = time.perf_counter()
    pruned = union_margins(base, deltas, x, y, grid)
    t_pruned = time.perf_counter() - start
    start = time.perf_counter()
    _, dinkelbach = best_union_margin(base, deltas, x, y, axis=np.geomspace(0.05, 5.0, 6))
    t_dink = time.perf_counter() - start
    assert np.allclose(naive, pruned)
    print(f"grid {len(grid)} points, {len(y)} test examples, ε = {args.overlap}")
    print(f"naive grid     {t_naive:8.3f} s   best {max(naive):.5f}   (reference)")
    print(
        f"pruned grid    {t_pruned:8.3f} s   best {pruned.max():.5f}   "
        f"speed-up {t_naive / t_pruned:6.1f}×"
    )
    print(
        f"Dinkelbach     {t_dink:8.3f} s   best {dinkelbach:.5f}   "
        f"speed-up {t_naive / t_dink:6.1f}×, value − grid {dinkelbach - max(naive):+.2e}"
    )


if __name__ == "__main__":
    main()
