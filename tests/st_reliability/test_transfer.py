"""Leave-one-group-out threshold transfer: fitted direction, and no peeking."""

import numpy as np
import pandas as pd
import pytest

from repro.st_reliability import loo_threshold_transfer
from repro.st_reliability.transfer import (
    apply_threshold,
    fit_threshold,
    own_rule_out_of_sample,
    risk_coverage,
)


def groups_data(seed=0, n=40, flip=False):
    rng = np.random.default_rng(seed)
    groups = np.repeat(["a", "b", "c", "d"], n)
    score = rng.normal(size=len(groups))
    ok = (-score if not flip else score) + rng.normal(0, 0.3, len(groups)) > 0
    return score, ok, groups


def test_fit_threshold_finds_direction_and_cut():
    score = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    ok = np.array([1, 1, 1, 0, 0, 0], bool)
    direction, tau, j = fit_threshold(score, ok)
    assert direction == "<=" and 0.3 < tau < 0.7 and j == pytest.approx(1.0)
    direction, tau, j = fit_threshold(score, ~ok)
    assert direction == ">=" and 0.3 < tau < 0.7 and j == pytest.approx(1.0)
    assert apply_threshold(score, ">=", tau).tolist() == (~ok).tolist()
    with pytest.raises(ValueError, match="both good and bad"):
        fit_threshold(score, np.ones(6, bool))


def test_loo_never_sees_its_held_out_group():
    score, ok, groups = groups_data()
    table = loo_threshold_transfer(score, ok, groups).set_index("group")
    # scramble group "c" completely: only c's own row may change
    held = groups == "c"
    rng = np.random.default_rng(9)
    score2, ok2 = score.copy(), ok.copy()
    score2[held] = rng.normal(5, 3, held.sum())
    ok2[held] = rng.random(held.sum()) > 0.5
    table2 = loo_threshold_transfer(score2, ok2, groups).set_index("group")
    assert table2.loc["c", "direction"] == table.loc["c", "direction"]
    assert table2.loc["c", "tau"] == table.loc["c", "tau"]
    # the other folds see c, so their fitted rules are allowed to (and here do) move
    assert not np.allclose(table2.drop("c")["tau"], table.drop("c")["tau"])
    # the rule of fold c is exactly the one fitted on a, b, d alone
    direction, tau, _ = fit_threshold(score[~held], ok[~held])
    assert (table.loc["c", "direction"], table.loc["c", "tau"]) == (direction, tau)


def test_loo_transfers_in_both_directions():
    for flip, expected in ((False, "<="), (True, ">=")):
        score, ok, groups = groups_data(seed=1, flip=flip)
        table = loo_threshold_transfer(score, ok, groups, quality=ok.astype(float))
        assert set(table["direction"]) == {expected}
        assert (table["balanced_accuracy"] > 0.75).all()
        assert (table["gap"] > -0.1).all() and (table["gap"] < 0.2).all()
        assert (table["mean_q_accepted"] > table["mean_q_rejected"]).all()


def test_loo_group_with_one_class_has_nan_accuracy():
    score, ok, groups = groups_data(seed=2)
    ok[groups == "d"] = True
    table = loo_threshold_transfer(score, ok, groups).set_index("group")
    assert np.isnan(table.loc["d", "balanced_accuracy"]) and np.isnan(table.loc["d", "gap"])
    assert np.isfinite(table.drop("d")["balanced_accuracy"]).all()
    assert isinstance(table, pd.DataFrame)


def test_risk_coverage_orders_by_trust():
    q = np.array([0.9, 0.8, 0.1, 0.0])
    score = np.array([0.1, 0.2, 0.8, 0.9])
    good = risk_coverage(score, q, "<=")
    bad = risk_coverage(score, q, ">=")
    assert good["risk"][0] == pytest.approx(0.1) and good["risk"][-1] == pytest.approx(0.55)
    assert good["aurc"] < bad["aurc"]


def test_loo_fold_without_both_classes_is_nan_not_a_crash():
    score, ok, groups = groups_data(seed=3)
    ok[groups != "a"] = False  # only group a has good predictions
    table = loo_threshold_transfer(score, ok, groups).set_index("group")
    assert np.isnan(table.loc["a", "tau"]) and table.loc["a", "direction"] is None
    assert np.isnan(table.loc["b", "balanced_accuracy"])  # b itself has one class


def test_own_rule_out_of_sample_is_honest_on_noise_and_exact_on_separable_scores():
    rng = np.random.default_rng(5)
    ok = np.arange(60) % 2 == 0
    assert own_rule_out_of_sample(np.where(ok, 0.1, 0.9) + 0.01 * rng.random(60), ok) == 1.0
    # on pure noise the in-sample best rule looks good; fitted out of sample it does not
    noise = [own_rule_out_of_sample(rng.normal(size=60), ok, seed=s) for s in range(30)]
    assert 0.4 < np.mean(noise) < 0.6
    in_sample = [(fit_threshold(rng.normal(size=60), ok)[2] + 1) / 2 for _ in range(30)]
    assert np.mean(in_sample) > np.mean(noise) + 0.1
    assert np.isnan(own_rule_out_of_sample(np.arange(4.0), np.array([True, True, True, False])))
