"""Typed configs from ``papers.r3_adapter`` of a workflow config file, for the step CLIs
(``python -m repro.r3_adapter.<step> --help``); the rules pass the same keys as params."""

from __future__ import annotations

import argparse

import yaml


def section(config_path: str) -> dict:
    with open(config_path) as handle:
        return yaml.safe_load(handle)["papers"]["r3_adapter"]


def config_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", required=True, help="workflow config YAML (papers.r3_adapter)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    return parser


def scene_and_model(sec: dict):
    """The scene generator's config, the model's, and the patch grid."""
    from repro.r3_adapter.pretrain import model_config
    from repro.r3_adapter.scenes import SceneConfig

    scene = SceneConfig(**sec.get("scene", {}))
    return scene, model_config(scene, sec.get("model", {})), (scene.grid, scene.grid)
