from _bootstrap import setup_logging

from repro.qsurv.train import train_methods

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
train_methods(
    {method: dict(spec) for method, spec in sm.params.methods.items()},
    dict(sm.params.training),
    sm.input.data,
    sm.output.runs,
    sm.params.checkpoints,
    device=sm.params.device,
    threads=sm.threads,
)
