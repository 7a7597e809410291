from _bootstrap import setup_logging

from repro.sbd.pipeline import evaluate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
evaluate(
    sm.wildcards.dataset,
    sm.input.data,
    list(sm.params.methods),
    sm.input.factors,
    sm.input.info,
    dict(sm.params.evaluation),
    sm.params.device,
    sm.threads,
    sm.output.metrics,
)
