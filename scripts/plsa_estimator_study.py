from _bootstrap import setup_logging

from repro.plsa.study import EstimatorStudyConfig, run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
params = {k: tuple(v) if isinstance(v, list) else v for k, v in sm.params.cfg.items()}
run(EstimatorStudyConfig(**params), sm.output.metrics)
