"""Each claim's controls, as config/config.yaml writes them, judged by the claim's own handler:
with both passing the verdict stands; a positive control that fails, or a negative one that
comes out reproduced, makes it uninformative with the control's number. A seed whose run
failed its sanity check makes the claims that read it "not reproduced", naming it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.common.controls import number_text
from tests.delta_mem.test_claims_config import FACTS, SEEDS, SPECS, _good, _run

MEASURED = ("memory_only_gain", "history_replay_no_harm", "capability_preserved")
MEASURED += ("strongest_baseline_gain",)


def _fill(acc, method, condition, value):
    acc[method][condition] = dict.fromkeys(FACTS, value)
    return acc


def test_both_controls_pass_and_the_verdicts_stand(tmp_path):
    out = _run(tmp_path, _good())
    for cid in MEASURED:
        assert out[cid].verdict == "reproduced" and out[cid].own_verdict == "", cid
        positive, negative = out[cid].controls
        assert positive["side"] == "positive" and positive["verdict"] == "reproduced", cid
        assert negative["verdict"] == "contradicted" and negative["passed"], cid
    # the controls' numbers by hand (the per-seed jitter is shared by every condition, so
    # each difference is the same at every seed): least favourable n_facts / baseline
    controls = {cid: out[cid].controls for cid in MEASURED}
    assert controls["memory_only_gain"][0]["measured"] == pytest.approx(0.98 - 0.06)
    assert controls["memory_only_gain"][1]["measured"] == pytest.approx(0.0)
    assert controls["history_replay_no_harm"][0]["measured"] == pytest.approx(0.005)
    assert controls["capability_preserved"][1]["measured"] == pytest.approx(0.5 - 0.98)
    assert controls["strongest_baseline_gain"][0]["measured"] == pytest.approx(0.98 - 0.07)
    assert controls["strongest_baseline_gain"][1]["measured"] == 0.0


# numbers under which a claim still holds but its positive control does not
POSITIVE_FAILS = {
    # the base with the history in the window no better than without it, at n_facts 2
    "memory_only_gain": lambda a: _fill(a, "delta_mem", "full", 0.06),
    # the no-harm arm harms at n_facts 8 (history_replay 0.9 against the base's 0.98)
    "history_replay_no_harm": lambda a: _fill(a, "delta_mem_full_view", "history_replay", 0.9),
    "capability_preserved": lambda a: _fill(a, "delta_mem_full_view", "official_prompt", 0.9),
    # LoRA-SFT without the history as good as the base with it
    "strongest_baseline_gain": lambda a: _fill(a, "delta_mem_lora", "lora_truncated", 0.98),
}
# numbers under which a claim holds and so does its negative control
NEGATIVE_HOLDS = {
    "memory_only_gain": lambda a: {
        **a,
        "delta_mem": {**a["delta_mem"], "other_state": a["delta_mem"]["state_only"]},
    },
    "history_replay_no_harm": lambda a: _fill(a, "delta_mem", "other_replay", 0.98),
    "capability_preserved": lambda a: _fill(a, "delta_mem", "other_replay", 0.98),
    # LoRA-SFT's adapter-off base below δ-Mem's zero-state base: not the same model
    "strongest_baseline_gain": lambda a: {
        **a,
        "delta_mem_lora": {**a["delta_mem_lora"], "full": dict.fromkeys(FACTS, 0.9)},
    },
}


FAILING = {"positive": (POSITIVE_FAILS, "contradicted"), "negative": (NEGATIVE_HOLDS, "reproduced")}


@pytest.mark.parametrize("side", ["positive", "negative"])
@pytest.mark.parametrize("cid", MEASURED)
def test_a_failing_control_makes_the_claim_uninformative(tmp_path, cid, side):
    """A positive control not reproduced, or a negative one reproduced: uninformative, the
    claim's own verdict beside and the control's number in the details."""
    edits, came_out = FAILING[side]
    claim = _run(tmp_path, edits[cid](_good()))[cid]
    control = claim.controls[0 if side == "positive" else 1]
    assert control["side"] == side and control["verdict"] == came_out and not control["passed"]
    assert claim.verdict == "uninformative" and claim.own_verdict == "reproduced"
    about = SPECS[cid]["controls"][side]["about"]
    number = number_text(control["measured"], control["interval"])
    assert f"the {side} control ({about}) came out {came_out}, {number}" in claim.details


def test_the_no_harm_arm_is_judged_on_its_own_seeds(tmp_path):
    """The positive control of the no-harm claims reads delta_mem_full_view per seed: its
    interval (paired t over the 3 seeds) against scipy's."""
    from scipy import stats

    acc = _good()
    acc["delta_mem_full_view"]["history_replay"] = {n: {0: 0.99, 1: 0.975, 2: 0.985} for n in FACTS}
    positive = _run(tmp_path, acc)["history_replay_no_harm"].controls[0]
    full = {s: 0.98 + j for s, j in zip(SEEDS, (0.01, -0.005, 0.0), strict=True)}
    diffs = np.array([0.99, 0.975, 0.985]) - np.array([full[s] for s in SEEDS])
    low, high = stats.t.interval(0.95, 2, loc=diffs.mean(), scale=stats.sem(diffs))
    assert positive["measured"] == pytest.approx(diffs.mean())
    assert positive["interval"] == pytest.approx([low, high])
    assert positive["verdict"] == ("reproduced" if low > -0.01 else "inconclusive")


BROKEN_BACKBONE = {"backbone": {"final_accuracy": 0.83, "steps": 1500}}


def test_a_backbone_without_the_copy_circuit_is_a_failed_run(tmp_path):
    """Seed 1's backbone never reached its stop accuracy: every claim reading seed 1 is not
    reproduced, naming it, and the sane_runs check fails with one run per method."""
    records = {m: {1: BROKEN_BACKBONE} for m in _good()}
    out = _run(tmp_path, _good(), records=records)
    for cid in MEASURED:
        assert out[cid].verdict == "not reproduced", cid
        assert "delta_mem seed 1: its backbone ended pretraining at accuracy 0.83" in (
            out[cid].details
        )
    assert "after 1500 steps, below 0.995" in out["memory_only_gain"].details
    assert out["runs_sane"].verdict == "failed" and out["runs_sane"].measured == 3


@pytest.mark.parametrize("loss", [math.nan, math.inf, 2.7726, 3.5])
def test_a_method_that_did_not_train_is_a_failed_run(tmp_path, loss):
    """The LoRA baseline's seed 2 ended at a loss that is not finite, or not below the uniform
    guess's (ln 16 = 2.7726): the comparison with it is not reproduced; δ-Mem's own claims,
    which do not read LoRA, keep their verdicts."""
    records = {"delta_mem_lora": {2: {"train": {"final_loss": loss}}}}
    out = _run(tmp_path, _good(), records=records)
    assert out["strongest_baseline_gain"].verdict == "not reproduced"
    assert "delta_mem_lora seed 2: its training ended at loss" in (
        out["strongest_baseline_gain"].details
    )
    assert out["memory_only_gain"].verdict == "reproduced"
    assert out["runs_sane"].verdict == "failed" and out["runs_sane"].measured == 1


def test_sane_runs_pass(tmp_path):
    records = {
        "delta_mem": {0: {"train": {"final_loss": 2.77}, "backbone": {"final_accuracy": 0.995}}}
    }
    check = _run(tmp_path, _good(), records=records)["runs_sane"]
    assert check.verdict == "passed" and check.measured == 0
    assert "0 of 3 methods' 9 seed runs failed" in check.details


@pytest.mark.parametrize("accuracy", [None, math.nan])
def test_a_missing_backbone_record_is_a_failed_run(tmp_path, accuracy):
    records = {"delta_mem": {0: {"backbone": {"final_accuracy": accuracy}}}}
    out = _run(tmp_path, _good(), records=records)
    assert out["memory_only_gain"].verdict == "not reproduced"
    assert out["runs_sane"].verdict == "failed"
