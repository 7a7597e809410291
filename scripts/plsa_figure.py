from _bootstrap import read_json_inputs, setup_logging

from repro.plsa import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = read_json_inputs(sm.input.metrics)
png, pdf = sm.output.png, sm.output.pdf
if sm.params.figure == "accuracy_table":
    figures.accuracy_table(metrics, list(sm.params.metrics), png, pdf)
else:
    getattr(figures, sm.params.figure)(metrics[0], png, pdf)
