from _bootstrap import setup_logging

from repro.delta_mem.fullmab import run_mab
from repro.delta_mem.train import memory_config

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = sm.params.mab
split = sm.wildcards.split
run_mab(
    sm.params.backbone["model"],
    memory_config(dict(sm.params.memory)),
    sm.params.adapter,
    sm.input.parquet,
    split,
    int(sm.wildcards.shard),
    int(cfg["splits"][split]["shards"]),
    sm.wildcards.condition,
    sm.output.metrics,
    device=sm.params.device,
    dtype=sm.params.dtype,
    context_chars=cfg["context_chars"],
    max_new_tokens=cfg["max_new_tokens"],
    ingest_chunk=cfg.get("ingest_chunk"),
)
