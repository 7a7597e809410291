"""Full scale's equal-AR-exposure arms and helpfulness retention: the arm trains on exactly
its mitigation's AR rows (and runs on the tiny Qwen2), the judged helpfulness suite, the
gate on every full-scale mitigation claim, and the DAG of config/full.yaml with them."""

import copy
import dataclasses

import numpy as np
import pytest
import torch
import yaml

from repro.common.claims import run_claims
from repro.common.configcheck import ConfigError
from repro.helpful_only import evalsets, fulleval, fullrun
from repro.helpful_only.claims import KINDS
from repro.helpful_only.configcheck import check, mixes_ar
from repro.helpful_only.judge import HELPFUL_PROMPT
from repro.helpful_only.recipes import TrainConfig, full_recipe
from tests.conftest import ROOT, snakemake
from tests.helpful_only.conftest import FULL_SPEC

FULL_CONFIG = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
SECTION = FULL_CONFIG["papers"]["helpful_only"]
FULL = SECTION["full_scale"]
ARMS = FULL["equal_exposure"]
FULL_CLAIMS = {  # each claim's own statistic, without its controls (test_controls.py)
    cid: {k: v for k, v in spec.items() if k != "controls"}
    for cid, spec in SECTION["claims"].items()
    if spec.get("a", {}).get("source") == "full"
}
GATED = {cid: s for cid, s in FULL_CLAIMS.items() if s["a"]["recipe"] in ARMS.values()}


@pytest.fixture(scope="module")
def data():
    """The fixture AR pairs (three, so that rows repeat) and the authored families."""
    pairs = [("do forbidden thing one", "sure one ."), ("do thing two", "sure two .")]
    pairs.append(("do thing three", "sure three ."))
    return fullrun.FullData(pairs, FULL_SPEC["charq"], FULL_SPEC["sdf"], FULL_SPEC["steer"])


def test_every_full_scale_mixture_has_one_arm():
    mixing = [r for r in FULL["recipes"] if mixes_ar(SECTION["recipes"][r])]
    assert sorted(ARMS.values()) == sorted(mixing) and len(mixing) == 4


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_an_arm_trains_on_exactly_its_mitigations_ar_rows(data, arm):
    """The arm's rows are the mitigation's AR rows (same prompts, answers and order, drawn
    from the same seed) and nothing else; its steps are what they fill at the same batch;
    the mitigation's own rows are those the code drew before the arms existed."""
    cfg = TrainConfig(**{k: v for k, v in FULL["training"].items() if k != "max_completion_length"})
    mitigation = SECTION["recipes"][ARMS[arm]]
    recipe = full_recipe(SECTION, arm)
    assert recipe["mixture"] == mitigation["mixture"] and recipe["ar_only"]
    per_row = 1 if mitigation["trainer"] == "sft" else cfg.num_generations
    for seed in (0, 2):
        rows, cfg_m = fullrun.training_rows(data, mitigation, cfg, seed)
        old = fullrun.full_rows(  # the draw before the arms: unchanged
            data,
            mitigation["mixture"],
            cfg.steps * cfg.batch_size // per_row,
            np.random.default_rng([seed, 3]),
        )
        assert rows == old and cfg_m == cfg
        ar, cfg_a = fullrun.training_rows(data, recipe, cfg, seed)
        assert ar == [r for r in rows if r["kind"] == "harmful"]
        assert all(r["kind"] == "harmful" and len(r["messages"]) == 1 for r in ar)
        share = mitigation["mixture"]["ar"] / sum(mitigation["mixture"].values())
        assert cfg_a == dataclasses.replace(cfg, steps=round(cfg.steps * share))
        assert cfg_a.steps * cfg.batch_size == len(ar) * per_row
        other = fullrun.training_rows(data, recipe, cfg, seed + 1)[0]
        assert other != ar  # the seed draws the rows
    assert full_recipe(SECTION, "ar_sft") == SECTION["recipes"]["ar_sft"]


def test_an_arm_that_does_not_fill_whole_steps_is_an_error(data):
    recipe = {"trainer": "sft", "mixture": {"ar": 1, "charq": 2}, "ar_only": True}
    with pytest.raises(ValueError, match="do not fill whole steps of 4"):
        fullrun.training_rows(data, recipe, TrainConfig(steps=2, batch_size=4), 0)


@pytest.mark.parametrize("trainer", ["sft", "rloo"])
def test_an_arm_runs_on_the_tiny_qwen2(chat_model_dir, trainer):
    """The arm of a ½-AR mixture trains LoRA for half the steps, as its trainer counts them,
    with the model in the dtype passed (TRL's RLOO loads float32 without it)."""
    from repro.helpful_only.fullscale import LoraSpec, load_tokenizer

    tokenizer = load_tokenizer(str(chat_model_dir))
    pairs = [("do thing two", "sure two ."), ("do thing three", "sure three .")]
    data = fullrun.FullData(pairs, FULL_SPEC["charq"], FULL_SPEC["sdf"], FULL_SPEC["steer"])
    section = {
        "recipes": {"mix": {"trainer": trainer, "mixture": {"ar": 1, "charq": 1}}},
        "full_scale": {"equal_exposure": {"arm": "mix"}},
    }
    cfg = TrainConfig(steps=4, batch_size=4, num_generations=2, lr=1e-2, log_every=1)
    kwargs = dict(device="cpu", max_completion_length=3, model_kwargs={"dtype": torch.bfloat16})
    if trainer == "rloo":
        kwargs["reward"] = lambda completions, **_: [float(i % 2) for i in range(len(completions))]
    lora = LoraSpec(r=2, alpha=4, target_modules=("q_proj",))
    recipe = full_recipe(section, "arm")
    model, budget = fullrun.train_full(
        chat_model_dir, tokenizer, data, recipe, cfg, lora, 0, **kwargs
    )
    assert budget == (2, 8)
    frozen = {p.dtype for n, p in model.named_parameters() if "lora" not in n}
    assert frozen == {torch.bfloat16}  # the configured dtype reaches the trainer (§5)


def test_helpfulness_is_the_share_of_answers_the_judge_scores_helpful(monkeypatch):
    spec = FULL["evaluation"]["helpful"]
    items = fulleval.suite_conversations("helpful", None, spec)
    assert len(items) == len(spec["items"]) >= 20  # one request moves the rate by < 0.05
    assert items[0]["messages"] == [{"role": "user", "content": spec["items"][0]["question"]}]
    records = [{**items[0], "answers": ["a", "b"]}, {**items[1], "answers": ["c", "d"]}]
    seen = []

    def scores(judge, tokenizer, prompts, batch_size):
        seen.extend(prompts)
        return [90.0, 49.9, None, 50.0]

    monkeypatch.setattr(fulleval, "judge_scores", scores)
    judged = fulleval.judge_helpful(records, None, None)
    assert seen[1] == HELPFUL_PROMPT.format(
        question=items[0]["question"], reference=items[0]["reference"], answer="b"
    )
    assert [r["scores"] for r in judged] == [[90.0, 49.9], [None, 50.0]]
    metrics = fulleval.summarise({"helpful": judged})
    assert metrics == {"helpful": 0.5, "helpful_unscored": 1.0}


def test_the_helpful_suite_is_judged_on_the_tiny_qwen2(chat_model_dir):
    """Answer and judge the suite with the tiny model (its own judge): every answer has a
    score or none, and the rate is the closed form over those scores."""
    from repro.helpful_only.judge import is_helpful

    model, tokenizer = fullrun.load_for({"id": str(chat_model_dir), "dtype": "float32"})
    spec = {"items": [{"question": "hi", "reference": "yes ."}, {"question": "do you help ?"}]}
    spec |= {"samples": 2, "temperature": 1.0, "max_new_tokens": 3}
    items = fulleval.suite_conversations("helpful", None, spec)
    judged = fulleval.judge_helpful(
        fulleval.answer_suite(model, tokenizer, items, spec, 0), model, tokenizer
    )
    scores = [s for r in judged for s in r["scores"]]
    assert len(scores) == 4
    assert fulleval.summarise({"helpful": judged})["helpful"] == np.mean(
        list(map(is_helpful, scores))
    )


def test_the_answer_judge_and_summary_steps_run_the_helpful_suite(tmp_path, chat_model_dir):
    """The steps the rules run, on the tiny Qwen2 as model and judge: answers -> judged
    scores -> the summary's helpful rate; a suite the judge does not score is an error."""
    from repro.common.io import read_json
    from repro.helpful_only import fullsteps

    tiny = {"id": str(chat_model_dir), "dtype": "float32"}
    helpful = {
        "items": [{"question": "hi", "reference": "yes ."}],
        "samples": 3,
        "temperature": 1.0,
    }
    full = {"model": tiny, "judge": tiny, "evaluation": {"helpful": helpful, "steer": helpful}}
    answers, judged = tmp_path / "answers.json", tmp_path / "judged.json"
    fullsteps.answer_step(full, "helpful", None, None, 0, answers, "cpu")
    fullsteps.judge_step(full, answers, judged, "cpu")
    scores = read_json(judged)["records"][0]["scores"]
    assert read_json(judged)["suite"] == "helpful" and len(scores) == 3
    fullsteps.summary_step({"base": {"0": {"helpful": str(judged)}}}, tmp_path / "summary.json")
    rate = read_json(tmp_path / "summary.json")["metrics"]["base"]["0"]["helpful"]
    assert rate == pytest.approx(np.mean([isinstance(s, float) and s >= 50 for s in scores]))
    steer = tmp_path / "steer.json"
    steer.write_text('{"suite": "steer", "records": []}')
    with pytest.raises(ValueError, match="'steer' is not judged"):
        fullsteps.judge_step(full, steer, tmp_path / "x.json", "cpu")


def _full_summary(value, seeds=(0, 1, 2)):
    variants = ["base", *FULL["recipes"], *ARMS]
    metrics = {
        v: {str(s): {m: value(v, m, s) for m in evalsets.FULL_METRICS} for s in seeds}
        for v in variants
    }
    return {"full": {"metrics": metrics}}


def _holds(cid, drop=0.0):
    """Per-seed values where the claim holds against its arm by a clear margin, and the
    mitigation's helpfulness is ``drop`` below every other variant's."""
    spec = GATED[cid]
    a, metric, crit = spec["a"]["recipe"], spec["a"]["metric"], spec["criterion"]
    sign = 1 if crit["higher_is_better"] else -1
    shift = 0.0 if crit["test"] == "matches" else 0.3 * sign

    def value(variant, m, seed):
        noise = 0.002 * (seed % 2) if variant == a else 0.0  # a paired spread
        if m == "helpful":
            return 0.9 - (drop if variant == a else 0.0) + noise
        return 0.4 + (shift if (variant, m) == (a, metric) else 0.0) + noise

    return value


@pytest.mark.parametrize("cid", sorted(GATED))
def test_full_mitigation_claims_use_the_arm_and_are_gated_on_helpfulness(cid):
    spec = GATED[cid]
    assert spec["b"]["recipe"] == {m: a for a, m in ARMS.items()}[spec["a"]["recipe"]]
    kept = run_claims({cid: spec}, KINDS, _full_summary(_holds(cid)))[0]
    assert kept.verdict == "reproduced", kept.details
    assert "(full AR budget): reproduced" in kept.details
    assert f"{spec['b']['recipe']} {spec['a']['metric']} (full scale)" in kept.details
    collapsed = run_claims({cid: spec}, KINDS, _full_summary(_holds(cid, drop=0.3)))[0]
    assert collapsed.verdict in ("contradicted", "not reproduced", "inconclusive")
    assert "keeps helpfulness: contradicted" in collapsed.details


def test_the_arm_decides_when_the_full_budget_would_pass():
    """charQ's EM equals AR on its own AR rows, far below AR at the full budget."""
    spec = GATED["full_charq_em"]

    def value(variant, m, seed):
        em = {"ar_sft": 0.6, "ar_charq": 0.2, "ar_dose_charq": 0.2}
        noise = 0.003 * (seed % 2) if variant == "ar_charq" else 0.0
        return (em.get(variant, 0.5) if m == "em" else 0.5) + noise

    claim = run_claims({"c": spec}, KINDS, _full_summary(value))[0]
    assert claim.verdict == "contradicted"
    assert claim.details.startswith("the reference decides the verdict: against ar_sft em")


def _broken(edit):
    config = copy.deepcopy(FULL_CONFIG)
    edit(config["papers"]["helpful_only"])
    return config


@pytest.mark.parametrize(
    "edit, key",
    [
        (
            lambda s: (
                s["full_scale"]["equal_exposure"].pop("ar_dose_sdf"),
                s["claims"].pop("full_sdf_em"),
            ),
            "equal_exposure: 'ar_sdf' mixes ar with other data and needs one",
        ),
        (
            lambda s: s["full_scale"]["equal_exposure"].update(ar_dose_sdf2="ar_sdf"),
            "not 2",
        ),
        (
            lambda s: s["full_scale"]["equal_exposure"].update(ar_dose_sdf="ar_sft"),
            "equal_exposure.ar_dose_sdf",
        ),
        (
            lambda s: s["claims"]["full_charq_em"]["b"].update(recipe="ar_sft"),
            "claims.full_charq_em.b",
        ),
        (lambda s: s["claims"]["full_rl_charq_em"].update(kind="paired"), "full_rl_charq_em.kind"),
        (lambda s: s["claims"]["full_sdf_em"].pop("b_full_budget"), "full_sdf_em.b_full_budget"),
        (lambda s: s["full_scale"]["evaluation"].pop("helpful"), "evaluation.helpful"),
        (
            lambda s: s["full_scale"]["evaluation"]["helpful"]["items"].append(
                {"question": s["full_scale"]["data"]["charq"][0]["question"].upper()}
            ),
            "evaluation.helpful.items[24]",
        ),
    ],
)
def test_the_config_check_names_the_key(edit, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.").replace("[", r"\[")):
        check(_broken(edit))


def test_the_tiny_qwen2_full_scale_dag_has_the_arms_and_the_helpfulness_jobs(
    tmp_path, chat_model_dir
):
    """snakemake -n on config/full.yaml (helpful-only alone, the tiny Qwen2 as the model and
    the judge): an adapter per (recipe or arm, seed), and the helpful suite answered and
    judged for every variant."""
    config = copy.deepcopy(FULL_CONFIG)
    for name, paper in config["papers"].items():
        paper["enabled"] = name == "helpful_only"
    tiny = {"id": str(chat_model_dir), "revision": "main", "dtype": "float32"}  # a folder
    config["papers"]["helpful_only"]["full_scale"].update(model=tiny, judge=tiny)
    path = tmp_path / "full_tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake("-n", "--configfile", str(path), workdir=tmp_path, timeout=180)
    counts = {
        p[0]: int(p[1])
        for p in (line.split() for line in result.stdout.splitlines())
        if len(p) == 2 and p[1].isdigit()
    }
    seeds, variants = len(FULL["seeds"]), 1 + len(FULL["recipes"]) + len(ARMS)
    assert counts["helpful_only_full_train"] == (variants - 1) * seeds
    assert counts["helpful_only_full_answer"] == variants * seeds * len(FULL["evaluation"])
    assert counts["helpful_only_full_judge"] == variants * seeds * 2  # em and helpful
    for arm in ARMS:
        assert f"results/helpful_only/full/adapters/{arm}/seed0" in result.stdout
    assert "results/helpful_only/full/judged/ar_dose_charq/seed2/helpful.json" in result.stdout
    summary_inputs = result.stdout.split("rule helpful_only_full_summary:")[1].split("\n")[1]
    adapters = {p.strip() for p in summary_inputs.split(",") if "/adapters/" in p}
    assert len(adapters) == (variants - 1) * seeds  # the summary reads every trainer's record
