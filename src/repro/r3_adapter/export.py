"""A reconstructed two-view point cloud as a .ply a user can open (trimesh)."""

from __future__ import annotations

import numpy as np
import trimesh

VIEW1_COLOUR = (150, 150, 150, 255)


def error_colours(error: np.ndarray, worst: float = 0.5) -> np.ndarray:
    """Green (exact) to red (``worst`` or more), RGBA uint8."""
    t = np.clip(np.asarray(error) / worst, 0.0, 1.0)[:, None]
    rgb = (1 - t) * np.array([40, 180, 60]) + t * np.array([220, 40, 40])
    return np.concatenate([rgb, np.full_like(t, 255)], axis=1).astype(np.uint8)


def write_point_cloud(
    path: str, view1: np.ndarray, view2: np.ndarray, view2_truth: np.ndarray, covisible
) -> None:
    """View 1's points (grey) and view 2's co-visible predicted points coloured by error."""
    covisible = np.asarray(covisible, dtype=bool)
    predicted = np.asarray(view2)[covisible]
    error = np.linalg.norm(predicted - np.asarray(view2_truth)[covisible], axis=1)
    vertices = np.concatenate([np.asarray(view1), predicted])
    colours = np.concatenate([np.tile(VIEW1_COLOUR, (len(view1), 1)), error_colours(error)])
    trimesh.PointCloud(vertices, colors=colours.astype(np.uint8)).export(path)
