from _bootstrap import setup_logging

from repro.common.device import select_device
from repro.common.seeding import set_threads
from repro.helpful_only.fullsteps import train_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
held_out = sm.input.get("held_out")
train_step(
    dict(sm.params.full),
    dict(sm.params.recipe),
    int(sm.wildcards.seed),
    sm.input.ar,
    held_out[0] if held_out else None,
    sm.output.adapter,
    str(select_device(sm.params.device)),
)
