from _bootstrap import setup_logging

from repro.delta_mem.train import OptimConfig, TaskConfig, pretrain_backbone

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
task = TaskConfig(**sm.params.task)
pretrain_backbone(
    dict(sm.params.backbone),
    task,
    OptimConfig(**sm.params.optim),
    int(sm.wildcards.seed),
    sm.output.model,
    sm.output.record,
    device=sm.params.device,
    threads=sm.threads,
)
