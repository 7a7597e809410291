"""MaLoRA's full-scale stand-ins: one tiny CLIP (saved by transformers' own classes under the
release's file names) for both vision backbones, one KnOTS-format LoRA per task, each test
split as the Hub viewer's parquet listing of two shards with ClassLabel metadata, KnOTS's
shuffled indices; the NLI tasks' split files in their repositories' layouts, SEQ_CLS LoRAs of
a tiny Llama, and that Llama itself for the gated ``model_dir`` (staged by hand at full scale).
Built once per process (tests/malora's fixture writers) and copied per download entry."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

VISION_TASKS = ["stanford_cars", "dtd", "eurosat", "gtsrb", "mnist", "resisc45", "sun397", "svhn"]
KNOTS_INDEX = {"cars": "stanford_cars"}  # KnOTS's index files name the task its own way
ROWS = 24  # per test split: 2 shards of 3 classes x 4 images (tests.malora's fixture)
NLI_ROWS = 40


def build_folder(name: str) -> Path:
    """A temporary folder removed when the process ends."""
    root = Path(tempfile.mkdtemp(prefix=f"rehearsal_{name}_"))
    atexit.register(shutil.rmtree, root, True)
    return root


@functools.cache
def clip_release() -> dict:
    """{file name: path} of the tiny CLIP (pytorch_model.bin and the fast tokenizer's
    tokenizer.json, as the Hub's openai/clip-vit-* hold) and the fixture's tasks."""
    import torch

    from tests.malora.malora_helpers import tiny_clip_fixture

    root = build_folder("clip")
    fixture = tiny_clip_fixture(root / "fixture", n_tasks=len(VISION_TASKS))
    model_dir = Path(fixture["model"][0]).parent
    release = root / "release"
    release.mkdir()
    for name in (
        "config.json",
        "preprocessor_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ):
        shutil.copy(model_dir / name, release)
    # the Hub's files that transformers 5 no longer writes: the weights as a torch pickle,
    # the BPE vocabulary and merges, the special tokens
    torch.save(fixture["clip"].state_dict(), release / "pytorch_model.bin")
    bpe = json.loads((model_dir / "tokenizer.json").read_text())["model"]
    (release / "vocab.json").write_text(json.dumps(bpe["vocab"]))
    merges = [m if isinstance(m, str) else " ".join(m) for m in bpe["merges"]]
    (release / "merges.txt").write_text("\n".join(["#version: 0.2", *merges]) + "\n")
    special = {"bos_token": "<|startoftext|>", "eos_token": "<|endoftext|>"}
    special |= {"pad_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    (release / "special_tokens_map.json").write_text(json.dumps(special))
    tasks = dict(zip(VISION_TASKS, fixture["tasks"].values(), strict=True))
    return {"files": {p.name: p for p in release.iterdir()}, "tasks": tasks}


def write_clip_file(path: Path, name: str) -> None:
    """malora_vit_{b32,l14}_<file>: the tiny release's file of that name."""
    shutil.copyfile(clip_release()["files"][path.name], path)


def write_vision_adapter(path: Path, name: str) -> None:
    """malora_vit_*_<task>_adapter_{config,model}: the task's KnOTS-format LoRA."""
    task = next(t for t in VISION_TASKS if f"_{t}_adapter" in name)
    source = next(p for p in clip_release()["tasks"][task]["adapter"] if p.endswith(path.name))
    shutil.copyfile(source, path)


def write_knots_indices(path: Path, name: str) -> None:
    """KnOTS's <task>_shuffled_idxs.pt: a numpy permutation of the split's rows, torch-saved."""
    import torch

    task = name.removeprefix("malora_knots_").removesuffix("_shuffled_idxs")
    seed = VISION_TASKS.index(KNOTS_INDEX.get(task, task))
    torch.save(np.random.default_rng(seed).permutation(ROWS), path)


def write_parquet_split(www: Path, url: str, name: str, base: str, served, local) -> list[dict]:
    """The viewer's listing at ``url`` naming the task's two shards, served beside it under
    the Hub's parquet paths; returns the listed shards ({url, filename, path})."""
    import urllib.parse

    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    task = name.removeprefix("malora_data_").removesuffix("_test")
    shards = []
    for k, source in enumerate(clip_release()["tasks"][task]["test"]):
        real = (
            f"https://huggingface.co/api/datasets/{query['dataset']}/parquet/"
            f"{query['config']}/{query['split']}/{k}.parquet"
        )
        target = www / served(real)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        shards.append({"url": local(real, base), "filename": f"{k:04d}.parquet", "path": target})
    listing = {
        "parquet_files": [
            {**query, "url": s["url"], "filename": s["filename"], "size": s["path"].stat().st_size}
            for s in shards
        ],
        "pending": [],
        "failed": [],
        "partial": False,
    }
    target = www / served(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(listing))
    return shards


# --- the NLI benchmark ---------------------------------------------------------------------

# (file layout, text columns, raw labels) of each task's split files, as their repositories
NLI = {
    "snli": ("parquet", ["premise", "hypothesis"], [0, 1, 2]),
    "mnli": ("jsonl", ["text1", "text2"], [0, 1, 2]),
    "sick": ("parquet", ["sentence_A", "sentence_B"], [0, 1, 2]),
    "qnli": ("jsonl", ["text1", "text2"], [0, 1]),
    "rte": ("jsonl", ["text1", "text2"], [0, 1]),
    "scitail": ("parquet", ["premise", "hypothesis"], ["entails", "neutral"]),
}


def _nli_frame(task: str, split: str):
    import pandas as pd

    from tests.malora.nli_fixture import _pairs

    _, columns, raw = NLI[task]
    rng = np.random.default_rng(sorted(NLI).index(task) * 10 + len(split))
    first, second, y = _pairs(rng, NLI_ROWS, len(raw))
    frame = pd.DataFrame({"idx": np.arange(NLI_ROWS), columns[0]: first, columns[1]: second})
    frame["label"] = [raw[v] for v in y]
    if task == "snli":
        frame.loc[:1, "label"] = -1  # SNLI's rows without a gold label
    if NLI[task][0] == "jsonl":
        frame["label_text"] = frame["label"].map(str)
    return frame


@functools.cache
def nli_release() -> dict:
    """The tiny Llama (a folder) and one SEQ_CLS adapter per task trained briefly on its
    calibration split: {"model_dir": path, "adapters": {task: folder}, "splits": {...}}."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    from repro.malora.nli_data import load_tokenizer
    from tests.malora.nli_fixture import _tokenizer, _train_adapter

    root = build_folder("nli")
    model_dir = root / "Meta-Llama-3-8B"
    model_dir.mkdir()
    config = LlamaConfig(
        vocab_size=_tokenizer(model_dir), hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
        max_position_embeddings=64, num_labels=3, bos_token_id=1, eos_token_id=2,
    )  # fmt: skip
    torch.manual_seed(0)
    LlamaForSequenceClassification(config).save_pretrained(model_dir)
    tokenizer = load_tokenizer(model_dir)
    adapters, splits = {}, {}
    for task, (layout, columns, raw) in NLI.items():
        for split in ("validation", "test"):
            path = root / f"{task}_{split}.{layout}"
            frame = _nli_frame(task, split)
            if layout == "parquet":
                frame.to_parquet(path, index=False)
            else:
                frame.to_json(path, orient="records", lines=True)
            splits[task, split] = path
        labels = {str(v): [0, 1, 2][i] if len(raw) == 3 else [0, 2][i] for i, v in enumerate(raw)}
        spec = {"calibration": [str(splits[task, "validation"])], "columns": columns}
        torch.manual_seed(1)
        _train_adapter(model_dir, tokenizer, {**spec, "labels": labels}, root / task, steps=20)
        adapters[task] = root / task
    return {"model_dir": model_dir, "adapters": adapters, "splits": splits}


def write_nli_split(path: Path, name: str) -> None:
    """malora_nli_<task>_<split>: the task's split file (its repository's layout)."""
    task, split = name.removeprefix("malora_nli_").rsplit("_", 1)
    shutil.copyfile(nli_release()["splits"][task, split], path)


def write_nli_adapter(path: Path, name: str) -> None:
    """malora_llama3_8b_<task>_adapter_{config,model}: the task's SEQ_CLS LoRA."""
    task = name.removeprefix("malora_llama3_8b_").split("_adapter")[0]
    shutil.copyfile(nli_release()["adapters"][task] / path.name, path)


def stage_gated_model(folder: Path) -> None:
    """The user's step for the gated Llama (full.yaml: a snapshot in model_dir)."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(nli_release()["model_dir"], folder)


def writers() -> dict:
    clip = ["config", "pytorch_model", "tokenizer", "tokenizer_config", "special_tokens_map",
            "vocab", "merges", "preprocessor_config"]  # fmt: skip
    out = {}
    for backbone in ("vit_b32", "vit_l14"):
        out |= {f"malora_{backbone}_{f}": write_clip_file for f in clip}
        for task in VISION_TASKS:
            for part in ("config", "model"):
                out[f"malora_{backbone}_{task}_adapter_{part}"] = write_vision_adapter
    for task in ("cars", "gtsrb", "mnist", "sun397", "svhn"):
        out[f"malora_knots_{task}_shuffled_idxs"] = write_knots_indices
    for task in NLI:
        for split in ("validation", "test"):
            out[f"malora_nli_{task}_{split}"] = write_nli_split
        for part in ("config", "model"):
            out[f"malora_llama3_8b_{task}_adapter_{part}"] = write_nli_adapter
    return out
