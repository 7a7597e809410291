"""PLSA's claim kinds on hand-made study and metrics documents (verdicts computed by hand)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repro.plsa.claims import check_claims


def _row(n, seed, mm, plsa, hard, edges):
    errors = {"hard_label": hard, "moment_matching": mm, "moment_matching_ridge": 0.6, "plsa": plsa}
    return {"shift": "gss", "sigma": 0.8, "n": n, "seed": seed, "edges": edges, "error": errors}


@pytest.fixture
def documents(tmp_path):
    rows = [
        _row(100, 0, 0.20, 0.10, 0.30, 1000),
        _row(100, 1, 0.20, 0.25, 0.30, 1000),
        _row(400, 0, 0.10, 0.05, 0.28, 4000),
        _row(400, 1, 0.10, 0.05, 0.28, 4000),
    ]
    rate = {"rows": rows, "slopes": {"gss/0.8": {"moment_matching": -0.5, "plsa": -0.9}}}
    metrics = {
        "methods": {
            "erm": {"mean": {"target_accuracy": 0.60}, "std": {"target_accuracy": 0.02}},
            "pa": {
                "mean": {"target_accuracy": 0.70, "pi_l1_error": 0.1},
                "std": {"target_accuracy": 0.01, "pi_l1_error": 0.0},
                "selection": "source",
            },
            "plsa": {
                "mean": {"target_accuracy": 0.68, "pi_l1_error": 0.05},
                "std": {"target_accuracy": 0.03, "pi_l1_error": 0.0},
                "selection": "source",
            },
        }
    }
    paths = {"rate": tmp_path / "rate.json", "csbm": tmp_path / "csbm.json"}
    paths["rate"].write_text(json.dumps(rate))
    paths["csbm"].write_text(json.dumps(metrics))
    return paths


def _claim(kind, **extra):
    return {"kind": kind, "claim": kind, **extra}


def test_claim_kinds_give_the_hand_computed_numbers(documents, tmp_path):
    specs = {
        "small": _claim("small_edges_win", criterion={"op": ">=", "threshold": 0.8}),
        "slope": _claim("rate_slope", criterion={"op": "<=", "threshold": 0.2}),
        "floor": _claim("hard_label_floor", criterion={"op": ">=", "threshold": 2.0}),
        "vs_erm": _claim(
            "comparison",
            dataset="csbm",
            metric="target_accuracy",
            method="plsa",
            baselines=["erm"],
            lower_is_better=False,
            criterion={"op": "<", "threshold": 0.0},
        ),
        "vs_pa_z": _claim(
            "comparison",
            dataset="csbm",
            metric="target_accuracy",
            method="plsa",
            baselines=["pa", "erm"],
            lower_is_better=False,
            statistic="z",
            criterion={"op": "<=", "threshold": 1.0},
        ),
        "pi_without_erm": _claim(
            "comparison",
            dataset="csbm",
            metric="pi_l1_error",
            method="plsa",
            baselines=["pa"],
            lower_is_better=True,
            criterion={"op": "<=", "threshold": 0.0},
        ),
        "erm_has_no_pi": _claim(
            "comparison",
            dataset="csbm",
            metric="pi_l1_error",
            method="plsa",
            baselines=["erm"],
            lower_is_better=True,
            criterion={"op": "<=", "threshold": 0.0},
        ),
        "absent": _claim(
            "comparison",
            dataset="mag",
            metric="target_accuracy",
            method="plsa",
            baselines=["erm"],
            lower_is_better=False,
            criterion={"op": "<", "threshold": 0.0},
        ),
        "later": _claim("not_tested", reason="needs a GPU"),
    }
    out = tmp_path / "claims.json"
    claims = {
        c.id: c
        for c in check_claims(
            specs, str(documents["rate"]), {"csbm": str(documents["csbm"])}, str(out)
        )
    }
    assert claims["small"].measured == 0.5 and claims["small"].verdict == "not reproduced"
    assert claims["slope"].measured == pytest.approx(0.4)  # |-0.9 + 0.5|
    assert claims["slope"].verdict == "not reproduced"
    assert claims["floor"].measured == pytest.approx(0.28 / 0.05)
    assert claims["floor"].verdict == "reproduced"
    assert claims["vs_erm"].measured == pytest.approx(-0.08)
    assert claims["vs_erm"].verdict == "reproduced"
    pooled = np.sqrt((0.03**2 + 0.01**2) / 2)  # best baseline is pa
    assert claims["vs_pa_z"].measured == pytest.approx(0.02 / pooled)
    assert claims["vs_pa_z"].verdict == "reproduced"  # 0.02 / 0.0224 = 0.89 <= 1
    assert claims["pi_without_erm"].measured == pytest.approx(-0.05)
    assert claims["erm_has_no_pi"].verdict == "not tested at this scale"
    assert claims["absent"].verdict == "not tested at this scale"
    assert claims["later"].verdict == "not tested at this scale"
    assert "model selection on source labels" in claims["vs_erm"].details
    assert len(json.loads(out.read_text())) == len(specs)
