"""The three studies end to end on small settings, checked against invariants that a wrong
implementation breaks (the oracle bounds every non-negative α rule, closed forms at ε = 0,
the peft and dense merges agree, equal budgets)."""

import numpy as np
import pytest

from repro.malora.digits import DigitsDesign
from repro.malora.digits_study import DigitsConfig, run_digits_seed
from repro.malora.linear import LinearWorld, task_rows, train_base, train_lora
from repro.malora.linear_merge import (
    LinearMergeConfig,
    ScaleSetting,
    run_linear_merge,
    run_setting,
)
from repro.malora.sweep import SweepConfig, run_sweep
from tests.malora.malora_helpers import SMALL

METHODS = {
    "task_arithmetic": {"rule": "task_arithmetic"},
    "ta_tuned": {"rule": "task_arithmetic", "tune": True},
    "average": {"rule": "average"},
    "ties": {"rule": "ties", "params": {"top_k": 0.2}, "tune": True},
    "knots_ties": {"rule": "knots", "params": {"inner": "ties", "top_k": 0.2}, "tune": True},
    "lorahub": {"rule": "lorahub", "params": {"budget": 6}},
    "malora": {"rule": "malora"},
    "norm_frobenius": {"rule": "norm_frobenius"},
}
GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)


def test_sweep_margins_obey_the_orthogonal_identities():
    cfg = SweepConfig(
        design=SMALL,
        overlaps=(0.0,),
        lambdas=(0.03, 0.1),
        rank=2,
        lora_steps=1500,
        base_steps=400,
        snapshot_steps=(100,),
    )
    out = run_sweep(cfg, seed=0)["overlaps"][0]
    for row in out["lambdas"]:
        # certified optimum (duality gap; the workflow's check allows 1e-4). L-BFGS stops where
        # it stops improving, which depends on the machine's floating point: 1.06e-8 in one
        # make test (2026-12-06), so 1e-8 was too tight; 1e-6 is still 100x inside the check.
        assert row["gap"] < 1e-6
        assert set(row["cosine_by_step"]) == {"100"}
        for name in ("frobenius", "nuclear"):
            assert 0.5 < row["cosine"][name] <= 1.0
        # at ε = 0 the pre-training margin depends on ‖ΔW‖ only (norms add)
        expected = out["base_margin"] / np.hypot(out["base_norm"], row["delta_norm"])
        assert row["measured"]["pretrain"] == pytest.approx(expected, rel=1e-9)
    small, large = out["lambdas"]
    assert small["measured"]["finetune"] > large["measured"]["finetune"]
    assert 0 < small["measured"]["pretrain"] < large["measured"]["pretrain"]
    # C1's negative control: the cosine with the path's own smallest-λ adapter, retrained
    # here and compared by hand
    world = LinearWorld(SMALL, 0)
    pre = world.sample(0, SMALL.pretrain_per_class, SMALL.train_noise, 0.0, "train")
    task = world.sample(1, SMALL.per_class, SMALL.train_noise, 0.0, "train")
    base = train_base(pre, SMALL, weight_decay=1e-3, steps=400).weight
    rows = task_rows(1, SMALL.classes_per_task)
    a, b = (
        train_lora(task, base, SMALL, rank=2, lam=lam, steps=1500, seed=0).delta[rows]
        for lam in (0.03, 0.1)
    )
    expected = float(np.sum(a * b) / np.sqrt(np.sum(a * a) * np.sum(b * b)))
    assert small["path_cosine"]["path_smallest"] == pytest.approx(1.0)
    assert large["path_cosine"]["path_smallest"] == pytest.approx(expected, abs=1e-6)


def test_linear_merge_oracle_bounds_every_nonnegative_rule_and_budgets_are_equal():
    cfg = LinearMergeConfig(
        design=SMALL,
        overlaps=(0.0, 0.6),
        methods=METHODS,
        scale_grid=GRID,
        rank=2,
        settings={"unequal": ScaleSetting((1, 3), (1e-3, 3e-3))},
        base_steps=300,
        landscape_axis=tuple(np.geomspace(0.1, 4, 7)),
        margin_stats={"min": {"stat": "min"}, "softmin": {"stat": "softmin"}},
        calibration_sizes=(6, 30),
    )
    out = run_linear_merge(cfg, seed=1)
    for run in out["runs"]:
        oracle = run["oracle"]["union_margin"]
        for name, row in run["methods"].items():
            if row["alphas"] is not None and min(row["alphas"]) >= 0:
                assert row["union_margin"] <= oracle + 1e-9, name
            tuned = METHODS[name].get("tune") or name == "lorahub"
            assert row["calibration_evaluations"] <= (len(GRID) if tuned else 0), name
        # with two fine-tuning tasks the landscape is the oracle's whole domain (on a grid)
        assert np.max(run["landscape"]["union_margin"]) <= oracle + 1e-9
        assert set(run["ablations"]["calibration_size"]) == {"6", "30", "test"}
        ml = run["methods"]["malora"]
        np.testing.assert_allclose(
            np.array(ml["alphas"]) * run["calibration_margins"]["tasks"],
            run["calibration_margins"]["base"],
        )


@pytest.fixture(scope="module")
def digits_run():
    design = DigitsDesign(base_steps=60, adapter_steps=60)
    cfg = DigitsConfig(
        design=design,
        methods={**METHODS, "malora_tuned_scale": {"rule": "malora", "tune": True}},
        scale_grid=GRID,
        calibration_per_task=24,
        margin={"stat": "softmin"},
        margin_stats={"q": {"stat": "quantile", "q": 0.2}},
        calibration_sizes=(16,),
    )
    return run_digits_seed(cfg, seed=0)


def test_every_seed_changes_its_study(digits_run):
    """The seeds of the config (papers.malora.seeds: sweep and linear; digits.seeds) reach
    every draw of their study: another seed gives other numbers (issue 34: no seed in code)."""
    sweep = SweepConfig(design=SMALL, overlaps=(0.3,), lambdas=(0.1,), rank=2, lora_steps=50)
    first, other = (run_sweep(sweep, seed=s)["overlaps"][0] for s in (0, 1000))
    assert first["base_margin"] != other["base_margin"]
    assert first["lambdas"][0]["cosine"] != other["lambdas"][0]["cosine"]
    merge = LinearMergeConfig(
        design=SMALL,
        overlaps=(0.3,),
        methods={"malora": METHODS["malora"], "dare": {"rule": "dare", "params": {"drop": 0.5}}},
        scale_grid=GRID,
        rank=2,
        settings={"equal": ScaleSetting((1, 1), (1e-3, 1e-3))},
        base_steps=100,
    )
    first, other = (run_setting(merge, s, "equal", 0.3) for s in (1, 1001))
    assert first["calibration_margins"] != other["calibration_margins"]
    assert first["methods"]["dare"]["union_margin"] != other["methods"]["dare"]["union_margin"]
    again = _malora_digits(seed=1000)
    assert again["calibration_margins"] != digits_run["calibration_margins"]
    assert again["individual_accuracy"] != digits_run["individual_accuracy"]


def test_digits_adapters_learn_and_the_peft_merge_is_the_dense_merge(digits_run):
    out = digits_run
    assert out["peft_cat_max_abs_logit_gap"] < 1e-3
    ta = out["methods"]["task_arithmetic"]
    assert ta["alphas"] == [1.0, 1.0]
    # each adapter improves the frozen base on its own task's head
    for t in (1, 2):
        assert out["individual_accuracy"][t] > out["base_accuracy"][t]
    assert out["pertask_chance"] == pytest.approx((1 / 3 + 1 / 3) / 2)  # tasks {4,5,6}, {7,8,9}
    for row in out["methods"].values():
        acc = np.array(row["task_accuracy"][1:]) / np.array(out["individual_accuracy"][1:])
        assert row["normalised_accuracy"] == pytest.approx(acc.mean())
        assert row["pertask_accuracy"] == pytest.approx(np.mean(row["task_accuracy"][1:]))
        assert 0 <= row["joint_accuracy"] <= 1
    assert 0 <= out["task_overlap"] <= 1


def _malora_digits(seed):
    """The digits fixture's study, MaLoRA alone, at ``seed``."""
    cfg = DigitsConfig(
        design=DigitsDesign(base_steps=60, adapter_steps=60),
        methods={"malora": {"rule": "malora"}},
        scale_grid=GRID,
        calibration_per_task=24,
        margin={"stat": "softmin"},
    )
    return run_digits_seed(cfg, seed=seed)


def test_digits_design_is_reproducible(digits_run):
    again = _malora_digits(seed=0)
    assert again["methods"]["malora"]["alphas"] == pytest.approx(
        digits_run["methods"]["malora"]["alphas"]
    )
