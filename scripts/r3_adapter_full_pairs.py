from _bootstrap import setup_logging

from repro.r3_adapter.datasets import write_pairs

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
write_pairs(
    sm.wildcards.dataset,
    dict(sm.params.dataset),
    list(sm.input.archives),
    tuple(sm.params.resolution),
    sm.output.pairs,
)
