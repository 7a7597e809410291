"""The training loss and the attention rows the diagnostics read, against naive loops on
hand-made tensors (co-visible patches, holes and both views all differ)."""

import math
import types

import numpy as np
import pytest
import torch

from repro.r3_adapter.evaluate import _view2_rows
from repro.r3_adapter.losses import task_loss


def test_task_loss_equals_a_naive_loop_over_covisible_patches_and_matches():
    """Point error: mean Euclidean distance over the co-visible patches only (5 of 8, the
    others far off); match: mean cross-entropy over every view-2 patch, holes (−1) as the
    dustbin class N."""
    g = torch.Generator().manual_seed(0)
    b, n = 2, 4
    points2 = torch.randn(b, n, 3, generator=g, dtype=torch.float64)
    covisible = torch.tensor([[True, False, True, True], [False, True, True, False]])
    points = points2 + 0.1 * torch.randn(b, n, 3, generator=g, dtype=torch.float64)
    points[~covisible] += 50.0  # not co-visible: must not count
    match = torch.tensor([[2, -1, 0, 1], [-1, 3, 3, 0]])
    logits = torch.randn(b, n, n + 1, generator=g, dtype=torch.float64)
    data = types.SimpleNamespace(
        scenes=types.SimpleNamespace(covisible=covisible, points2=points2, match=match)
    )
    distances, entropies = [], []
    for i in range(b):
        for j in range(n):
            if covisible[i, j]:
                distances.append(math.dist(points[i, j].tolist(), points2[i, j].tolist()))
            target = n if match[i, j] < 0 else int(match[i, j])
            z = logits[i, j].tolist()
            entropies.append(math.log(sum(math.exp(v) for v in z)) - z[target])
    expected = np.mean(distances) + 0.7 * np.mean(entropies)
    loss = task_loss({"points": points, "match": logits}, data, match_weight=0.7)
    assert float(loss) == pytest.approx(expected, rel=1e-12)


def test_view2_rows_are_the_second_half_of_the_batch_averaged_over_heads():
    """The model stacks view 1 then view 2 on the batch: rows batch.. are view 2's queries."""
    g = torch.Generator().manual_seed(1)
    batch, heads, n = 3, 2, 4
    probabilities = torch.rand(2 * batch, heads, n, n, generator=g)
    rows = _view2_rows(probabilities, batch)
    for b in range(batch):
        expected = sum(probabilities[batch + b, h] for h in range(heads)) / heads
        torch.testing.assert_close(rows[b], expected)


def test_task_loss_with_one_covisible_patch_and_the_default_match_weight():
    """One co-visible patch: the point term is its own distance (3-4-5); the match term
    counts once (match_weight 1 by default): uniform logits over N + 1 = 3 classes, log 3."""
    points2 = torch.zeros(1, 2, 3, dtype=torch.float64)
    points = torch.tensor([[[3.0, 4.0, 0.0], [9.0, 9.0, 9.0]]], dtype=torch.float64)
    data = types.SimpleNamespace(
        scenes=types.SimpleNamespace(
            covisible=torch.tensor([[True, False]]), points2=points2, match=torch.tensor([[1, -1]])
        )
    )
    logits = torch.zeros(1, 2, 3, dtype=torch.float64)
    loss = task_loss({"points": points, "match": logits}, data)
    assert float(loss) == pytest.approx(5.0 + math.log(3), rel=1e-12)
