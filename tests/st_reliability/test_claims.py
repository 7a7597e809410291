"""Every claim can come out "not reproduced": each is fed metrics that must fail it.

The claim specs are the embedded config's (config/config.yaml), so the tests judge the
criteria that the run is judged by.
"""

import copy
import math

import pytest
import yaml

from repro.common.claims import NOT_REPRODUCED, NOT_TESTED, REPRODUCED, run_claims
from repro.st_reliability.claims import KINDS
from tests.conftest import ROOT

SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["st_reliability"]
CLAIMS, CHECKS = SECTION["claims"], SECTION["checks"]
SEEDS = [0, 1, 2]
GROUPS = [f"{e}|line{c}" for e in ("hvg", "pca", "ae") for c in range(4)]


def rho(value, low=None, high=None):
    return {
        "rho": value,
        "low": value - 0.1 if low is None else low,
        "high": value + 0.1 if high is None else high,
        "per_seed": [value] * 3,
    }


def spectra(trained_kl=0.3, trained_pc1=0.95, self_only_pc1=0.6):
    def model(kl, pc1, jitter=0.01):
        per_seed = {
            "kl_uniform": [kl + jitter * s for s in SEEDS],
            "pc1_fraction": [pc1 + jitter * s for s in SEEDS],
        }
        return {
            "layer_mean_per_seed": per_seed,
            "layers": [{"kl_uniform": {"mean": kl}}, {"kl_uniform": {"mean": kl}}],
        }

    return {
        "hvg": model(trained_kl, trained_pc1),
        "hvg__untrained": model(0.0, 0.2, 0.0),
        "self_only": model(math.log(32), self_only_pc1, 0.02),
        "shuffled": model(0.2, 0.9),
        "uniform": {"self_only_kl_uniform": math.log(32)},
    }


def good_doc():
    """Summary metrics under which every configured claim holds."""
    groups = {
        g: {
            "nn_l2": rho(-0.6),
            "nn_cosine": rho(-0.7),
            "magnitude": rho(0.2),
            "mean_quality": 0.5 + 0.01 * i,
        }
        for i, g in enumerate(GROUPS)
    }
    pooled = {
        "nn_l2": rho(-0.7),
        "nn_cosine": rho(-0.75),
        "oracle_l2": rho(-0.8),
        "oracle_cosine": rho(-0.85),
        "nn_l2_vs_magnitude": {"diff": 0.4, "low": 0.3, "high": 0.5},
        "nn_cosine_vs_magnitude": {"diff": 0.5, "low": 0.4, "high": 0.6},
    }
    falling = {"score": list(range(10)), "quality": [0.9 - 0.05 * k for k in range(10)]}
    loo = {
        "groups": {g: {"balanced_accuracy": 0.8, "directions": ["<="]} for g in GROUPS},
        "mean_balanced_accuracy": 0.8,
        "mean_gap": 0.05,
    }
    aggregate = {"groups": GROUPS, "mean_quality": [0.5] * 12, "rho": [-0.6] * 12, "spearman": 0.1}
    return {
        "rho": {
            "seeds": SEEDS,
            "groups": groups,
            "pooled": pooled,
            "deciles": {"nn_l2": falling, "nn_cosine": falling},
        },
        "loo": {"nn_l2|threshold": loo, "nn_cosine|threshold": copy.deepcopy(loo)},
        "aggregate_vs_rho": {"nn_l2": aggregate, "nn_cosine": copy.deepcopy(aggregate)},
        "spectra": spectra(),
        "gene_maps": {
            "median_abs_cos_stress": 0.8,
            "median_cross_group_abs_cos": 0.7,
            "abs_cos_stress": dict.fromkeys(GROUPS, 0.8),
        },
        "c4": {
            "available": True,
            "seeds": SEEDS,
            "mean_quality": {"full": [0.8] * 3},
            "family_drop": [0.20, 0.22, 0.25],
            "pool_drop": [0.02, 0.01, 0.03],
        },
    }


def negative_doc(median=0.1):
    doc = good_doc()
    doc["gene_maps"] = {
        "median_abs_cos_stress": median,
        "median_cross_group_abs_cos": 0.2,
        "abs_cos_stress": dict.fromkeys(GROUPS[:4], median),
    }
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


def verdicts(strong, negative=None, prep=None):
    inputs = {
        "metrics": {
            "shared_program_strong": strong,
            "no_shared_program": negative or negative_doc(),
        },
        "prepared": prep or prepared(),
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


FAILING = {
    # C1: the self-only null has the same PC1 fraction, or the trained model is uniform
    "c1_rank1_bottleneck": [
        lambda d: d.update(spectra=spectra(self_only_pc1=0.95)),
        lambda d: d.update(spectra=spectra(trained_kl=0.0)),
    ],
    "c3_smooth_l2": [
        _spoil(["rho", "groups", "hvg|line0", "nn_l2"], rho(0.2)),
        _spoil(["rho", "deciles", "nn_l2", "quality"], [0.5] * 5 + [0.6] * 5),
    ],
    "c3_smooth_cosine": [_spoil(["rho", "groups", "pca|line3", "nn_cosine"], rho(0.05))],
    "c4_family_not_pool": [
        _spoil(["c4", "pool_drop"], [0.2, 0.25, 0.22]),
        _spoil(["c4", "family_drop"], [-0.01, 0.02, 0.0]),
        _spoil(["c4"], {"available": False, "reason": "no C4 designs"}),
    ],
    "c5_tracks_l2": [
        _spoil(["rho", "pooled", "nn_l2"], rho(-0.55, -0.65, -0.45)),
        _spoil(["rho", "pooled", "nn_l2"], rho(0.4)),
    ],
    "c5_tracks_cosine": [
        _spoil(["rho", "pooled", "nn_cosine"], rho(float("nan"), float("nan"), float("nan")))
    ],
    "c6_loo_l2": [
        _spoil(["loo", "nn_l2|threshold", "mean_balanced_accuracy"], 0.55),
        _spoil(["loo", "nn_l2|threshold", "mean_gap"], 0.2),
    ],
    "c6_loo_cosine": [_spoil(["loo", "nn_cosine|threshold", "mean_balanced_accuracy"], None)],
    "c7_beats_magnitude_l2": [
        _each_group("magnitude", rho(0.9)),
        _spoil(["rho", "pooled", "nn_l2_vs_magnitude", "low"], -0.05),
    ],
    "c7_beats_magnitude_cosine": [_each_group("magnitude", rho(-0.95))],
    "c8_not_aggregate_l2": [_spoil(["aggregate_vs_rho", "nn_l2", "spearman"], -0.7)],
    "c8_not_aggregate_cosine": [_spoil(["aggregate_vs_rho", "nn_cosine", "spearman"], 0.9)],
}


@pytest.mark.parametrize("cid", sorted(FAILING))
def test_claim_fails_when_the_metrics_say_so(cid):
    for spoil in FAILING[cid]:
        doc = good_doc()
        spoil(doc)
        result = verdicts(doc)[cid]
        assert result.verdict in (NOT_REPRODUCED, NOT_TESTED), (cid, result.details)


def test_c2_must_fail_in_the_negative_control():
    assert verdicts(good_doc())["c2_shared_program"].verdict == REPRODUCED
    # a test that passes without a shared program is not evidence for one
    assert verdicts(good_doc(), negative_doc(0.7))["c2_shared_program"].verdict == NOT_REPRODUCED
    weak = good_doc()
    weak["gene_maps"]["median_abs_cos_stress"] = 0.3
    assert verdicts(weak)["c2_shared_program"].verdict == NOT_REPRODUCED
    scattered = good_doc()
    scattered["gene_maps"]["median_cross_group_abs_cos"] = 0.2
    assert verdicts(scattered)["c2_shared_program"].verdict == NOT_REPRODUCED


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
