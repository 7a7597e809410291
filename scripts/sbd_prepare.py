from _bootstrap import setup_logging

from repro.sbd.pipeline import prepare

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
raw = sm.input.raw if "raw" in sm.input.keys() else None
prepare(sm.wildcards.dataset, dict(sm.params.spec), sm.output.data, raw)
