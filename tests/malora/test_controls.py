"""MaLoRA's controls, sanity checks and control arms (issue 34), on the claims' real config
entries: a failing positive control or a reproduced negative one makes a claim
"uninformative" with the control's number, both passing leave its verdict; a seed that fails
a sanity check is a failed run for the claims on its study (and rule); the arms and the
interval of a mean over seeds against independent references (a naive loop, scipy)."""

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    UNINFORMATIVE,
    run_claims,
)
from repro.common.controls import number_text
from repro.malora import arms
from repro.malora.claims import KINDS
from repro.malora.mean_claims import mean_interval
from tests.malora.toy_summary import toy_summary

ROOT = Path(__file__).resolve().parents[2]
SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["malora"]
CLAIMS = {k: v for k, v in SECTION["claims"].items() if v["kind"] != "not_tested"}


def _judge(summary, claim_id, spec=None):
    inputs = {"summary": summary, "section": SECTION, "checks": SECTION["checks"]}
    return run_claims({claim_id: spec or CLAIMS[claim_id]}, KINDS, inputs)[0]


@pytest.mark.parametrize("good", [True, False])
@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_every_claim_has_two_controls_that_behave(claim_id, good):
    """On numbers where the claim holds (or fails), its positive control is reproduced and
    its negative one is not, so the claim's own verdict stands."""
    claim = _judge(toy_summary(good=good), claim_id)
    positive, negative = claim.controls
    assert positive["side"] == "positive" and positive["verdict"] == REPRODUCED, positive
    assert negative["side"] == "negative" and negative["verdict"] in (CONTRADICTED, INCONCLUSIVE)
    assert claim.verdict == (REPRODUCED if good else CONTRADICTED) and claim.own_verdict == ""


def test_a_failing_positive_control_makes_the_claim_uninformative_with_its_number():
    """The oracle no better than task arithmetic: this setup could not show MaLoRA beating
    it, whatever MaLoRA measured."""
    summary = toy_summary(good=True)
    for block in summary["linear"]["settings"]["unequal"]:
        block["oracle"] = copy.deepcopy(block["methods"]["task_arithmetic"]["union_margin"])
    claim = _judge(summary, "c3_beats_task_arithmetic")
    positive = claim.controls[0]
    assert positive["verdict"] in (CONTRADICTED, INCONCLUSIVE) and not positive["passed"]
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    shown = number_text(positive["measured"], positive["interval"])
    assert "the positive control (the test-set oracle" in claim.details
    assert f"came out {positive['verdict']}, {shown}: this setup cannot show" in claim.details


def test_a_reproduced_negative_control_makes_the_claim_uninformative():
    """c3_beats_average as the embedded run found it: at equal adapter scales (where the
    weights have nothing to equalise) MaLoRA still beats averaging by its overall scale."""
    summary = toy_summary(good=True)
    for block in summary["linear"]["settings"]["equal"]:
        block["methods"]["malora"]["union_margin"]["per_seed"] = [0.30] * 5
        block["methods"]["average"]["union_margin"]["per_seed"] = [0.24, 0.25, 0.23, 0.24, 0.26]
    claim = _judge(summary, "c3_beats_average")
    negative = claim.controls[1]
    assert negative["verdict"] == REPRODUCED and not negative["passed"]
    assert negative["measured"] == pytest.approx(0.30 - 0.244)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    assert "does not separate the effect from its absence" in claim.details
    assert "(equal setting) vs average" in negative["details"]


def test_both_controls_passing_leave_a_contradicted_verdict():
    claim = _judge(toy_summary(good=False), "c4_digits_joint")
    assert claim.verdict == CONTRADICTED and claim.own_verdict == ""
    assert [c["passed"] for c in claim.controls] == [True, True]


# --- sanity: a broken run fails a check and the claims on it, not an interval --------------
def test_an_unlearned_adapter_is_a_failed_run_of_the_digits_claims():
    summary = toy_summary(good=True)
    summary["digits"]["individual_accuracy"] = [[0.99, 0.98, 0.97]] * 5
    summary["digits"]["individual_accuracy"][3] = [0.99, 0.62, 0.97]
    claim = _judge(summary, "c4_digits_normalised")
    assert claim.verdict == NOT_REPRODUCED
    assert "failed runs (digits): digits_adapters_learned: seed 3 adapter 1: 0.62" in claim.details
    assert _judge(summary, "c3_beats_task_arithmetic").verdict == REPRODUCED  # another study


def test_a_broken_baseline_fails_only_the_claims_that_read_it():
    summary = toy_summary(good=True)
    block = summary["linear"]["settings"]["unequal"][0]
    block["methods"]["task_arithmetic"]["pertask_accuracy"]["per_seed"][1] = 0.25  # chance 0.2
    claim = _judge(summary, "c3_beats_task_arithmetic")
    assert claim.verdict == NOT_REPRODUCED
    assert "merged_above_chance: unequal ε=0 task_arithmetic seed 1: 0.05" in claim.details
    assert _judge(summary, "c3_beats_average").verdict == REPRODUCED  # reads malora, average


def test_a_seed_without_a_malora_alpha_is_the_methods_failure_not_a_failed_run():
    summary = toy_summary(good=True)
    digits = summary["digits"]
    digits["methods"]["malora"]["pertask_accuracy"]["per_seed"][2] = float("nan")
    digits["methods"]["malora"]["normalised_accuracy"]["per_seed"][2] = float("nan")
    digits["errors"]["malora"][2] = "every task margin must be > 0"
    inputs = {"summary": summary, "section": SECTION, "checks": SECTION["checks"]}
    check = run_claims({}, KINDS, inputs, {"c": SECTION["checks"]["merged_above_chance"]})[0]
    assert check.verdict == "passed" and "malora (digits) seeds [2]" in check.details
    claim = _judge(summary, "c4_digits_normalised")  # failed_seed: loss
    assert "failed runs" not in claim.details and "scored as a loss" in claim.details


# --- control arms and the interval of a mean, against naive references --------------------
def _block(rng, rules, n=6):
    values = rng.normal(0.5, 0.1, size=(len(rules), n))
    values[0, 2] = np.nan  # a rule without a value on one seed
    return {
        "methods": {r: {"m": {"per_seed": list(v)}} for r, v in zip(rules, values, strict=True)},
        "oracle": {"per_seed": list(rng.normal(0.9, 0.01, n))},
        "ablations": {"calibration_size": {"test": {"per_seed": list(rng.normal(0.8, 0.01, n))}}},
    }


@pytest.mark.parametrize("higher", [True, False])
def test_best_baseline_and_worst_rule_against_a_naive_loop(higher):
    rng = np.random.default_rng(3)
    rules = ["a", "b", "c", "d"]
    block = _block(rng, rules)
    baselines = ["b", "c"]
    best = arms.arm_values(block, arms.BEST_BASELINE, "m", baselines, higher_is_better=higher)
    worst = arms.arm_values(block, arms.WORST_RULE, "m", baselines, higher_is_better=higher)
    for s in range(6):
        column = {r: block["methods"][r]["m"]["per_seed"][s] for r in rules}
        have = {r: v for r, v in column.items() if not np.isnan(v)}
        pick_best, pick_worst = (max, min) if higher else (min, max)
        assert best[s] == pick_best(column[b] for b in baselines)
        assert worst[s] == pick_worst(have.values())
    oracle = arms.arm_values(block, arms.ORACLE, "union_margin", [], higher_is_better=True)
    assert oracle == block["oracle"]["per_seed"]
    exact = arms.arm_values(block, arms.EXACT_MARGINS, "union_margin", [], higher_is_better=True)
    assert exact == block["ablations"]["calibration_size"]["test"]["per_seed"]
    with pytest.raises(KeyError):
        arms.arm_values(block, arms.ORACLE, "m", [], higher_is_better=True)


@pytest.mark.parametrize(
    "op,threshold,expected",
    [("<=", 0.10, REPRODUCED), ("<=", 0.06, INCONCLUSIVE), ("<=", 0.02, CONTRADICTED)],
)
def test_mean_interval_against_scipy(op, threshold, expected):
    values = {0: 0.05, 1: 0.07, 2: 0.04, 3: 0.06, 4: 0.055}
    spec = {"claim": "x", "criterion": {"op": op, "threshold": threshold}}
    claim = mean_interval("c", spec, values)
    v = list(values.values())
    low, high = stats.t.interval(0.95, df=len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
    assert claim.measured == pytest.approx(np.mean(v))
    assert claim.interval == pytest.approx((low, high))
    assert claim.verdict == expected


def test_closed_form_is_judged_again_at_the_seeds_registered_first():
    summary = toy_summary(good=True, seeds=tuple(range(10)))
    rng = np.random.default_rng(1)
    for block in summary["sweep"]["overlaps"]:
        for row in block["lambdas"]:
            row["measured_finetune"]["per_seed"] = list(
                np.array(row["measured_finetune"]["per_seed"]) * rng.uniform(0.9, 1.1, 10)
            )
    claim = _judge(summary, "c2_closed_form")
    found = claim.at_registered_seeds
    assert found["seeds"] == [0, 1, 2, 3, 4]
    # the ledger's number at the registered seeds: the worst overlap's mean error, by hand
    per_overlap = []
    for block in summary["sweep"]["overlaps"][:2]:
        errors = []
        for i in range(5):
            rel = [
                abs(r[f"measured_{m}"]["per_seed"][i] - r[f"closed_nuclear_{m}"]["per_seed"][i])
                / abs(r[f"closed_nuclear_{m}"]["per_seed"][i])
                for r in block["lambdas"]
                for m in ("pretrain", "finetune")
            ]
            errors.append(np.median(rel))
        low, high = stats.t.interval(0.95, df=4, loc=np.mean(errors), scale=stats.sem(errors))
        per_overlap.append((np.mean(errors), low, high))
    match = [(lo, hi) for m, lo, hi in per_overlap if found["measured"] == pytest.approx(m)]
    assert match and found["interval"] == pytest.approx(list(match[0]))
    assert found["verdict"] == REPRODUCED  # the toy's errors are ≈ 0.014, far below 0.10


def test_closed_form_reports_its_least_favourable_overlap_in_the_criterions_direction():
    """An upper bound (error ≤ 0.10): the overlap whose interval reaches highest is the least
    favourable one, whatever its lower end (all_hold reads intervals as higher is better)."""
    summary = toy_summary(good=True)
    wide, narrow = summary["sweep"]["overlaps"][:2]  # ε = 0: errors spread; ε = 0.3: tight
    errors = [0.05, 0.07, 0.05, 0.09, 0.06]  # per seed: |measured − closed| / closed
    for block, spread in ((wide, errors), (narrow, [0.01] * 5)):
        for row in block["lambdas"]:
            for m in ("pretrain", "finetune"):
                closed = row[f"closed_nuclear_{m}"]["per_seed"]
                row[f"measured_{m}"]["per_seed"] = [
                    c * (1 + e) for c, e in zip(closed, spread, strict=True)
                ]
    claim = _judge(summary, "c2_closed_form")
    low, high = stats.t.interval(0.95, df=4, loc=np.mean(errors), scale=stats.sem(errors))
    assert claim.verdict == REPRODUCED
    assert claim.measured == pytest.approx(np.mean(errors))
    assert claim.interval == pytest.approx((low, high))
    assert claim.details.endswith("least favourable: ε=0")
