"""Full-scale inputs of the KnOTS benchmarks: the published LoRA adapters as factors and
dense ΔW (and the task heads the NLI adapters carry), parquet image shards (the FusionBench /
Hugging Face mirrors) and CLIP's zero-shot text heads.

Every loader reads local files (the download rules fetched them) and fails with the path
when a file is missing or malformed: compute nodes may be offline.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import numpy as np
import torch

log = logging.getLogger(__name__)


def need_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: missing; run the download rules first (nodes may be offline)"
        )
    return path


def read_state(weights_path) -> dict[str, torch.Tensor]:
    """The tensors of an adapter file (adapter_model.bin or .safetensors)."""
    weights_path = need_file(weights_path)
    if weights_path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(weights_path))
    return torch.load(weights_path, map_location="cpu", weights_only=True)


def load_factors(config_path, weights_path, param_names) -> dict[str, tuple]:
    """A peft LoRA adapter (adapter_config.json + adapter_model.bin/.safetensors) as its
    factors (scaling · B, A) per layer, scaling = lora_alpha / r (rsLoRA: / √r), keyed by the
    base model's parameter name; their product is the dense update.

    Adapter keys are matched to ``param_names`` by module-path suffix, so the checkpoint's
    wrapper prefix (``base_model.model.`` or none) does not matter.
    """
    config = json.loads(need_file(config_path).read_text())
    state = read_state(weights_path)
    r, alpha = config["r"], config["lora_alpha"]
    scaling = alpha / (r**0.5 if config.get("use_rslora") else r)
    factors = {}
    for key, a in state.items():
        if ".lora_A." not in key:
            continue
        module = key.split(".lora_A.")[0].removeprefix("base_model.model.")
        b = state[key.replace(".lora_A.", ".lora_B.")]
        factors[_match(module, param_names, weights_path)] = (scaling * b.float(), a.float())
    if not factors:
        raise ValueError(f"{weights_path}: no LoRA factors (lora_A/lora_B) found")
    return factors


def _match(module: str, param_names, source) -> str:
    """The one base parameter whose name ends in ``module``.weight."""
    matches = [p for p in param_names if p == f"{module}.weight" or p.endswith(f".{module}.weight")]
    if len(matches) != 1:
        raise KeyError(f"{source}: {module} matches {len(matches)} base parameters")
    return matches[0]


def load_adapter_peft(config_path, weights_path, tower, param_names) -> tuple[dict, dict]:
    """A peft LoRA adapter loaded by peft itself (``PeftModel.from_pretrained`` with the
    ``LoraConfig`` of its adapter_config.json) onto ``tower`` (a module whose paths match the
    adapter's keys, e.g. a CLIPVisionModel for KnOTS's CLIP adapters; it is wrapped, then
    unloaded again), so that ``fan_in_fan_out``, ``rank_pattern``, ``alpha_pattern`` and rsLoRA
    are honoured as peft applies them. Returns the dense updates and the factors (whose
    product they are; LoraHub combines these), both keyed by the base model's parameter name
    (``param_names``, matched by module-path suffix). Every LoRA module of the file must land
    on a layer of ``tower``: a key that peft would skip is an error."""
    import tempfile

    from peft import PeftModel

    from repro.malora.peft_merge import lora_deltas, lora_factors

    config_path, weights_path = need_file(config_path), need_file(weights_path)
    in_file = {k.split(".lora_A.")[0] for k in read_state(weights_path) if ".lora_A." in k}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "adapter_config.json").symlink_to(config_path.resolve())
        name = "adapter_model" + (
            ".safetensors" if weights_path.suffix == ".safetensors" else ".bin"
        )
        Path(folder, name).symlink_to(weights_path.resolve())
        model = PeftModel.from_pretrained(tower, folder, adapter_name="task")
        try:
            deltas, factors = lora_deltas(model, "task"), lora_factors(model, "task")
        finally:
            model.unload()  # the tower without LoRA layers, as it came in
    if len(deltas) != len(in_file):
        raise KeyError(
            f"{weights_path}: {len(in_file)} LoRA modules in the file, {len(deltas)} on the model"
        )

    def rename(d):
        return {
            _match(k.removesuffix(".weight"), param_names, weights_path): v for k, v in d.items()
        }

    return rename(deltas), rename(factors)


def load_head(weights_path, module: str = "score") -> torch.Tensor:
    """The task head a sequence-classification adapter saves beside its LoRA factors (peft
    keeps ``score`` trainable for SEQ_CLS and stores it as ``base_model.model.score.weight``,
    or ``score.modules_to_save.<adapter>.weight`` in a raw state dict)."""
    found = {
        key: value
        for key, value in read_state(weights_path).items()
        if "lora_" not in key
        and (key.endswith(f"{module}.weight") or f"{module}.modules_to_save." in key)
    }
    if len(found) != 1:
        raise ValueError(
            f"{weights_path}: expected one {module!r} head beside the LoRA factors, found "
            f"{sorted(found)}; a per-task head is needed to evaluate the task"
        )
    return next(iter(found.values())).float()


def parquet_class_names(path) -> list[str] | None:
    """ClassLabel names from the Hugging Face metadata of a parquet file, when present."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(need_file(path)).metadata or {}
    info = json.loads(meta.get(b"huggingface", b"{}"))
    for feature in info.get("info", {}).get("features", {}).values():
        if feature.get("_type") == "ClassLabel":
            return list(feature["names"])
    return None


def load_parquet_images(path, *, image_column="image", label_column="label"):
    """Encoded images (bytes) and integer labels of one parquet shard."""
    import pyarrow.parquet as pq

    table = pq.read_table(need_file(path), columns=[image_column, label_column])
    labels = np.asarray(table.column(label_column).to_pylist(), dtype=np.int64)
    cells = table.column(image_column).to_pylist()
    return [c["bytes"] if isinstance(c, dict) else c for c in cells], labels


def load_shards(paths):
    """The rows of every parquet shard of one split, in shard order."""
    raw, labels = [], []
    for path in paths:
        r, y = load_parquet_images(path)
        raw += r
        labels.append(y)
    return raw, np.concatenate(labels)


def decode(raw: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(raw)).convert("RGB")


@torch.no_grad()
def text_heads(model, tokenizer, class_names, templates, device) -> torch.Tensor:
    """Zero-shot head of one task: the mean normalised text embedding of every template
    filled with each class name (classes × projection dim), as KnOTS builds CLIP heads."""
    rows = []
    for name in class_names:
        tokens = tokenizer([t.format(name) for t in templates], padding=True, return_tensors="pt")
        emb = model.get_text_features(**{k: v.to(device) for k, v in tokens.items()})
        emb = getattr(emb, "pooler_output", emb)
        emb = torch.nn.functional.normalize(emb, dim=-1).mean(dim=0)
        rows.append(torch.nn.functional.normalize(emb, dim=0))
    return torch.stack(rows)
