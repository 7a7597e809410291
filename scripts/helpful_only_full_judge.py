from _bootstrap import setup_logging

from repro.common.device import select_device
from repro.common.seeding import set_threads
from repro.helpful_only.fullsteps import judge_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
judge_step(
    dict(sm.params.full), sm.input.answers, sm.output.judged, str(select_device(sm.params.device))
)
