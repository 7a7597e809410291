"""Tiny simulated data shared by the ST-reliability unit tests."""

import pytest

from repro.st_reliability.data import assign_split
from repro.st_reliability.simulate import SimConfig, simulate

# 3 families × 4 perturbations in 2 lines over 60 genes: seconds, not minutes
TINY = SimConfig(
    n_genes=60,
    n_lines=2,
    n_families=3,
    perts_per_family=4,
    n_control=80,
    cells_per_pert=24,
    stress_gains=(1.0, 0.7),
    family_genes=8,
)


@pytest.fixture
def tiny_cells():
    adata, planted = simulate(TINY, seed=3)
    assign_split(adata, holdout_fraction=0.3, c4_families=2, seed=3)
    return adata, planted
