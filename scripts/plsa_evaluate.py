from _bootstrap import setup_logging

from repro.plsa.end_to_end import aggregate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
aggregate(
    sm.wildcards.dataset,
    dict(zip(sm.params.methods, sm.input.runs, strict=True)),
    sm.output.metrics,
)
