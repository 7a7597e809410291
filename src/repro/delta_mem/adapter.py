"""δ-Mem adapters on disk: ours (safetensors of ``DeltaMem.memories``) and the official format.

The official trainer (declare-lab/delta-Mem at 5cd5d91, deltamem/core/delta_impl.py)
saves an adapter directory with ``save_delta_mem_adapter`` (~2311–2319):
``delta_mem_config.json`` (``HFDeltaMemConfig.save_pretrained``, ~485–490) and
``delta_mem_adapter.pt``, a ``torch.save`` of ``get_delta_mem_state_dict`` (~2292–2299):
for every wrapped attention module ``<name>`` (e.g. ``model.layers.3.self_attn``) its own
parameters as bare tensors ``<name>.<param>``: ``memory_q_proj``, ``memory_k_proj``,
``memory_v_proj`` (r × d each; ours fuses them as ``qkv``), ``beta_proj`` (r × d),
``beta_bias`` (r), and ``delta_q_proj``, ``delta_k_proj``, ``delta_v_proj``,
``delta_o_proj`` (out × r; heads that are off are saved as zeros). The official loader reads
it with ``torch.load(..., weights_only=True)`` (~2322–2330); so do we.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from repro.delta_mem.memory import HEADS
from repro.delta_mem.wrapper import DeltaMem

ADAPTER_FILE = "delta_mem_adapter.pt"
CONFIG_FILE = "delta_mem_config.json"
MEMORY_PARAMS = ("memory_q_proj", "memory_k_proj", "memory_v_proj", "beta_proj", "beta_bias")
DELTA_PARAMS = tuple(f"delta_{h}_proj" for h in HEADS)
# official configuration fields whose other values this implementation does not run
REQUIRED = {
    "normalize_qk": True,
    "couple_lambda": True,
    "rankwise_gates": True,
    "num_state_heads": 1,
    "num_memory_partitions": 1,
    "num_global_memory_partitions": 0,
    "memory_readout_mode": "delta",
    "memory_write_source": "learned_hidden",
    "memory_write_granularity": "token",
    "delta_o_rmsnorm": False,
    "trainable_delta_scale": False,
}


def is_official(path: str | Path) -> bool:
    path = Path(path)
    return path.is_dir() or path.name == ADAPTER_FILE


def _check_config(config: dict, dm: DeltaMem, where: str) -> None:
    cfg = dm.cfg
    expected = REQUIRED | {"rank": cfg.rank, "alpha": cfg.alpha, "state_update_mode": cfg.mode}
    wrong = {k: (config[k], v) for k, v in expected.items() if k in config and config[k] != v}
    if config.get("target_layers"):
        wrong["target_layers"] = (config["target_layers"], "[] (every layer)")
    if wrong:
        text = "; ".join(f"{k} = {a!r}, here {b!r}" for k, (a, b) in wrong.items())
        raise ValueError(f"{where}: adapter configuration not supported: {text}")


def _layer_tensors(state: dict, name: str, where: str) -> dict[str, torch.Tensor]:
    prefix = f"{name}."
    own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
    missing = [p for p in MEMORY_PARAMS if p not in own]
    if missing:
        raise ValueError(f"{where}: {name} lacks {missing}")
    extra = sorted(set(own) - set(MEMORY_PARAMS) - set(DELTA_PARAMS))
    if extra:
        raise ValueError(f"{where}: {name} has parameters not supported here: {extra}")
    return own


def load_official(dm: DeltaMem, path: str | Path) -> dict:
    """Load an official adapter (its directory or its ``delta_mem_adapter.pt``) into ``dm``;
    returns its configuration ({} when the directory has no config file)."""
    path = Path(path)
    weights = path / ADAPTER_FILE if path.is_dir() else path
    config_path = weights.parent / CONFIG_FILE
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    where = str(weights)
    _check_config(config, dm, where)
    state = torch.load(weights, map_location="cpu", weights_only=True)
    layers = {k.rsplit(".", 1)[0] for k in state}
    if layers != set(dm.names):
        raise ValueError(
            f"{where}: adapter modules {sorted(layers)[:3]}… do not match the model's "
            f"attention modules {dm.names[:3]}…"
        )
    for name, memory in zip(dm.names, dm.memories, strict=True):
        own = _layer_tensors(state, name, where)
        fused = torch.cat([own["memory_q_proj"], own["memory_k_proj"], own["memory_v_proj"]])
        pairs = [
            (memory.qkv.weight, fused),
            (memory.beta.weight, own["beta_proj"]),
            (memory.beta.bias, own["beta_bias"]),
        ]
        for head in HEADS:
            tensor, layer = own.get(f"delta_{head}_proj"), getattr(memory, f"delta_{head}")
            if layer is not None:
                if tensor is None:
                    raise ValueError(f"{where}: {name} lacks delta_{head}_proj ({head} is on here)")
                pairs.append((layer.weight, tensor))
            elif tensor is not None and tensor.abs().max() > 0:
                raise ValueError(
                    f"{where}: {name}.delta_{head}_proj is non-zero: the adapter steers {head}; "
                    f"attach δ-Mem with '{head}' among the heads"
                )
        for param, tensor in pairs:
            if param.shape != tensor.shape:
                raise ValueError(
                    f"{where}: {name}: shape {tuple(tensor.shape)}, expected {tuple(param.shape)}"
                )
            with torch.no_grad():
                param.copy_(tensor.to(dtype=param.dtype, device=param.device))
    return config


def load_adapter(dm: DeltaMem, path: str | Path) -> None:
    """An official adapter (directory or ``delta_mem_adapter.pt``) or one of ours."""
    if is_official(path):
        load_official(dm, path)
        return
    from safetensors.torch import load_file

    missing, unexpected = dm.memories.load_state_dict(load_file(str(path)), strict=False)
    if missing or unexpected:
        raise ValueError(
            f"{path}: not a δ-Mem adapter of this configuration; missing {missing[:4]}, "
            f"unexpected {unexpected[:4]}"
        )


def save_adapter(dm: DeltaMem, path: str | Path) -> None:
    from safetensors.torch import save_file

    save_file({k: v.detach().contiguous() for k, v in dm.memories.state_dict().items()}, path)
