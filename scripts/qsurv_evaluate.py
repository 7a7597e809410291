from _bootstrap import setup_logging

from repro.qsurv.evaluate import EvaluateConfig, evaluate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = EvaluateConfig(
    dataset=sm.wildcards.dataset,
    methods=tuple(sm.params.methods),
    metric_grid_points=sm.params.metric_grid_points,
)
predictions = dict(zip(cfg.methods, sm.input.predictions, strict=True))
train_logs = dict(zip(cfg.methods, sm.input.train_logs, strict=True))
evaluate(cfg, sm.input.data, predictions, train_logs, sm.output.metrics)
