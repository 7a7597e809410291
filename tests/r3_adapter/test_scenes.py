"""The scene generator: correspondences reproject exactly, the z-buffer keeps the nearest
point (against a naive loop), pointmaps and depths agree with the camera; the shift is the
brief's formula."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.r3_adapter.data import SplitConfig, domains, make_splits, split_from_arrays
from repro.r3_adapter.scenes import NO_MATCH, SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight, observe

CFG = SceneConfig(grid=6)


@pytest.fixture(scope="module")
def scenes():
    return make_scenes(CFG, 64, np.random.default_rng(0))


def _project(points_cam: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Pinhole projection written out by hand (not kornia): (…, 3) -> (…, 2) pixels."""
    return points_cam[..., :2] / points_cam[..., 2:] * K[[0, 1], [0, 1]] + K[:2, 2]


def test_view1_points_are_the_back_projected_depth(scenes):
    K = scenes.intrinsics.numpy()
    xyz = scenes.xyz1.numpy()
    rows, cols = np.divmod(np.arange(CFG.tokens), CFG.grid)
    pixels = np.broadcast_to(np.stack([cols, rows], -1), xyz[..., :2].shape)
    np.testing.assert_allclose(_project(xyz, K), pixels, atol=1e-4)


def test_correspondences_reproject_into_their_patch(scenes):
    K = scenes.intrinsics.numpy()
    R, t = scenes.rotation.numpy(), scenes.translation.numpy()
    seen = scenes.covisible.numpy()
    cam2 = np.einsum("bij,bnj->bni", R, scenes.points2.numpy()) + t[:, None]
    uv = _project(cam2, K)
    rows, cols = np.divmod(np.arange(CFG.tokens), CFG.grid)
    centre = np.broadcast_to(np.stack([cols, rows], -1), uv.shape)
    assert np.abs(uv - centre)[seen].max() <= 0.5 + 1e-5  # inside the patch it names
    np.testing.assert_allclose(scenes.depth2.numpy()[seen], cam2[..., 2][seen], rtol=1e-6)
    match = scenes.match.numpy()
    gathered = np.take_along_axis(scenes.xyz1.numpy(), np.maximum(match, 0)[..., None], 1)
    np.testing.assert_array_equal(scenes.points2.numpy()[seen], gathered[seen])
    tex = np.take_along_axis(scenes.texture1.numpy(), np.maximum(match, 0)[..., None], 1)
    np.testing.assert_array_equal(scenes.texture2.numpy()[seen], tex[seen])


def test_zbuffer_matches_a_naive_loop(scenes):
    K = scenes.intrinsics.numpy()
    R, t = scenes.rotation.numpy(), scenes.translation.numpy()
    G = CFG.grid
    for b in range(len(R)):
        cam2 = scenes.xyz1.numpy()[b] @ R[b].T + t[b]
        uv = _project(cam2, K)
        want = np.full(CFG.tokens, NO_MATCH)
        best = np.full(CFG.tokens, np.inf)
        for n in range(CFG.tokens):
            col, row = np.round(uv[n]).astype(int)
            if 0 <= col < G and 0 <= row < G and 0 < cam2[n, 2] < best[row * G + col]:
                best[row * G + col], want[row * G + col] = cam2[n, 2], n
        np.testing.assert_array_equal(scenes.match.numpy()[b], want)


def test_holes_have_fresh_texture_and_a_plausible_rate(scenes):
    holes = ~scenes.covisible
    assert 0.1 < holes.float().mean() < 0.45  # the brief's "~30 %"
    hole_tex = scenes.texture2[holes]
    dist = torch.cdist(hole_tex[None], scenes.texture1.reshape(1, -1, CFG.channels))[0]
    assert dist.min() > 1e-3  # never a copy of a view-1 descriptor


def test_low_light_is_the_brief_formula():
    shift = LowLight()
    texture = torch.randn(5, 7, 8)
    for severity in (1, 2, 3):
        got = observe(texture, severity, shift, np.random.default_rng(3))
        eps = torch.from_numpy(
            np.random.default_rng(3).normal(size=texture.shape).astype(np.float32)
        )
        g, sigma = shift.gain[severity - 1], shift.noise[severity - 1]
        cast = shift.cast(8)
        want = g * torch.einsum("ij,bnj->bni", cast, texture) - 0.5 + sigma * eps
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    clean = observe(texture, 0, shift, np.random.default_rng(3))
    torch.testing.assert_close(clean, texture + 0.1 * eps, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="severity"):
        observe(texture, 4, shift, np.random.default_rng(3))


def test_splits_share_test_geometry_across_domains():
    arrays = make_splits(CFG, LowLight(), SplitConfig(fewshot=8, validation=4, test=6), seed=0)
    assert domains(arrays) == ["clean", "severity1", "severity2", "severity3"]
    clean, dark = (split_from_arrays(arrays, f"test/{d}") for d in ("clean", "severity3"))
    torch.testing.assert_close(clean.scenes.points2, dark.scenes.points2)
    assert not torch.allclose(clean.obs2, dark.obs2)
    fewshot = split_from_arrays(arrays, "fewshot")
    assert len(fewshot) == 8 and not torch.allclose(fewshot.scenes.xyz1[:6], clean.scenes.xyz1)
    with pytest.raises(KeyError, match="no split"):
        split_from_arrays(arrays, "training")


def test_large_motion_moves_the_chosen_fraction_by_the_configured_flow():
    base = SceneConfig(grid=8, max_rotation=0.0, max_translation=(0.0, 0.0, 0.0))
    moved = SceneConfig(**{**base.__dict__, "large_motion_fraction": 0.5, "large_motion_flow": 3})
    s = make_scenes(moved, 400, np.random.default_rng(0))
    sideways = s.translation[:, :2].norm(dim=1)
    large = sideways > 0
    assert 0.4 < large.float().mean() < 0.6
    torch.testing.assert_close(sideways[large], torch.full_like(sideways[large], 1.5))
    # at the mean depth the image moves 3 patches: the true match of a co-visible patch
    cols = torch.arange(64) % 8
    rows = torch.arange(64) // 8
    k = s.match.clamp(min=0)
    flow = torch.stack([cols - cols[k], rows - rows[k]], dim=-1).float().norm(dim=-1)
    seen = s.covisible
    assert flow[large[:, None] & seen].mean() > 2.5 and flow[~large[:, None] & seen].max() == 0
    still = make_scenes(base, 5, np.random.default_rng(0))
    again = make_scenes(SceneConfig(**base.__dict__), 5, np.random.default_rng(0))
    torch.testing.assert_close(still.match, again.match)
