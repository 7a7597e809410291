from _bootstrap import setup_logging

from repro.plsa.prepare import CSBMDataConfig, prepare_csbm, prepare_real

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
seeds = tuple(sm.params.seeds)
if "source" in sm.input.keys():
    merged = sm.params.spec.get("merged_class")
    prepare_real(sm.input.source, sm.input.target, seeds, sm.output.data, merged_class=merged)
else:
    prepare_csbm(CSBMDataConfig(**sm.params.spec, seeds=seeds), sm.output.data)
