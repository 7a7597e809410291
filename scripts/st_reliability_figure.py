from _bootstrap import read_json_inputs, setup_logging

from repro.st_reliability import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = dict(zip(sm.params.datasets, read_json_inputs(sm.input.metrics), strict=True))
draw = getattr(figures, sm.params.figure)
draw(metrics, dict(sm.params.figures), sm.output.png, sm.output.pdf)
