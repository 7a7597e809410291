from _bootstrap import setup_logging

from repro.delta_mem.claims import check_claims

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.methods, sm.input.metrics, strict=True))
locomo = dict(zip(sm.params.backbones, sm.input.locomo, strict=True))
mab = dict(zip(sm.params.mab_backbones, sm.input.mab, strict=True))
check_claims(
    dict(sm.params.claims),
    metrics,
    sm.output.claims,
    locomo,
    mab,
    checks=dict(sm.params.checks),
    sanity=dict(sm.params.sanity),
)
