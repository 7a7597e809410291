"""The workflow's steps as functions (scripts call them), and their command line
``python -m repro.malora.steps {sweep,linear,digits,full,pixels,tokenise} --help``: each runs one
study under a RunRecorder and writes its JSON with the provenance.

Imports go one way only: this module imports the studies (lazily, so that a CPU step never
imports torch), and no study imports it."""

from __future__ import annotations

import contextlib
import logging

from repro.common.cli import paper_section
from repro.common.io import write_json
from repro.common.provenance import RunRecorder
from repro.common.seeding import seed_everything, set_threads
from repro.malora import configs

log = logging.getLogger(__name__)


def _seed_step(run_study, cfg, seed: int, out: str) -> None:
    seed_everything(seed)
    with RunRecorder(config=cfg, seed=seed) as run:
        result = run_study(cfg, seed)
    write_json(out, {**result, "provenance": run.provenance()})


def sweep_step(section: dict, seed: int, out: str) -> None:
    from repro.malora.sweep import run_sweep

    _seed_step(run_sweep, configs.sweep_config(section), seed, out)


def linear_step(section: dict, seed: int, out: str) -> None:
    from repro.malora.linear_merge import run_linear_merge

    _seed_step(run_linear_merge, configs.linear_merge_config(section), seed, out)


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


def _task(kind: str, name: str, t: dict):
    """One task of a full-scale job from the rule's resolved paths."""
    config, weights = sorted(t["adapter"], key=lambda p: not p.endswith(".json"))
    if kind == "nli":
        from repro.malora.nli_bench import NliTask

        return NliTask(name=name, adapter_config=config, adapter_weights=weights, data=t["data"])
    from repro.malora.clip_bench import FullTask

    return FullTask(
        name=name,
        adapter_config=config,
        adapter_weights=weights,
        pixels=t["pixels"],
        templates=tuple(t["templates"]),
    )


def full_config(files: dict, settings: dict, merge_rules: dict, model_dir: str, device: str):
    """The full-scale job's typed config from the rule's params (paths already resolved)."""
    from repro.malora.fullscale import FullConfig

    kind = files.get("kind", "clip")
    return FullConfig(
        model_dir=model_dir,
        tasks=tuple(_task(kind, name, t) for name, t in files["tasks"].items()),
        methods=dict(merge_rules["methods"]),
        scale_grid=tuple(merge_rules["scale_grid"]),
        seeds=tuple(settings["seeds"]),  # calibration draws: papers.malora.full_scale.seeds
        calibration_per_task=settings.get("calibration_per_task", 32),
        test_limit=settings.get("test_limit"),
        margin=dict(settings.get("margin", {"stat": "quantile", "q": 0.05})),
        batch_size=files.get("batch_size", settings.get("batch_size", 256)),
        device=device,
        dtype=files.get("dtype", "float32"),
    )


def local_model_dir(path) -> str:
    """A model directory that must already be on the node (gated weights such as
    Llama-3-8B are not fetched by the download rule; compute nodes may be offline)."""
    from pathlib import Path

    if not Path(path, "config.json").is_file():
        raise FileNotFoundError(
            f"{path}: no model here (config.json missing); download the configured "
            "model's snapshot to this folder first (see docs/malora.md, its configuration keys)"
        )
    return str(path)


@contextlib.contextmanager
def _model_dir(files: dict):
    """The folder from_pretrained reads: the configured local one, or the downloaded model
    files linked side by side in a temporary folder."""
    import tempfile
    from pathlib import Path

    if files.get("model_dir"):
        yield local_model_dir(files["model_dir"])
        return
    with tempfile.TemporaryDirectory() as model_dir:
        for path in files["model"]:
            Path(model_dir, Path(path).name).symlink_to(Path(path).resolve())
        yield model_dir


def full_step(files, settings, merge_rules, device, out, *, method=None, individual=None):
    """One full-scale GPU job: the normalisers (``method`` None) or one merge rule."""
    from repro.common.io import read_json
    from repro.malora import fullscale

    with _model_dir(files) as model_dir:
        cfg = full_config(files, settings, merge_rules, model_dir, device)
        if files.get("kind", "clip") == "nli":
            from repro.malora.nli_bench import NliBench as Bench
        else:
            from repro.malora.clip_bench import ClipBench as Bench
        bench = Bench(cfg)
        with RunRecorder(config=cfg, device=bench.device) as run:
            if method is None:
                result = fullscale.run_individual(bench)
            else:
                result = fullscale.run_method(bench, method, read_json(individual))
    write_json(out, {**result, "provenance": run.provenance()})


def pixels_step(spec: dict, model_files, out_dir: str) -> None:
    """One vision task's test shards → its cached validation and test pixels (clip_data)."""
    from transformers import CLIPImageProcessor

    from repro.malora.clip_data import cache_task

    with _model_dir({"model": model_files}) as model_dir, RunRecorder(config=spec) as run:
        meta = cache_task(spec, CLIPImageProcessor.from_pretrained(model_dir), out_dir)
    write_json(f"{out_dir}/meta.json", {**meta, "provenance": run.provenance()})


def nli_tokenise_step(spec: dict, model_dir: str, out: str) -> None:
    """One NLI task's downloaded splits → its tokenised calibration pool and test set."""
    from repro.malora.nli_data import prepare_task

    with RunRecorder(config=spec) as run:
        doc = prepare_task(spec, local_model_dir(model_dir))
    write_json(out, {**doc, "provenance": run.provenance()})


def _study_parser(sub, name: str, description: str):
    parser = sub.add_parser(name, help=description, description=description)
    parser.add_argument("--config", required=True, help="the workflow's config YAML")
    parser.add_argument("--seed", type=int, nargs="+", required=True)
    parser.add_argument("--out", required=True, help="JSON to write")
    return parser


def main(argv=None) -> None:
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description="Run one MaLoRA workflow step.")
    sub = parser.add_subparsers(dest="step", required=True)
    _study_parser(sub, "sweep", "The λ sweep of the linear theory check (C1, C2), one seed.")
    _study_parser(sub, "linear", "All merge rules on the linear theory setting (C3), one seed.")
    _study_parser(sub, "digits", "All merge rules on scikit-learn digits with peft LoRA (C4).")
    full = sub.add_parser("full", help="one full-scale job: the normalisers or one rule")
    full.add_argument(
        "--params",
        required=True,
        help="JSON of the rule's params: files, settings, merge_rules, device "
        "(as malora_full_individual passes them)",
    )
    full.add_argument("--method", help="a name under papers.malora.merge_rules.methods")
    full.add_argument("--individual", help="the normalisers' JSON (with --method)")
    full.add_argument("--out", required=True, help="JSON to write")
    pix = sub.add_parser("pixels", help="decode and preprocess one vision task once")
    pix.add_argument("--spec", required=True, help="JSON of the task's spec (see cache_task)")
    pix.add_argument("--model-files", nargs="+", required=True, help="the model's files")
    pix.add_argument("--out-dir", required=True, help="the cache folder to write")
    tok = sub.add_parser("tokenise", help="tokenise one NLI task")
    tok.add_argument("--spec", required=True, help="JSON of the task's spec (see prepare_task)")
    tok.add_argument("--model-dir", required=True, help="the model's tokenizer files")
    tok.add_argument("--out", required=True, help="JSON to write")
    args = parser.parse_args(argv)
    if args.step == "full" and args.method and not args.individual:
        parser.error("--method needs --individual")
    logging.basicConfig(level=logging.INFO)
    if args.step in ("sweep", "linear", "digits"):
        section = paper_section(args.config, "malora")
        if args.step == "digits":
            digits_step(section, args.seed, args.out)
        else:
            {"sweep": sweep_step, "linear": linear_step}[args.step](section, args.seed[0], args.out)
    elif args.step == "full":
        p = json.loads(Path(args.params).read_text())
        full_step(
            p["files"],
            p["settings"],
            p["merge_rules"],
            p["device"],
            args.out,
            method=args.method,
            individual=args.individual,
        )
    elif args.step == "pixels":
        pixels_step(json.loads(Path(args.spec).read_text()), args.model_files, args.out_dir)
    else:
        nli_tokenise_step(json.loads(Path(args.spec).read_text()), args.model_dir, args.out)


if __name__ == "__main__":
    main()
