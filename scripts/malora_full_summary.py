from _bootstrap import read_json_inputs, setup_logging

from repro.common.io import write_json
from repro.malora.evaluate import summarise_full

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
runs = read_json_inputs(sm.input.runs)
write_json(sm.output.summary, summarise_full(runs, sm.params.backbones, sm.params.methods))
