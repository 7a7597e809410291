"""Local module trees with DUSt3R's and VGGT's module names and forward semantics.

Written for the tests from the public architecture descriptions (not the official code):
DUSt3R — ``enc_blocks``, ``decoder_embed``, ``dec_blocks``/``dec_blocks2`` of decoder blocks
(``attn`` with fused ``qkv``; ``cross_attn(query, key, value, qpos, kpos)`` with
``projq``/``projk``/``projv``/``proj``; explicit softmax through ``attn_drop``; RoPE on q and
k), ``dec_norm``, ``downstream_head1``/``downstream_head2``; VGGT — ``aggregator`` with
``camera_token``, ``register_token``, ``patch_start_idx``, alternating ``frame_blocks`` and
``global_blocks`` whose ``attn(x, pos=...)`` uses PyTorch's fused SDPA unless
``fused_attn`` is False.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def toy_rope(t: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """A position-dependent rotation of channel pairs (enough to change the logits)."""
    angle = (pos[:, None, :, :1].float() + 2 * pos[:, None, :, 1:].float()) * 0.3
    a, b = t[..., 0::2], t[..., 1::2]
    return torch.stack(
        [a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1
    ).flatten(-2)


def _heads(x, h):
    B, N, C = x.shape
    return x.reshape(B, N, h, C // h).transpose(1, 2)


class CroCoAttention(nn.Module):
    def __init__(self, dim, heads, rope):
        super().__init__()
        self.num_heads, self.scale, self.rope = heads, (dim // heads) ** -0.5, rope
        self.qkv, self.attn_drop = nn.Linear(dim, 3 * dim), nn.Dropout(0.0)
        self.proj, self.proj_drop = nn.Linear(dim, dim), nn.Dropout(0.0)

    def forward(self, x, xpos):
        q, k, v = (_heads(t, self.num_heads) for t in self.qkv(x).chunk(3, -1))
        q, k = self.rope(q, xpos), self.rope(k, xpos)
        attn = self.attn_drop((q @ k.transpose(-2, -1) * self.scale).softmax(-1))
        return self.proj_drop(self.proj((attn @ v).transpose(1, 2).flatten(2)))


class CroCoCrossAttention(nn.Module):
    def __init__(self, dim, heads, rope):
        super().__init__()
        self.num_heads, self.scale, self.rope = heads, (dim // heads) ** -0.5, rope
        self.projq, self.projk, self.projv = (nn.Linear(dim, dim) for _ in range(3))
        self.attn_drop, self.proj, self.proj_drop = (
            nn.Dropout(0.0),
            nn.Linear(dim, dim),
            nn.Dropout(0.0),
        )

    def forward(self, query, key, value, qpos, kpos):
        q = self.rope(_heads(self.projq(query), self.num_heads), qpos)
        k = self.rope(_heads(self.projk(key), self.num_heads), kpos)
        v = _heads(self.projv(value), self.num_heads)
        attn = self.attn_drop((q @ k.transpose(-2, -1) * self.scale).softmax(-1))
        return self.proj_drop(self.proj((attn @ v).transpose(1, 2).flatten(2)))


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class DecoderBlock(nn.Module):
    def __init__(self, dim, heads, rope):
        super().__init__()
        self.norm1, self.norm2, self.norm3, self.norm_y = (nn.LayerNorm(dim) for _ in range(4))
        self.attn, self.cross_attn = (
            CroCoAttention(dim, heads, rope),
            CroCoCrossAttention(dim, heads, rope),
        )
        self.mlp = Mlp(dim)

    def forward(self, x, y, xpos, ypos):
        x = x + self.attn(self.norm1(x), xpos)
        y_ = self.norm_y(y)
        x = x + self.cross_attn(self.norm2(x), y_, y_, xpos, ypos)
        return x + self.mlp(self.norm3(x)), y


class EncoderBlock(nn.Module):
    def __init__(self, dim, heads, rope):
        super().__init__()
        self.norm1, self.attn, self.norm2, self.mlp = (
            nn.LayerNorm(dim),
            CroCoAttention(dim, heads, rope),
            nn.LayerNorm(dim),
            Mlp(dim),
        )

    def forward(self, x, pos):
        x = x + self.attn(self.norm1(x), pos)
        return x + self.mlp(self.norm2(x))


class TinyDUSt3R(nn.Module):
    """forward(view1, view2) -> (res1, res2): ``pts3d`` / ``pts3d_in_other_view`` (B, h, w, 3)
    and ``conf``; one pixel per patch."""

    def __init__(self, grid=(3, 4), dim=16, heads=2, depth=2):
        super().__init__()
        self.grid = grid
        self.patch_embed = nn.Linear(3, dim)  # one "pixel" per patch in this tree
        self.enc_blocks = nn.ModuleList(EncoderBlock(dim, heads, toy_rope) for _ in range(1))
        self.enc_norm, self.decoder_embed = nn.LayerNorm(dim), nn.Linear(dim, dim)
        self.dec_blocks = nn.ModuleList(DecoderBlock(dim, heads, toy_rope) for _ in range(depth))
        self.dec_blocks2 = nn.ModuleList(DecoderBlock(dim, heads, toy_rope) for _ in range(depth))
        self.dec_norm = nn.LayerNorm(dim)
        self.downstream_head1, self.downstream_head2 = nn.Linear(dim, 4), nn.Linear(dim, 4)

    def positions(self, B):
        h, w = self.grid
        rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        return torch.stack([rows, cols], -1).reshape(1, -1, 2).expand(B, -1, -1)

    def _encode(self, img):
        B = img.shape[0]
        x, pos = self.patch_embed(img.flatten(2).transpose(1, 2)), self.positions(B)
        for blk in self.enc_blocks:
            x = blk(x, pos)
        return self.enc_norm(x), pos

    def forward(self, view1, view2):
        (f1, p1), (f2, p2) = self._encode(view1["img"]), self._encode(view2["img"])
        f1, f2 = self.decoder_embed(f1), self.decoder_embed(f2)
        for blk1, blk2 in zip(self.dec_blocks, self.dec_blocks2, strict=True):
            f1, f2 = blk1(f1, f2, p1, p2)[0], blk2(f2, f1, p2, p1)[0]
        out1 = self.downstream_head1(self.dec_norm(f1)).unflatten(1, self.grid)  # (B, h, w, 4)
        out2 = self.downstream_head2(self.dec_norm(f2)).unflatten(1, self.grid)
        res1 = {"pts3d": out1[..., :3], "conf": 1 + out1[..., 3].exp()}
        res2 = {"pts3d_in_other_view": out2[..., :3], "conf": 1 + out2[..., 3].exp()}
        return res1, res2


class VGGTAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.num_heads, self.head_dim = heads, dim // heads
        self.scale, self.fused_attn = self.head_dim**-0.5, True
        self.qkv, self.q_norm, self.k_norm = nn.Linear(dim, 3 * dim), nn.Identity(), nn.Identity()
        self.attn_drop, self.proj, self.proj_drop = (
            nn.Dropout(0.0),
            nn.Linear(dim, dim),
            nn.Dropout(0.0),
        )
        self.rope = toy_rope

    def forward(self, x, pos=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.rope(self.q_norm(q), pos), self.rope(self.k_norm(k), pos)
        if self.fused_attn:
            x = F.scaled_dot_product_attention(q, k, v)
        else:
            attn = self.attn_drop(((q * self.scale) @ k.transpose(-2, -1)).softmax(-1))
            x = attn @ v
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(B, N, C)))


class VGGTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.attn, self.ls1 = (
            nn.LayerNorm(dim),
            VGGTAttention(dim, heads),
            nn.Identity(),
        )
        self.norm2, self.mlp, self.ls2 = nn.LayerNorm(dim), Mlp(dim), nn.Identity()

    def forward(self, x, pos=None):
        x = x + self.ls1(self.attn(self.norm1(x), pos=pos))
        return x + self.ls2(self.mlp(self.norm2(x)))


class Aggregator(nn.Module):
    def __init__(self, grid, dim, heads, depth, registers=2):
        super().__init__()
        self.grid, self.patch_start_idx = grid, 1 + registers
        self.patch_embed = nn.Linear(3, dim)
        self.camera_token = nn.Parameter(torch.randn(1, 2, 1, dim))
        self.register_token = nn.Parameter(torch.randn(1, 2, registers, dim))
        self.frame_blocks = nn.ModuleList(VGGTBlock(dim, heads) for _ in range(depth))
        self.global_blocks = nn.ModuleList(VGGTBlock(dim, heads) for _ in range(depth))

    def forward(self, images):
        B, S = images.shape[:2]
        patches = self.patch_embed(images.flatten(3).transpose(2, 3))  # (B, S, h·w, C)
        special = torch.cat([self.camera_token, self.register_token], dim=2)  # first frame, rest
        special = torch.cat([special[:, :1], special[:, 1:].expand(1, S - 1, -1, -1)], dim=1)
        tokens = torch.cat([special.expand(B, -1, -1, -1), patches], dim=2)
        P, C = tokens.shape[2:]
        h, w = self.grid
        rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        pos = torch.stack([rows, cols], -1).reshape(1, 1, -1, 2) + 1
        pos = torch.cat([torch.zeros(1, 1, self.patch_start_idx, 2, dtype=pos.dtype), pos], 2)
        pos = pos.expand(B, S, -1, -1)
        x = tokens
        for frame, glob in zip(self.frame_blocks, self.global_blocks, strict=True):
            x = frame(x.reshape(B * S, P, C), pos=pos.reshape(B * S, P, 2))
            x = glob(x.reshape(B, S * P, C), pos=pos.reshape(B, S * P, 2))
        return x.reshape(B, S, P, C)


class TinyVGGT(nn.Module):
    """forward(images (B, S, 3, h, w)) -> {"world_points": (B, S, h, w, 3), ...}."""

    def __init__(self, grid=(3, 4), dim=16, heads=2, depth=2):
        super().__init__()
        self.aggregator = Aggregator(grid, dim, heads, depth)
        self.point_head = nn.Linear(dim, 4)

    def forward(self, images):
        tokens = self.aggregator(images)[:, :, self.aggregator.patch_start_idx :]
        out = self.point_head(tokens).unflatten(2, self.aggregator.grid)  # (B, S, h, w, 4)
        return {"world_points": out[..., :3], "world_points_conf": 1 + out[..., 3].exp()}
