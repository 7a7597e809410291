from _bootstrap import setup_logging

from repro.malora.steps import nli_tokenise_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
nli_tokenise_step(dict(sm.params.spec), sm.params.model_dir, sm.output.data)
