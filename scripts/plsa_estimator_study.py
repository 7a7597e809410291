from _bootstrap import setup_logging

from repro.plsa.study import EstimatorStudyConfig, run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
for study in ("rate", "shift"):
    cfg = getattr(sm.params, study)
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in cfg.items()}
    run(EstimatorStudyConfig(**params), getattr(sm.output, study))
