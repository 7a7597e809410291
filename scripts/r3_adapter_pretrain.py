from _bootstrap import setup_logging

from repro.r3_adapter.pretrain import PretrainConfig, run
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.shift import LowLight

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
run(
    SceneConfig(**sm.params.scene),
    LowLight(**sm.params.low_light),
    dict(sm.params.model),
    PretrainConfig(**sm.params.pretraining),
    sm.output.model,
    sm.output.record,
    device=sm.params.device,
)
