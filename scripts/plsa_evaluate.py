from _bootstrap import setup_logging

from repro.plsa.runs_summary import aggregate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
aggregate(sm.wildcards.dataset, dict(sm.params.runs), sm.output.metrics)
