from _bootstrap import setup_logging

from repro.st_reliability import configs
from repro.st_reliability.summarize import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
models = set(sm.params.models)
audited = [m for m in sm.params.audited if m in models]
designs = dict(sm.params.c4_designs)
c4 = designs if set(designs.values()) <= models else None  # the designs need all four models
run(
    sm.input.cells,
    list(sm.input.evals),
    configs.AnalysisConfig(**sm.params.analysis),
    audited=audited,
    c4_models=c4,
    n_cells=sm.params.cell_set_len,
    out=sm.output.metrics,
    shrink_fraction=sm.params.shrink_fraction,  # the C4 designs' pools, for C4's controls
)
