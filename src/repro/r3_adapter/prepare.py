"""Write each seed's few-shot, validation and test sets (every test domain) to an .npz."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from repro.common.io import write_npz
from repro.r3_adapter.data import SplitConfig, make_splits
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.shift import LowLight

log = logging.getLogger(__name__)


def prepare(
    scene: SceneConfig,
    shift: LowLight,
    split: SplitConfig,
    seeds: Sequence[int],
    paths: Sequence[str],
) -> None:
    if split.adapt_severity not in shift.severities:
        raise ValueError(f"adapt_severity {split.adapt_severity} not in {shift.severities}")
    for seed, path in zip(seeds, paths, strict=True):
        arrays = make_splits(scene, shift, split, seed)
        covisible = (arrays["test/clean/match"] >= 0).mean()
        log.info(
            "seed %d: %d test scenes, %.1f%% co-visible patches", seed, split.test, 100 * covisible
        )
        write_npz(path, **arrays)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Generate the two-view scene sets of each seed.")
    p.add_argument("outputs", nargs="+", help="one .npz per seed")
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    p.add_argument("--grid", type=int, default=SceneConfig.grid)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    prepare(SceneConfig(grid=args.grid), LowLight(), SplitConfig(), args.seeds, args.outputs)


if __name__ == "__main__":
    main()
