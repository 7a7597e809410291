from _bootstrap import read_json_inputs, setup_logging

from repro.sbd import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = read_json_inputs(sm.input.metrics)
draw = getattr(figures, sm.params.figure)
if not sm.params.per_graph:  # a study: one document, or one per method to join
    metrics = {"rows": [row for part in metrics for row in part["rows"]]}
draw(metrics, sm.output.png, sm.output.pdf)
