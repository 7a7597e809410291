from _bootstrap import setup_logging

from repro.sbd.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, sm.input.metrics, strict=True))
check_claims(
    dict(sm.params.claims),
    dict(sm.params.checks),
    metrics,
    [*sm.input.noise, sm.input.oracles],
    list(sm.input.sign),
    sm.output.claims,
)
