"""The controls of PLSA's claims, as config/config.yaml writes them, judged by each claim's own
handler: a failing positive control or a reproduced negative one makes the claim
"uninformative" with the control's number; with both passing the verdict is the claim's own.

The documents are test_claims.documents (every claim holds, both controls pass), with one
arm or planted estimator changed so that one control fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.common.claims import CONTRADICTED, REPRODUCED, UNINFORMATIVE
from tests.plsa.test_claims import CONFIG, REPETITIONS, documents, run

CLAIMS = CONFIG["claims"]


def _judge(tmp_path, cid, rate, metrics):
    return run(tmp_path, rate, metrics, specs={cid: CLAIMS[cid]}, checks={})[cid]


def _set_error(rate, estimator, value_of):
    for row in rate["rows"]:
        row["error"][estimator] = value_of(row)


def test_with_both_controls_passing_the_verdict_is_the_claims_own(tmp_path):
    rate, metrics = documents(0.05)
    for cid, spec in CLAIMS.items():
        if spec["kind"] == "not_tested":
            continue
        claim = _judge(tmp_path, cid, rate, metrics)
        assert claim.verdict == REPRODUCED and claim.own_verdict == "", cid
        positive, negative = claim.controls
        assert positive["verdict"] == REPRODUCED and positive["passed"], cid
        assert negative["verdict"] == CONTRADICTED and negative["passed"], cid


def test_small_edges_positive_control_fails(tmp_path):
    """The planted population estimator loses to MM in every repetition: share 0 of 25."""
    rate, metrics = documents(0.05)
    _set_error(rate, "population", lambda row: 2 * row["error"]["moment_matching"])
    claim = _judge(tmp_path, "plsa_beats_mm_small_edges", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    z2 = stats.norm.ppf(0.975) ** 2
    upper = z2 / (REPETITIONS + z2)  # Wilson's upper end at 0 of n: z² / (n + z²)
    positive = claim.controls[0]
    assert positive["measured"] == 0 and positive["interval"][1] == pytest.approx(upper)
    assert "positive control (the generator's expected π^T" in claim.details
    assert "came out contradicted, +0 [+0, " in claim.details


def test_small_edges_negative_control_reproduces(tmp_path):
    """π^S (no adaptation) below MM's error in every repetition: the statistic would call an
    estimator that ignores the target better, so the claim says nothing."""
    rate, metrics = documents(0.05)
    _set_error(rate, "source", lambda row: 0.5 * row["error"]["moment_matching"])
    claim = _judge(tmp_path, "plsa_beats_mm_small_edges", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    assert claim.controls[1]["verdict"] == REPRODUCED and claim.controls[1]["measured"] == 1
    assert "negative control (π^S, no adaptation" in claim.details
    assert "does not separate the effect from its absence" in claim.details


def test_rate_positive_control_fails(tmp_path):
    """The population estimator's error flat in |E| (slope 0, distance 0.5 from -1/2)."""
    rate, metrics = documents(0.05)
    _set_error(rate, "population", lambda row: 0.01 * (1 + 0.01 * (row["seed"] % 3)))
    claim = _judge(tmp_path, "consistent_rate", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    positive = claim.controls[0]
    assert positive["verdict"] == CONTRADICTED
    assert positive["measured"] == pytest.approx(0.5, abs=1e-9)
    assert "came out contradicted, +0.5 [" in claim.details


def test_rate_negative_control_reproduces(tmp_path):
    """π^S's error made to shrink as |E|^(-1/2): the 'floor' is no floor."""
    rate, metrics = documents(0.05)
    _set_error(rate, "source", lambda row: 0.63 / math.sqrt(row["n"] / 100))
    claim = _judge(tmp_path, "consistent_rate", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.controls[1]["verdict"] == REPRODUCED
    assert claim.controls[1]["measured"] == pytest.approx(0.0, abs=1e-9)


def test_floor_controls(tmp_path):
    rate, metrics = documents(0.05)
    _set_error(rate, "source", lambda row: row["error"]["plsa"])  # π^S as good as PLSA
    claim = _judge(tmp_path, "hard_label_bias", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.controls[0]["measured"] == pytest.approx(1.0)
    rate, metrics = documents(0.05)
    _set_error(rate, "moment_matching", lambda row: 3 * row["error"]["plsa"])
    claim = _judge(tmp_path, "hard_label_bias", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.controls[1]["measured"] == pytest.approx(3.0)


def _paired(a, b):
    """Mean of a − b and its 95% t interval, by hand."""
    d = np.subtract(a, b)
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean(), d.mean() - half, d.mean() + half


def test_comparison_positive_control_fails_with_the_oracles_number(tmp_path):
    """The oracle arm no better than the baselines: plsa_vs_pair_align_gss (at least PA and
    StruRW) cannot show the effect; the control's number is oracle − least favourable."""
    rate, metrics = documents(0.05)
    methods = metrics["csbm_gss"]["methods"]
    oracle = [0.64, 0.70, 0.60]
    for row, accuracy in zip(methods["oracle"]["per_seed"], oracle, strict=True):
        row["target_accuracy"] = accuracy
    claim = _judge(tmp_path, "plsa_vs_pair_align_gss", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    positive = claim.controls[0]
    pa = [row["target_accuracy"] for row in methods["pa"]["per_seed"]]
    mean, low, high = _paired(oracle, pa)
    assert positive["measured"] == pytest.approx(mean)
    assert positive["interval"] == pytest.approx([low, high])
    assert positive["verdict"] != REPRODUCED
    about = CLAIMS["plsa_vs_pair_align_gss"]["controls"]["positive"]["about"]
    shown = f"positive control ({about}) came out {positive['verdict']}, {mean:+.4g}"
    assert shown in claim.details


def test_comparison_negative_control_reproduces(tmp_path):
    """ERM as good as the adapted baselines: 'at least as good as PA and StruRW' would hold
    for no reweighting at all."""
    rate, metrics = documents(0.05)
    methods = metrics["csbm_gss"]["methods"]
    methods["erm"] = {"per_seed": [dict(row) for row in methods["pa"]["per_seed"]]}
    claim = _judge(tmp_path, "plsa_features_vs_pair_align_gss", rate, metrics)
    assert claim.verdict == UNINFORMATIVE and claim.own_verdict == REPRODUCED
    negative = claim.controls[1]
    assert negative["verdict"] == REPRODUCED and negative["measured"] == pytest.approx(0.0)


def test_erm_against_itself_is_contradicted(tmp_path):
    """The improves-over-ERM negative control: zero differences, interval [0, 0] below the
    margin."""
    rate, metrics = documents(0.05)
    claim = _judge(tmp_path, "plsa_improves_over_erm_css", rate, metrics)
    negative = claim.controls[1]
    assert negative["verdict"] == CONTRADICTED
    assert negative["measured"] == 0 and negative["interval"] == [0.0, 0.0]
