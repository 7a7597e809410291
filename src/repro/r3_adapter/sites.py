"""Where the relational adapter plugs in: cross-view attention calls of three backbones.

* ``CrossAttentionSite`` — DUSt3R/MASt3R (and the embedded model, which uses their names):
  each decoder block's ``cross_attn(query, key, value[, qpos, kpos])``; the relation is the
  whole attention matrix, the keys/values are ``projk(key)``/``projv(value)``.
* ``GlobalAttentionSite`` — VGGT: ``aggregator.global_blocks.<i>.attn(x, pos)`` attends over
  every frame's tokens at once (camera and register tokens first in each frame). The
  cross-frame block from frame i's patch tokens to a partner frame's patch tokens (the
  reference frame 0; frame 1 for frame 0) is the relation; keys/values come from ``qkv``.

A site is read inside a forward hook on the attention module, after ``attn_drop`` (hooked
too, repro.r3_adapter.attention) has seen this call's probabilities; the adapter's delta is
added to the module's output for the query tokens.
"""

from __future__ import annotations

import torch
from torch import nn

from repro.r3_adapter.attention import expose_attention, matching_modules
from repro.r3_adapter.relational import RelationalAdapter, RelationalConfig, RelationSite


def _base(layer: nn.Module) -> nn.Module:
    """The wrapped Linear of a peft LoRA layer (or the layer itself)."""
    return getattr(layer, "base_layer", layer)


class CrossAttentionSite:
    def __init__(self, grid: tuple[int, int]):
        self.grid = tuple(grid)

    def dims(self, module: nn.Module) -> dict[str, int]:
        return {
            "query_dim": _base(module.projq).in_features,
            "key_dim": _base(module.projk).out_features,
            "out_dim": _base(module.proj).out_features,
        }

    def read(self, module, args, kwargs, probabilities) -> RelationSite:
        query, key, value = args[:3]
        relation = probabilities.mean(dim=1)
        return RelationSite(
            query, module.projk(key), module.projv(value), relation, self.grid, self.grid
        )

    def write(self, output: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        return output + delta


class GlobalAttentionSite:
    def __init__(self, grid: tuple[int, int], patch_start: int, reference: int = 0):
        self.grid, self.patch_start, self.reference = tuple(grid), patch_start, reference

    def dims(self, module: nn.Module) -> dict[str, int]:
        qkv = _base(module.qkv)
        return {
            "query_dim": qkv.in_features,
            "key_dim": qkv.out_features // 3,
            "out_dim": _base(module.proj).out_features,
        }

    def rows(self, tokens: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """(S, N) patch-token indices of each frame and of its partner frame."""
        patches = self.grid[0] * self.grid[1]
        per_frame = self.patch_start + patches
        frames = tokens // per_frame
        if frames * per_frame != tokens or frames < 2:
            raise ValueError(f"{tokens} tokens are not ≥ 2 frames of {per_frame}")
        own = torch.arange(frames, device=device)[:, None] * per_frame + self.patch_start
        own = own + torch.arange(patches, device=device)
        partner = torch.full((frames,), self.reference, device=device)
        partner[self.reference] = 1 if self.reference == 0 else 0
        return own, own[partner]

    def read(self, module, args, kwargs, probabilities) -> RelationSite:
        x = args[0]
        B, T, C = x.shape
        own, other = self.rows(T, x.device)
        S, N = own.shape
        _, k, v = module.qkv(x).chunk(3, dim=-1)
        mean = probabilities.mean(dim=1)  # (B, T, T)
        block = mean[:, own.reshape(-1)].reshape(B, S, N, T)
        block = block.gather(3, other[None, :, None, :].expand(B, S, N, N))
        relation = block / block.sum(-1, keepdim=True).clamp_min(1e-12)

        def frames(t, index):  # (B, T, D) -> (B·S, N, D)
            return t[:, index.reshape(-1)].reshape(B * S, N, -1)

        return RelationSite(
            frames(x, own),
            frames(k, other),
            frames(v, other),
            relation.reshape(B * S, N, N),
            self.grid,
            self.grid,
        )

    def write(self, output: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        B, T, C = output.shape
        own, _ = self.rows(T, output.device)
        index = own.reshape(-1)[None, :, None].expand(B, -1, C)
        return output.scatter_add(1, index, delta.reshape(B, -1, C))


class RelationalHooks(nn.Module):
    """A relational adapter on every attention module matching ``pattern``.

    Holds the adapters' parameters (the only trainable ones); ``remove()`` detaches them.
    """

    def __init__(self, model: nn.Module, pattern: str, site, cfg: RelationalConfig):
        super().__init__()
        self.adapters = nn.ModuleDict()
        self.grid = site.grid
        self._handles, self._probabilities = [], {}
        device = next(model.parameters()).device
        for name, module in matching_modules(model, pattern):
            expose_attention(module)
            key = name.replace(".", "/")
            self.adapters[key] = RelationalAdapter(cfg, **site.dims(module)).to(device)
            self._handles += [
                module.attn_drop.register_forward_hook(self._capture(key)),
                module.register_forward_hook(self._inject(key, site), with_kwargs=True),
            ]

    def _capture(self, key: str):
        def hook(_module, inputs, _output):
            self._probabilities[key] = inputs[0]

        return hook

    def _inject(self, key: str, site):
        def hook(module, args, kwargs, output):
            probabilities = self._probabilities.pop(key)
            read = site.read(module, args, kwargs, probabilities.detach())
            return site.write(output, self.adapters[key](read))

        return hook

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
