"""Claims from hand-made metrics, and the SpMM timing helper on a real decomposition."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.common.io import write_json
from repro.sbd.claims import check_claims
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.spmm_bench import compare


def _timing(d, scipy, torch_, device="cpu"):
    return {"d": d, "device": device, "speedup_scipy": scipy, "speedup_torch": torch_,
            "scipy_csr": {"median_ms": scipy}, "sbd_scipy": {"median_ms": 1.0},
            "torch_csr": {"median_ms": torch_}, "sbd_torch": {"median_ms": 1.0},
            "rel_error_sbd_scipy": 1e-7, "rel_error_sbd_torch": 2e-7}  # fmt: skip


def _noise_rows():
    grid = {(0.0, 0.001): (1.0, 0.98), (0.0, 0.01): (0.9, 0.95), (0.2, 0.001): (0.7, 0.6),
            (0.2, 0.01): (0.5, 0.5)}  # fmt: skip
    return [
        {"method": "sbd", "deletion": d, "background": b, "seed": s, "mean_best_jaccard": j}
        for (d, b), js in grid.items()
        for s, j in enumerate(js)
    ]


def test_claims_from_hand_made_metrics(tmp_path):
    entry = {"cf": 10.0, "cf_bytes": 9.0, "rank": 3, "residual_nnz": 5, "nnz": 100, "cost": 10,
             "mismatched_cells": 0, "trace": [{"gain": 50, "cost": 50}, {"gain": 40, "cost": 10}],
             "spmm": [_timing(16, 8.0, 12.0), _timing(64, 5.0, 3.0)]}  # fmt: skip
    write_json(tmp_path / "g.json", {"dataset": "g", "methods": {"sbd": entry}})
    write_json(tmp_path / "noise.json", {"rows": _noise_rows()})
    crit = {"op": "<=", "threshold": 1.1}
    specs = {
        "bound": {"kind": "speedup_bound", "claim": "b", "backend": "scipy", "criterion": crit},
        "gpu": {"kind": "spmm_speedup", "claim": "g", "dataset": "g", "method": "sbd", "d": 64,
                "backend": "torch", "device": "cuda", "criterion": {"op": ">=", "threshold": 6}},
        "frac": {"kind": "spmm_speedup", "claim": "f", "dataset": "g", "method": "sbd", "d": 64,
                 "backend": "scipy", "measure": "fraction_of_cf",
                 "criterion": {"op": ">=", "threshold": 0.5}},
        "rec": {"kind": "planted_recovery", "claim": "r", "method": "sbd",
                "criterion": {"op": ">=", "threshold": 0.9}},
        "deg": {"kind": "recovery_degradation", "claim": "d", "method": "sbd", "tolerance": 0.02,
                "criterion": {"op": "<=", "threshold": 0}},
        "desc": {"kind": "greedy_descent", "claim": "c", "criterion": {"op": "<=", "threshold": 0}},
    }  # fmt: skip
    claims = {
        c.id: c
        for c in check_claims(
            specs, {"g": tmp_path / "g.json"}, tmp_path / "noise.json", tmp_path / "claims.json"
        )  # fmt: skip
    }
    assert claims["bound"].measured == pytest.approx(0.8)  # scipy only; torch's 1.2 in details
    assert "1.20" in claims["bound"].details and claims["bound"].verdict == "reproduced"
    assert claims["gpu"].verdict == "not tested at this scale"  # timed on the CPU
    assert claims["frac"].measured == pytest.approx(0.5)
    assert claims["rec"].measured == pytest.approx(0.98)  # worst seed at the lowest noise
    # seed means: (0.99, 0.925 / 0.65, 0.5): no rise with more noise
    assert claims["deg"].measured == 0 and "(0.2, 0.001): 0.65" in claims["deg"].details
    assert claims["desc"].measured == 0


def test_compare_times_four_products_and_checks_them():
    A, _ = plant(PlantedConfig(m=300, blocks=4, side_min=20, side_max=40, seed=1))
    dec, _ = decompose(A, GreedyConfig())
    r = compare(A, dec, 16, device=torch.device("cpu"), warmup=1, repeats=3)
    for name in ("scipy_csr", "sbd_scipy", "torch_csr", "sbd_torch"):
        assert 0 < r[name]["q25_ms"] <= r[name]["median_ms"] <= r[name]["q75_ms"]
    assert r["speedup_scipy"] == pytest.approx(
        r["scipy_csr"]["median_ms"] / r["sbd_scipy"]["median_ms"]
    )
    assert max(r["rel_error_sbd_scipy"], r["rel_error_sbd_torch"]) < 1e-5
    assert np.isfinite(r["rel_error_csr"])
