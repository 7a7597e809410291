"""The workflow's steps as functions (scripts call them; so do the ``python -m`` entry points):
each runs one study under a RunRecorder and writes its JSON with the provenance."""

from __future__ import annotations

import argparse
import logging

from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.malora import configs

log = logging.getLogger(__name__)


def sweep_step(section: dict, seed: int, out: str) -> None:
    from repro.malora.sweep import run_sweep

    cfg = configs.sweep_config(section)
    seed_everything(seed)
    with RunRecorder(config=cfg, seed=seed) as run:
        result = run_sweep(cfg, seed)
    write_json(out, {**result, "provenance": run.provenance()})


def linear_step(section: dict, seed: int, out: str) -> None:
    from repro.malora.linear_merge import run_linear_merge

    cfg = configs.linear_merge_config(section)
    seed_everything(seed)
    with RunRecorder(config=cfg, seed=seed) as run:
        result = run_linear_merge(cfg, seed)
    write_json(out, {**result, "provenance": run.provenance()})


def digits_step(section: dict, seeds, out: str, *, threads: int = 1) -> None:
    """Every seed in one process: peft's import (≈10 s) is paid once."""
    from repro.malora.digits_study import run_digits_seed

    set_threads(threads)
    cfg = configs.digits_config(section)
    with RunRecorder(config=cfg, seed=list(seeds)) as run:
        results = []
        for seed in seeds:
            seed_everything(seed)
            results.append(run_digits_seed(cfg, seed))
            log.info("digits: seed %d done", seed)
    write_json(out, {"seeds": results, "provenance": run.provenance()})


def section_from(path: str) -> dict:
    """papers.malora of a workflow config file (YAML)."""
    import yaml

    with open(path) as handle:
        return yaml.safe_load(handle)["papers"]["malora"]


def study_main(step, description: str, argv=None, *, per_seed: bool = True) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", required=True, help="workflow config YAML (papers.malora)")
    parser.add_argument("--seed", type=int, nargs="+", required=True)
    parser.add_argument("--out", required=True, help="JSON to write")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    section = section_from(args.config)
    step(section, args.seed[0] if per_seed else args.seed, args.out)
