from _bootstrap import setup_logging

from repro.qsurv.evaluate import EvaluateConfig, evaluate
from repro.qsurv.runs import run_files

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
cfg = EvaluateConfig(
    dataset=sm.wildcards.dataset,
    methods=tuple(sm.params.methods),
    metric_grid_points=sm.params.metric_grid_points,
)
files = {m: run_files(sm.params.run_dirs[m], m) for m in cfg.methods}
predictions = {m: str(f["predictions"]) for m, f in files.items()}
train_logs = {m: str(f["train_log"]) for m, f in files.items()}
evaluate(cfg, sm.input.data, predictions, train_logs, sm.output.metrics)
