"""LoRA adapters from peft: their dense updates, and exact LoRA-space merges with ``cat``.

peft's ``add_weighted_adapter(combination_type="cat")`` stacks the scaled A factors and the B
factors, so the merged adapter is exactly Σ_t w_t · scaling_t · B_t A_t. Two facts of the
pinned peft 0.21.2 shape this module:

- ``linear`` mixes A and B separately (cross terms B_i A_j): it is not task arithmetic and is
  not used here.
- The merged adapter copies ``use_rslora`` from the first adapter with r = lora_alpha = new
  rank, so its scaling becomes √(new rank) instead of 1 (upstream issue 3761): rsLoRA merges
  come out √(new rank) too large. :func:`merge_cat` corrects the merged adapter to
  scaling 1 (and its config to plain LoRA, so a saved copy reloads the same).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from peft.tuners.lora import LoraLayer

PREFIX = "base_model.model."


def lora_layers(peft_model) -> dict[str, LoraLayer]:
    """The LoRA-wrapped modules, by their path in the underlying (un-wrapped) model."""
    return {
        name.removeprefix(PREFIX): module
        for name, module in peft_model.named_modules()
        if isinstance(module, LoraLayer)
    }


def lora_deltas(peft_model, adapter: str) -> dict[str, torch.Tensor]:
    """Dense updates scaling · B A of ``adapter``, keyed by the base weight's state-dict name
    (``fc1.weight``), detached fp32 copies."""
    deltas = {}
    for path, layer in lora_layers(peft_model).items():
        if adapter in layer.lora_A:
            with torch.no_grad():
                deltas[f"{path}.weight"] = layer.get_delta_weight(adapter).detach().float().clone()
    if not deltas:
        raise KeyError(f"adapter {adapter!r} is not on any LoRA layer of this model")
    return deltas


def lora_factors(peft_model, adapter: str) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """(scaling · B, A) of ``adapter`` per layer, keyed like :func:`lora_deltas`, detached fp32
    copies; their product is the layer's dense update (for a ``fan_in_fan_out`` layer, whose
    weight is stored transposed, the pair is (Aᵀ, scaling · Bᵀ))."""
    factors = {}
    for path, layer in lora_layers(peft_model).items():
        if adapter in layer.lora_A:
            with torch.no_grad():
                b = layer.lora_B[adapter].weight.detach().float() * layer.scaling[adapter]
                a = layer.lora_A[adapter].weight.detach().float()
            pair = (a.T, b.T) if getattr(layer, "fan_in_fan_out", False) else (b, a)
            factors[f"{path}.weight"] = (pair[0].clone(), pair[1].clone())
    if not factors:
        raise KeyError(f"adapter {adapter!r} is not on any LoRA layer of this model")
    return factors


def base_state(peft_model) -> dict[str, torch.Tensor]:
    """The frozen base weights W0 by their plain names (LoRA factors left out)."""
    state = {}
    for name, value in peft_model.state_dict().items():
        if "lora_" in name:
            continue
        state[name.removeprefix(PREFIX).replace(".base_layer.", ".")] = value.detach().clone()
    return state


def merge_cat(peft_model, adapters: Sequence[str], weights: Sequence[float], name: str) -> str:
    """Add adapter ``name`` = Σ_t w_t · scaling_t · B_t A_t with peft's exact ``cat`` merge.

    rsLoRA adapters are supported: the √(new rank) over-scaling of peft 0.21.2 is undone.
    """
    if len(adapters) != len(weights):
        raise ValueError(f"{len(adapters)} adapters but {len(weights)} weights")
    if name in peft_model.peft_config:
        raise ValueError(f"adapter {name!r} exists already; peft would silently keep the old one")
    peft_model.add_weighted_adapter(
        list(adapters), [float(w) for w in weights], name, combination_type="cat"
    )
    config = peft_model.peft_config[name]
    if config.use_rslora:
        config.use_rslora = False  # the weights already carry each adapter's own scaling
        for layer in lora_layers(peft_model).values():
            if name in layer.scaling:
                layer.use_rslora[name] = False
                layer.scaling[name] = layer.lora_alpha[name] / layer.r[name]
    return name
