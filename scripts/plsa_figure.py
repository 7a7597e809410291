from _bootstrap import setup_logging

from repro.common.io import read_json
from repro.plsa import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
paths = sm.input.metrics
metrics = [read_json(path) for path in ([paths] if isinstance(paths, str) else paths)]
png, pdf = sm.output.png, sm.output.pdf
if sm.params.figure == "accuracy_table":
    figures.accuracy_table(metrics, list(sm.params.metrics), png, pdf)
else:
    getattr(figures, sm.params.figure)(metrics[0], png, pdf)
