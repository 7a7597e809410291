from _bootstrap import setup_logging

from repro.qsurv.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, sm.input.metrics, strict=True))
check_claims(
    dict(sm.params.claims),
    sm.input.quadrature,
    metrics,
    sm.output.claims,
    dict(sm.params.checks),
    sanity_thresholds=dict(sm.params.sanity),
)
