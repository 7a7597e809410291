from _bootstrap import setup_logging

from repro.delta_mem.train import OptimConfig, TaskConfig, train_method

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
task = TaskConfig(**sm.params.task)
method = dict(sm.params.method)
optim = OptimConfig(**{**sm.params.optim, **method.pop("optim", {})})
method.pop("seeds", None)
train_method(
    sm.wildcards.method,
    method,
    dict(sm.params.backbone),
    task,
    optim,
    int(sm.wildcards.seed),
    sm.input.backbone,
    sm.output.model,
    sm.output.record,
    device=sm.params.device,
    threads=sm.threads,
)
