from _bootstrap import setup_logging

from repro.r3_adapter.pretrain import model_config
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.train import AdaptConfig, train_method

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
scene = SceneConfig(**sm.params.scene)
train_method(
    sm.wildcards.method,
    dict(sm.params.method),
    model_config(scene, dict(sm.params.model)),
    AdaptConfig(**sm.params.adaptation),
    list(sm.params.seeds),
    list(sm.input.data),
    sm.input.backbone,
    sm.output.states,
    sm.output.record,
    grid=(scene.grid, scene.grid),
    device=sm.params.device,
    threads=sm.threads,
)
