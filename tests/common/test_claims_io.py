"""repro.common.claims, repro.common.io, repro.common.provenance and repro.common.device.

* ``check``: every op's verdict at, above and below the threshold; NaN never passes.
* ``compare_methods``: the best baseline in both directions, difference and z by hand.
* ``write_json``: NaN -> null, NumPy/torch values, atomic (no .part left, a failing
  serialisation keeps the old file); ``read_json``/``read_npz`` name a truncated file.
* ``RunRecorder.provenance()`` fields; ``select_device`` and ``visible_gpu_count`` with
  the environment and a fake ``nvidia-smi`` set by monkeypatch.
"""

import math
import os
import re
import stat
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from repro.common import device as device_mod
from repro.common.claims import (
    CONTRADICTED,
    NOT_REPRODUCED,
    NOT_TESTED,
    REPRODUCED,
    check,
    compare_methods,
    not_tested,
)
from repro.common.io import read_json, read_npz, write_json, write_npz
from repro.common.provenance import RunRecorder


@pytest.mark.parametrize(
    "op,below,equal,above",
    [
        ("<=", True, True, False),
        ("<", True, False, False),
        (">=", False, True, True),
        (">", False, False, True),
    ],
)
def test_check_each_op(op, below, equal, above):
    for measured, held in ((0.9, below), (1.0, equal), (1.1, above)):
        claim = check("c", "text", measured, {"op": op, "threshold": 1.0, "description": "x"})
        assert claim.verdict == (REPRODUCED if held else CONTRADICTED), (op, measured)
        assert claim.measured == measured and claim.criterion == f"x {op} 1"


@pytest.mark.parametrize("op", ["<=", "<", ">=", ">"])
def test_check_nan_is_not_reproduced(op):
    for measured in (float("nan"), np.float32("nan"), None):
        claim = check("c", "t", measured, {"op": op, "threshold": 0.0})
        assert claim.verdict == NOT_REPRODUCED and "missing" in claim.details


def test_check_rejects_unknown_op():
    with pytest.raises(ValueError, match="op must be one of"):
        check("c", "t", 1.0, {"op": "==", "threshold": 1.0})


MEANS = {"ours": 0.70, "a": 0.72, "b": 0.65, "c": 0.69}
STDS = {"ours": 0.02, "a": 0.03, "b": 0.01, "c": 0.04}


def compare(lower_is_better, statistic, threshold=0.0, baselines=("a", "b", "c")):
    return compare_methods(
        "id",
        "claim",
        MEANS,
        STDS,
        method="ours",
        baselines=list(baselines),
        lower_is_better=lower_is_better,
        statistic=statistic,
        criterion={"op": "<=", "threshold": threshold},
    )


def test_compare_methods_higher_is_better():
    # best baseline is "a" (0.72); shortfall 0.02; pooled sd sqrt((0.02^2 + 0.03^2)/2)
    diff = compare(False, "difference")
    assert diff.measured == pytest.approx(0.02) and "best baseline a" in diff.details
    assert diff.verdict == CONTRADICTED
    z = compare(False, "z", threshold=1.0)
    assert z.measured == pytest.approx(0.02 / math.sqrt((0.02**2 + 0.03**2) / 2))
    assert z.measured == pytest.approx(0.78446, abs=1e-5) and z.verdict == REPRODUCED


def test_compare_methods_lower_is_better():
    # best baseline is "b" (0.65); ours is worse by 0.05
    diff = compare(True, "difference", threshold=0.06)
    assert diff.measured == pytest.approx(0.05) and "best baseline b" in diff.details
    assert diff.verdict == REPRODUCED
    z = compare(True, "z")
    assert z.measured == pytest.approx(0.05 / math.sqrt((0.02**2 + 0.01**2) / 2))
    # the method beating every baseline gives a negative number
    better = compare(False, "difference", baselines=("b", "c"))
    assert better.measured == pytest.approx(-0.01) and better.verdict == REPRODUCED


def test_compare_methods_rejects_unknown_statistic():
    with pytest.raises(ValueError, match="statistic"):
        compare(True, "ratio")


def test_compare_methods_zero_spread():
    zero = {k: 0.0 for k in STDS}
    worse = compare_methods(
        "id",
        "c",
        MEANS,
        zero,
        method="ours",
        baselines=["a"],
        lower_is_better=False,
        statistic="z",
        criterion={"op": "<=", "threshold": 1.0},
    )
    assert worse.measured == math.inf and worse.verdict == CONTRADICTED
    tie = compare_methods(
        "id",
        "c",
        {"ours": 1.0, "a": 1.0},
        {"ours": 0.0, "a": 0.0},
        method="ours",
        baselines=["a"],
        lower_is_better=True,
        statistic="z",
        criterion={"op": "<=", "threshold": 0.0},
    )
    assert tie.measured == 0.0 and tie.verdict == REPRODUCED


def test_write_json_types_and_nan(tmp_path):
    path = tmp_path / "sub" / "m.json"
    write_json(
        path,
        {
            "nan": float("nan"),
            "inf": np.float64("inf"),
            "np": np.float32(1.5),
            "int": np.int64(3),
            "arr": np.array([1.0, np.nan]),
            "tensor": torch.tensor([[1, 2], [3, 4]]),
            "scalar": torch.tensor(0.25),
            "path": Path("/x/y"),
            "tuple": (1, 2),
            7: "key",
        },
    )
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert read_json(path) == {
        "nan": None,
        "inf": None,
        "np": 1.5,
        "int": 3,
        "arr": [1.0, None],
        "tensor": [[1, 2], [3, 4]],
        "scalar": 0.25,
        "path": "/x/y",
        "tuple": [1, 2],
        "7": "key",
    }


def test_write_json_is_atomic(tmp_path):
    path = tmp_path / "m.json"
    write_json(path, {"version": 1})
    with pytest.raises(TypeError):
        write_json(path, {"version": 2, "bad": object()})
    assert read_json(path) == {"version": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]  # no .part left


def test_write_json_dataclass(tmp_path):
    write_json(tmp_path / "c.json", [not_tested("x", "claim", "reason")])
    assert read_json(tmp_path / "c.json")[0]["verdict"] == NOT_TESTED


def test_read_json_truncated_names_file(tmp_path):
    path = tmp_path / "truncated.json"
    write_json(path, {"a": [1, 2, 3], "b": "text"})
    path.write_text(path.read_text()[:10])
    with pytest.raises(ValueError, match=re.escape(str(path))):
        read_json(path)


def test_npz_roundtrip_and_truncated(tmp_path):
    path = tmp_path / "p.npz"
    arrays = {"a": np.arange(1000.0), "b": np.eye(3, dtype=np.float32)}
    write_npz(path, **arrays)
    loaded = read_npz(path)
    assert loaded.keys() == arrays.keys()
    for key in arrays:
        np.testing.assert_array_equal(loaded[key], arrays[key])
        assert loaded[key].dtype == arrays[key].dtype
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]
    truncated = tmp_path / "cut.npz"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=re.escape(str(truncated))):
        read_npz(truncated)


def test_run_recorder_provenance():
    config = {"lr": 0.01}
    with RunRecorder(config=config, device="cpu", seed=[0, 1]) as run:
        time.sleep(0.05)
        inside = run.provenance()
    record = run.provenance()
    assert record["config"] == config and record["seed"] == [0, 1]
    assert record["device"] == "cpu" and record["torch_version"] == torch.__version__
    assert record["wall_time_s"] >= 0.05 and inside["wall_time_s"] >= 0.05
    assert record["wall_time_s"] < 5
    assert record["peak_memory_mb"] > 0
    commit = record["git_commit"]  # this checkout is a git repository
    assert commit is not None and re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit)
    assert record["started_at_unix"] == pytest.approx(time.time(), abs=60)
    assert "gpu_peak_memory_mb" not in record


def test_select_device(monkeypatch):
    assert device_mod.select_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device_mod.select_device("auto") == torch.device("cpu")
    with pytest.raises(RuntimeError, match="cuda"):
        device_mod.select_device("cuda")
    with pytest.raises(ValueError, match="device must be one of"):
        device_mod.select_device("gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device_mod.select_device("auto") == torch.device("cuda")
    assert device_mod.select_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("value,count", [("", 0), ("0", 1), ("0,1", 2), ("-1", 0), (" 2 , 3 ,", 2)])
def test_visible_gpu_count_from_environment(monkeypatch, value, count):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
    assert device_mod.visible_gpu_count() == count


def fake_nvidia_smi(folder: Path, body: str) -> None:
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)


def test_visible_gpu_count_from_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake_nvidia_smi(
        tmp_path, 'echo "GPU 0: NVIDIA H200 (UUID: GPU-1)"\necho "GPU 1: NVIDIA H200 (UUID: GPU-2)"'
    )
    monkeypatch.setenv("PATH", str(tmp_path))
    assert device_mod.visible_gpu_count() == 2


def test_visible_gpu_count_without_driver(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # empty folder: no nvidia-smi
    assert device_mod.visible_gpu_count() == 0
    fake_nvidia_smi(tmp_path, "echo 'NVIDIA-SMI has failed' >&2; exit 9")  # driver broken
    assert device_mod.visible_gpu_count() == 0
    assert os.access(tmp_path / "nvidia-smi", os.X_OK)


def test_results_are_readable_by_the_group_and_others(tmp_path):
    """What open() makes (0644), not mkstemp's 0600: found by the full-scale rehearsal, where
    415 result files (claims.md among them) were readable by their writer only."""
    write_json(tmp_path / "m.json", {"a": 1})
    from repro.common.io import write_text

    write_text(tmp_path / "c.md", "text")
    write_npz(tmp_path / "p.npz", a=np.arange(3))
    for name in ("m.json", "c.md", "p.npz"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
