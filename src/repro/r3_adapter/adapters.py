"""Channel-wise PEFT baselines as forward hooks, each the identity at step 0.

* SSF (https://arxiv.org/abs/2210.08823): y ← γ ⊙ y + β after the attention projections and
  LayerNorms, γ = 1, β = 0.
* VPT-deep (https://arxiv.org/abs/2203.12119) with zero-init gating: P learnable prompt tokens
  per block join the self-attention as extra keys/values (through its frozen ``qkv``); their
  softmax is taken separately and scaled by a per-head gate initialised at 0, as in
  LLaMA-Adapter's zero-init attention (https://arxiv.org/abs/2303.16199). Plain VPT
  renormalises the real tokens' attention and is not the identity at step 0.
* AdaptFormer (https://arxiv.org/abs/2205.13535): a parallel bottleneck beside each MLP,
  mlp(x) + s · up(ReLU(down(x))), ``up`` zero-initialised, s = 0.1 as in the paper.

LoRA and DoRA come from peft (repro.r3_adapter.methods).
"""

from __future__ import annotations

import torch
from torch import nn

from repro.r3_adapter.attention import matching_modules


def _base(layer: nn.Module) -> nn.Module:
    return getattr(layer, "base_layer", layer)


def _width(module: nn.Module) -> int:
    module = _base(module)
    if isinstance(module, nn.LayerNorm):
        return module.normalized_shape[-1]
    return module.out_features


class HookedAdapters(nn.Module):
    """One small module per matched model module, attached with forward hooks."""

    def __init__(self, model: nn.Module, pattern: str):
        super().__init__()
        self.adapters = nn.ModuleDict()
        self._handles = []
        device = next(model.parameters()).device
        for name, module in matching_modules(model, pattern):
            key = name.replace(".", "/")
            self.adapters[key] = self.make(module).to(device)
            self._handles.append(module.register_forward_hook(self.hook(key)))

    def make(self, module: nn.Module) -> nn.Module:
        raise NotImplementedError

    def hook(self, key: str):
        def apply(module, inputs, output):
            return self.adapters[key](module, inputs, output)

        return apply

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


class _ScaleShift(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.scale, self.shift = nn.Parameter(torch.ones(width)), nn.Parameter(torch.zeros(width))

    def forward(self, module, inputs, output):
        return output * self.scale + self.shift


class SSF(HookedAdapters):
    def make(self, module):
        return _ScaleShift(_width(module))


class _GatedPrompts(nn.Module):
    def __init__(self, attention: nn.Module, prompts: int):
        super().__init__()
        dim = _base(attention.qkv).in_features
        self.heads = attention.num_heads
        self.prompts = nn.Parameter(0.02 * torch.randn(prompts, dim))
        self.gate = nn.Parameter(torch.zeros(self.heads))

    def forward(self, attention, inputs, output):
        x = inputs[0]
        B, N, C = x.shape
        H, D = self.heads, C // self.heads
        q = attention.qkv(x)[..., :C].reshape(B, N, H, D).transpose(1, 2)
        _, kp, vp = attention.qkv(self.prompts).chunk(3, dim=-1)
        kp, vp = (t.reshape(-1, H, D).transpose(0, 1) for t in (kp, vp))  # (H, P, D)
        weights = (q @ kp.transpose(-2, -1) * D**-0.5).softmax(dim=-1)
        mixed = (weights @ vp) * self.gate[:, None, None]  # (B, H, N, D)
        merged = mixed.transpose(1, 2).reshape(B, N, C)
        return output + merged @ _base(attention.proj).weight.T


class VPT(HookedAdapters):
    def __init__(self, model: nn.Module, pattern: str, prompts: int):
        self.n_prompts = prompts
        super().__init__(model, pattern)

    def make(self, module):
        return _GatedPrompts(module, self.n_prompts)


class _Bottleneck(nn.Module):
    def __init__(self, width: int, bottleneck: int, scale: float):
        super().__init__()
        self.down, self.up = nn.Linear(width, bottleneck), nn.Linear(bottleneck, width)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)
        self.scale = scale

    def forward(self, mlp, inputs, output):
        return output + self.scale * self.up(torch.relu(self.down(inputs[0])))


class AdaptFormer(HookedAdapters):
    def __init__(self, model: nn.Module, pattern: str, bottleneck: int, scale: float = 0.1):
        self.bottleneck, self.scale = bottleneck, scale
        super().__init__(model, pattern)

    def make(self, module):
        return _Bottleneck(_base(module.fc1).in_features, self.bottleneck, self.scale)
