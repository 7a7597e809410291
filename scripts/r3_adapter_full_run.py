from _bootstrap import setup_logging

from repro.r3_adapter.fullrun import checkpoint_sha256, run_seed
from repro.r3_adapter.fullscale import FullAdaptConfig
from repro.r3_adapter.sevenscenes import RawLowLight

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
run_seed(
    sm.wildcards.backbone,
    dict(sm.params.method),
    sm.input.code,
    sm.input.checkpoint,
    sm.input.pairs,
    FullAdaptConfig(**sm.params.adaptation),
    int(sm.wildcards.seed),
    sm.output.run,
    resolution=tuple(sm.params.resolution),
    shift=RawLowLight(**sm.params.low_light),
    severities=list(sm.params.severities),
    device=sm.params.device,
    threads=sm.threads,
    # read now, not when the DAG was built: the lock gets the checkpoint's entry on download
    checkpoint_sha256=checkpoint_sha256(sm.config, {"checkpoint": sm.params.checkpoint_key}),
)
