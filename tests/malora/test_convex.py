"""The linear adapters reach the optimum of their convex problem: L-BFGS on the LoRA factors
against cvxpy's solution of CE + λ‖W‖_*, and the duality gap as a bound on the distance."""

import numpy as np
import pytest

from repro.malora.convex import duality_gap, objective
from repro.malora.linear import LinearWorld, task_rows, train_base, train_lora
from tests.malora.malora_helpers import SMALL

TOLERANCE = 1e-4  # the pipeline's check (papers.malora.linear.tolerance)


def _cvxpy_optimum(z, offset, local_y, lam):
    import cvxpy as cp

    k = int(local_y.max()) + 1
    w = cp.Variable((k, z.shape[1]))
    scores = offset + z @ w.T
    onehot = np.eye(k)[local_y]
    ce = cp.sum(cp.log_sum_exp(scores, axis=1)) - cp.sum(cp.multiply(scores, onehot))
    problem = cp.Problem(cp.Minimize(ce / len(local_y) + lam * cp.normNuc(w)))
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    return objective(z, offset, local_y, w.value, lam)


def _task(overlap, seed=2):
    world = LinearWorld(SMALL, seed)
    pre = world.sample(0, SMALL.pretrain_per_class, 0.3, overlap, "train")
    data = world.sample(1, SMALL.per_class * 2, 0.3, overlap, "train")
    base = train_base(pre, SMALL, weight_decay=1e-3, steps=50).weight
    rows = task_rows(1, SMALL.classes_per_task)
    return data, base, rows, data.y - rows.start, data.x @ base[rows].T


@pytest.mark.parametrize(("overlap", "lam"), [(0.0, 1e-5), (0.0, 1e-3), (0.6, 1e-2), (0.6, 1e-1)])
def test_trained_adapter_reaches_the_convex_optimum(overlap, lam):
    data, base, rows, local, offset = _task(overlap)
    run = train_lora(data, base, SMALL, rank=2, lam=lam, steps=20, seed=1)
    best = _cvxpy_optimum(data.x, offset, local, lam)
    reached = objective(data.x, offset, local, run.delta[rows], lam)
    assert reached - best <= TOLERANCE
    assert run.final_objective == pytest.approx(reached, abs=1e-9)  # balanced factors
    # the certificate bounds the true distance and is itself within tolerance
    assert reached - best <= run.gap + 1e-7
    assert 0 <= run.gap <= TOLERANCE


def test_gap_bounds_the_distance_of_an_unconverged_adapter_and_flags_it():
    data, base, rows, local, offset = _task(0.0)
    lam = 1e-3
    early = train_lora(data, base, SMALL, rank=2, lam=lam, steps=30, seed=1, converge=False)
    best = _cvxpy_optimum(data.x, offset, local, lam)
    reached = objective(data.x, offset, local, early.delta[rows], lam)
    gap = duality_gap(data.x, offset, local, early.delta[rows], lam)
    assert reached - best > TOLERANCE  # 30 steps are far from the optimum ...
    assert gap >= reached - best - 1e-9  # ... and the gap says so


def test_too_low_a_rank_cannot_reach_the_convex_optimum():
    """Rank 1 < the optimum's rank 2: the factorised problem stops short, and the gap shows it."""
    data, base, rows, local, offset = _task(0.0)
    run = train_lora(data, base, SMALL, rank=1, lam=1e-3, steps=20, seed=1)
    assert run.gap > TOLERANCE


def test_base_is_certified_by_its_gradient():
    world = LinearWorld(SMALL, 0)
    pre = world.sample(0, SMALL.pretrain_per_class, 0.3, 0.0, "train")
    assert train_base(pre, SMALL, weight_decay=1e-3, steps=10).gap < 1e-10
