from pathlib import Path

from _bootstrap import setup_logging

from repro.plsa.runs_summary import aggregate

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
aggregate(
    sm.wildcards.dataset,
    {method: str(Path(sm.input.runs) / f"{method}.json") for method in sm.params.methods},
    sm.output.metrics,
)
