"""Metrics against naive references: Umeyama alignment written out with numpy, AbsRel by
hand, planted match logits; the splat of candidate weights; the .ply export read back."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import trimesh

from repro.r3_adapter.data import observed
from repro.r3_adapter.export import write_point_cloud
from repro.r3_adapter.metrics import correspondence_accuracy, depth_absrel, pointmap_epe
from repro.r3_adapter.relational import splat
from repro.r3_adapter.scenes import SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return observed(make_scenes(SceneConfig(grid=5), 4, rng), 0, LowLight(), rng)


def _umeyama_epe(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Distances after the least-squares similarity pred -> truth (Umeyama 1991)."""
    mp, mt = pred.mean(0), truth.mean(0)
    P, T = pred - mp, truth - mt
    U, S, Vt = np.linalg.svd(T.T @ P / len(P))
    D = np.diag([1, 1, np.sign(np.linalg.det(U @ Vt))])
    R = U @ D @ Vt
    s = np.trace(np.diag(S) @ D) / (P**2).sum(1).mean()
    return np.linalg.norm(s * P @ R.T + mt - truth, axis=1)


def test_epe_is_zero_for_a_similarity_and_matches_umeyama_otherwise(data):
    truth = data.scenes.points2
    angle = torch.tensor(0.4)
    R = torch.tensor([[angle.cos(), -angle.sin(), 0], [angle.sin(), angle.cos(), 0], [0, 0, 1]])
    moved = 1.7 * truth @ R.T + torch.tensor([0.3, -1.0, 2.0])
    assert pointmap_epe(moved, data) < 1e-4
    noisy = moved + 0.2 * torch.randn(truth.shape, generator=torch.Generator().manual_seed(0))
    seen = data.scenes.covisible.numpy()
    want = np.concatenate(
        [_umeyama_epe(noisy[b].numpy()[seen[b]], truth[b].numpy()[seen[b]]) for b in range(4)]
    ).mean()
    assert pointmap_epe(noisy, data) == pytest.approx(want, rel=1e-4)


def test_absrel_ignores_a_global_scale_and_measures_relative_depth_error(data):
    s = data.scenes
    cam2 = s.points2 @ s.rotation.transpose(1, 2) + s.translation[:, None]
    back = lambda c: (c - s.translation[:, None]) @ s.rotation  # noqa: E731 (view 2 -> view 1)
    assert depth_absrel(back(2.0 * cam2), data) < 1e-5
    factor = torch.ones_like(cam2[..., 2])
    factor[:, ::2] = 1.1  # every other patch 10 % too deep: after median scaling, by hand
    pred = back(cam2 * factor[..., None])
    seen = s.covisible.numpy()
    d = cam2[..., 2].numpy() * factor.numpy()
    t = s.depth2.numpy()
    want = []
    for b in range(4):
        scale = np.median(t[b][seen[b]]) / np.median(d[b][seen[b]])
        want.append(np.abs(d[b] * scale - t[b])[seen[b]] / t[b][seen[b]])
    assert depth_absrel(pred, data) == pytest.approx(np.concatenate(want).mean(), rel=1e-4)


def test_correspondence_accuracy_counts_covisible_hits_only(data):
    match = data.scenes.match
    N = match.shape[1]
    logits = torch.zeros(4, N, N + 1)
    target = torch.where(match >= 0, match, N)
    logits.scatter_(2, target[..., None], 1.0)
    assert correspondence_accuracy(logits, data) == 1.0
    seen = data.scenes.covisible
    first = seen.nonzero()[:5]  # five co-visible patches predicted as holes
    logits[first[:, 0], first[:, 1]] = 0
    logits[first[:, 0], first[:, 1], N] = 1.0
    assert correspondence_accuracy(logits, data) == pytest.approx(1 - 5 / seen.sum().item())


def test_splat_spreads_weights_bilinearly_onto_the_grid():
    positions = torch.tensor([[[[1.0, 2.0], [0.25, 0.5], [9.0, -3.0]]]])
    weights = torch.tensor([[[0.5, 0.3, 0.2]]])
    out = splat(weights, positions, (3, 4))[0, 0]
    want = torch.zeros(12)
    want[2 * 4 + 1] += 0.5
    for (r, c), share in {(0, 0): 0.375, (0, 1): 0.125, (1, 0): 0.375, (1, 1): 0.125}.items():
        want[r * 4 + c] += 0.3 * share
    want[0 * 4 + 3] += 0.2  # clamped to the top-right corner
    torch.testing.assert_close(out, want)


def test_point_cloud_export_reads_back(tmp_path):
    view1 = np.random.default_rng(0).normal(size=(6, 3))
    truth = np.random.default_rng(1).normal(size=(6, 3))
    pred = truth.copy()
    pred[1] += [1.0, 0, 0]
    covisible = np.array([True, True, False, True, False, True])
    write_point_cloud(str(tmp_path / "cloud.ply"), view1, pred, truth, covisible)
    cloud = trimesh.load(tmp_path / "cloud.ply")
    np.testing.assert_allclose(cloud.vertices, np.concatenate([view1, pred[covisible]]))
    colours = np.asarray(cloud.colors)
    assert (colours[:6, :3] == 150).all()
    assert tuple(colours[6, :3]) == (40, 180, 60) and tuple(colours[7, :3]) == (220, 40, 40)


def test_dustbin_free_accuracy_ignores_the_dustbin(data):
    from repro.r3_adapter.metrics import dustbin_free_accuracy

    match = data.scenes.match
    N = match.shape[1]
    logits = torch.zeros(len(match), N, N + 1)
    logits.scatter_(2, match.clamp(min=0)[..., None], 1.0)  # the truth scores 1
    logits[..., N] = 5.0  # ... but the dustbin wins every argmax
    assert correspondence_accuracy(logits, data) == 0.0
    assert dustbin_free_accuracy(logits, data) == 1.0


def _naive_consensus(obs1, obs2, grid):
    from repro.r3_adapter.reference import standardise

    a, b = standardise(obs1)[0].numpy(), standardise(obs2)[0].numpy()
    out = np.zeros((grid * grid, grid * grid))
    for q in range(grid * grid):
        for k in range(grid * grid):
            (qy, qx), (ky, kx) = divmod(q, grid), divmod(k, grid)
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    y2, x2, y1, x1 = qy + dy, qx + dx, ky + dy, kx + dx
                    if all(0 <= v < grid for v in (y2, x2, y1, x1)):
                        out[q, k] += b[y2 * grid + x2] @ a[y1 * grid + x1]
    return out


def test_neighbourhood_consensus_equals_a_naive_loop_and_matches_clean_scenes():
    from repro.r3_adapter.reference import consensus_accuracy, consensus_scores

    rng = np.random.default_rng(1)
    clean = observed(make_scenes(SceneConfig(grid=4), 3, rng), 0, LowLight(), rng)
    got = consensus_scores(clean.obs1, clean.obs2, 4)[0].numpy()
    np.testing.assert_allclose(got, _naive_consensus(clean.obs1, clean.obs2, 4), atol=1e-5)
    scenes = make_scenes(SceneConfig(grid=6), 64, rng)
    s = scenes
    accuracy = {
        k: consensus_accuracy(*observed(s, k, LowLight(), rng).inputs()[::2], s.match, 6)
        for k in (0, 3)
    }
    assert accuracy[0] > 0.95 and accuracy[3] < accuracy[0]
