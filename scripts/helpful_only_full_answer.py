from _bootstrap import setup_logging

from repro.common.device import select_device
from repro.common.seeding import set_threads
from repro.helpful_only.fullsteps import answer_step

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
set_threads(sm.threads)
suite_file = list(sm.input.suite_file)
answer_step(
    dict(sm.params.full),
    sm.wildcards.suite,
    suite_file[0] if suite_file else None,
    sm.input.get("adapter"),
    int(sm.wildcards.seed),
    sm.output.answers,
    str(select_device(sm.params.device)),
)
