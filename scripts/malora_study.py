from _bootstrap import setup_logging

from repro.common.seeding import set_threads
from repro.malora import steps

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
section = dict(sm.params.section)
if sm.params.step == "sweep":
    steps.sweep_step(section, int(sm.wildcards.seed), sm.output.metrics)
elif sm.params.step == "linear":
    steps.linear_step(section, int(sm.wildcards.seed), sm.output.metrics)
else:
    seeds = section["digits"].get("seeds", section["seeds"])
    steps.digits_step(section, list(seeds), sm.output.metrics, threads=sm.threads)
