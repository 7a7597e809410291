from _bootstrap import setup_logging

from repro.sbd.pipeline import run_decomposition

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
run_decomposition(
    sm.input.data, dict(sm.params.method), dict(sm.params.greedy), sm.output.factors, sm.output.info
)
