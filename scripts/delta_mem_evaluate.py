from _bootstrap import setup_logging

from repro.delta_mem.evaluate import EvalConfig, evaluate_method
from repro.delta_mem.train import TaskConfig

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
task = TaskConfig(**sm.params.task)
cfg = EvalConfig(**sm.params.evaluation)
method = {k: v for k, v in sm.params.method.items() if k not in ("seeds", "optim")}
evaluate_method(
    sm.wildcards.method,
    method,
    dict(sm.params.backbone),
    task,
    cfg,
    list(sm.params.seeds),
    sm.input.backbones,
    sm.input.models,
    sm.input.records,
    sm.input.backbone_records,
    sm.output.metrics,
    device=sm.params.device,
    threads=sm.threads,
)
