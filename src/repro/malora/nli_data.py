"""The NLI benchmark's data (KnOTS's setting): downloaded split files (parquet or JSON
lines) → sentence pairs with labels on the shared 3-way head → tokenised calibration pool
and test set, one JSON per task. The GPU jobs read only these files.

As in KnOTS: rows whose label is not a configured class are dropped (SNLI's −1); a binary
task maps its two labels onto two classes of the 3-way head (QNLI/RTE: 0 → 0 entailment,
1 → 2; SciTail: entails → 0, neutral → 1) and is judged on those classes only; a task with
one labelled split (MNLI, QNLI, RTE validation) is divided by ``datasets``' own
``train_test_split`` with KnOTS's fraction and seed (the held-out fraction is the
calibration pool, the rest the test set).
"""

from __future__ import annotations

import logging

import numpy as np

from repro.malora.fullscale_data import need_file

log = logging.getLogger(__name__)


def read_rows(paths, columns, label_column="label"):
    """The sentence pairs and labels of one split's files (.parquet or .jsonl), in order."""
    import pandas as pd

    frames = []
    for path in paths:
        path = need_file(path)
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path)
        elif path.suffix in (".jsonl", ".json"):
            frame = pd.read_json(path, lines=True, dtype=False)
        else:
            raise ValueError(f"{path}: NLI splits are .parquet or .jsonl files")
        missing = [c for c in (*columns, label_column) if c not in frame.columns]
        if missing:
            raise KeyError(f"{path}: no column(s) {missing}; it has {list(frame.columns)}")
        frames.append(frame[[*columns, label_column]])
    return pd.concat(frames, ignore_index=True)


def head_labels(raw, labels: dict) -> np.ndarray:
    """Each raw label's class on the shared head (``labels`` keys are the raw values as
    text); −1 where the label is not configured (the row is dropped)."""
    return np.array([labels.get(str(v), -1) for v in raw], dtype=np.int64)


def holdout(n: int, fraction: float, *, shuffle: bool, seed: int):
    """(calibration rows, test rows) of ``datasets.Dataset.train_test_split(test_size=
    fraction)`` on n rows: its "test" part is KnOTS's validation, its "train" part the test."""
    from datasets import Dataset

    split = Dataset.from_dict({"row": np.arange(n)}).train_test_split(
        test_size=fraction, shuffle=shuffle, seed=seed
    )
    return np.asarray(list(split["test"]["row"])), np.asarray(list(split["train"]["row"]))


def load_tokenizer(model_dir):
    """The model's tokenizer with KnOTS's padding: right side, EOS when it has no pad."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="right")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _encode(tokenizer, frame, columns, labels, max_length) -> dict:
    y = head_labels(frame.iloc[:, len(columns)], labels)
    keep = y >= 0
    if not keep.any():
        return {"input_ids": [], "labels": []}
    texts = [frame.loc[keep, c].astype(str).tolist() for c in columns]
    ids = tokenizer(*texts, truncation=True, max_length=max_length)["input_ids"]
    return {"input_ids": [list(map(int, r)) for r in ids], "labels": y[keep].tolist()}


def prepare_task(spec: dict, model_dir) -> dict:
    """One task's tokenised calibration pool and test set. ``spec``: ``calibration`` and
    ``test`` (file lists), ``columns`` (the pair), ``label_column``, ``labels`` (raw → head
    class), ``max_length``, and ``holdout`` ({fraction, shuffle, seed}) when calibration and
    test come from the same labelled split."""
    tokenizer = load_tokenizer(model_dir)
    columns, labels = list(spec["columns"]), dict(spec["labels"])
    args = (columns, spec.get("label_column", "label"))
    test = read_rows(spec["test"], *args)
    if spec.get("holdout"):
        h = spec["holdout"]
        y = head_labels(test.iloc[:, len(columns)], labels)
        test = test[y >= 0].reset_index(drop=True)  # KnOTS filters, then splits
        calib_rows, test_rows = holdout(
            len(test), h["fraction"], shuffle=h.get("shuffle", True), seed=h.get("seed", 42)
        )
        calib, test = test.iloc[calib_rows], test.iloc[test_rows]
    else:
        calib = read_rows(spec["calibration"], *args)
    out = {"classes": sorted(set(labels.values()))}
    for part, frame in (("calibration", calib), ("test", test)):
        out[part] = _encode(tokenizer, frame, columns, labels, spec.get("max_length"))
        if not out[part]["labels"]:
            raise ValueError(f"{spec['test']}: no {part} rows with a label in {sorted(labels)}")
        log.info("%s: %d rows (of %d)", part, len(out[part]["labels"]), len(frame))
    return out


def load_split(doc: dict, part: str, *, limit=None, seed: int = 0):
    """Token ids and head labels of one part of a tokenised task; with ``limit`` a seeded
    subset of that many rows (the calibration draws)."""
    ids, y = doc[part]["input_ids"], np.asarray(doc[part]["labels"], dtype=np.int64)
    rows = np.arange(len(y))
    if limit is not None and limit < len(rows):
        rows = np.sort(np.random.default_rng(seed).permutation(len(rows))[:limit])
    return [ids[i] for i in rows], y[rows]
