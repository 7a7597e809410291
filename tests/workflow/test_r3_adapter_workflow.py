"""The 3R-Adapter part of config/test.yaml, run for real; the numbers in its outputs are
checked against the data, the checkpoints and each other."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest
import torch
import trimesh
import yaml

from repro.common.io import read_npz
from repro.r3_adapter.data import domains, split_from_arrays
from repro.r3_adapter.evaluate import evaluate, flatten
from repro.r3_adapter.pretrain import model_config
from repro.r3_adapter.scenes import SceneConfig
from repro.r3_adapter.train import fresh_adapted
from tests.conftest import ROOT, assert_claims_report_lists

pytestmark = pytest.mark.workflow

P = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["papers"]["r3_adapter"]
DOMAINS = ["clean", "severity1", "severity2", "severity3"]


def _json(run, name):
    return json.loads((run / "r3_adapter" / name).read_text())


def test_every_method_seed_domain_and_layer_is_measured(test_run):
    for method in P["methods"]:
        doc = _json(test_run, f"metrics/{method}.json")
        assert doc["seeds"] == P["seeds"] and [r["seed"] for r in doc["per_seed"]] == P["seeds"]
        for row in doc["per_seed"]:
            for d in DOMAINS:
                assert 0 <= row[f"{d}/accuracy"] <= 1 and row[f"{d}/epe"] >= 0
                for layer in range(P["model"]["depth"]):
                    assert 0 <= row[f"{d}/layer{layer}/gt_mass"] <= 1
                    assert 0 <= row[f"{d}/layer{layer}/entropy"] <= 1 + 1e-6
        for key, value in doc["mean"].items():
            assert value == pytest.approx(np.mean([r[key] for r in doc["per_seed"]]))
        rewired = any(k.startswith("severity2/rewired") for k in doc["mean"])
        assert rewired == ("relational" in P["methods"][method].get("adapters", {}))


def test_frozen_metrics_recompute_from_the_backbone(test_run):
    doc = _json(test_run, "metrics/frozen.json")
    scene = SceneConfig(**P["scene"])
    backbone = torch.load(test_run / "r3_adapter/backbone/backbone.pt", weights_only=True)
    arrays = read_npz(test_run / f"r3_adapter/data/seed{P['seeds'][0]}.npz")
    tests = {d: split_from_arrays(arrays, f"test/{d}") for d in domains(arrays)}
    adapted = fresh_adapted(model_config(scene, P["model"]), backbone, {}, (scene.grid,) * 2, "cpu")
    again = flatten(evaluate(adapted, tests)[0])
    stored = doc["per_seed"][0]
    assert set(again) == set(stored) - {"seed"}
    for key, value in again.items():
        assert value == pytest.approx(stored[key], abs=1e-6), key


def _contains(big, small) -> bool:
    """``small``'s keys and values appear in ``big`` (which has the schema's defaults too)."""
    if isinstance(small, dict):
        return all(k in big and _contains(big[k], v) for k, v in small.items())
    return big == small


def test_every_method_searched_the_same_grid_on_the_first_seed(test_run):
    for method, spec in P["methods"].items():
        record = _json(test_run, f"runs/{method}.json")
        first, *rest = record["runs"]
        assert _contains(record["spec"], spec)
        if first["n_trainable"] == 0:  # nothing trains: one rate is enough
            assert len(first["validation_accuracy"]) == 1
            continue
        searched = {float(k): v for k, v in first["validation_accuracy"].items()}
        grid = sorted(P["adaptation"]["lrs"])
        extra = sorted(set(searched) - set(grid))  # the grid widened past an edge
        assert set(grid) <= set(searched)
        assert len(extra) <= 2 * P["adaptation"]["widen"]
        assert all(lr < grid[0] or lr > grid[-1] for lr in extra)
        best = max(searched.values())
        assert first["lr_on_edge"] == (first["lr"] in (min(searched), max(searched)))
        assert first["lr"] == min(lr for lr, acc in searched.items() if acc == best)
        for run in rest:
            assert run["lr"] == first["lr"] and len(run["validation_accuracy"]) == 1
            assert len(run["losses"][str(first["lr"])]) == P["adaptation"]["steps"]


def test_claims_follow_the_metrics(test_run):
    claims = {c["id"]: c for c in _json(test_run, "claims.json")}
    assert {c for c, v in claims.items() if v["type"] == "check"} == set(P["checks"])
    ours = _json(test_run, "metrics/r3_lite.json")
    theirs = _json(test_run, "metrics/lora_r2.json")
    diffs = [
        a["severity2/accuracy"] - b["severity2/accuracy"]
        for a, b in zip(ours["per_seed"], theirs["per_seed"], strict=True)
    ]
    assert claims["relational_vs_channelwise"]["measured"] == pytest.approx(np.mean(diffs))
    gap = abs(theirs["n_trainable"] - ours["n_trainable"]) / ours["n_trainable"]
    assert claims["matched_budget"]["measured"] == pytest.approx(gap)
    frozen = _json(test_run, "metrics/frozen.json")
    assert claims["pretrained_clean"]["measured"] == pytest.approx(frozen["mean"]["clean/accuracy"])
    assert_claims_report_lists(test_run, "r3_adapter", claims)


def test_point_clouds_and_figures_are_written(test_run):
    arrays = read_npz(test_run / f"r3_adapter/data/seed{P['seeds'][0]}.npz")
    scene = split_from_arrays(arrays, "test/severity2").scenes
    covisible = int(scene.covisible[0].sum())
    for method in P["methods"]:
        cloud = trimesh.load(test_run / f"r3_adapter/pointclouds/{method}.ply")
        assert len(cloud.vertices) == scene.xyz1.shape[1] + covisible
        np.testing.assert_allclose(cloud.vertices[: scene.xyz1.shape[1]], scene.xyz1[0], atol=1e-6)
    for figure in ("collapse", "attention", "table", "ablation", "efficiency", "pointcloud"):
        image = mpimg.imread(test_run / f"r3_adapter/figures/{figure}.png")
        assert image.shape[0] > 200 and image[..., :3].std() > 0.01, figure
