"""CUDA paths of 3R-Adapter (skipped without a GPU; run by benchmarks/gpu_smoke.sh's
``pytest -m gpu``): the adapted model and one adaptation step agree with the CPU."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from repro.r3_adapter.data import observed
from repro.r3_adapter.losses import task_loss
from repro.r3_adapter.methods import build_method
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.scenes import SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight
from repro.r3_adapter.sites import CrossAttentionSite

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


@pytest.mark.parametrize(
    "spec",
    [{"adapters": {"relational": {}}}, {"adapters": {"lora": {"rank": 4}, "relational": {}}}],
)
def test_cuda_adaptation_step_equals_cpu(spec):
    scene = SceneConfig(grid=6)
    rng = np.random.default_rng(0)
    batch = observed(make_scenes(scene, 8, rng), 2, LowLight(), rng)
    torch.manual_seed(0)
    base = TwoViewTransformer(ModelConfig(tokens=scene.tokens, channels=scene.channels))
    results = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(1)
        adapted = build_method(
            copy.deepcopy(base).to(device), spec, site=CrossAttentionSite((6, 6))
        )
        for p in adapted.trainable():  # a non-zero gate, so that the adapter is live
            p.data.add_(0.1)
        data = batch.to(device)
        loss = task_loss(adapted.model(*data.inputs()), data)
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in adapted.trainable()])
        results[device] = (loss.item(), grads.cpu())
    assert results["cuda"][0] == pytest.approx(results["cpu"][0], rel=1e-4)
    torch.testing.assert_close(results["cuda"][1], results["cpu"][1], rtol=1e-3, atol=1e-4)
