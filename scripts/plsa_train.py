from _bootstrap import setup_logging

from repro.plsa.end_to_end import train_methods

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
train_methods(
    list(sm.params.methods),
    dict(sm.params.training),
    sm.input.data,
    sm.output.runs,
    device=sm.params.device,
    threads=sm.threads,
)
