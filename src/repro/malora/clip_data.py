"""KnOTS's vision splits, decoded and preprocessed once per data set.

KnOTS (``dataset/{cars,gtsrb,mnist,sun397,svhn}.py``, ``val_fraction: 0.2``) takes its
validation set from the *test* split: the first 20 % of a fixed shuffle of the test rows
(its ``dataset/shuffled_idxs/*.pt``) is validation, the other 80 % is the reported test set.
The published adapters were trained on the whole training split, so no part of it is held
out from them; the validation rows are the only labelled images they never saw. MaLoRA's
calibration draws and the baselines' coefficient search both come from this validation part.
DTD, EuroSAT and RESISC45 have their own validation splits in KnOTS; the parquet mirrors
carry only train and test, so their validation part is the first 20 % of a seeded shuffle
of the test rows.

:func:`cache_task` reads every shard of a test split (listed files, or the folder a
``parquet_split`` download fills with every shard the Hub lists; the rows must add up to the
split's known size), decodes and resizes every image once and writes the pixels as uint8 ``.npy``
arrays (N × 3 × H × W) that the jobs memory-map; :func:`normalise` applies the processor's
rescale and mean/std on the fly, so the cached path gives the processor's own pixel values.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from repro.common.parquetsplit import shard_files
from repro.malora.fullscale_data import decode, load_shards, need_file, parquet_class_names

PARTS = ("validation", "test")


def knots_indices(path) -> np.ndarray:
    """KnOTS's shuffled test indices (a numpy array saved with ``torch.save``), read with
    ``weights_only`` and only numpy's array reconstruction allowed."""
    from numpy._core.multiarray import _reconstruct

    allowed = [
        _reconstruct,  # numpy 2 pickles it as numpy._core.multiarray, numpy 1 (KnOTS) as
        (_reconstruct, "numpy.core.multiarray._reconstruct"),  # numpy.core.multiarray
        np.ndarray,
        (np.dtype, "numpy.dtype"),
        type(np.dtype("int64")),
    ]
    with torch.serialization.safe_globals(allowed):
        value = torch.load(need_file(path), weights_only=True)
    return np.asarray(value, dtype=np.int64)


def holdout_rows(n: int, holdout: dict, indices=None) -> dict[str, np.ndarray]:
    """Row numbers of the validation (calibration) and test parts of an ``n``-row split:
    the first ``int(n · fraction)`` of ``indices`` (KnOTS's shuffle) or of a permutation
    seeded by ``holdout["seed"]``, and the rest."""
    order = (
        np.random.default_rng(holdout.get("seed", 0)).permutation(n)
        if indices is None
        else np.asarray(indices, dtype=np.int64)
    )
    if len(order) != n or len(np.unique(order)) != n or order.min() < 0 or order.max() >= n:
        raise ValueError(f"the holdout order is not a permutation of the split's {n} rows")
    cut = int(n * holdout["fraction"])
    return {"validation": order[:cut], "test": order[cut:]}


def _pixels(processor, images) -> np.ndarray:
    """Resized and cropped pixels (uint8), before the processor's rescale and normalisation."""
    out = processor(images=images, return_tensors="np", do_rescale=False, do_normalize=False)
    pixels = np.asarray(out["pixel_values"])
    if not np.array_equal(pixels, np.round(pixels)) or pixels.min() < 0 or pixels.max() > 255:
        raise ValueError("the image processor's resized pixels are not 8-bit: cannot cache")
    return pixels.astype(np.uint8)


def cache_task(spec: dict, processor, out_dir, *, batch_size: int = 256) -> dict:
    """One task's test split → ``validation.npy``, ``test.npy`` (uint8 pixels) and
    ``meta.json`` (labels, source rows, class names) in ``out_dir``. ``spec``: ``test``
    (every shard, or a folder of them), ``rows`` (the split's size: a missing shard is an
    error), ``holdout`` (``fraction``, ``seed``) and ``indices`` (KnOTS's shuffle file, or
    None)."""
    shards = shard_files(spec["test"])
    raw, labels = load_shards(shards)
    if len(labels) != spec["rows"]:
        raise ValueError(
            f"{spec['test']}: {len(labels)} rows, the split has {spec['rows']}; "
            "list every shard of the split"
        )
    indices = knots_indices(spec["indices"]) if spec.get("indices") else None
    rows = holdout_rows(len(labels), spec["holdout"], indices)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        first = _pixels(processor, [decode(raw[rows[part][0]])])
        target = out_dir / f"{part}.npy"
        partial = target.with_suffix(".partial.npy")
        array = np.lib.format.open_memmap(
            partial, mode="w+", dtype=np.uint8, shape=(len(rows[part]), *first.shape[1:])
        )
        for start in range(0, len(rows[part]), batch_size):
            chunk = rows[part][start : start + batch_size]
            array[start : start + len(chunk)] = _pixels(processor, [decode(raw[i]) for i in chunk])
        array.flush()
        del array
        partial.rename(target)
    meta = {
        "class_names": parquet_class_names(shards[0]),
        "rows": len(labels),
        "holdout": spec["holdout"],
        "knots_indices": bool(spec.get("indices")),
        **{f"{part}_rows": rows[part].tolist() for part in PARTS},
        **{f"{part}_labels": labels[rows[part]].tolist() for part in PARTS},
    }
    (out_dir / "meta.json").write_text(json.dumps(meta))
    return meta


def load_cached(folder) -> tuple[dict, dict]:
    """A task's cache: per part (memory-mapped uint8 pixels, int64 labels), and its meta."""
    folder = Path(folder)
    meta = json.loads(need_file(folder / "meta.json").read_text())
    parts = {
        part: (
            np.load(need_file(folder / f"{part}.npy"), mmap_mode="r"),
            np.asarray(meta[f"{part}_labels"], dtype=np.int64),
        )
        for part in PARTS
    }
    return parts, meta


def normalise(pixels, processor, device, dtype=torch.float32) -> torch.Tensor:
    """Cached uint8 pixels → the processor's ``pixel_values`` (rescale, then mean/std)."""
    x = torch.from_numpy(np.array(pixels)).to(device=device, dtype=torch.float32)  # a copy
    mean = torch.tensor(processor.image_mean, device=device).view(1, -1, 1, 1)
    std = torch.tensor(processor.image_std, device=device).view(1, -1, 1, 1)
    return ((x * processor.rescale_factor - mean) / std).to(dtype)
