"""Every claim can come out contradicted (or inconclusive, or not reproduced when a value is
missing): each is fed metrics that must fail it.

The claim specs are the embedded config's (config/config.yaml), so the tests judge the
criteria that the run is judged by.
"""

import copy
import math

import pytest
import yaml

from repro.common.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    REPRODUCED,
    run_claims,
)
from repro.st_reliability.claims import KINDS
from tests.conftest import ROOT

SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["st_reliability"]
CLAIMS, CHECKS = SECTION["claims"], SECTION["checks"]
SEEDS = [0, 1, 2]
GROUPS = [f"{e}|line{c}" for e in ("hvg", "pca", "ae") for c in range(4)]


def rho(value, low=None, high=None, key="rho"):
    return {
        key: value,
        "low": value - 0.1 if low is None else low,
        "high": value + 0.1 if high is None else high,
        "per_seed": [value] * 3,
    }


CAUSAL = {"none": 0.8, "project_v1": 0.3, "project_random": 0.78, "mean_row": 0.79, "uniform": 0.5}


def spectra(trained_pc1=0.95, uniform_pc1=0.6, project_v1=0.3, self_only_pc1=0.6):
    def model(kl, pc1, jitter=0.01, uniform=None, causal=None):
        per_seed = {
            stat: [value + jitter * s for s in SEEDS]
            for stat, value in {
                "kl_uniform": kl,
                "pc1_fraction": pc1,
                "variance": 1.0,
                "pc1_fraction_uniform": pc1 if uniform is None else uniform,
                "variance_uniform": 0.5,
                "pc1_fraction_identity": pc1 if uniform is None else uniform,
                "variance_identity": 0.5,
                "pc1_fraction_residual": 0.9,
                "variance_residual": 2.0,
            }.items()
        }
        rec = {
            "layer_mean_per_seed": per_seed,
            "layers": [{"kl_uniform": {"mean": kl}}, {"kl_uniform": {"mean": kl}}],
        }
        if causal:
            rec["causal_per_seed"] = {k: [v + 0.01 * s for s in SEEDS] for k, v in causal.items()}
            rec["delta_pca_per_seed"] = dict.fromkeys(
                [
                    "pc1_fraction_delta_hat",
                    "variance_delta_hat",
                    "pc1_fraction_true_delta",
                    "variance_true_delta",
                ],
                [0.5] * 3,
            )
        return rec

    causal = {**CAUSAL, "project_v1": project_v1}
    return {
        "hvg": model(0.3, trained_pc1, uniform=uniform_pc1, causal=causal),
        "hvg__untrained": model(0.0, 0.2, 0.0),
        "self_only": model(math.log(32), self_only_pc1, 0.02),
        "shuffled": model(0.2, 0.9),
        "uniform": {"self_only_kl_uniform": math.log(32)},
    }


def gene_maps(median, regression):
    return {
        "median_abs_cos_stress": median,
        "median_abs_cos_stress_regression_map_per_seed": [regression - 0.01, regression + 0.01],
        "abs_cos_stress_regression_map": dict.fromkeys(GROUPS, regression),
        "median_abs_cos_stress_gene_map_residual": 0.9,
        "median_abs_cos_shuffled_program_regression_map_per_seed": [0.1, 0.12],
    }


def good_doc():
    """Summary metrics under which every configured claim holds."""
    groups = {
        g: {
            "nn_l2": rho(-0.6),
            "nn_cosine": rho(-0.7),
            "magnitude": rho(0.2),
            "nn_l2_vs_magnitude": rho(0.4),
            "nn_cosine_vs_magnitude": rho(0.5),
            "mean_quality": 0.5 + 0.01 * i,
        }
        for i, g in enumerate(GROUPS)
    }
    median = {
        "nn_l2": rho(-0.7),
        "nn_cosine": rho(-0.75),
        "oracle_l2": rho(-0.8),
        "oracle_cosine": rho(-0.85),
        "nn_l2_vs_magnitude": rho(0.4),
        "nn_cosine_vs_magnitude": rho(0.5),
    }
    falling = {"score": list(range(10)), "quality": [0.9 - 0.05 * k for k in range(10)]}
    loo = {
        "groups": {g: {"balanced_accuracy": 0.8, "directions": ["<="]} for g in GROUPS},
        "per_seed_balanced_accuracy": [0.8, 0.79, 0.81],
        "per_seed_gap": [0.05, 0.04, 0.06],
        "per_seed_gap_in_sample": [0.1, 0.1, 0.1],
        "cells_without_both_classes": 0,
        "cells": 36,
    }
    return {
        "rho": {
            "seeds": SEEDS,
            "groups": groups,
            "median_group": median,
            "pooled": copy.deepcopy(median),
            "pooled_raw": copy.deepcopy(median),
            "aggregate": {
                "nn_l2": rho(0.0, -0.3, 0.3, key="spearman"),
                "nn_cosine": rho(0.1, -0.2, 0.4, key="spearman"),
            },
            "deciles": {"nn_l2": falling, "nn_cosine": falling},
        },
        "rho_novel": {
            "groups": copy.deepcopy(groups),
            "median_group": copy.deepcopy(median),
            "pooled": copy.deepcopy(median),
            "pooled_raw": copy.deepcopy(median),
        },
        "loo": {"nn_l2|group_median": loo, "nn_cosine|group_median": copy.deepcopy(loo)},
        "spectra": spectra(),
        "gene_maps": gene_maps(0.3, 0.8),
        "c4": {
            "available": True,
            "seeds": SEEDS,
            "mean_quality": {"full": [0.8] * 3},
            "family_drop": [0.20, 0.22, 0.25],
            "pool_drop": [0.02, 0.01, 0.03],
        },
    }


def negative_doc(regression=0.1):
    doc = good_doc()
    doc["gene_maps"] = gene_maps(0.05, regression)
    return doc


def prepared(strong_min=0.85, negative_min=0.1):
    return {
        "shared_program_strong": {
            "eta_used": 1.75,
            "cosines": {"line0": strong_min, "line1": 0.95},
        },
        "no_shared_program": {
            "eta_used": 0.0,
            "cosines": dict.fromkeys(["line0", "line1"], negative_min),
        },
    }


def control_doc(positive_gain=0.3, negative_gain=0.0):
    """The swap controls' summary: own − uniform PC1 fraction per seed of each planted model."""

    def model(gain):
        uniform = [0.2, 0.18, 0.19]
        return {
            "layer_mean_per_seed": {
                "pc1_fraction": [u + gain + 0.01 * i for i, u in enumerate(uniform)],
                "pc1_fraction_uniform": uniform,
                "kl_uniform": [0.1] * 3,
            }
        }

    doses = [0.0, 2.0]
    spectra = {"positive": model(positive_gain), "negative": model(negative_gain)}
    spectra |= {f"positive_beta{b:g}": model(positive_gain * b / 2) for b in doses}
    return {"seeds": SEEDS, "beta": 2.0, "doses": doses, "spectra": spectra}


def verdicts(strong, negative=None, prep=None, control=None):
    inputs = {
        "metrics": {
            "shared_program_strong": strong,
            "no_shared_program": negative or negative_doc(),
        },
        "prepared": prep or prepared(),
        "swap_control": control or control_doc(),
    }
    return {c.id: c for c in run_claims(CLAIMS, KINDS, inputs, CHECKS)}


def test_every_claim_and_check_holds_on_good_metrics():
    results = verdicts(good_doc())
    assert {c.id for c in results.values()} == set(CLAIMS) | set(CHECKS)
    for cid, c in results.items():
        assert c.verdict in (REPRODUCED, "passed"), (cid, c.details)


def _spoil(path, value):
    def spoil(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value(target[path[-1]]) if callable(value) else value

    return spoil


def _each_group(signal, value):
    def spoil(doc):
        for g in doc["rho"]["groups"].values():
            g[signal] = value

    return spoil


# each spoiled document must make its claim contradicted (or, where the interval straddles
# the criterion, inconclusive; a missing value: not reproduced)
FAILING = {
    # C1: uniform attention gives the same PC1 fraction, or removing v₁ costs no more
    # quality than removing a random direction
    "c1_rank1_bottleneck": [
        (lambda d: d.update(spectra=spectra(uniform_pc1=0.95)), CONTRADICTED),
        (lambda d: d.update(spectra=spectra(project_v1=0.78)), CONTRADICTED),
    ],
    "c3_smooth_l2": [
        (_spoil(["rho", "groups", "hvg|line0", "nn_l2"], rho(0.2)), CONTRADICTED),
        (_spoil(["rho", "groups", "hvg|line0", "nn_l2"], rho(-0.05)), INCONCLUSIVE),
        (_spoil(["rho", "deciles", "nn_l2", "quality"], [0.5] * 5 + [0.6] * 5), CONTRADICTED),
    ],
    "c3_smooth_cosine": [
        (_spoil(["rho", "groups", "pca|line3", "nn_cosine"], rho(0.15)), CONTRADICTED)
    ],
    "c4_family_not_pool": [
        (_spoil(["c4", "pool_drop"], [0.3, 0.31, 0.32]), CONTRADICTED),
        (_spoil(["c4", "family_drop"], [-0.01, 0.02, 0.0]), CONTRADICTED),
        (_spoil(["c4"], {"available": False, "reason": "no C4 designs"}), NOT_TESTED),
    ],
    "c5_tracks_l2": [
        (_spoil(["rho", "median_group", "nn_l2"], rho(-0.55, -0.65, -0.45)), INCONCLUSIVE),
        (_spoil(["rho", "median_group", "nn_l2"], rho(0.4)), CONTRADICTED),
        # a pooled ρ that fails does not decide: the median group ρ is the primary statistic
    ],
    "c5_tracks_cosine": [
        (
            _spoil(["rho", "median_group", "nn_cosine"], rho(math.nan, math.nan, math.nan)),
            NOT_REPRODUCED,
        )
    ],
    "c6_loo_l2": [
        (
            _spoil(["loo", "nn_l2|group_median", "per_seed_balanced_accuracy"], [0.55] * 3),
            CONTRADICTED,
        ),
        (_spoil(["loo", "nn_l2|group_median", "per_seed_gap"], [0.2] * 3), CONTRADICTED),
    ],
    "c6_loo_cosine": [
        (
            _spoil(
                ["loo", "nn_cosine|group_median", "per_seed_balanced_accuracy"], [0.7, None, 0.7]
            ),
            NOT_REPRODUCED,
        )
    ],
    "c7_beats_magnitude_l2": [
        (_spoil(["rho", "median_group", "nn_l2_vs_magnitude"], rho(-0.3)), CONTRADICTED),
        (_spoil(["rho", "median_group", "nn_l2_vs_magnitude"], rho(0.1)), INCONCLUSIVE),
    ],
    "c7_beats_magnitude_cosine": [
        (
            _spoil(["rho", "median_group", "nn_cosine_vs_magnitude"], rho(0.02, -0.01, 0.04)),
            CONTRADICTED,
        )
    ],
    "c5_tracks_cosine_novel": [
        (_spoil(["rho_novel", "median_group", "nn_cosine"], rho(-0.1)), CONTRADICTED),
        (_spoil(["rho_novel"], None), NOT_TESTED),
    ],
    "c7_beats_magnitude_l2_novel": [
        (_spoil(["rho_novel", "median_group", "nn_l2_vs_magnitude"], rho(-0.3)), CONTRADICTED)
    ],
    "c8_not_aggregate_l2": [
        (_spoil(["rho", "aggregate", "nn_l2"], rho(0.8, 0.6, 0.9, key="spearman")), CONTRADICTED),
        (_spoil(["rho", "aggregate", "nn_l2"], rho(0.2, -0.4, 0.7, key="spearman")), INCONCLUSIVE),
    ],
    "c8_not_aggregate_cosine": [
        (
            _spoil(["rho", "aggregate", "nn_cosine"], rho(-0.8, -0.95, -0.6, key="spearman")),
            CONTRADICTED,
        )
    ],
}


@pytest.mark.parametrize("cid", sorted(FAILING))
def test_claim_fails_when_the_metrics_say_so(cid):
    for spoil, expected in FAILING[cid]:
        doc = good_doc()
        spoil(doc)
        result = verdicts(doc)[cid]
        assert result.verdict == expected, (cid, expected, result.details)


def test_c1_judges_the_swap_and_causal_check_not_the_null_models():
    # the self-only null as one-dimensional as the trained model: reported, not judged
    same = good_doc()
    same["spectra"]["self_only"] = copy.deepcopy(same["spectra"]["hvg"])
    result = verdicts(same)["c1_rank1_bottleneck"]
    assert result.verdict == REPRODUCED
    assert "reported, not judged" in result.details and "variance" in result.details


def test_c1_swap_is_judged_only_when_its_controls_pass():
    flat = good_doc()
    flat["spectra"] = spectra(uniform_pc1=0.95)  # own − uniform ≈ 0: contradicted if judged
    assert verdicts(flat)["c1_rank1_bottleneck"].verdict == CONTRADICTED
    for blind in (control_doc(positive_gain=0.01), control_doc(negative_gain=0.3)):
        result = verdicts(flat, control=blind)
        assert result["swap_detects_planted"].verdict == "failed"
        c1 = result["c1_rank1_bottleneck"]
        assert c1.verdict == INCONCLUSIVE and "not judged" in c1.details, c1.details
    # the controls never rescue a claim: a swap part that holds still needs them
    assert verdicts(good_doc(), control=blind)["c1_rank1_bottleneck"].verdict == INCONCLUSIVE
    passing = verdicts(good_doc())
    assert passing["swap_detects_planted"].verdict == "passed"
    assert "controls pass" in passing["c1_rank1_bottleneck"].details


def test_swap_check_fails_without_its_controls():
    inputs = {"metrics": {}, "prepared": prepared(), "swap_control": None}
    result = {c.id: c for c in run_claims({}, KINDS, inputs, CHECKS)}["swap_detects_planted"]
    assert result.verdict == "failed" and "not run" in result.details


def test_c2_is_the_regression_map_and_must_fail_in_the_negative_control():
    assert verdicts(good_doc())["c2_shared_program"].verdict == REPRODUCED
    # a test that passes without a shared program is not evidence for one
    leaky = verdicts(good_doc(), negative_doc(0.7))["c2_shared_program"]
    assert leaky.verdict == CONTRADICTED
    # the same map aligns as well with a permuted program: no evidence for the program
    permuted = good_doc()
    permuted["gene_maps"]["median_abs_cos_shuffled_program_regression_map_per_seed"] = [0.7] * 2
    assert verdicts(permuted)["c2_shared_program"].verdict == CONTRADICTED
    weak = good_doc()
    weak["gene_maps"] = gene_maps(0.9, 0.3)  # the injection map high, the regression map low
    assert verdicts(weak)["c2_shared_program"].verdict == CONTRADICTED


def test_checks_fail_on_a_broken_generator_or_null():
    results = verdicts(good_doc(), prep=prepared(strong_min=0.6, negative_min=0.9))
    assert results["self_check_strong"].verdict == "failed"
    assert results["self_check_negative"].verdict == "failed"
    leaky = good_doc()
    leaky["spectra"]["self_only"]["layers"][0]["kl_uniform"]["mean"] = 1.0
    assert verdicts(leaky)["self_only_identity"].verdict == "failed"
    assert all(verdicts(good_doc())[c].type == "check" for c in CHECKS)


def test_missing_data_set_is_not_tested_not_a_crash():
    inputs = {"metrics": {}, "prepared": prepared()}
    results = {c.id: c for c in run_claims(CLAIMS, KINDS, inputs)}
    assert all(c.verdict == NOT_TESTED for c in results.values())
