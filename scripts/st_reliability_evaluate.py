from _bootstrap import setup_logging

from repro.st_reliability import configs
from repro.st_reliability.evaluate import run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
run(
    sm.input.cells,
    dict(sm.params.checkpoints),
    configs.EvalConfig(**sm.params.evaluation),
    seed=int(sm.wildcards.seed),
    out=sm.output.metrics,
    device=sm.params.device,
    threads=sm.threads,
    se_embeddings=sm.input.get("se_embeddings"),  # present when a model reads SE-600M
    se_record=sm.input.get("se_record"),
)
