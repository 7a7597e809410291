from _bootstrap import setup_logging

from repro.r3_adapter.evaluate import evaluate_method
from repro.r3_adapter.names import domain_name
from repro.r3_adapter.pretrain import model_config
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.train import AdaptConfig, train_method

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm)
scene = SceneConfig(**sm.params.scene)
model_cfg = model_config(scene, dict(sm.params.model))
name, spec, grid = sm.wildcards.method, dict(sm.params.method), (scene.grid, scene.grid)
seeds, data = list(sm.params.seeds), list(sm.input.data)
common = dict(grid=grid, device=sm.params.device, threads=sm.threads)
train_method(
    name,
    spec,
    model_cfg,
    AdaptConfig(**sm.params.adaptation),
    seeds,
    data,
    sm.input.backbone,
    sm.output.states,
    sm.output.record,
    **common,
)
evaluate_method(
    name,
    spec,
    model_cfg,
    seeds,
    data,
    sm.input.backbone,
    sm.output.states,
    sm.output.metrics,
    sm.output.ply,
    ply_domain=domain_name(sm.params.ply_severity),
    **common,
)
