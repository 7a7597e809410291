"""Cost of δ-Mem: per-token time over the frozen backbone, and state memory vs context length.

Shared by the ``delta_mem_cost`` rule (metrics for the figure) and
``benchmarks/delta_mem_scan.py`` (printed ratios).
"""

from __future__ import annotations

import argparse
import copy

import torch
import torch.nn.functional as F

from repro.common.timing import best_time, cpu_clock, interleaved_times
from repro.delta_mem.backbone import BackboneConfig, TinyTransformer
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.scan import delta_rule_scan
from repro.delta_mem.wrapper import DeltaMem


def _scan_inputs(T: int, rank: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    q, k = (F.normalize(torch.randn(1, T, rank, generator=g), dim=-1) for _ in range(2))
    return q, k, torch.randn(1, T, rank, generator=g), torch.rand(1, T, rank, generator=g)


def update_floor(q, k, v, beta, states):
    """One elementwise pass of the standard write over all T states at once (as if every
    S_{t−1} were known): λ S − β (S k) kᵀ + β v kᵀ on (T, r, r). Any scan does at least this."""
    kt = k.unsqueeze(-2)
    lam, b = (1 - beta).unsqueeze(-1), beta.unsqueeze(-1)
    return lam * states - b * (states @ k.unsqueeze(-1)) * kt + (b * v.unsqueeze(-1)) * kt


def scan_times(T: int, rank: int, chunks, rounds: int = 15, seed: int = 0) -> dict:
    """Best-of-``rounds`` seconds (interleaved, so load from other processes hits all alike;
    the process's CPU time on one thread, :func:`repro.common.timing.cpu_clock`)
    of the update floor and the chunkwise scan at each chunk size, one (1, T, r) sequence;
    the sequential scan is timed once (it takes ~100× longer)."""
    q, k, v, beta = _scan_inputs(T, rank, seed)
    states = torch.randn(1, T, rank, rank, generator=torch.Generator().manual_seed(seed + 1))
    fns = {"floor": lambda: update_floor(q, k, v, beta, states)}
    fns |= {c: (lambda c=c: delta_rule_scan(q, k, v, beta, chunk_size=c)) for c in chunks}
    with torch.no_grad():
        clock, _ = cpu_clock(torch.get_num_threads())
        best = {name: min(t) for name, t in interleaved_times(fns, rounds, clock=clock).items()}
        naive = best_time(lambda: delta_rule_scan(q, k, v, beta), 1, warmup=True, clock=clock)
    floor = best.pop("floor")
    return {"T": T, "rank": rank, "floor_s": floor, "naive_s": naive, "chunk_s": best}


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
    """Forward seconds per token of the backbone alone and with δ-Mem writing every token: the
    fastest of ``repeats`` interleaved calls of each (process CPU time on one thread)."""
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
        # interleaved, fastest of each: load from other processes hits both alike
        fns = {"base": lambda: plain(tokens), "memory": with_memory}
        times = interleaved_times(fns, repeats, clock=cpu_clock(torch.get_num_threads())[0])
    base, mem = min(times["base"]), min(times["memory"])
    state_bytes = sum(s.numel() * s.element_size() for s in dm.states())
    tokens_n = batch * T
    return {
        "d_model": d_model,
        "T": T,
        "base_s_per_token": base / tokens_n,
        "delta_mem_s_per_token": mem / tokens_n,
        "overhead": mem / base - 1,
        "state_bytes": state_bytes,
        # every timed call, for the spread the cost figure draws beside the fastest
        "base_s_per_token_calls": [t / tokens_n for t in times["base"]],
        "delta_mem_s_per_token_calls": [t / tokens_n for t in times["memory"]],
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


def main() -> None:
    parser = argparse.ArgumentParser(description="δ-Mem's state memory and per-token time")
    parser.add_argument("output", help="cost JSON")
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--widths", nargs="+", default=["64x32", "512x512"], help="d_model x T")
    args = parser.parse_args()
    from repro.common.io import write_json

    widths = [tuple(int(x) for x in w.split("x")) for w in args.widths]
    write_json(args.output, measure(args.lengths, widths))


if __name__ == "__main__":
    main()
