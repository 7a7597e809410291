from _bootstrap import read_json_inputs, setup_logging

from repro.sbd import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = read_json_inputs(sm.input.metrics)
draw = getattr(figures, sm.params.figure)
draw(metrics if sm.params.per_graph else metrics[0], sm.output.png, sm.output.pdf)
