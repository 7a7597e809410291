"""Two-view scenes with exact correspondences and pointmaps (brief §6, "Scene generator").

View 1 is an RGB-D reference: a smooth random depth map on an h×w patch grid, back-projected
through a pinhole camera (kornia). Every view-1 point carries an i.i.d. texture descriptor
that is *not* a function of its position, so view 2's geometry can only come through
correspondence. View 2 is a random nearby camera: each view-2 patch takes the nearest
(z-buffered) view-1 point that projects into it; patches no point reaches are holes with
fresh, non-corresponding texture. Tokens are row-major (index = row * w + col) and a patch
centre sits at the integer pixel (col, row).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

NO_MATCH = -1


@dataclasses.dataclass(frozen=True)
class SceneConfig:
    grid: int = 8  # patches per side (h = w)
    channels: int = 8  # texture descriptor size
    mean_depth: float = 4.0
    waves: int = 3  # sinusoids in the depth map
    amplitude: float = 0.3  # of each sinusoid
    max_rotation: float = 0.15  # rad
    max_translation: tuple[float, float, float] = (0.8, 0.8, 0.3)
    # a fraction of the pairs gets an extra sideways camera move that shifts the image by
    # large_motion_flow patches at the mean depth, so that the true match lies beyond a 3×3
    # stencil around the query and only retrieval can reach it
    large_motion_fraction: float = 0.0
    large_motion_flow: float = 3.0

    def __post_init__(self):  # config files give lists
        object.__setattr__(self, "max_translation", tuple(self.max_translation))
        if not 0 <= self.large_motion_fraction <= 1:
            raise ValueError("large_motion_fraction must be in [0, 1]")

    @property
    def tokens(self) -> int:
        return self.grid * self.grid


@dataclasses.dataclass
class Scenes:
    """A batch of B scenes with N = grid² tokens per view."""

    texture1: torch.Tensor  # (B, N, C) view-1 descriptors (clean)
    texture2: torch.Tensor  # (B, N, C) view-2 descriptors (clean)
    xyz1: torch.Tensor  # (B, N, 3) view-1 points in view-1's frame (the depth sensor)
    match: torch.Tensor  # (B, N) long: view-1 token of each view-2 patch, NO_MATCH for holes
    points2: torch.Tensor  # (B, N, 3) view-2 pointmap in view-1's frame (0 at holes)
    depth2: torch.Tensor  # (B, N) view-2 depth in view-2's frame (0 at holes)
    rotation: torch.Tensor  # (B, 3, 3) view 1 -> view 2
    translation: torch.Tensor  # (B, 3)
    intrinsics: torch.Tensor  # (3, 3), shared by both views

    @property
    def covisible(self) -> torch.Tensor:
        return self.match != NO_MATCH

    def subset(self, index) -> Scenes:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return Scenes(**{k: v if k == "intrinsics" else v[index] for k, v in fields.items()})

    def arrays(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name).numpy() for f in dataclasses.fields(self)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Scenes:
        return cls(**{f.name: torch.from_numpy(arrays[f.name]) for f in dataclasses.fields(cls)})


def intrinsics(grid: int) -> torch.Tensor:
    """A pinhole camera with focal length = grid (about 53° field of view), centred."""
    c = (grid - 1) / 2
    return torch.tensor([[grid, 0.0, c], [0.0, grid, c], [0.0, 0.0, 1.0]])


def random_depth(cfg: SceneConfig, n: int, rng: np.random.Generator) -> torch.Tensor:
    """(n, h, w) smooth depth: mean_depth plus a few random sinusoids."""
    v, u = np.meshgrid(np.arange(cfg.grid), np.arange(cfg.grid), indexing="ij")
    freq = rng.uniform(0.5, 2.0, size=(n, cfg.waves, 2)) * 2 * np.pi / cfg.grid
    phase = rng.uniform(0, 2 * np.pi, size=(n, cfg.waves, 1, 1))
    arg = freq[..., 0, None, None] * u + freq[..., 1, None, None] * v + phase
    depth = cfg.mean_depth + cfg.amplitude * np.sin(arg).sum(axis=1)
    return torch.from_numpy(depth.astype(np.float32))


def random_pose(cfg: SceneConfig, n: int, rng: np.random.Generator):
    """Rotation angle ≤ max_rotation about a random axis; translation in the box."""
    from kornia.geometry.conversions import axis_angle_to_rotation_matrix  # see make_scenes

    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    angle = rng.uniform(0, cfg.max_rotation, size=(n, 1))
    rotation = axis_angle_to_rotation_matrix(torch.from_numpy((axis * angle).astype(np.float32)))
    box = np.asarray(cfg.max_translation)
    translation = rng.uniform(-box, box, size=(n, 3))
    if cfg.large_motion_fraction > 0:  # no extra draws otherwise: older scene sets reproduce
        large = rng.uniform(size=n) < cfg.large_motion_fraction
        direction = rng.uniform(0, 2 * np.pi, size=n)
        # image flow ≈ focal · t / depth with focal = grid (see intrinsics)
        length = cfg.large_motion_flow * cfg.mean_depth / cfg.grid
        sideways = length * np.stack([np.cos(direction), np.sin(direction)], axis=1)
        translation[:, :2] += large[:, None] * sideways
    return rotation, torch.from_numpy(translation.astype(np.float32))


def zbuffer(cells: torch.Tensor, depth: torch.Tensor, valid: torch.Tensor, n_cells: int):
    """Per scene and cell, the nearest valid point landing there (NO_MATCH when none).

    cells, depth, valid: (B, P). Ties in depth go to the lower point index.
    """
    B, P = cells.shape
    order = torch.argsort(torch.where(valid, depth, torch.inf), dim=1, stable=True)
    rank = torch.argsort(order, dim=1)  # 0 = nearest point of the scene
    best = torch.full((B, n_cells + 1), P, dtype=torch.long)  # bin n_cells collects invalid
    best.scatter_reduce_(1, torch.where(valid, cells, n_cells), rank, reduce="amin")
    best = best[:, :n_cells]
    owner = order.gather(1, best.clamp(max=P - 1))
    return torch.where(best < P, owner, NO_MATCH)


def make_scenes(cfg: SceneConfig, n: int, rng: np.random.Generator) -> Scenes:
    """``n`` two-view scenes drawn from ``rng``."""
    # kornia is imported here, not at the top: adaptation and evaluation jobs read stored
    # scenes and need only the Scenes container
    from kornia.geometry.camera.perspective import project_points
    from kornia.geometry.depth import depth_to_3d_v2

    G, N, C = cfg.grid, cfg.tokens, cfg.channels
    K = intrinsics(G)
    xyz1 = depth_to_3d_v2(random_depth(cfg, n, rng), K.expand(n, 3, 3)).reshape(n, N, 3)
    rotation, translation = random_pose(cfg, n, rng)
    in2 = xyz1 @ rotation.transpose(1, 2) + translation[:, None]  # view-2 camera frame
    uv = project_points(in2, K.expand(n, N, 3, 3))
    col, row = uv.round().long().unbind(-1)
    valid = (in2[..., 2] > 0) & (col >= 0) & (col < G) & (row >= 0) & (row < G)
    cells = (row * G + col).clamp(0, N - 1)
    match = zbuffer(cells, in2[..., 2], valid, N)
    texture1 = torch.from_numpy(rng.normal(size=(n, N, C)).astype(np.float32))
    fresh = torch.from_numpy(rng.normal(size=(n, N, C)).astype(np.float32))
    seen = match != NO_MATCH
    source = match.clamp(min=0)
    texture2 = torch.where(
        seen[..., None], texture1.gather(1, source[..., None].expand(-1, -1, C)), fresh
    )
    points2 = torch.where(seen[..., None], xyz1.gather(1, source[..., None].expand(-1, -1, 3)), 0.0)
    depth2 = torch.where(seen, in2[..., 2].gather(1, source), 0.0)
    return Scenes(texture1, texture2, xyz1, match, points2, depth2, rotation, translation, K)
