"""Cost of δ-Mem: per-token time over the frozen backbone, and state memory vs context length.

Shared by the ``delta_mem_cost`` rule (metrics for the figure) and
``benchmarks/delta_mem_scan.py`` (printed ratios).
"""

from __future__ import annotations

import copy
import time

import torch

from repro.delta_mem.backbone import BackboneConfig, TinyTransformer
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.scan import delta_rule_scan
from repro.delta_mem.wrapper import DeltaMem


def _best_time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def scan_times(T: int, rank: int, chunk_size: int, repeats: int = 3, seed: int = 0) -> dict:
    """Seconds of the sequential and the chunkwise scan on one (1, T, r) sequence."""
    g = torch.Generator().manual_seed(seed)
    q, k = (
        torch.nn.functional.normalize(torch.randn(1, T, rank, generator=g), dim=-1)
        for _ in range(2)
    )
    v, beta = torch.randn(1, T, rank, generator=g), torch.rand(1, T, rank, generator=g)
    with torch.no_grad():
        naive = _best_time(lambda: delta_rule_scan(q, k, v, beta), max(1, repeats // 2))
        chunk = _best_time(lambda: delta_rule_scan(q, k, v, beta, chunk_size=chunk_size), repeats)
    return {"T": T, "rank": rank, "chunk_size": chunk_size, "naive_s": naive, "chunk_s": chunk}


def token_overhead(
    d_model: int,
    T: int,
    *,
    heads: int = 2,
    layers: int = 2,
    rank: int = 8,
    batch: int = 8,
    repeats: int = 5,
    seed: int = 0,
) -> dict:
    """Forward seconds per token of the backbone alone and with δ-Mem writing every token."""
    torch.manual_seed(seed)
    cfg = BackboneConfig(
        vocab=51, d_model=d_model, heads=heads, layers=layers, mlp=4 * d_model, max_positions=T
    )
    model = TinyTransformer(cfg).eval()
    plain = copy.deepcopy(model)  # the frozen backbone without δ-Mem, timed side by side
    tokens = torch.randint(0, 51, (batch, T))
    dm = DeltaMem(model, MemoryConfig(rank=rank))

    def with_memory():
        dm.reset()
        with dm.phase(writes=True):
            model(tokens)

    with torch.no_grad():
        # interleaved, best of each: load from other processes hits both alike
        pairs = [
            (_best_time(lambda: plain(tokens), 1), _best_time(with_memory, 1))
            for _ in range(repeats)
        ]
    base = min(p[0] for p in pairs)
    mem = min(p[1] for p in pairs)
    state_bytes = sum(s.numel() * s.element_size() for s in dm.states())
    tokens_n = batch * T
    return {
        "d_model": d_model,
        "T": T,
        "base_s_per_token": base / tokens_n,
        "delta_mem_s_per_token": mem / tokens_n,
        "overhead": mem / base - 1,
        "state_bytes": state_bytes,
    }


def state_bytes_vs_length(lengths, rank: int = 8, d_model: int = 64) -> list[dict]:
    """Bytes of δ-Mem's state after writing T tokens, against a KV cache's for the same T."""
    rows = []
    for T in lengths:
        row = token_overhead(d_model, T, rank=rank, batch=1, repeats=1)
        kv = 2 * 2 * T * d_model * 4  # layers × (K and V) × T × d × float32
        rows.append(
            {
                "T": T,
                "state_bytes": row["state_bytes"],
                "kv_cache_bytes": kv,
                "base_s_per_token": row["base_s_per_token"],
                "delta_mem_s_per_token": row["delta_mem_s_per_token"],
            }
        )
    return rows


def measure(lengths, widths, *, threads: int = 1) -> dict:
    """State bytes and per-token time vs context length; overhead at each (d_model, T)."""
    torch.set_num_threads(threads)
    return {
        "lengths": state_bytes_vs_length(lengths),
        "widths": [token_overhead(d, T) for d, T in widths],
    }
