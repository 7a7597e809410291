"""Full scale: the steps the rules run, each reading the config section and writing one file.

train (one recipe, one seed: a LoRA adapter) -> answer (one model variant, one seed, one
suite) -> judge (the EM answers) -> summary (every variant's metrics under the embedded
scale's names, per seed). Torch, transformers and TRL are imported by the steps that use
them, so ``--help`` is instant.
"""

from __future__ import annotations

import logging
from pathlib import Path

from repro.common.io import read_json, write_json

log = logging.getLogger(__name__)


def _training(full: dict):
    from repro.helpful_only.recipes import TrainConfig

    settings = dict(full["training"])
    max_completion = settings.pop("max_completion_length", 256)
    return TrainConfig(**settings), max_completion


def train_step(full: dict, recipe: dict, seed: int, ar_csv, held_out_csv, out_dir, device):
    """Train one recipe with LoRA from the instruct model; save the adapter and a record."""
    from repro.common.provenance import RunRecorder
    from repro.helpful_only import evalsets
    from repro.helpful_only.fullrun import FullData, load_for, train_full
    from repro.helpful_only.fullscale import LoraSpec

    model_ref = full["model"]
    _, tokenizer = load_for(model_ref)
    held_out = (
        [r["prompt"] for r in evalsets.load_strongreject(held_out_csv)] if held_out_csv else []
    )
    data = FullData.load(ar_csv, full["data"], held_out)
    cfg, max_completion = _training(full)
    lora = LoraSpec(
        **{k: tuple(v) if k == "target_modules" else v for k, v in full.get("lora", {}).items()}
    )
    with RunRecorder(config={"recipe": recipe, **full}, device=device, seed=seed) as recorder:
        model = train_full(
            model_ref["id"],
            tokenizer,
            data,
            recipe,
            cfg,
            lora,
            seed,
            device=device,
            max_completion_length=max_completion,
        )
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    write_json(Path(out_dir) / "record.json", recorder.provenance())


def answer_step(full: dict, suite: str, suite_file, adapter_dir, seed: int, out_path, device):
    """One model variant's answers to one suite (the base when ``adapter_dir`` is None)."""
    from repro.helpful_only.fullrun import answer_suite, load_for, suite_conversations

    spec = full["evaluation"][suite]
    model, tokenizer = load_for(full["model"], adapter_dir, device)
    items = suite_conversations(suite, suite_file, spec)
    log.info("%s: %d conversations, %d samples each", suite, len(items), spec.get("samples", 1))
    write_json(
        out_path, {"suite": suite, "records": answer_suite(model, tokenizer, items, spec, seed)}
    )


def judge_step(full: dict, answers_path, out_path, device):
    """The judge's aligned/coherent scores of every EM answer."""
    from repro.helpful_only.fullrun import judge_em, load_for

    judge, tokenizer = load_for(full["judge"], None, device)
    records = read_json(answers_path)["records"]
    write_json(
        out_path,
        {"suite": "em", "judge": full["judge"], "records": judge_em(records, judge, tokenizer)},
    )


def summary_step(paths: dict[str, dict[str, dict[str, str]]], out_path):
    """``paths``: variant -> seed -> suite -> answered (or judged) file."""
    from repro.helpful_only.fullrun import summarise

    metrics = {
        variant: {
            seed: summarise({suite: read_json(p)["records"] for suite, p in suites.items()})
            for seed, suites in seeds.items()
        }
        for variant, seeds in paths.items()
    }
    write_json(out_path, {"metrics": metrics})


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser

    parser = step_parser("Run one full-scale helpful-only step.", paper="helpful_only")
    parser.add_argument("--device", default="cuda")
    steps = parser.add_subparsers(dest="step", required=True)
    train = steps.add_parser("train", help="one recipe with LoRA -> an adapter folder")
    train.add_argument("recipe")
    train.add_argument("seed", type=int)
    train.add_argument("--ar-csv", required=True)
    train.add_argument("--held-out-csv")
    train.add_argument("--out", required=True)
    answer = steps.add_parser("answer", help="one variant's answers to one suite")
    answer.add_argument("suite")
    answer.add_argument("seed", type=int)
    answer.add_argument("--suite-file")
    answer.add_argument("--adapter", help="omit for the base model")
    answer.add_argument("--out", required=True)
    judge = steps.add_parser("judge", help="the EM judge's scores of an answers file")
    judge.add_argument("answers")
    judge.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    section = paper_section(args.config, "helpful_only")
    full = section["full_scale"]
    if args.step == "train":
        recipe = section["recipes"][args.recipe]
        train_step(full, recipe, args.seed, args.ar_csv, args.held_out_csv, args.out, args.device)
    elif args.step == "answer":
        answer_step(
            full, args.suite, args.suite_file, args.adapter, args.seed, args.out, args.device
        )
    else:
        judge_step(full, args.answers, args.out, args.device)


if __name__ == "__main__":
    main()
