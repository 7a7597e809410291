from _bootstrap import setup_logging

from repro.st_reliability import configs
from repro.st_reliability.prepare import prepare_coverage, prepare_full, prepare_synthetic

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
dataset = dict(sm.params.dataset)
split = configs.SplitConfig(**sm.params.split)
outputs = dict(
    cells_out=sm.output.cells, programs_out=sm.output.programs, record_out=sm.output.record
)
if dataset["source"] == "coverage":
    cfg, seed = configs.coverage(dataset["coverage"])
    prepare_coverage(cfg, seed=seed, **outputs)
elif dataset["source"] == "simulator":
    sim, seed = configs.simulator(dict(sm.params.simulator), dataset)
    check = configs.SelfCheckConfig(**sm.params.self_check)
    prepare_synthetic(sim, split, check, seed=seed, **outputs)
else:
    sources = configs.line_sources(dataset, dict(sm.input.items()))
    families = sm.input.get("families")
    prep = configs.Preprocessing(**dataset.get("preprocessing", {}))
    prepare_full(sources, prep, split, seed=dataset.get("seed", 0), families=families, **outputs)
