"""Shared fixtures for the QSurv unit tests: analytic hazard "networks" and tiny data."""

import numpy as np
import pytest
import torch
from torch import nn

from repro.qsurv.prepare import PrepareConfig, prepare


class PolynomialHazard(nn.Module):
    """h(v | x) = exp(x[:, 0]) · Σ_p coefs[p] v^p: an analytic ``net(x, v)``.

    H(v | x) = exp(x[:, 0]) · Σ_p coefs[p] v^{p+1} / (p+1), a polynomial of degree
    len(coefs), so a K-node Gauss-Legendre rule is exact once 2K - 1 >= len(coefs) - 1.
    """

    def __init__(self, coefs):
        super().__init__()
        self.coefs = [float(c) for c in coefs]

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x[:, :1])

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.scale(x) * sum(c * v**p for p, c in enumerate(self.coefs))

    def cumulative(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """H for numpy x (n, p) and v broadcasting against (n, m)."""
        scale = np.exp(np.asarray(x, dtype=float)[:, :1])
        return scale * sum(c * v ** (p + 1) / (p + 1) for p, c in enumerate(self.coefs))


class WeibullHazard(nn.Module):
    """h(v | x) = exp(x[:, 0]) · k v^{k-1}, H = exp(x[:, 0]) · v^k (any shape k > 0)."""

    def __init__(self, shape: float):
        super().__init__()
        self.shape = float(shape)

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.exp(x[:, :1]) * self.shape * v ** (self.shape - 1)


@pytest.fixture
def polynomial_hazard():
    return PolynomialHazard


@pytest.fixture
def weibull_hazard():
    return WeibullHazard


@pytest.fixture(scope="session")
def tiny_synthetic(tmp_path_factory):
    """One seed of the Gompertz scenario, 300 subjects, through repro.qsurv.prepare."""
    out = tmp_path_factory.mktemp("tiny") / "gompertz.npz"
    cfg = PrepareConfig(
        dataset="gompertz",
        source="synthetic",
        seeds=(3,),
        n_samples=300,
        prediction_grid_points=30,
        truth_grid_points=12,
    )
    prepare(cfg, str(out))
    return out


@pytest.fixture
def tiny_split(tiny_synthetic):
    from repro.common.io import read_npz

    data = read_npz(tiny_synthetic)
    return {k: v[0] for k, v in data.items() if k != "seeds"}
