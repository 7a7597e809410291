"""The SpMM timing helper on a real decomposition."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.spmm_bench import compare


def test_compare_times_four_products_and_checks_them():
    A, _ = plant(PlantedConfig(m=300, blocks=4, side_min=20, side_max=40, seed=1))
    dec = decompose(A, GreedyConfig())
    r = compare(A, dec, 16, device=torch.device("cpu"), warmup=1, repeats=3)
    for name in ("scipy_csr", "sbd_scipy", "torch_csr", "sbd_torch"):
        assert 0 < r[name]["q25_ms"] <= r[name]["median_ms"] <= r[name]["q75_ms"]
    assert r["speedup_scipy"] == pytest.approx(
        r["scipy_csr"]["median_ms"] / r["sbd_scipy"]["median_ms"]
    )
    assert max(r["rel_error_sbd_scipy"], r["rel_error_sbd_torch"]) < 1e-5
    assert np.isfinite(r["rel_error_csr"])
