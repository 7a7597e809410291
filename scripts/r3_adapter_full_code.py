from _bootstrap import setup_logging

from repro.r3_adapter.backbones import unpack_code

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
unpack_code(sm.input.archive, sm.output.code, dict(sm.params.submodules))
