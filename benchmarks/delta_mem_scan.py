"""δ-Mem performance on CPU (one thread): prints ratios, asserts nothing.

1. Chunkwise vs sequential delta-rule scan at T = 4096, r = 8 (target: ≥ 10× faster).
2. δ-Mem's per-token forward overhead over the frozen backbone (target: ≤ 10%), at the
   embedded width (d = 64, where an r = 8 memory is large next to the model) and wider.
3. State memory against context length (constant) and a KV cache's (linear).

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/delta_mem_scan.py
"""

from __future__ import annotations

import torch

from repro.delta_mem.cost import scan_times, state_bytes_vs_length, token_overhead


def main() -> None:
    torch.set_num_threads(1)
    print("1. scan, T = 4096, r = 8, batch 1, float32")
    for chunk in (16, 32, 64):
        t = scan_times(4096, 8, chunk, repeats=5)
        ratio = t["naive_s"] / t["chunk_s"]
        print(
            f"   chunk {chunk:3d}: sequential {1e3 * t['naive_s']:7.1f} ms, chunkwise "
            f"{1e3 * t['chunk_s']:6.1f} ms, ratio {ratio:5.1f}x (target ≥ 10x)"
        )
    print("2. per-token forward time, δ-Mem writing every token vs the frozen backbone")
    for d, T, layers in ((64, 32, 2), (64, 512, 2), (512, 512, 2), (1024, 512, 4)):
        o = token_overhead(d, T, layers=layers, heads=max(2, d // 64), batch=4)
        base, mem = 1e6 * o["base_s_per_token"], 1e6 * o["delta_mem_s_per_token"]
        print(
            f"   d = {d:4d}, T = {T:4d}, {layers} layers: base {base:7.2f} µs, δ-Mem "
            f"{mem:7.2f} µs, overhead {o['overhead']:+.1%} (target ≤ 10%)"
        )
    print("3. state bytes after writing T tokens (d = 64, 2 layers, r = 8)")
    for row in state_bytes_vs_length([256, 1024, 4096]):
        print(
            f"   T = {row['T']:5d}: state {row['state_bytes']:6d} B, "
            f"KV cache {row['kv_cache_bytes']:9d} B"
        )


if __name__ == "__main__":
    main()
