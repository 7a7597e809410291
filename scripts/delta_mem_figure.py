from _bootstrap import read_json_inputs, setup_logging

from repro.delta_mem import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
metrics = read_json_inputs(sm.input.metrics)
png, pdf = sm.output.png, sm.output.pdf
if sm.params.figure == "accuracy_vs_facts":
    figures.accuracy_vs_facts(metrics[0], metrics[1], sm.params.train_facts, png, pdf)
elif sm.params.figure == "ablations":
    figures.ablations(metrics, sm.params.seed, png, pdf)
elif sm.params.figure == "gain_ratios":
    figures.gain_ratios(metrics[0], png, pdf, claims=dict(sm.params.claims))
else:
    getattr(figures, sm.params.figure)(metrics[0], png, pdf)
