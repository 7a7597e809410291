from pathlib import Path

from _bootstrap import setup_logging

from repro.malora.steps import pixels_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
pixels_step(dict(sm.params.spec), list(sm.params.model_files), str(Path(sm.output.meta).parent))
