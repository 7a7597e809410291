"""Typed configs from ``papers.r3_adapter`` of a workflow config file, for the step CLIs
(``python -m repro.r3_adapter.<step> --help``); the rules pass the same keys as params."""

from __future__ import annotations


def scene_and_model(sec: dict):
    """The scene generator's config, the model's, and the patch grid."""
    from repro.r3_adapter.pretrain import model_config
    from repro.r3_adapter.scenes import SceneConfig

    scene = SceneConfig(**sec.get("scene", {}))
    return scene, model_config(scene, sec.get("model", {})), (scene.grid, scene.grid)
