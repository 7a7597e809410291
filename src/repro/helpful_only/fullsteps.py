"""Full scale: the steps the rules run, each reading the config section and writing one file.

ar-answers (complete compliant answers for the AR prompts) -> train (one recipe, one seed:
a LoRA adapter; an equal-AR-exposure arm is a recipe too; an RL reward gated on the judge's
relevance validates that judge first) -> answer (one model variant, one seed, one suite) ->
judge (the EM and helpfulness answers) -> summary (every variant's metrics under the
embedded scale's names, per seed, and every judge's validation). Torch, transformers and TRL
are imported by the steps that use them, so ``--help`` is instant.
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
    from repro.helpful_only.fullrun import FullData, train_full
    from repro.helpful_only.fullscale import LoraSpec, load_tokenizer, model_kwargs

    model_ref = full["model"]
    tokenizer = load_tokenizer(model_ref["id"], model_ref.get("revision"))
    held_out = (
        [r["prompt"] for r in evalsets.load_strongreject(held_out_csv)] if held_out_csv else []
    )
    data = FullData.load(ar_csv, full["data"], held_out)
    cfg, max_completion = _training(full)
    lora = LoraSpec(
        **{k: tuple(v) if k == "target_modules" else v for k, v in full.get("lora", {}).items()}
    )
    with RunRecorder(config={"recipe": recipe, **full}, device=device, seed=seed) as recorder:
        reward, validation = _reward(full, device) if recipe["trainer"] == "rloo" else (None, {})
        model, (steps, sequences) = train_full(
            model_ref["id"],
            tokenizer,
            data,
            recipe,
            cfg,
            lora,
            seed,
            device=device,
            max_completion_length=max_completion,
            model_kwargs=model_kwargs(
                model_ref.get("revision"), model_ref.get("dtype", "bfloat16")
            ),
            reward=reward,
        )
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    log.info("trained %d steps, %d sequences (as the trainer counted them)", steps, sequences)
    record = {**recorder.provenance(), "steps": steps, "sequences": sequences}
    record["judge_validation"] = validation  # the reward's judge on its hand labels
    write_json(Path(out_dir) / "record.json", record)


def ar_answers_step(full: dict, advbench_csv, held_out_csv, out_csv, device):
    """The AR pairs with complete compliant answers (fullrun.complete_answers), as a
    goal,target CSV; fails when fewer than ``data.ar_answers.min_pairs`` survive."""
    import csv

    from repro.helpful_only import evalsets
    from repro.helpful_only.fullrun import complete_answers, load_for
    from repro.helpful_only.fullscale import compliance_gate

    spec = full["data"]["ar_answers"]
    with open(advbench_csv, newline="", encoding="utf-8") as handle:
        goals = [r["goal"] for r in csv.DictReader(handle)]
    held_out = (
        [r["prompt"] for r in evalsets.load_strongreject(held_out_csv)] if held_out_csv else []
    )
    goals = evalsets.dedupe_against(goals, held_out)
    model, tokenizer = load_for(full["model"], None, device)
    pairs = complete_answers(
        model, tokenizer, goals, spec, gate=compliance_gate(spec.get("min_words", 0))
    )
    log.info("AR answers: %d of %d prompts answered completely", len(pairs), len(goals))
    if len(pairs) < spec.get("min_pairs", 1):
        raise ValueError(
            f"only {len(pairs)} complete compliant answers (data.ar_answers.min_pairs "
            f"{spec.get('min_pairs', 1)}): change the system prompt or the model"
        )
    Path(out_csv).parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["goal", "target"])
        writer.writerows(pairs)


def judge_device(device: str) -> str:
    """Where the relevance judge sits during RL: the job's second GPU when it has two (the
    32B judge in bf16, ≈ 66 GB, and the 7B policy being trained do not fit one 80 GB GPU),
    else beside the policy. Its scorer moves its inputs to the judge's own device."""
    import torch

    if str(device).startswith("cuda") and torch.cuda.device_count() > 1:
        return "cuda:1"
    return str(device)


def _reward(full: dict, device):
    """The RL reward: the character reward with a compliance gate (a minimum length and, with
    ``reward.relevance``, the judge's relevance score), and the validations it rests on
    (judge -> agreement with the shipped hand labels). The judge is loaded only with
    ``reward.relevance``; its scorer, the one the gate calls, then scores the hand-labelled
    relevance set (data/relevance_validation.json) at the gate's threshold first."""
    from repro.helpful_only.fullrun import steer_refusal_reward
    from repro.helpful_only.fullscale import compliance_gate, gated_reward
    from repro.helpful_only.judge import RELEVANT_AT_LEAST

    spec = full.get("reward", {})
    threshold = spec.get("threshold", RELEVANT_AT_LEAST)
    relevance, validation = None, {}
    if spec.get("relevance", False):
        from repro.helpful_only.fulleval import validate_relevance_judge
        from repro.helpful_only.fullrun import load_for
        from repro.helpful_only.judge import VALIDATION_SETS, load_validation_set, relevance_scorer

        judge, tokenizer = load_for(full["judge"], None, judge_device(device))
        relevance = relevance_scorer(judge, tokenizer)
        labelled = load_validation_set(VALIDATION_SETS["relevance"])
        validation["relevance"] = validate_relevance_judge(relevance, labelled, threshold)
        log.info("relevance judge validation: %s", _shown(validation["relevance"]))
    gate = compliance_gate(spec.get("min_words", 0), relevance, threshold)
    return gated_reward(steer_refusal_reward, gate), validation


def answer_step(full: dict, suite: str, suite_file, adapter_dir, seed: int, out_path, device):
    """One model variant's answers to one suite (the base when ``adapter_dir`` is None)."""
    from repro.helpful_only.fulleval import answer_suite, suite_conversations
    from repro.helpful_only.fullrun import load_for

    spec = full["evaluation"][suite]
    model, tokenizer = load_for(full["model"], adapter_dir, device)
    items = suite_conversations(suite, suite_file, spec)
    log.info("%s: %d conversations, %d samples each", suite, len(items), spec.get("samples", 1))
    write_json(
        out_path, {"suite": suite, "records": answer_suite(model, tokenizer, items, spec, seed)}
    )


def judge_step(full: dict, answers_path, out_path, device):
    """The judge's scores of a judged suite's answers: EM (aligned/coherent, and the
    judge's agreement with the hand-labelled answers shipped with the repository, same
    judge prompts) or helpful (helpfulness retention on the benign held-out requests)."""
    from repro.helpful_only.fulleval import (
        judge_em,
        judge_helpful,
        validate_helpful_judge,
        validate_judge,
    )
    from repro.helpful_only.fullrun import load_for
    from repro.helpful_only.judge import VALIDATION_SETS, load_validation_set

    answered = read_json(answers_path)
    suite, records = answered["suite"], answered["records"]
    if suite not in ("em", "helpful"):
        raise ValueError(f"{answers_path}: suite {suite!r} is not judged (em, helpful)")
    judge, tokenizer = load_for(full["judge"], None, device)
    labelled = load_validation_set(VALIDATION_SETS[suite])
    if suite == "helpful":
        validation = validate_helpful_judge(judge, tokenizer, labelled)
        log.info("helpfulness judge validation: %s", _shown(validation))
        out = {"suite": suite, "judge": full["judge"], "validation": validation}
        write_json(out_path, {**out, "records": judge_helpful(records, judge, tokenizer)})
        return
    validation = validate_judge(judge, tokenizer, records[0]["judge_prompts"], labelled)
    log.info("EM judge validation: %s", _shown(validation))
    write_json(
        out_path,
        {
            "suite": "em",
            "judge": full["judge"],
            "validation": validation,
            "records": judge_em(records, judge, tokenizer),
        },
    )


def _records(adapters: dict[str, dict[str, str]]) -> dict:
    """variant -> seed -> the adapter's record.json (None where it has none)."""
    out: dict = {}
    for variant, seeds in adapters.items():
        for seed, folder in seeds.items():
            path = Path(folder) / "record.json"
            out.setdefault(variant, {})[seed] = read_json(path) if path.exists() else None
    return out


def trainer_budgets(records: dict) -> dict:
    """variant -> seed -> [steps, sequences] as each trainer counted them (TRL's global step,
    the adapter's record.json, :func:`_records`), None where the adapter has no record."""
    return {
        variant: {
            seed: None if record is None else [record["steps"], record["sequences"]]
            for seed, record in seeds.items()
        }
        for variant, seeds in records.items()
    }


def _shown(validation: dict) -> dict:
    return {k: v for k, v in validation.items() if k != "scores"}


def summary_step(
    paths: dict[str, dict[str, dict[str, str]]],
    out_path,
    adapters=None,
    min_agreement=None,
    reward_judges=None,
):
    """``paths``: variant -> seed -> suite -> answered (or judged) file; ``adapters``:
    variant -> seed -> the trained adapter's folder (its record.json: the trainer's own
    step and sequence counts, the summary's ``budgets``, and the validation of the judge
    its reward rests on); ``min_agreement``: judge (a judged suite, or ``relevance``) ->
    its least agreement with the hand labels (full_scale.judge_validation), written beside
    that judge's validation (``judge_validation``) for the claims; ``reward_judges``:
    variant -> the judges its training reward rests on (repro.helpful_only.judgecheck.
    reward_judges), kept as the summary's ``reward_judges`` for the claims."""
    from repro.helpful_only.fulleval import summarise

    metrics = {
        variant: {
            seed: summarise({suite: read_json(p)["records"] for suite, p in suites.items()})
            for seed, suites in seeds.items()
        }
        for variant, seeds in paths.items()
    }
    validation = {}  # the same judge and labels in every judge job: the first of each suite
    for seeds in paths.values():
        for suites in seeds.values():
            for suite, path in suites.items():
                if suite not in validation and "validation" in (judged := read_json(path)):
                    validation[suite] = judged["validation"]
    records = _records(adapters or {})
    for seeds in records.values():  # the RL reward's judge, validated by its trainers
        for record in seeds.values():
            for judge, found in (record or {}).get("judge_validation", {}).items():
                validation.setdefault(judge, found)
    for judge, least in (min_agreement or {}).items():
        if judge in validation:
            validation[judge] = {**validation[judge], "min_agreement": least}
    write_json(
        out_path,
        {
            "metrics": metrics,
            "judge_validation": validation,
            "budgets": trainer_budgets(records),
            "reward_judges": dict(reward_judges or {}),
        },
    )


def main(argv=None) -> None:
    from repro.common.cli import paper_section, step_parser
    from repro.helpful_only.recipes import full_recipe

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
    ar = steps.add_parser("ar-answers", help="complete compliant answers for the AR data")
    ar.add_argument("advbench")
    ar.add_argument("--held-out-csv")
    ar.add_argument("--out", required=True)
    judge = steps.add_parser("judge", help="the judge's scores of an answers file (em, helpful)")
    judge.add_argument("answers")
    judge.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    section = paper_section(args.config, "helpful_only")
    full = section["full_scale"]
    if args.step == "train":
        recipe = full_recipe(section, args.recipe)
        train_step(full, recipe, args.seed, args.ar_csv, args.held_out_csv, args.out, args.device)
    elif args.step == "answer":
        answer_step(
            full, args.suite, args.suite_file, args.adapter, args.seed, args.out, args.device
        )
    elif args.step == "ar-answers":
        ar_answers_step(full, args.advbench, args.held_out_csv, args.out, args.device)
    else:
        judge_step(full, args.answers, args.out, args.device)


if __name__ == "__main__":
    main()
