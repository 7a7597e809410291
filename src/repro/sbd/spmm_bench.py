"""SpMM timing: scipy CSR, torch sparse CSR and the factorised form, on one operand X.

Rules from the brief (§3): warm-up first, median of many runs, CUDA timed with events
after synchronising, int32 CSR indices, decomposition time reported elsewhere. The two
products of a comparison alternate call by call.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import torch

from repro.sbd.factors import Decomposition, to_torch_csr


def _once(fn, device: torch.device) -> float:
    """One call in milliseconds; on CUDA with events, synchronised before and after."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize(device)
        return start.elapsed_time(end)
    # single-threaded CPU work is timed by the process's CPU clock, which does not run while
    # other jobs on a shared machine preempt it; with several torch threads, wall time
    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    t0 = clock()
    fn()
    return (clock() - t0) * 1e3


def time_interleaved(ops: dict, *, warmup: int, repeats: int, device: torch.device) -> dict:
    """Median and quartiles (ms) of ``repeats`` calls of each op after ``warmup`` calls.

    The ops alternate call by call, so a change of machine load in the middle of the
    measurement slows all of them alike instead of biasing their ratio.
    """
    times = {name: [] for name in ops}
    for k in range(warmup + repeats):
        for name, fn in ops.items():
            ms = _once(fn, device)
            if k >= warmup:
                times[name].append(ms)
    result = {}
    for name, values in times.items():
        q25, median, q75 = np.percentile(values, [25, 50, 75])
        result[name] = {"median_ms": float(median), "q25_ms": float(q25), "q75_ms": float(q75)}
    return result


def relative_error(Y, Y_ref) -> float:
    Y, Y_ref = np.asarray(Y, dtype=np.float64), np.asarray(Y_ref, dtype=np.float64)
    scale = np.abs(Y_ref).max()
    return float(np.abs(Y - Y_ref).max() / scale) if scale else float(np.abs(Y).max())


def compare(
    A: sp.csr_matrix,
    dec: Decomposition,
    d: int,
    *,
    device: torch.device,
    warmup: int,
    repeats: int,
    cpu_repeats: int | None = None,
    seed: int = 0,
) -> dict:
    """Times of A·X (fp32) four ways, speedups, and the factorised product's error."""
    X = np.random.default_rng(seed).standard_normal((A.shape[1], d)).astype(np.float32)
    A32 = sp.csr_matrix(A, dtype=np.float32)
    exact = sp.csr_matrix(A, dtype=np.float64) @ X.astype(np.float64)
    Xt = torch.from_numpy(X).to(device)
    At = to_torch_csr(A, device, torch.float32)
    clock = "process CPU time" if torch.get_num_threads() == 1 else "wall time"
    result = {"d": d, "device": str(device), "cpu_clock": clock}
    # scipy runs on the CPU whatever the device; with cpu_repeats (full scale, where one
    # CPU product takes seconds) a single warm-up call is enough
    result |= time_interleaved(
        {"scipy_csr": lambda: A32 @ X, "sbd_scipy": lambda: dec.spmm_scipy(X)},
        warmup=min(warmup, 1) if cpu_repeats else warmup,
        repeats=cpu_repeats or repeats,
        device=torch.device("cpu"),
    )
    result |= time_interleaved(
        {"torch_csr": lambda: torch.sparse.mm(At, Xt), "sbd_torch": lambda: dec.spmm(Xt)},
        warmup=warmup,
        repeats=repeats,
        device=device,
    )
    result["speedup_scipy"] = result["scipy_csr"]["median_ms"] / result["sbd_scipy"]["median_ms"]
    result["speedup_torch"] = result["torch_csr"]["median_ms"] / result["sbd_torch"]["median_ms"]
    result["rel_error_sbd_scipy"] = relative_error(dec.spmm_scipy(X), exact)
    result["rel_error_sbd_torch"] = relative_error(dec.spmm(Xt).cpu().numpy(), exact)
    result["rel_error_csr"] = relative_error(A32 @ X, exact)
    return result
