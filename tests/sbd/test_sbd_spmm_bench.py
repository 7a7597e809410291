"""The SpMM timing helper on a real decomposition, and the timing claim's verdict next to a
busy process."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import yaml

from repro.sbd.claims import KINDS, Inputs
from repro.sbd.greedy import GreedyConfig, decompose
from repro.sbd.planted import PlantedConfig, plant
from repro.sbd.spmm_bench import compare
from tests.conftest import ROOT


def test_compare_times_four_products_and_checks_them():
    A, _ = plant(PlantedConfig(m=300, blocks=4, side_min=20, side_max=40, seed=1))
    dec = decompose(A, GreedyConfig())
    r = compare(A, dec, 16, device=torch.device("cpu"), warmup=1, repeats=3, seed=0)
    for name in ("scipy_csr", "sbd_scipy", "torch_csr", "sbd_torch"):
        assert 0 < r[name]["min_ms"] <= r[name]["q25_ms"] <= r[name]["median_ms"]
        assert r[name]["median_ms"] <= r[name]["q75_ms"]
    assert r["speedup_scipy"] == pytest.approx(r["scipy_csr"]["min_ms"] / r["sbd_scipy"]["min_ms"])
    assert r["speedup_torch_median"] == pytest.approx(
        r["torch_csr"]["median_ms"] / r["sbd_torch"]["median_ms"]
    )
    assert max(r["rel_error_sbd_scipy"], r["rel_error_sbd_torch"]) < 1e-5
    assert np.isfinite(r["rel_error_csr"])


# The embedded run's claim "speedup ≥ 0.5 × CF" moved from 0.53 to 0.41 between two runs
# with medians, one on a loaded machine (issue 20). With interleaved calls and the fastest of
# each, one process spinning beside the measurement moved the ratio by ≤ 5 % here (4.7–5.0 vs
# 4.8–4.9 quiet); the test allows 15 %.
LOAD_TOLERANCE = 0.15


@contextlib.contextmanager
def _busy_core(seconds: float):
    """A process spinning on one core for at most ``seconds``, killed on the way out."""
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    hog = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.2)  # let it start spinning
        yield hog
    finally:
        hog.kill()
        hog.wait()


# Opt-in: its quiet baseline needs both cores to itself. In `make test` the other xdist worker
# ran a workflow test beside it and the two ratios differed by 41 % (0.42 and 0.30 of the CF,
# 2026-12-02), beyond the 15 % allowed.
@pytest.mark.slow
def test_the_cpu_speedup_verdict_does_not_depend_on_a_busy_core():
    sbd = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["papers"]["sbd"]
    graph = {k: v for k, v in sbd["datasets"]["planted"].items() if k != "kind"}
    spec = sbd["claims"]["cpu_speedup_fraction"]  # the brief's planted graph, d = 64
    A, _ = plant(PlantedConfig(**graph))
    dec = decompose(A, GreedyConfig(**{**sbd["greedy"], "starts": tuple(sbd["greedy"]["starts"])}))
    ev, threads = sbd["evaluation"], torch.get_num_threads()

    def judged():
        cpu = torch.device("cpu")
        r = compare(A, dec, spec["d"], device=cpu, warmup=ev["warmup"], repeats=ev["repeats"],
                    seed=ev["operand_seed"])  # fmt: skip
        entry = {"cf": dec.compression_factor, "spmm": [r]}
        metrics = {spec["dataset"]: {"methods": {spec["method"]: entry}}}
        return KINDS["spmm_speedup"]("cpu_speedup_fraction", spec, Inputs(metrics, {}, {}))

    torch.set_num_threads(1)  # as the workflow's jobs: the process's CPU clock
    try:
        quiet = judged()
        with _busy_core(30) as hog:
            loaded = judged()
            assert hog.poll() is None  # it was still spinning
    finally:
        torch.set_num_threads(threads)
    assert loaded.verdict == quiet.verdict, (quiet.details, loaded.details)
    assert loaded.measured == pytest.approx(quiet.measured, rel=LOAD_TOLERANCE), (
        quiet.details,
        loaded.details,
    )
