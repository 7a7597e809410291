"""Adaptation methods: a frozen backbone plus adapters, built from one config entry.

A method spec is ``{adapters: {<kind>: {options}}, train: none|heads|all}``; kinds are
``lora`` and ``dora`` (peft, regex ``target_modules`` over the attention Linears), ``ssf``,
``vpt``, ``adaptformer`` and ``relational`` (3R-lite). ``train: heads`` is head-only tuning,
``train: all`` full fine-tuning, ``train: dustbin`` the match head's dustbin bias alone (one
scalar: the "frozen + dustbin bias" baseline); with adapters the heads stay frozen. Several adapters
combine (3R-lite + LoRA). Module-name patterns come from ``Targets`` so that the same code
attaches to DUSt3R-named modules (the embedded model) and to VGGT.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from torch import nn

from repro.r3_adapter.adapters import SSF, VPT, AdaptFormer
from repro.r3_adapter.relational import RelationalConfig
from repro.r3_adapter.sites import CrossAttentionSite, GlobalAttentionSite, RelationalHooks

ADAPTER_KINDS = ("lora", "dora", "ssf", "vpt", "adaptformer", "relational")
TRAIN_MODES = ("none", "heads", "all", "dustbin")


@dataclasses.dataclass(frozen=True)
class Targets:
    """Module-name regexes (DUSt3R's names by default)."""

    linears: str = r".*dec_blocks2?\.\d+\.(attn\.(qkv|proj)|cross_attn\.(projq|projk|projv|proj))"
    norms: str = r"dec_blocks2?\.\d+\.norm(1|2|3|_y)$"
    self_attention: str = r"dec_blocks2?\.\d+\.attn$"
    cross_attention: str = r"dec_blocks2?\.\d+\.cross_attn$"
    mlp: str = r"dec_blocks2?\.\d+\.mlp$"


DUST3R_TARGETS = Targets()


@dataclasses.dataclass
class Adapted:
    """The model (adapted in place) and the hooked adapters that belong to it."""

    model: nn.Module
    hooks: nn.ModuleDict

    def trainable(self) -> list[nn.Parameter]:
        params = [p for p in self.model.parameters() if p.requires_grad]
        return params + [p for p in self.hooks.parameters() if p.requires_grad]

    def n_trainable(self) -> int:
        return sum(p.numel() for p in self.trainable())

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """Only what adaptation changed: trainable model parameters and the hooks."""
        names = {n for n, p in self.model.named_parameters() if p.requires_grad}
        state = {f"model/{n}": t for n, t in self.model.state_dict().items() if n in names}
        return state | {f"hooks/{n}": t for n, t in self.hooks.state_dict().items()}

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        model = {k[len("model/") :]: v for k, v in state.items() if k.startswith("model/")}
        hooks = {k[len("hooks/") :]: v for k, v in state.items() if k.startswith("hooks/")}
        missing = set(self.trainable_state()) - set(state)
        if missing:
            raise KeyError(f"adapter state lacks {sorted(missing)[:5]}")
        self.model.load_state_dict(model, strict=False)
        self.hooks.load_state_dict(hooks)

    def remove(self) -> None:
        for hooks in self.hooks.values():
            hooks.remove()


def backbone_change(model: nn.Module, backbone: dict[str, torch.Tensor]) -> float:
    """Largest change of a weight that is not trained (peft's base_layer names mapped back)."""
    change = 0.0
    for name, param in model.named_parameters():
        if not param.requires_grad:
            original = backbone[name.replace(".base_layer", "")]
            change = max(change, (param.detach() - original).abs().max().item())
    return change


def _peft(model: nn.Module, options: dict[str, Any], targets: Targets, dora: bool) -> None:
    from peft import LoraConfig, inject_adapter_in_model  # importing peft costs seconds

    rank = int(options["rank"])
    config = LoraConfig(
        r=rank,
        lora_alpha=float(options.get("alpha_ratio", 2.0)) * rank,
        lora_dropout=0.0,
        target_modules=targets.linears,
        use_dora=dora,
    )
    inject_adapter_in_model(config, model)
    for name, param in model.named_parameters():
        param.requires_grad_("lora_" in name)


def build_method(
    model: nn.Module,
    spec: dict[str, Any],
    *,
    site: CrossAttentionSite | GlobalAttentionSite,
    targets: Targets = DUST3R_TARGETS,
) -> Adapted:
    """Freeze ``model``, attach the spec's adapters, mark what trains; returns the handle.

    ``site`` says how the relational adapter reads the backbone's cross-view attention
    (repro.r3_adapter.sites); ``targets`` names the modules every adapter attaches to.
    """
    adapters = dict(spec.get("adapters") or {})
    train = spec.get("train", "none")
    unknown = set(adapters) - set(ADAPTER_KINDS)
    if unknown or train not in TRAIN_MODES:
        raise ValueError(f"unknown adapters {sorted(unknown)} or train mode {train!r}")
    if "lora" in adapters and "dora" in adapters:
        raise ValueError("choose lora or dora, not both")
    model.requires_grad_(False)
    for kind in ("lora", "dora"):
        if kind in adapters:
            _peft(model, adapters[kind], targets, dora=kind == "dora")
    hooks = nn.ModuleDict()
    if "ssf" in adapters:
        hooks["ssf"] = SSF(model, f"({targets.linears})$|{targets.norms}")
    if "vpt" in adapters:
        hooks["vpt"] = VPT(model, targets.self_attention, int(adapters["vpt"]["prompts"]))
    if "adaptformer" in adapters:
        options = adapters["adaptformer"]
        hooks["adaptformer"] = AdaptFormer(
            model, targets.mlp, int(options["bottleneck"]), float(options.get("scale", 0.1))
        )
    if "relational" in adapters:
        cfg = RelationalConfig(**(adapters["relational"] or {}))
        hooks["relational"] = RelationalHooks(model, targets.cross_attention, site, cfg)
    if train == "heads":
        for param in model.head_parameters():
            param.requires_grad_(True)
    elif train == "all":
        model.requires_grad_(True)
    elif train == "dustbin":
        model.head_dustbin.bias.requires_grad_(True)
    return Adapted(model, hooks)
