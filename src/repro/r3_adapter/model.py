"""A DUSt3R-like tiny two-view transformer with DUSt3R's module names.

Both views' tokens go through one decoder stack (``dec_blocks``; DUSt3R keeps a second copy,
``dec_blocks2``, for view 2, which the full-scale hooks also match): self-attention
(``attn``: fused ``qkv`` and ``proj``), cross-attention to the other view (``cross_attn``:
``projq``/``projk``/``projv``/``proj``) and an MLP (``fc1``/``fc2``), pre-norm. Attention is
computed explicitly and passes through ``attn_drop``, as in CroCo's blocks, so the
probabilities can be read by a hook on that module (repro.r3_adapter.attention).

Input per view: a texture observation and xyz (view 1's depth-sensor points; zeros for
view 2). Heads: view 2's pointmap in view 1's frame, and match logits of every view-2 patch
against every view-1 token plus a dustbin ("no correspondent").
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    tokens: int  # patches per view
    channels: int  # texture channels
    dim: int = 64
    heads: int = 4
    depth: int = 3
    mlp_ratio: float = 4.0


def _split(x: torch.Tensor, heads: int) -> torch.Tensor:
    B, N, C = x.shape
    return x.reshape(B, N, heads, C // heads).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    B, H, N, D = x.shape
    return x.transpose(1, 2).reshape(B, N, H * D)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.num_heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_drop = nn.Dropout(0.0)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (_split(t, self.num_heads) for t in self.qkv(x).chunk(3, dim=-1))
        attn = self.attn_drop(((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1))
        return self.proj(_merge(attn @ v))


class CrossAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.num_heads, self.scale = heads, (dim // heads) ** -0.5
        self.projq, self.projk, self.projv = (nn.Linear(dim, dim) for _ in range(3))
        self.attn_drop = nn.Dropout(0.0)
        self.proj = nn.Linear(dim, dim)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        q = _split(self.projq(query), self.num_heads)
        k = _split(self.projk(key), self.num_heads)
        v = _split(self.projv(value), self.num_heads)
        attn = self.attn_drop(((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1))
        return self.proj(_merge(attn @ v))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class DecoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.norm1, self.norm2, self.norm3, self.norm_y = (nn.LayerNorm(dim) for _ in range(4))
        self.attn = Attention(dim, heads)
        self.cross_attn = CrossAttention(dim, heads)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        y_ = self.norm_y(y)
        x = x + self.cross_attn(self.norm2(x), y_, y_)
        return x + self.mlp(self.norm3(x))


class TwoViewTransformer(nn.Module):
    """forward(obs1, xyz1, obs2) -> {"points": (B, N, 3), "match": (B, N, N + 1)}."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.dim
        self.patch_embed = nn.Linear(cfg.channels + 3, d)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(cfg.tokens, d))
        self.view_embed = nn.Parameter(0.02 * torch.randn(2, d))
        self.dec_blocks = nn.ModuleList(
            DecoderBlock(d, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.depth)
        )
        self.dec_norm = nn.LayerNorm(d)
        self.head_points = nn.Linear(d, 3)
        self.head_match = nn.Linear(d, d)  # matching descriptors, compared across views
        self.head_dustbin = nn.Linear(d, 1)

    def head_parameters(self) -> list[nn.Parameter]:
        return [p for n, p in self.named_parameters() if n.startswith("head_")]

    def forward(self, obs1: torch.Tensor, xyz1: torch.Tensor, obs2: torch.Tensor):
        B, N, _ = obs1.shape
        x1 = self.patch_embed(torch.cat([obs1, xyz1], dim=-1)) + self.view_embed[0]
        x2 = self.patch_embed(torch.cat([obs2, torch.zeros_like(xyz1)], dim=-1))
        x = torch.cat([x1, x2 + self.view_embed[1]]) + self.pos_embed  # views stacked on batch
        for block in self.dec_blocks:
            x = block(x, x.roll(B, dims=0))  # each view attends to the other
        f1, f2 = self.dec_norm(x).split(B)
        m1, m2 = self.head_match(f1), self.head_match(f2)
        scores = m2 @ m1.transpose(1, 2) / m1.shape[-1] ** 0.5
        return {
            "points": self.head_points(f2),
            "match": torch.cat([scores, self.head_dustbin(f2)], dim=-1),
        }
