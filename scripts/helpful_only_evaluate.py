from _bootstrap import setup_logging

from repro.helpful_only.evaluate import evaluate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
evaluate(list(sm.input.runs), dict(sm.params.references), sm.output.summary, sm.params.confidence)
