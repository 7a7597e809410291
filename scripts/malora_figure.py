from _bootstrap import read_json_inputs, setup_logging

from repro.malora.figures import make_figure

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
summary = read_json_inputs(sm.input.summary)[0]
make_figure(sm.params.figure, summary, sm.output.png, sm.output.pdf)
