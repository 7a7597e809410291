"""The embedded backbone: a tiny pre-LN causal transformer with learned positions.

Its attention names its projections q_proj/k_proj/v_proj/o_proj like Hugging Face's Qwen3,
so the same wrapper attaches δ-Mem to both.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass(frozen=True)
class BackboneConfig:
    vocab: int
    d_model: int = 64
    heads: int = 2
    layers: int = 2
    mlp: int = 256
    max_positions: int = 40


class Attention(nn.Module):
    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.heads = cfg.heads
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (
            nn.Linear(cfg.d_model, cfg.d_model) for _ in range(4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape

        def split(y):
            return y.view(B, T, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.self_attn = Attention(cfg)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.mlp), nn.GELU(), nn.Linear(cfg.mlp, cfg.d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, cfg: BackboneConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        self.position = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, vocab); positions start at 0 in every window."""
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))
