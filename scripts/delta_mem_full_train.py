from _bootstrap import setup_logging

from repro.delta_mem.fulltrain import FullTrainConfig, run
from repro.delta_mem.train import memory_config

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
run(
    sm.params.backbone["model"],
    memory_config(dict(sm.params.memory)),
    FullTrainConfig(**sm.params.training),
    sm.input.episodes,
    sm.output.adapter,
    sm.output.record,
    device=sm.params.device,
    dtype=sm.params.dtype,
)
