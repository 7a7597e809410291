"""Files in and out: atomic JSON and .npz writes, NumPy-aware, with clear errors on bad files."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np


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


# What a plain open() makes under the usual umask: mkstemp's temporary files are 0600, and a
# rename keeps that, so a results folder shared with a group (a cluster's project space)
# would be unreadable to everyone but its writer.
RESULT_MODE = 0o644


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically: a reader never sees a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, RESULT_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# a paper's target asks for every file its rules make, so a deleted one is made again
REBUILD = "delete it and run the same snakemake command again (it is rebuilt)"


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write JSON atomically: a reader never sees a half-written file."""
    write_text(path, json.dumps(to_jsonable(data), indent=2, allow_nan=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON, naming the file in the error when it is truncated or corrupt."""
    try:
        with open(path) as handle:
            return json.load(handle)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err}); {REBUILD}") from err


def write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    """Write a compressed .npz atomically (temporary name in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(handle, **arrays)
        os.chmod(tmp, RESULT_MODE)
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
        raise ValueError(f"{path}: cannot read ({err}); {REBUILD}") from err
