from _bootstrap import setup_logging

from repro.common.seeding import set_threads
from repro.malora.steps import full_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
method = sm.wildcards.get("method")
full_step(
    dict(sm.params.files),
    dict(sm.params.settings),
    dict(sm.params.merge_rules),
    sm.params.device,
    sm.output.metrics,
    method=method,
    individual=sm.input.get("individual"),
)
