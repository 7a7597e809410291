"""Write each seed's few-shot, validation and test sets (every test domain) to an .npz."""

from __future__ import annotations

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
    from repro.common.cli import paper_section, step_parser

    p = step_parser("Generate the two-view scene sets of each seed.", paper="r3_adapter")
    p.add_argument("outputs", nargs="+", help="one .npz per seed of papers.r3_adapter.seeds")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    sec = paper_section(args.config, "r3_adapter")
    prepare(
        SceneConfig(**sec.get("scene", {})),
        LowLight(**sec.get("low_light", {})),
        SplitConfig(**sec.get("splits", {})),
        sec["seeds"],
        args.outputs,
    )


if __name__ == "__main__":
    main()
