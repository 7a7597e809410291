"""JSON in and out: atomic writes, NumPy-aware, and a provenance block on every metrics file."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[3]


def to_jsonable(value: Any) -> Any:
    """Turn NumPy/torch scalars and arrays, dataclasses and paths into JSON types.

    NaN and infinities become ``None``: strict JSON has no spelling for them.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if type(value).__module__ == "torch" and hasattr(value, "detach"):  # a tensor
        return to_jsonable(value.detach().cpu().numpy())
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write JSON atomically: a reader never sees a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(to_jsonable(data), handle, indent=2, allow_nan=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON, naming the file in the error when it is truncated or corrupt."""
    try:
        with open(path) as handle:
            return json.load(handle)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err}); delete it and rerun") from err


def git_commit() -> str | None:
    """The checkout's commit (with ``-dirty`` when tracked files changed), or None."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit


class RunRecorder:
    """Measures a step (wall time, peak memory) and produces its provenance block.

    Use as ``with RunRecorder(config=cfg, device=dev) as run: ...`` and then
    ``run.provenance()``. torch is imported lazily: steps without it (downloads, reports)
    use this module too.
    """

    def __init__(self, *, config: Any, device: Any = "cpu", seed: Any = None):
        import torch

        self.config = config
        self.device = torch.device(device)
        self.seed = seed
        self._start = 0.0
        self.wall_time_s: float | None = None

    def __enter__(self) -> RunRecorder:
        import torch

        self.started_at = time.time()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_time_s = time.perf_counter() - self._start

    def provenance(self) -> dict[str, Any]:
        import torch

        wall = self.wall_time_s
        if wall is None:  # still inside the block
            wall = time.perf_counter() - self._start
        record = {
            "config": self.config,
            "seed": self.seed,
            "git_commit": git_commit(),
            "device": str(self.device),
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "platform": sys.platform,
            "started_at_unix": self.started_at,
            "wall_time_s": wall,
            # ru_maxrss is in KiB on Linux: the process's peak resident memory.
            "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
        if self.device.type == "cuda":
            record["gpu_peak_memory_mb"] = torch.cuda.max_memory_allocated(self.device) / 2**20
        return record


def write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    """Write a compressed .npz atomically (temporary name in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(handle, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Load every array of an .npz, naming the file when it is truncated or corrupt."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: cannot read ({err}); delete it and rerun the rule") from err
