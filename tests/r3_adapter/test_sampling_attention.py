"""Deformable sampling against naive gathers, and the collapse diagnostics on hand-built
attention matrices and on probabilities read out of a module."""

from __future__ import annotations

import math

import pytest
import torch

from repro.r3_adapter.attention import AttentionCapture, diagnostics, expose_attention
from repro.r3_adapter.model import CrossAttention
from repro.r3_adapter.relational import grid_positions, neighbours, sample_tokens

GRID = (4, 5)  # h, w: not square, so rows and columns cannot be swapped unnoticed


def _tokens(B=2, C=3):
    return torch.randn(B, GRID[0] * GRID[1], C, generator=torch.Generator().manual_seed(0))


def test_integer_offsets_equal_a_naive_gather():
    tokens = _tokens()
    h, w = GRID
    g = torch.Generator().manual_seed(1)
    cols = torch.randint(0, w, (2, 6, 3), generator=g)
    rows = torch.randint(0, h, (2, 6, 3), generator=g)
    positions = torch.stack([cols, rows], dim=-1).float()
    got = sample_tokens(tokens, GRID, positions)
    for b in range(2):
        for q in range(6):
            for m in range(3):
                want = tokens[b, rows[b, q, m] * w + cols[b, q, m]]
                torch.testing.assert_close(got[b, q, m], want, rtol=0, atol=1e-6)


def test_off_grid_positions_clamp_to_the_border():
    tokens = _tokens(B=1)
    positions = torch.tensor([[[[-3.0, 1.0], [7.0, 9.0]]]])  # left of row 1; beyond a corner
    got = sample_tokens(tokens, GRID, positions)
    torch.testing.assert_close(got[0, 0, 0], tokens[0, 1 * 5 + 0], rtol=0, atol=1e-6)
    torch.testing.assert_close(got[0, 0, 1], tokens[0, 3 * 5 + 4], rtol=0, atol=1e-6)


def test_fractional_positions_interpolate_bilinearly():
    tokens = _tokens(B=1)
    x, y = 1.25, 2.5
    got = sample_tokens(tokens, GRID, torch.tensor([[[[x, y]]]]))[0, 0, 0]
    at = lambda r, c: tokens[0, r * 5 + c]  # noqa: E731
    want = (
        0.75 * 0.5 * at(2, 1)
        + 0.25 * 0.5 * at(2, 2)
        + 0.75 * 0.5 * at(3, 1)
        + 0.25 * 0.5 * at(3, 2)
    )
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_neighbours_are_the_replicated_3x3_window():
    field = torch.randn(1, 20, 2)
    near = neighbours(field, GRID)
    h, w = GRID
    for r in range(h):
        for c in range(w):
            window = [
                field[0, min(max(r + dr, 0), h - 1) * w + min(max(c + dc, 0), w - 1)]
                for dr in (-1, 0, 1)
                for dc in (-1, 0, 1)
            ]
            torch.testing.assert_close(near[0, r * w + c], torch.stack(window))


def test_grid_positions_are_column_row():
    pos = grid_positions(GRID)
    assert pos[7].tolist() == [2.0, 1.0]  # token 7 = row 1, column 2 on a 5-wide grid


def test_diagnostics_on_a_hand_built_matrix():
    # 3 queries over 4 keys; query 2 has no correspondent and is left out
    attn = torch.tensor([[[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]]])
    match = torch.tensor([[0, 3, -1]])
    d = diagnostics(attn, match)
    assert d["gt_mass"] == pytest.approx((0.7 + 0.25) / 2)
    h0 = -(0.7 * math.log(0.7) + 3 * 0.1 * math.log(0.1)) / math.log(4)
    assert d["entropy"] == pytest.approx((h0 + 1.0) / 2)
    assert d["precision"] == pytest.approx(0.5)  # argmax of a uniform row is key 0, not 3
    heads = torch.stack([attn, attn.flip(-1)], dim=1)  # head-averaged: a 4-D input
    assert diagnostics(heads, match)["gt_mass"] == pytest.approx(((0.7 + 0.1) / 2 + 0.25) / 2)
    with pytest.raises(ValueError, match="no query"):
        diagnostics(attn, torch.full((1, 3), -1))


def test_capture_reads_the_softmax_the_module_computes():
    torch.manual_seed(0)
    module = torch.nn.Module()
    module.cross_attn = CrossAttention(16, 4)
    q, k = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    with AttentionCapture(module, r"cross_attn$") as cap:
        out = module.cross_attn(q, k, k)
    a = module.cross_attn
    Q = a.projq(q).reshape(2, 5, 4, 4).transpose(1, 2)
    K = a.projk(k).reshape(2, 7, 4, 4).transpose(1, 2)
    naive = torch.softmax(Q @ K.transpose(-1, -2) / 2.0, dim=-1)
    torch.testing.assert_close(cap.probabilities["cross_attn"], naive)
    torch.testing.assert_close(module.cross_attn(q, k, k), out)  # hooks gone, same output
    assert not a.attn_drop._forward_hooks


def test_expose_attention_switches_fused_paths_off():
    module = CrossAttention(8, 2)
    module.fused_attn = True
    expose_attention(module)
    assert module.fused_attn is False
    with pytest.raises(TypeError, match="attn_drop"):
        expose_attention(torch.nn.Linear(2, 2))
