"""repro.qsurv.sanity: a broken run fails the check and its claims instead of widening an
interval, with the thresholds of the config (papers.qsurv.sanity).

The planted failure is the one seen on seeds + 1000 (issue 34): CoxPH, whose Newton-Raphson
did not converge, ranking FLCHAIN worse than chance on seed 1002 (C-index 0.376, IPCW IBS
0.171 against the Kaplan-Meier curve's 0.129).
"""

import math

import numpy as np
import pytest

from repro.common.claims import FAILED, NOT_REPRODUCED, PASSED, REPRODUCED
from repro.qsurv.sanity import run_failure, seed_failures
from tests.qsurv.test_claims import CONFIGS, SANITY, quadrature, run

Q = CONFIGS["config"]["papers"]["qsurv"]
KM = {"cindex_ipcw": 0.5, "ibs_ipcw": 0.129}


@pytest.mark.parametrize(
    ("row", "fails"),
    [
        ({"cindex_ipcw": 0.80, "ibs_ipcw": 0.094}, ""),
        (
            {"cindex_ipcw": 0.376, "ibs_ipcw": 0.171},
            "C-index 0.376 ≤ 0.52 (chance + margin); ibs_ipcw 0.171 > Kaplan-Meier's 0.129 + 0.01",
        ),
        ({"cindex_ipcw": 0.52, "ibs_ipcw": 0.094}, "C-index 0.52 ≤ 0.52"),  # at the floor: fails
        ({"cindex_ipcw": 0.5201, "ibs_ipcw": 0.094}, ""),
        ({"cindex_ipcw": 0.8, "ibs_ipcw": 0.1391}, "ibs_ipcw 0.1391 > Kaplan-Meier's 0.129 + 0.01"),
        ({"cindex_ipcw": 0.80, "ibs_ipcw": 0.1389}, ""),  # worse than the trivial model by < δ
        ({"cindex_ipcw": math.nan, "ibs_ipcw": 0.094}, "C-index nan"),
        ({"cindex_ipcw": 0.80, "ibs_ipcw": None}, "ibs_ipcw missing"),
    ],
)
def test_run_failure_with_a_loss_margin_by_hand(row, fails):
    reason = run_failure(row, KM, WITH_LOSS_MARGIN)
    assert reason.startswith(fails) if fails else reason == ""


WITH_LOSS_MARGIN = {"cindex_margin": 0.02, "loss": "ibs_ipcw", "loss_margin": 0.01}


@pytest.mark.parametrize(
    ("row", "fails"),
    [
        ({"cindex_ipcw": 0.376, "ibs_ipcw": 0.171}, "C-index 0.376 ≤ 0.52 (chance + margin)"),
        ({"cindex_ipcw": 0.651, "ibs_ipcw": 0.240}, ""),  # calibrates worse than KM: not broken
        ({"cindex_ipcw": 0.651, "ibs_ipcw": math.inf}, "ibs_ipcw inf is not finite"),
        ({"cindex_ipcw": 0.651, "ibs_ipcw": None}, "ibs_ipcw missing is not finite"),
    ],
)
def test_run_failure_of_the_config_by_hand(row, fails):
    """The run's thresholds: the C-index above chance + margin and a finite loss only."""
    assert SANITY == {"cindex_margin": 0.02, "loss": "ibs_ipcw", "loss_margin": None}
    assert run_failure(row, KM, SANITY) == fails


def flchain(coxph_seed_1002: dict | None = None) -> dict:
    """FLCHAIN-like metrics on seeds 1000-1002: every method sane, QSurv about as good as the
    baselines; optionally CoxPH's seed 1002 replaced."""
    rng = np.random.default_rng(0)
    spec = Q["claims"]["competitive_ctd_flchain"]
    methods = [spec["method"], *spec["baselines"]]
    rows = {
        m: [{"cindex_ipcw": 0.80 + 0.003 * rng.normal(), "ibs_ipcw": 0.094} for _ in range(3)]
        for m in methods
    }
    if coxph_seed_1002:
        rows["coxph"][2] = coxph_seed_1002
    rows["kaplan_meier"] = [dict(KM) for _ in range(3)]
    return {
        "dataset": "flchain",
        "seeds": [1000, 1001, 1002],
        "methods": {m: {"per_seed": r, "mean": {}, "std": {}} for m, r in rows.items()},
        "reference_arms": ["kaplan_meier"],
    }


def test_seed_failures_names_the_run_and_skips_the_reference_arms():
    broken = flchain({"cindex_ipcw": 0.376, "ibs_ipcw": 0.171})
    failures = seed_failures(broken, SANITY)
    assert list(failures) == ["coxph"] and list(failures["coxph"]) == [1002]
    # the Kaplan-Meier curve ties every pair (C = 0.5) by construction: never a failed run
    assert "kaplan_meier" not in failures
    assert seed_failures(flchain(), SANITY) == {}


def test_a_broken_baseline_fails_the_claim_and_the_check(tmp_path):
    claims = {"competitive_ctd_flchain": Q["claims"]["competitive_ctd_flchain"]}
    checks = {"every_run_sane": Q["checks"]["every_run_sane"]}
    broken = flchain({"cindex_ipcw": 0.376, "ibs_ipcw": 0.171})
    results = run(tmp_path, claims, quadrature(-3, -0.5), {"flchain": broken}, checks)
    claim, check = results["competitive_ctd_flchain"], results["every_run_sane"]
    assert claim.verdict == NOT_REPRODUCED
    assert "flchain coxph seed 1002: C-index 0.376 ≤ 0.52" in claim.details
    assert claim.measured is None and "the comparison with them: inconclusive, +" in claim.details
    assert check.verdict == FAILED and check.measured == 1
    assert "1 of 18 (data set, method, seed) runs fail" in check.details
    # the same run with CoxPH's seed sane: the claim is judged, the check passes
    results = run(tmp_path, claims, quadrature(-3, -0.5), {"flchain": flchain()}, checks)
    assert results["competitive_ctd_flchain"].verdict == REPRODUCED
    assert results["every_run_sane"].verdict == PASSED and results["every_run_sane"].measured == 0
