"""The linear world and its gradient-descent training against torch's autograd."""

import numpy as np
import pytest
import torch

from repro.malora.linear import LinearWorld, _softmax_grad, task_rows, train_lora
from tests.malora.malora_helpers import SMALL


def test_tasks_are_orthogonal_at_zero_overlap_and_overlap_at_positive():
    world = LinearWorld(SMALL, 3)
    a = world.sample(1, 5, 0.3, 0.0, "train").x
    b = world.sample(2, 5, 0.3, 0.0, "train").x
    assert np.abs(a @ b.T).max() < 1e-10
    a6 = world.sample(1, 5, 0.3, 0.6, "train").x
    b6 = world.sample(2, 5, 0.3, 0.6, "train").x
    assert np.abs(a6 @ b6.T).max() > 0.1
    # the mix is an isometry of the latent: same norms at every overlap
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), np.linalg.norm(a6, axis=1))


def test_streams_are_independent_and_reproducible():
    world = LinearWorld(SMALL, 3)
    first = world.sample(1, 4, 0.3, 0.0, "train").x
    np.testing.assert_array_equal(first, LinearWorld(SMALL, 3).sample(1, 4, 0.3, 0.0, "train").x)
    assert not np.allclose(first, world.sample(1, 4, 0.3, 0.0, "calib").x)


def test_softmax_gradient_matches_autograd():
    rng = np.random.default_rng(0)
    logits, y = rng.normal(size=(9, 4)), rng.integers(0, 4, 9)
    loss, grad = _softmax_grad(logits, y)
    t = torch.tensor(logits, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(t, torch.tensor(y))
    ref.backward()
    assert loss == pytest.approx(float(ref.detach()))
    np.testing.assert_allclose(grad, t.grad.numpy(), atol=1e-12)


def test_lora_training_steps_match_autograd(orthogonal_toy):
    """Three steps of our hand-written descent against torch on the same objective."""
    world, train, base, _ = orthogonal_toy
    data, lam = train[1], 0.01
    run = train_lora(data, base, SMALL, rank=2, lam=lam, steps=3, seed=5, converge=False)
    rows = task_rows(1, SMALL.classes_per_task)
    rng = np.random.default_rng([5, 1, 7])
    _, sv, vt = np.linalg.svd(data.x, full_matrices=False)
    span = vt[sv > 1e-9 * sv.max()]
    a = torch.tensor(0.01 * rng.standard_normal((2, len(span))) @ span, requires_grad=True)
    b = torch.zeros((SMALL.classes_per_task, 2), dtype=torch.float64, requires_grad=True)
    x, w0 = torch.tensor(data.x), torch.tensor(base[rows])
    target = torch.tensor(data.y - rows.start)
    lr = 1.0 / float(np.linalg.eigvalsh(data.x.T @ data.x / len(data.x)).max())
    for _ in range(3):
        obj = torch.nn.functional.cross_entropy(x @ (w0 + b @ a).T, target)
        obj = obj + 0.5 * lam * (a.square().sum() + b.square().sum())
        ga, gb = torch.autograd.grad(obj, [a, b])
        with torch.no_grad():
            a -= lr * ga
            b -= lr * gb
    np.testing.assert_allclose(run.delta[rows], (b @ a).detach().numpy(), atol=1e-12)


def test_adapters_stay_on_their_rows_with_zero_sum_and_rank_r(orthogonal_toy):
    _, _, base, deltas = orthogonal_toy
    for t, d in enumerate(deltas, start=1):
        rows = task_rows(t, SMALL.classes_per_task)
        outside = np.delete(d, np.arange(rows.start, rows.stop), axis=0)
        assert np.abs(outside).max() == 0
        np.testing.assert_allclose(d[rows].sum(axis=0), 0, atol=1e-10)
        assert np.linalg.matrix_rank(d, tol=1e-8) <= 2
    # the base never touches a fine-tuning task's inputs at zero overlap
    assert np.abs(base[SMALL.classes_per_task :]).max() == 0


def test_too_small_a_space_is_refused():
    with pytest.raises(ValueError, match="cannot hold"):
        type(SMALL)(dim=20, subspace_dim=8, n_tasks=2)
