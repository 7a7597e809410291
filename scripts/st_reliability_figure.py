from _bootstrap import read_json_inputs, setup_logging

from repro.st_reliability import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, read_json_inputs(sm.input.metrics), strict=True))
draw = getattr(figures, sm.params.figure)
# only the figure that marks a claim's margin has its claims
extra = {"claims": dict(sm.params.claims)} if hasattr(sm.params, "claims") else {}
draw(metrics, dict(sm.params.figures), sm.output.png, sm.output.pdf, **extra)
