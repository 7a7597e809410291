from _bootstrap import setup_logging

from repro.plsa.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, sm.input.metrics, strict=True))
studies = {"rate": sm.input.rate, "shift": sm.input.shift}
check_claims(
    dict(sm.params.claims),
    studies,
    metrics,
    sm.output.claims,
    dict(sm.params.checks),
    sanity=dict(sm.params.sanity),
)
