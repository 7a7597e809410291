from _bootstrap import setup_logging

from repro.common.io import write_json
from repro.delta_mem.cost import measure

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = sm.params.cost
write_json(sm.output.metrics, measure(cfg["lengths"], cfg["widths"], threads=sm.threads))
