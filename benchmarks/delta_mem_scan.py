"""δ-Mem performance on CPU (one thread): prints ratios, asserts nothing.

1. The chunkwise scan at T = 4096, r = 8, float32, per chunk size, against the floor (one
   elementwise pass of the write over the (T, r, r) states; target ≤ 20×) and against the
   sequential scan. The fastest chunk size is the library default (scan.DEFAULT_CHUNK).
2. δ-Mem's per-token forward overhead over the frozen backbone (target: ≤ 10%), at the
   embedded width (d = 64, where an r = 8 memory is large next to the model) and wider.
3. State memory against context length (constant) and a KV cache's (linear).

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/delta_mem_scan.py
"""

from __future__ import annotations

import torch

from repro.delta_mem.cost import scan_times, state_bytes_vs_length, token_overhead
from repro.delta_mem.scan import DEFAULT_CHUNK


def main() -> None:
    torch.set_num_threads(1)
    t = scan_times(4096, 8, (8, 16, 32, 64, 128))
    floor = t["floor_s"]
    print("1. scan, T = 4096, r = 8, batch 1, float32, best of 15 interleaved rounds")
    print(f"   floor (one elementwise pass of the write over (T, r, r)): {1e3 * floor:.3f} ms")
    print(f"   sequential scan: {1e3 * t['naive_s']:.1f} ms")
    for chunk, s in t["chunk_s"].items():
        mark = "  <- default" if chunk == DEFAULT_CHUNK else ""
        print(
            f"   chunk {chunk:3d}: {1e3 * s:6.2f} ms = {s / floor:5.1f}x the floor (target ≤ 20x), "
            f"{t['naive_s'] / s:5.1f}x faster than sequential{mark}"
        )
    fastest = min(t["chunk_s"], key=t["chunk_s"].get)
    print(f"   fastest chunk size here: {fastest} (library default {DEFAULT_CHUNK})")
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
