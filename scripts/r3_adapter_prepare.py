from _bootstrap import setup_logging

from repro.r3_adapter.data import SplitConfig
from repro.r3_adapter.prepare import prepare
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.shift import LowLight

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
prepare(
    SceneConfig(**sm.params.scene),
    LowLight(**sm.params.low_light),
    SplitConfig(**sm.params.splits),
    list(sm.params.seeds),
    list(sm.output.data),
)
