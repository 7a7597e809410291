from _bootstrap import setup_logging

from repro.r3_adapter.figures import draw

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
draw(
    sm.params.figure,
    list(sm.input.metrics),
    dict(sm.params.roles),
    int(sm.params.severity),
    sm.output.png,
    sm.output.pdf,
    claims=dict(sm.params.claims),
)
