"""Attach δ-Mem to every attention module of a frozen model, through its q_proj/o_proj.

Any module with ``q_proj`` and ``o_proj`` Linear children counts as an attention module:
the embedded backbone's and Hugging Face Qwen3's (whose q_proj output goes through q_norm
and RoPE afterwards, so Δq lands before both, as in the official code).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from repro.delta_mem.memory import DeltaMemory, MemoryConfig


class _SteeredQ(nn.Module):
    """q_proj(x) + Δq(x); reads (and, if on, writes) the layer's state from x."""

    def __init__(self, base: nn.Linear, memory: DeltaMemory):
        super().__init__()
        self.base, self.memory = base, memory

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.base(x)
        delta = self.memory.steer_q(self.memory.read_write(x))
        return out if delta is None else out + delta.to(out.dtype)


class _SteeredO(nn.Module):
    """o_proj(y) + Δo, from the read-out the same layer's q side just made."""

    def __init__(self, base: nn.Linear, memory: DeltaMemory):
        super().__init__()
        self.base, self.memory = base, memory

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        out = self.base(y)
        delta = self.memory.steer_o()
        return out if delta is None else out + delta.to(out.dtype)


def attention_modules(model: nn.Module) -> list[nn.Module]:
    return [
        m
        for m in model.modules()
        if isinstance(getattr(m, "q_proj", None), nn.Linear)
        and isinstance(getattr(m, "o_proj", None), nn.Linear)
    ]


class DeltaMem(nn.Module):
    """The δ-Mem modules of a frozen model. Only ``memories`` hold trainable parameters.

    Episode use: ``reset()``; ``with dm.phase(writes=True, mask=m): model(history)``;
    ``with dm.phase(writes=False): model(query)``.
    """

    def __init__(self, model: nn.Module, cfg: MemoryConfig):
        super().__init__()
        model.requires_grad_(False)
        targets = attention_modules(model)
        if not targets:
            raise ValueError("no attention module with q_proj and o_proj Linear children")
        memories = []
        for attn in targets:
            q, o = attn.q_proj, attn.o_proj
            memory = DeltaMemory(q.in_features, q.out_features, o.out_features, cfg)
            memory.to(device=q.weight.device)
            if cfg.init == "base_slice_fixed":
                memory.init_from_base(q.weight, o.weight)
            attn.q_proj, attn.o_proj = _SteeredQ(q, memory), _SteeredO(o, memory)
            memories.append(memory)
        self.memories = nn.ModuleList(memories)
        self.cfg = cfg

    def reset(self) -> None:
        """A new episode: zero state everywhere."""
        for memory in self.memories:
            memory.state = None

    def states(self) -> list[torch.Tensor | None]:
        return [m.state for m in self.memories]

    def set_states(self, states: list[torch.Tensor | None]) -> None:
        for memory, state in zip(self.memories, states, strict=True):
            memory.state = state

    @contextlib.contextmanager
    def phase(self, *, writes: bool, mask: torch.Tensor | None = None):
        """Run the model with writes on or off; ``mask`` marks real tokens (padding: False)."""
        for memory in self.memories:
            memory.writes, memory.mask = writes, mask
        try:
            yield self
        finally:
            for memory in self.memories:
                memory.writes, memory.mask, memory._read = True, None, None
