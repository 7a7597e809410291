from _bootstrap import setup_logging

from repro.helpful_only.fullsteps import summary_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
summary_step(
    dict(sm.params.files),
    sm.output.summary,
    dict(sm.params.adapters),
    dict(sm.params.min_agreement),
    dict(sm.params.reward_judges),
)
