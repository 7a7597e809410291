from _bootstrap import setup_logging

from repro.qsurv.quadrature_study import QuadratureConfig, run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = QuadratureConfig(
    **{k: tuple(v) if isinstance(v, list) else v for k, v in sm.params.cfg.items()}
)
run(cfg, sm.output.metrics)
