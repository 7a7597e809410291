"""Attach δ-Mem to every attention module of a frozen model, through its projections.

Any module with ``q_proj``, ``k_proj``, ``v_proj`` and ``o_proj`` Linear children counts as
an attention module: the embedded backbone's and Hugging Face Qwen3's (whose q_proj output
goes through q_norm and RoPE afterwards, so Δq lands before both, as in the official code).
Both call q_proj first, then k_proj, v_proj and o_proj, as the read-out order needs.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from repro.delta_mem.memory import HEADS, DeltaMemory, MemoryConfig, StateWritten


class _Steered(nn.Module):
    """proj(x) + Δ; the query side also reads (and, if on, writes) the layer's state from x."""

    def __init__(self, base: nn.Linear, memory: DeltaMemory, head: str):
        super().__init__()
        self.base, self.memory, self.head = base, memory, head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.base(x)
        if self.head == "q":
            self.memory.read_write(x)
        delta = self.memory.steer(self.head)
        return out if delta is None else out + delta.to(out.dtype)


def attention_modules(model: nn.Module) -> dict[str, nn.Module]:
    """Attention modules by name (Hugging Face's: ``model.layers.<i>.self_attn``)."""
    return {
        name: m
        for name, m in model.named_modules()
        if all(isinstance(getattr(m, f"{h}_proj", None), nn.Linear) for h in HEADS)
    }


class DeltaMem(nn.Module):
    """The δ-Mem modules of a frozen model. Only ``memories`` hold trainable parameters.

    Episode use: ``reset()``; ``with dm.phase(writes=True, mask=m): model(history)``;
    ``with dm.phase(writes=False): model(query)``. ``names`` are the attention modules'.
    """

    def __init__(self, model: nn.Module, cfg: MemoryConfig):
        super().__init__()
        model.requires_grad_(False)
        targets = attention_modules(model)
        if not targets:
            raise ValueError("no attention module with q/k/v/o_proj Linear children")
        memories = []
        for attn in targets.values():
            projections = {h: getattr(attn, f"{h}_proj") for h in HEADS}
            outs = {h: p.out_features for h, p in projections.items()}
            memory = DeltaMemory(projections["q"].in_features, outs, cfg)
            memory.to(device=projections["q"].weight.device)
            if cfg.init == "base_slice_fixed":
                memory.init_from_base({h: p.weight for h, p in projections.items()})
            for h, p in projections.items():
                if h == "q" or h in cfg.heads:
                    setattr(attn, f"{h}_proj", _Steered(p, memory, h))
            memories.append(memory)
        self.memories = nn.ModuleList(memories)
        self.names = list(targets)
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

    def write_sparsity(self, target: float) -> torch.Tensor:
        """The official write-sparsity penalty: mean over layers of (mean β − target)², with
        each layer's β averaged over the real tokens of the last forward."""
        means = [m.last_beta_mean for m in self.memories]
        if any(x is None for x in means):
            raise RuntimeError("write_sparsity needs a forward pass first")
        return torch.stack([(x - target) ** 2 for x in means]).mean()

    def write(self, model: nn.Module, tokens: torch.Tensor, mask: torch.Tensor | None = None):
        """Write ``tokens`` into the states from the current ones. The forward stops once the
        last attention module's state is written: nothing after it (that module's attention,
        the later layers, the head) reaches a state, so the states are bitwise those of a whole
        pass. Attention modules must run in the order they were found (the tiny backbone's
        and Qwen3's do)."""
        last = self.memories[-1]
        last.stop_after_write = True
        try:
            with self.phase(writes=True, mask=mask):
                model(tokens)
        except StateWritten:
            pass
        finally:
            last.stop_after_write = False

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
