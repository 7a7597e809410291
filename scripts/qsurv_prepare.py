from _bootstrap import setup_logging

from repro.qsurv.prepare import PrepareConfig, prepare

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
params = dict(sm.params.cfg)
cfg = PrepareConfig(
    **{**params, "seeds": tuple(params["seeds"]), "fractions": tuple(params["fractions"])}
)
prepare(cfg, sm.output.data, raw_file=sm.input.raw[0] if sm.input.raw else None)
