from _bootstrap import setup_logging

from repro.common.device import select_device
from repro.common.seeding import set_threads
from repro.helpful_only.fullsteps import ar_answers_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
held_out = sm.input.get("held_out")
ar_answers_step(
    dict(sm.params.full),
    sm.input.advbench,
    held_out[0] if held_out else None,
    sm.output.csv,
    str(select_device(sm.params.device)),
)
