"""Full-scale jobs: one (backbone, data set, method, seed) run on the GPU, and the summary
over seeds that the claims read (repro.r3_adapter.fullscale holds the steps)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

import numpy as np
import torch

from repro.common.device import select_device
from repro.common.io import read_json, read_npz, write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import set_threads
from repro.common.summary import mean_std
from repro.r3_adapter.backbones import BACKBONES, load_backbone
from repro.r3_adapter.fullscale import (
    IO,
    FullAdaptConfig,
    PairBatches,
    adapt_full,
    build_full,
    evaluate_full,
)
from repro.r3_adapter.sevenscenes import RawLowLight

log = logging.getLogger(__name__)


def split_pairs(sequences: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Few-shot, validation and test pairs of one seed, split by sequence (no sequence in two
    parts): half of the sequences (in a seeded order) for few-shot, a quarter for
    validation, the rest for test, each part at least one sequence."""
    names = np.random.default_rng(seed).permutation(np.unique(sequences))
    n = len(names)
    if n < 3:
        raise ValueError(f"{n} sequences are too few for few-shot / validation / test")
    a = max(1, n // 2)
    b = min(n - 1, max(a + 1, a + n // 4))
    parts = (names[:a], names[a:b], names[b:])
    return tuple(np.flatnonzero(np.isin(sequences, part)) for part in parts)


def run_full(
    load: Callable[[], torch.nn.Module],
    backbone: str,
    spec: dict,
    arrays: dict,
    cfg: FullAdaptConfig,
    seed: int,
    *,
    grid: tuple[int, int],
    patch: int,
    shift: RawLowLight,
    severities,
    device,
) -> dict:
    """One seed of one method: rate search on validation pairs, adapt, evaluate test pairs."""
    io = IO[backbone]
    fewshot, validation, test = (
        PairBatches(arrays, part, device, shift, patch)
        for part in split_pairs(arrays["sequence"], seed)
    )
    best = None
    for lr in cfg.lrs:
        torch.manual_seed(seed)
        adapted, site = build_full(load(), backbone, spec, grid)
        losses = adapt_full(adapted, io, fewshot, cfg, lr, seed) if adapted.trainable() else []
        score = evaluate_full(adapted, io, site, validation, [cfg.adapt_severity], seed)
        epe = score[f"severity{cfg.adapt_severity}/epe"]
        log.info("lr %.0e: validation EPE %.4f", lr, epe)
        if best is None or epe < best[0]:
            best = (epe, lr, adapted, site, losses)
        if not adapted.trainable():
            break
    _, lr, adapted, site, losses = best
    metrics = evaluate_full(adapted, io, site, test, severities, seed)
    return {
        "seed": seed,
        "lr": lr,
        "n_trainable": adapted.n_trainable(),
        "losses": losses,
        **metrics,
    }


def run_seed(
    backbone: str,
    spec: dict,
    code_dir: str,
    checkpoint: str,
    pairs_path: str,
    cfg: FullAdaptConfig,
    seed: int,
    out: str,
    *,
    resolution,
    shift: RawLowLight,
    severities,
    device: str = "auto",
    threads: int = 1,
    checkpoint_sha256: str | None = None,
) -> None:
    """The GPU job: load the released backbone once (DUSt3R's after checking the pinned
    ``checkpoint_sha256``), then ``run_full`` on copies of it."""
    set_threads(threads)
    dev = select_device(device)
    base = load_backbone(backbone, code_dir, checkpoint, dev, sha256=checkpoint_sha256)
    patch = BACKBONES[backbone].patch_size
    grid = (resolution[0] // patch, resolution[1] // patch)
    config = {"backbone": backbone, "spec": spec, "adapt": cfg, "seed": seed}
    with RunRecorder(config=config, device=dev, seed=seed) as rec:
        result = run_full(
            lambda: copy.deepcopy(base),
            backbone,
            spec,
            read_npz(pairs_path),
            cfg,
            seed,
            grid=grid,
            patch=patch,
            shift=shift,
            severities=severities,
            device=dev,
        )
    write_json(out, result | {"provenance": rec.provenance()})


def summarise(backbone: str, dataset: str, method: str, runs: list[dict], out: str) -> None:
    """Seeds of one (backbone, data set, method) in the embedded metrics layout."""
    skip = {"seed", "lr", "n_trainable", "losses", "provenance"}
    rows = [{"seed": r["seed"], **{k: v for k, v in r.items() if k not in skip}} for r in runs]
    mean, std = mean_std([{k: v for k, v in r.items() if k != "seed"} for r in rows])
    write_json(
        out,
        {
            "backbone": backbone,
            "dataset": dataset,
            "method": method,
            "seeds": [r["seed"] for r in runs],
            "n_trainable": runs[0]["n_trainable"],
            "lrs": [r["lr"] for r in runs],
            "per_seed": rows,
            "mean": mean,
            "std": std,
        },
    )


def checkpoint_sha256(config: dict, backbone_spec: dict) -> str | None:
    """The sha256 of a backbone's checkpoint: pinned under the config's ``downloads``, else the
    one the download lock recorded when the checkpoint was fetched."""
    from repro.common.downloadlock import known_sha256

    return known_sha256(config, backbone_spec["checkpoint"])


def _whole_config(path: str) -> dict:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def main(argv: list[str] | None = None) -> None:
    """The full-scale steps from the command line: code, pairs, run, summary."""
    from repro.common.cli import paper_section, step_parser
    from repro.r3_adapter.backbones import unpack_code
    from repro.r3_adapter.datasets import write_pairs

    p = step_parser("3R-Adapter full-scale steps (see rules/r3_adapter.smk).", paper="r3_adapter")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda")
    sub = p.add_subparsers(dest="step", required=True)
    code = sub.add_parser("code", help="unpack a backbone's code archive (+ submodules)")
    code.add_argument("archive")
    code.add_argument("dest")
    code.add_argument(
        "--submodule", nargs=2, action="append", default=[], metavar=("PATH", "ARCHIVE")
    )
    pairs = sub.add_parser("pairs", help="image pairs of a data set at a backbone's resolution")
    pairs.add_argument("backbone")
    pairs.add_argument("dataset")
    pairs.add_argument("out")
    pairs.add_argument("archives", nargs="*")
    run = sub.add_parser("run", help="one (backbone, data set, method, seed) on the GPU")
    for name in ("backbone", "dataset", "method", "code_dir", "checkpoint", "pairs", "out"):
        run.add_argument(name)
    run.add_argument("--seed", type=int, default=0)
    summary = sub.add_parser("summary", help="seeds of one (backbone, data set, method)")
    for name in ("backbone", "dataset", "method", "out"):
        summary.add_argument(name)
    summary.add_argument("runs", nargs="+")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    if args.step == "code":
        unpack_code(args.archive, args.dest, dict(args.submodule))
        return
    full = paper_section(args.config, "r3_adapter").get("full_scale", {})
    if args.step == "pairs":
        resolution = full["backbones"][args.backbone]["resolution"]
        write_pairs(
            args.dataset, full["datasets"][args.dataset], args.archives, resolution, args.out
        )
    elif args.step == "run":
        sec = paper_section(args.config, "r3_adapter")
        run_seed(
            args.backbone,
            sec["methods"][args.method],
            args.code_dir,
            args.checkpoint,
            args.pairs,
            FullAdaptConfig(**full.get("adaptation", {})),
            args.seed,
            args.out,
            resolution=full["backbones"][args.backbone]["resolution"],
            shift=RawLowLight(**full.get("low_light", {})),
            severities=full.get("severities", [0, 1, 2, 3]),
            device=args.device,
            checkpoint_sha256=checkpoint_sha256(
                _whole_config(args.config), full["backbones"][args.backbone]
            ),
        )
    else:
        summarise(
            args.backbone, args.dataset, args.method, [read_json(r) for r in args.runs], args.out
        )


if __name__ == "__main__":
    main()
