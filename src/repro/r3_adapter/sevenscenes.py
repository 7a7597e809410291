"""Full scale: 7-Scenes RGB-D sequences as two-view pairs with ground truth, and a raw-noise
low-light model for real images.

Microsoft's 7-Scenes archives hold one zip per sequence (``<scene>/seq-XX.zip``) with
``frame-NNNNNN.color.png`` (640×480 RGB), ``.depth.png`` (uint16 millimetres, 65535 =
invalid) and ``.pose.txt`` (camera-to-world 4×4). The raw Kinect depth is in the *depth*
camera (f = 585), not registered to the colour image; ``register_depth`` maps it into the
colour camera (f = 525) with the Kinect depth→RGB calibration, as the relocalisation
benchmarks' setup scripts do (DSAC*, visloc_pseudo_gt_limitations), and every pair uses the
colour camera's intrinsics. A pair is two frames ``frame_gap`` apart of one sequence,
resized to the backbone's resolution (depth by nearest neighbour) and labelled with its
sequence, so that few-shot, validation and test pairs come from different sequences; its
ground truth (pointmaps in view 1's frame, patch correspondences) is computed from depths and
poses when a batch is loaded (``pair_targets``), with the same kornia camera functions as the
embedded scenes.
"""

from __future__ import annotations

import dataclasses
import io
import re
import zipfile
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import torch
import torch.nn.functional as F

INTRINSICS_SIZE = (480, 640)  # the size the calibration below is given at
DEPTH_FOCAL, RGB_FOCAL = 585.0, 525.0  # pixels at 640×480; principal points at the centre
# Kinect depth camera -> colour camera (the LIRIS calibration the benchmarks' setup uses)
DEPTH_TO_RGB = np.array(
    [
        [9.9996518012567637e-01, 2.6765126468950343e-03, -7.9041012313000904e-03,
         -2.5558943178152542e-02],
        [-2.7409311281316700e-03, 9.9996302803027592e-01, -8.1504520778013286e-03,
         1.0109636268061706e-04],
        [7.8819942130445332e-03, 8.1718328771890631e-03, 9.9993554558014031e-01,
         2.0318321729487039e-03],
        [0.0, 0.0, 0.0, 1.0],
    ]
)  # fmt: skip


def camera(focal: float, size: tuple[int, int]) -> np.ndarray:
    """Intrinsics of a camera calibrated at 640×480, at ``size`` = (height, width); pixel
    centres at integer coordinates, principal point at the image centre."""
    h, w = size
    f = focal * w / INTRINSICS_SIZE[1]
    return np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])


def register_depth(depth: np.ndarray) -> np.ndarray:
    """Raw depth-camera depth (metres, 0 = invalid) -> depth in the colour camera's pixels
    (z-buffered: the nearest point wins; 0 where no point lands)."""
    h, w = depth.shape
    rows, cols = np.nonzero(depth > 0)
    z = depth[rows, cols].astype(np.float64)
    K_d, K_rgb = camera(DEPTH_FOCAL, (h, w)), camera(RGB_FOCAL, (h, w))
    points = np.stack([(cols - K_d[0, 2]) / K_d[0, 0] * z, (rows - K_d[1, 2]) / K_d[1, 1] * z, z])
    points = DEPTH_TO_RGB[:3, :3] @ points + DEPTH_TO_RGB[:3, 3:]
    u = np.round(points[0] / points[2] * K_rgb[0, 0] + K_rgb[0, 2]).astype(int)
    v = np.round(points[1] / points[2] * K_rgb[1, 1] + K_rgb[1, 2]).astype(int)
    keep = (points[2] > 0) & (u >= 0) & (u < w) & (v >= 0) & (v < h)
    out = np.full((h, w), np.inf)
    np.minimum.at(out, (v[keep], u[keep]), points[2][keep])
    return np.where(np.isfinite(out), out, 0.0).astype(np.float32)


FRAME = re.compile(r"frame-(\d+)\.color\.png$")


def _png(data: bytes) -> np.ndarray:
    return mpimg.imread(io.BytesIO(data), format="png")


def read_frames(archive: str) -> dict[str, list[dict]]:
    """Every sequence of a scene archive: frames in order as {color, depth (m), pose}."""
    sequences = {}
    with zipfile.ZipFile(archive) as outer:
        for name in sorted(n for n in outer.namelist() if re.search(r"seq-\d+\.zip$", n)):
            with zipfile.ZipFile(io.BytesIO(outer.read(name))) as inner:
                names = set(inner.namelist())
                frames = []
                for member in sorted(n for n in names if FRAME.search(n)):
                    stem = member[: -len(".color.png")]
                    raw = np.round(_png(inner.read(f"{stem}.depth.png")) * 65535)
                    depth = np.where(raw == 65535, 0, raw / 1000).astype(np.float32)
                    frames.append(
                        {
                            "color": np.round(_png(inner.read(member))[..., :3] * 255).astype(
                                np.uint8
                            ),
                            "depth": register_depth(depth),
                            "pose": np.loadtxt(io.BytesIO(inner.read(f"{stem}.pose.txt"))),
                        }
                    )
            if not frames:
                raise ValueError(f"{archive}:{name} has no frame-*.color.png")
            sequences[name.rsplit("/", 1)[-1][: -len(".zip")]] = frames
    if not sequences:
        raise ValueError(f"{archive}: no seq-XX.zip inside; is this a 7-Scenes scene archive?")
    return sequences


def _resize(image: np.ndarray, size: tuple[int, int], mode: str) -> np.ndarray:
    t = torch.from_numpy(np.ascontiguousarray(image, dtype=np.float32))
    t = t[None, None] if t.ndim == 2 else t.permute(2, 0, 1)[None]
    out = F.interpolate(
        t, size=size, mode=mode, **({} if mode == "nearest" else {"antialias": True})
    )
    out = out[0, 0] if image.ndim == 2 else out[0].permute(1, 2, 0)
    return out.numpy()


def make_pairs(
    archives: list[str], resolution: tuple[int, int], pairs: int, frame_gap: int, seed: int = 0
) -> dict[str, np.ndarray]:
    """``pairs`` pairs per archive (drawn over its sequences), resized; ``sequence`` names
    each pair's ``<archive stem>/seq-XX``."""
    rng = np.random.default_rng(seed)
    keys = ("image1", "image2", "depth1", "depth2", "T21", "sequence")
    out: dict[str, list] = {k: [] for k in keys}
    H, W = resolution
    for archive in archives:
        stem = Path(archive).name.split(".")[0]
        candidates = [
            (frames[i], frames[i + frame_gap], f"{stem}/{name}")
            for name, frames in read_frames(archive).items()
            for i in range(len(frames) - frame_gap)
        ]
        if not candidates:
            raise ValueError(f"{archive}: no two frames {frame_gap} apart")
        for j in rng.choice(len(candidates), size=min(pairs, len(candidates)), replace=False):
            a, b, sequence = candidates[j]
            out["sequence"].append(sequence)
            out["image1"].append(_resize(a["color"], (H, W), "bilinear").round().astype(np.uint8))
            out["image2"].append(_resize(b["color"], (H, W), "bilinear").round().astype(np.uint8))
            out["depth1"].append(_resize(a["depth"], (H, W), "nearest"))
            out["depth2"].append(_resize(b["depth"], (H, W), "nearest"))
            out["T21"].append(np.linalg.inv(b["pose"]) @ a["pose"])  # view-1 cam -> view-2 cam
    K = camera(RGB_FOCAL, (H, W))
    return {k: np.stack(v) for k, v in out.items()} | {"K": K.astype(np.float32)}


def pair_targets(depth1, depth2, K, T21, patch: int, tolerance: float = 0.05) -> dict:
    """Ground truth of a batch of pairs (torch, B×H×W depths, B×4×4 poses).

    points1: view 1's pointmap; points2: view 2's pointmap in view 1's frame; valid1/2;
    depth2; match: for each view-2 patch centre, the view-1 patch it reprojects into when
    the view-1 depth there agrees within ``tolerance`` (relative), else -1.
    """
    from kornia.geometry.camera.perspective import project_points
    from kornia.geometry.depth import depth_to_3d_v2

    B, H, W = depth1.shape
    Kb = K.expand(B, 3, 3)
    points1 = depth_to_3d_v2(depth1, Kb)
    cam2 = depth_to_3d_v2(depth2, Kb)
    T12 = torch.linalg.inv(T21)
    points2 = cam2 @ T12[:, None, :3, :3].transpose(-1, -2) + T12[:, None, None, :3, 3]
    centres = cam2[:, patch // 2 :: patch, patch // 2 :: patch]  # (B, h, w, 3)
    h, w = H // patch, W // patch
    centres = centres[:, :h, :w].reshape(B, -1, 3)
    in1 = centres @ T12[:, :3, :3].transpose(1, 2) + T12[:, None, :3, 3]
    uv = project_points(in1, Kb[:, None].expand(B, h * w, 3, 3))
    col, row = uv[..., 0].floor().long(), uv[..., 1].floor().long()
    inside = (in1[..., 2] > 0) & (col >= 0) & (col < W) & (row >= 0) & (row < H)
    seen = depth1[torch.arange(B)[:, None], row.clamp(0, H - 1), col.clamp(0, W - 1)]
    agree = (seen - in1[..., 2]).abs() < tolerance * in1[..., 2]
    valid_centre = centres[..., 2] > 0
    match = (row // patch).clamp(max=h - 1) * w + (col // patch).clamp(max=w - 1)
    match = torch.where(inside & agree & valid_centre & (seen > 0), match, -1)
    return {
        "points1": points1,
        "points2": points2,
        "valid1": depth1 > 0,
        "valid2": depth2 > 0,
        "depth2": depth2,
        "match": match,
    }


@dataclasses.dataclass(frozen=True)
class RawLowLight:
    """Low light on real images (Dark3R-style): linearise, scale by the gain, shot noise with
    ``photons`` at full scale, Gaussian read noise, then back to display gamma."""

    gain: tuple[float, ...] = (0.25, 0.1, 0.05)
    photons: tuple[float, ...] = (400.0, 200.0, 100.0)
    read_noise: tuple[float, ...] = (0.005, 0.01, 0.02)

    def __post_init__(self):
        for field in ("gain", "photons", "read_noise"):
            object.__setattr__(self, field, tuple(getattr(self, field)))

    def apply(self, rgb: torch.Tensor, severity: int, generator: torch.Generator) -> torch.Tensor:
        """``rgb`` in [0, 1]; severity 0 returns it unchanged."""
        if severity == 0:
            return rgb
        k = severity - 1
        linear = rgb.clamp(0, 1) ** 2.2 * self.gain[k]
        shot = torch.poisson(linear * self.photons[k], generator=generator) / self.photons[k]
        noisy = shot + self.read_noise[k] * torch.randn(rgb.shape, generator=generator)
        return noisy.clamp(0, 1) ** (1 / 2.2)
