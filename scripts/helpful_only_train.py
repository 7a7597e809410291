from _bootstrap import setup_logging

from repro.common.device import select_device
from repro.helpful_only.run import RunConfig, run_seed

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = RunConfig.from_section(
    dict(sm.params.section),
    sm.wildcards.prior,
    int(sm.wildcards.seed),
    device=str(select_device(sm.params.device)),
    threads=sm.threads,
)
run_seed(cfg, sm.output.models, sm.output.run)
