"""SpMM timing: scipy CSR, torch sparse CSR and the factorised form, on one operand X.

Rules from the brief (§3): warm-up first, many runs, CUDA timed with events after
synchronising, int32 CSR indices, decomposition time reported elsewhere. The two products of
a comparison alternate call by call, and the speedup is the ratio of their fastest calls
(:mod:`repro.common.timing`: the ratio that other load on the machine moves least); the
ratio of the medians, the brief's statistic, is reported beside it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from repro.common.timing import cpu_clock, interleaved_times, ratio_of_minima, summary
from repro.sbd.factors import Decomposition, to_torch_csr


def _cuda_ms(fn, device: torch.device) -> float:
    """One call on CUDA in milliseconds, with events, synchronised before and after."""
    torch.cuda.synchronize(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize(device)
    return start.elapsed_time(end)


def time_interleaved(ops: dict, *, warmup: int, repeats: int, device: torch.device) -> dict:
    """Milliseconds of ``repeats`` calls of each op after ``warmup`` rounds, the ops called
    in turn; single-threaded CPU work by the process's CPU clock (it does not run while other
    jobs preempt this one), several threads by wall time, CUDA by events."""
    if device.type == "cuda":
        return interleaved_times(ops, repeats, warmup=warmup, timer=lambda fn: _cuda_ms(fn, device))
    clock, _ = cpu_clock(torch.get_num_threads())
    times = interleaved_times(ops, repeats, warmup=warmup, clock=clock)
    return {name: [1e3 * t for t in values] for name, values in times.items()}


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
    seed: int,
) -> dict:
    """Times of A·X (fp32) four ways (ms: min, quartiles, median), speedups (ratio of the
    fastest calls; ``speedup_*_median``: of the medians), and the factorised product's error;
    X is standard normal from ``seed`` (``papers.sbd.evaluation.operand_seed``)."""
    X = np.random.default_rng(seed).standard_normal((A.shape[1], d)).astype(np.float32)
    A32 = sp.csr_matrix(A, dtype=np.float32)
    exact = sp.csr_matrix(A, dtype=np.float64) @ X.astype(np.float64)
    Xt = torch.from_numpy(X).to(device)
    At = to_torch_csr(A, device, torch.float32)
    result = {"d": d, "device": str(device), "cpu_clock": cpu_clock(torch.get_num_threads())[1]}
    # scipy runs on the CPU whatever the device; with cpu_repeats (full scale, where one
    # CPU product takes seconds) a single warm-up call is enough
    times = time_interleaved(
        {"scipy_csr": lambda: A32 @ X, "sbd_scipy": lambda: dec.spmm_scipy(X)},
        warmup=min(warmup, 1) if cpu_repeats else warmup,
        repeats=cpu_repeats or repeats,
        device=torch.device("cpu"),
    )
    times |= time_interleaved(
        {"torch_csr": lambda: torch.sparse.mm(At, Xt), "sbd_torch": lambda: dec.spmm(Xt)},
        warmup=warmup,
        repeats=repeats,
        device=device,
    )
    result |= {name: summary(values) for name, values in times.items()}
    for backend, base in (("scipy", "scipy_csr"), ("torch", "torch_csr")):
        ours = f"sbd_{backend}"
        result[f"speedup_{backend}"] = ratio_of_minima(times, base, ours)
        result[f"speedup_{backend}_median"] = result[base]["median_ms"] / result[ours]["median_ms"]
    result["rel_error_sbd_scipy"] = relative_error(dec.spmm_scipy(X), exact)
    result["rel_error_sbd_torch"] = relative_error(dec.spmm(Xt).cpu().numpy(), exact)
    result["rel_error_csr"] = relative_error(A32 @ X, exact)
    return result
