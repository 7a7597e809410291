from _bootstrap import setup_logging

from repro.r3_adapter.evaluate import evaluate_method
from repro.r3_adapter.names import domain_name
from repro.r3_adapter.pretrain import model_config
from repro.r3_adapter.scenes import SceneConfig

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
scene = SceneConfig(**sm.params.scene)
evaluate_method(
    sm.wildcards.method,
    dict(sm.params.method),
    model_config(scene, dict(sm.params.model)),
    list(sm.params.seeds),
    list(sm.input.data),
    sm.input.backbone,
    sm.input.states,
    sm.output.metrics,
    sm.output.ply,
    grid=(scene.grid, scene.grid),
    ply_domain=domain_name(sm.params.ply_severity),
    device=sm.params.device,
    threads=sm.threads,
)
