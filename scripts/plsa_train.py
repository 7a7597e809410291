from _bootstrap import setup_logging

from repro.plsa.end_to_end import train_method

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
train_method(
    sm.wildcards.method,
    dict(sm.params.training),
    sm.input.data,
    sm.output.run,
    device=sm.params.device,
    threads=sm.threads,
)
