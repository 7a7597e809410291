from _bootstrap import read_json_inputs, setup_logging

from repro.r3_adapter.fullrun import summarise

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
w = sm.wildcards
summarise(w.backbone, w.dataset, w.method, read_json_inputs(sm.input.runs), sm.output.metrics)
