from _bootstrap import setup_logging

from repro.qsurv.train import TrainConfig, train

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = TrainConfig(
    method=sm.wildcards.method,
    spec=dict(sm.params.spec),
    training=dict(sm.params.training),
    device=sm.params.device,
    threads=sm.threads,
)
train(
    cfg,
    sm.input.data,
    sm.output.model,
    sm.output.predictions,
    sm.output.train_log,
    sm.params.checkpoints,
)
