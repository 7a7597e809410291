"""CUDA paths of QSurv (skipped without a GPU; run by benchmarks/gpu_smoke.sh)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.qsurv import neural
from repro.qsurv.model import QuadratureLikelihood, build_hazard_net

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


@pytest.mark.parametrize("conditioning", ["time_lora", "film", "concat"])
def test_cuda_forward_and_loss_equal_cpu(conditioning):
    torch.manual_seed(0)
    net = build_hazard_net(
        conditioning,
        in_features=4,
        hidden=[16, 16],
        dropout=0.0,
        rank=4,
        alpha=4,
        time_width=8,
        time_depth=3,
    )
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    x, v, e = torch.randn(64, 4), torch.rand(64), (torch.rand(64) < 0.7).float()
    loss = QuadratureLikelihood(rule="gauss_legendre", nodes=15)
    cpu = loss(net, x, v, e)
    gpu = loss.cuda()(net.cuda(), x.cuda(), v.cuda(), e.cuda())
    assert gpu.item() == pytest.approx(cpu.item(), rel=1e-4)


def test_training_on_cuda_matches_the_cpu_fit_closely(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    x = rng.normal(size=(n, 2)).astype(np.float32)
    t = rng.exponential(np.exp(-x[:, 0]))
    e = (rng.uniform(size=n) < 0.8).astype(float)
    split = {
        "x_train": x[:300],
        "t_train": t[:300],
        "e_train": e[:300],
        "x_val": x[300:],
        "t_val": t[300:],
        "e_val": e[300:],
    }
    cfg = neural.NeuralConfig(epochs=5, hidden=(16, 16), rank=4, alpha=4, time_width=8)
    results = {}
    for device in ("cpu", "cuda"):
        net, history = neural.fit(
            cfg, split, seed=0, device=torch.device(device), checkpoint=tmp_path / f"{device}.pt"
        )
        grid = np.linspace(0, t.max(), 20)
        results[device] = neural.predict_survival(
            net, x[300:], grid, t_max=history["t_max"], nodes=15, device=torch.device(device)
        )
    np.testing.assert_allclose(results["cuda"], results["cpu"], atol=2e-3)
