"""Full scale's identical budgets, read from the trainers: every adapter's record.json holds
the step and sequence counts of its trainer (TRL's global step), the full summary gathers
them, and the check ``full_identical_budgets`` compares them with the configured budget and
the arms' own steps: a run that stopped early, or left no record, fails it."""

import copy
import csv

import pytest
import yaml

from repro.common.claims import run_claims
from repro.common.configcheck import ConfigError
from repro.common.io import read_json
from repro.helpful_only import fullrun, fullsteps, trl_train
from repro.helpful_only.claims import KINDS
from repro.helpful_only.configcheck import check
from repro.helpful_only.judge import load_validation_set
from repro.helpful_only.recipes import TrainConfig, ar_only_steps, full_recipe
from tests.conftest import ROOT
from tests.helpful_only.conftest import FULL_SPEC

FULL_CONFIG = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
SECTION = FULL_CONFIG["papers"]["helpful_only"]
FULL = SECTION["full_scale"]
CHECK = SECTION["checks"]["full_identical_budgets"]


def test_the_arms_configured_steps_are_what_their_rows_fill():
    """recipe_steps of the check = ar_only_steps = the steps training_rows gives the arm."""
    pairs = [("do thing one", "sure one ."), ("do thing two", "sure two .")]
    data = fullrun.FullData(pairs, FULL_SPEC["charq"], FULL_SPEC["sdf"], FULL_SPEC["steer"])
    training = {k: v for k, v in FULL["training"].items() if k != "max_completion_length"}
    cfg = TrainConfig(**training)
    assert (CHECK["steps"], CHECK["batch_size"]) == (cfg.steps, cfg.batch_size)
    for arm, mitigation in FULL["equal_exposure"].items():
        drawn = fullrun.training_rows(data, full_recipe(SECTION, arm), cfg, 0)[1].steps
        computed = ar_only_steps(
            SECTION["recipes"][mitigation], cfg.steps, cfg.batch_size, cfg.num_generations
        )
        assert CHECK["recipe_steps"][arm] == computed == drawn


def _broken(edit):
    config = copy.deepcopy(FULL_CONFIG)
    edit(config["papers"]["helpful_only"]["checks"]["full_identical_budgets"])
    return config


@pytest.mark.parametrize(
    "edit, key",
    [
        (
            lambda c: c["recipe_steps"].update(ar_dose_charq_steer=150),
            "recipe_steps.ar_dose_charq_steer: 150",
        ),
        (lambda c: c["recipe_steps"].pop("ar_dose_sdf"), "recipe_steps: must list every arm"),
        (lambda c: c.update(steps=150), "steps: 150, but full_scale.training has 300"),
        (lambda c: c.update(batch_size=32), "batch_size: 32"),
    ],
)
def test_the_config_check_rejects_a_budget_that_is_not_the_full_scale_one(edit, key):
    with pytest.raises(ConfigError, match=f"checks.full_identical_budgets.{key}"):
        check(_broken(edit))


def test_a_full_budget_check_needs_the_full_scale_section():
    config = copy.deepcopy(FULL_CONFIG)
    config["papers"]["helpful_only"].pop("full_scale")
    for cid in [c for c, s in SECTION["claims"].items() if s.get("a", {}).get("source")]:
        config["papers"]["helpful_only"]["claims"].pop(cid)
    with pytest.raises(ConfigError, match="full_identical_budgets.source: full is a budget"):
        check(config)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, chat_model_dir):
    """train_step (what the rule runs) on the tiny Qwen2: an SFT mixture, its arm, an RLOO
    recipe (its reward gated on the tiny model as the relevance judge), and the SFT mixture
    once more, stopped by a callback after one step."""
    folder = tmp_path_factory.mktemp("budgets")
    ar_csv = folder / "ar.csv"
    with open(ar_csv, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["goal", "target"])
        writer.writerows([("do thing two", "sure two ."), ("do thing three", "sure three .")])
    full = {
        "model": {"id": str(chat_model_dir), "dtype": "float32"},
        "judge": {"id": str(chat_model_dir), "dtype": "float32"},
        "reward": {"min_words": 2, "relevance": True, "threshold": 50},
        "training": {"steps": 4, "batch_size": 4, "num_generations": 2, "lr": 1e-2},
        "lora": {"r": 2, "alpha": 4, "target_modules": ["q_proj"]},
        "data": {**FULL_SPEC},
        "equal_exposure": {"arm": "mix"},
    }
    section = {
        "recipes": {
            "mix": {"trainer": "sft", "mixture": {"ar": 1, "charq": 1}},
            "rl": {"trainer": "rloo", "mixture": {"ar": 1}},
        },
        "full_scale": full,
    }
    out = {}
    for name in ("mix", "arm", "rl"):
        out[name] = folder / name
        recipe = full_recipe(section, name)
        fullsteps.train_step(full, recipe, 0, ar_csv, None, out[name], "cpu")
    original = trl_train.LogCallback.on_step_end

    def stop_after_one(self, args, state, control, **kwargs):
        control.should_training_stop = True  # e.g. a job cut short, an early-stopping rule
        return original(self, args, state, control, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trl_train.LogCallback, "on_step_end", stop_after_one)
        out["stopped"] = folder / "stopped"
        fullsteps.train_step(
            full, section["recipes"]["mix"], 0, ar_csv, None, out["stopped"], "cpu"
        )
    return folder, out


SPEC = {
    "kind": "budget",
    "source": "full",
    "claim": "every full-scale run trains its budget",
    "steps": 4,
    "batch_size": 4,
    "recipe_steps": {"arm": 2},
    "criterion": {"op": "<=", "threshold": 0},
}


def _checked(folder, adapters):
    fullsteps.summary_step({}, folder / "summary.json", adapters)
    summary = read_json(folder / "summary.json")
    (result,) = run_claims({}, KINDS, {"full": summary}, {"budget": SPEC})
    return summary, result


def test_each_trainer_records_its_own_count_beside_the_adapter(trained):
    _, out = trained
    counts = {n: read_json(out[n] / "record.json") for n in out}
    assert {n: (r["steps"], r["sequences"]) for n, r in counts.items()} == {
        "mix": (4, 16),
        "arm": (2, 8),  # the AR half of the mixture's rows
        "rl": (4, 16),  # RLOO: completions (2 prompts x 2 generations per step)
        "stopped": (1, 4),
    }
    assert (out["mix"] / "adapter_config.json").exists()


def test_the_check_passes_on_full_runs_and_fails_on_an_early_stop(trained):
    folder, out = trained
    full_runs = {"mix": {"0": str(out["mix"])}, "arm": {"0": str(out["arm"])}}
    full_runs["rl"] = {"0": str(out["rl"])}
    summary, result = _checked(folder, full_runs)
    assert summary["budgets"] == {"mix": {"0": [4, 16]}, "arm": {"0": [2, 8]}, "rl": {"0": [4, 16]}}
    assert (result.type, result.verdict, result.measured) == ("check", "passed", 0.0)
    stopped = {**full_runs, "mix": {"0": str(out["stopped"])}}
    _, result = _checked(folder, stopped)
    assert (result.verdict, result.measured) == ("failed", 3 + 12)
    assert result.details.startswith("off budget: mix s0;")
    arm_as_full = {**full_runs, "mix": {"0": str(out["arm"])}}  # a half run as a full one
    assert _checked(folder, arm_as_full)[1].verdict == "failed"


def test_a_run_without_a_record_fails_the_check(trained):
    folder, out = trained
    adapters = {"mix": {"0": str(out["mix"]), "1": str(folder / "never_trained")}}
    summary, result = _checked(folder, adapters)
    assert summary["budgets"]["mix"]["1"] is None
    assert result.verdict == "failed" and "mix s1: no record" in result.details
    assert _checked(folder, {})[1].verdict == "failed"  # no records at all


def test_the_rl_trainer_records_its_relevance_judges_validation(trained):
    """The RLOO job validates the judge its reward is gated on (the shipped relevance set, at
    the reward's threshold) and records it beside its counts; the summary keeps it. The SFT
    jobs load no judge and record none. (Tiny random judge: ranges only.)"""
    folder, out = trained
    records = {n: read_json(out[n] / "record.json") for n in out}
    assert {n: r["judge_validation"] for n, r in records.items() if n != "rl"} == {
        "mix": {},
        "arm": {},
        "stopped": {},
    }
    (relevance,) = records["rl"]["judge_validation"].values()
    assert list(records["rl"]["judge_validation"]) == ["relevance"]
    assert relevance["n"] == len(load_validation_set("relevance_validation"))
    assert relevance["threshold"] == 50 and 0 <= relevance["agreement"] <= 1
    summary, _ = _checked(folder, {"mix": {"0": str(out["mix"])}, "rl": {"0": str(out["rl"])}})
    assert summary["judge_validation"] == {"relevance": relevance}  # no least agreement given
