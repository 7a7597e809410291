from _bootstrap import setup_logging

from repro.st_reliability.model import ModelConfig
from repro.st_reliability.swap_control import SwapControlConfig, run

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
params = {k: v for k, v in dict(sm.params.swap_control).items() if k != "seeds"}
if "doses" in params:
    params["doses"] = tuple(params["doses"])
run(
    sm.output.control,
    ModelConfig(**sm.params.architecture),
    SwapControlConfig(**params),
    list(sm.params.seeds),
    threads=sm.threads,
)
