from _bootstrap import setup_logging

from repro.delta_mem.fullscale import run_locomo
from repro.delta_mem.generation import Sampling
from repro.delta_mem.train import memory_config

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = dict(sm.params.locomo)
sampling = Sampling(
    **{k: cfg[k] for k in ("max_new_tokens", "temperature", "top_p", "top_k", "seed")}
)
run_locomo(
    sm.params.backbone["model"],
    memory_config(dict(sm.params.memory)),
    sm.params.adapter,
    sm.input.locomo,
    int(sm.wildcards.shard),
    sm.wildcards.condition,
    sm.output.metrics,
    sampling,
    ingest_chunk=cfg.get("ingest_chunk"),
    device=sm.params.device,
    dtype=sm.params.dtype,
)
