from _bootstrap import read_json_inputs, setup_logging

from repro.qsurv import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = read_json_inputs(sm.input.metrics)
png, pdf = sm.output.png, sm.output.pdf
if sm.params.figure == "quadrature_error":
    figures.quadrature_error(metrics[0], png, pdf)
elif sm.params.figure == "hazard_curves":
    figures.hazard_curves(metrics[0], list(sm.params.methods), png, pdf)
elif sm.params.figure == "metrics_table":
    figures.metrics_table(metrics, list(sm.params.metrics), png, pdf)
elif sm.params.figure == "training_time":
    figures.training_time(metrics, png, pdf)
elif sm.params.figure == "ablation":
    figures.ablation(metrics, list(sm.params.methods), "hazard_l1", png, pdf)
else:
    raise ValueError(f"unknown figure {sm.params.figure!r}")
