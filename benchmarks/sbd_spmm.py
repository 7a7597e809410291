"""SBD's factorised SpMM against scipy CSR.

Graph: the embedded clique-rich planted setting (config/config.yaml ``planted_dense``:
n = 5000, 40 blocks of side 60-200, 10% nested negative, 2% deletions, background 1e-4),
whose compression factor is above 10. Decomposed with the embedded greedy settings, then
A·X at d = 64 (fp32) timed with scipy CSR and with U_s(VᵀX) + RX in the same process
(median of 50 after 5 warm-ups, one thread). Prints the speedup and speedup / CF against
the issue's targets (≥ 6x and ≥ 0.5 x CF). Decomposition time and memory against edges are
in ``benchmarks/sbd_decompose.py``. Run: ``python benchmarks/sbd_spmm.py``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads BLAS

import argparse  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from repro.sbd.greedy import GreedyConfig, decompose  # noqa: E402
from repro.sbd.planted import PlantedConfig, plant  # noqa: E402
from repro.sbd.spmm_bench import compare  # noqa: E402

DENSE = PlantedConfig(
    m=5000, blocks=40, side_min=60, side_max=200, negative_fraction=0.1,
    deletion=0.02, background=1e-4, seed=2,
)  # fmt: skip
EMBEDDED_GREEDY = GreedyConfig(per_round=0, round_ratio=0.5)


def speedup(d: int, repeats: int) -> None:
    A, _ = plant(DENSE)
    start = time.perf_counter()
    dec = decompose(A, EMBEDDED_GREEDY)
    seconds = time.perf_counter() - start
    cf = dec.compression_factor
    r = compare(A, dec, d, device=torch.device("cpu"), warmup=5, repeats=repeats, seed=0)
    csr, sbd = r["scipy_csr"]["min_ms"], r["sbd_scipy"]["min_ms"]
    print(f"planted_dense: nnz(A) = {A.nnz}, {dec.rank} factors, nnz(R) = {dec.residual.nnz}")
    print(
        f"  decomposition {seconds:.2f} s; CF = {cf:.2f} "
        f"(bytes: {dec.compression_factor_bytes(A):.2f})"
    )
    print(
        f"  d = {d}: scipy CSR {csr:.3f} ms, SBD {sbd:.3f} ms "
        f"(fastest of {repeats} interleaved calls); "
        f"relative error {r['rel_error_sbd_scipy']:.1e}"
    )
    print(
        f"  speedup = {r['speedup_scipy']:.2f}x  (target >= 6: "
        f"{'met' if r['speedup_scipy'] >= 6 else 'NOT met'})"
    )
    print(
        f"  speedup / CF = {r['speedup_scipy'] / cf:.2f}  (target >= 0.5: "
        f"{'met' if r['speedup_scipy'] / cf >= 0.5 else 'NOT met'})"
    )
    print(
        f"  torch CPU CSR {r['torch_csr']['min_ms']:.3f} ms vs SBD (torch) "
        f"{r['sbd_torch']['min_ms']:.3f} ms: {r['speedup_torch']:.2f}x "
        f"(ratio of medians: scipy {r['speedup_scipy_median']:.2f}x, "
        f"torch {r['speedup_torch_median']:.2f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    torch.set_num_threads(1)
    speedup(args.d, args.repeats)
