from _bootstrap import read_json_inputs, setup_logging

from repro.common.io import write_json
from repro.malora.evaluate import summarise

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
sweep = read_json_inputs(sm.input.sweep)
linear = read_json_inputs(sm.input.linear)
digits = read_json_inputs(sm.input.digits)[0]["seeds"]
write_json(sm.output.summary, summarise(sweep, linear, digits))
