"""3R-lite: Deformable Retrieval → Relational Rewiring → Consistency Refinement (brief §2).

The paper's equations are not public; this is the brief's reconstruction, behind one
interface so that it can be corrected in one place: ``RelationalAdapter(site) -> delta``,
where the site (repro.r3_adapter.sites) hands over one cross-view attention call — the query
tokens, the other view's frozen keys/values on their patch grid and the frozen relation A —
and ``delta`` is added to that attention's output.

1. Retrieval: anchor r_q = argmax_k A[q, k] (or the soft-argmax); raw flow f_q = r_q − p_q;
   consensus flow f̄_q = mean of f over q's 3×3 neighbourhood; M candidates at
   p_q + f̄_q + Δ_{q,m} with Δ = fixed stencil + W_Δ x_q (W_Δ zero-initialised), plus the raw
   anchor; keys/values bilinearly sampled there (Deformable-DETR style).
2. Rewiring: Ã_{q,m} = softmax_m(⟨W'_q x_q, W'_k k̃_{q,m}⟩/√d' + φ(Δ_{q,m}) + w·c_{q,m}),
   c = fraction (Gaussian-weighted) of q's neighbours whose raw flow agrees with candidate
   m's flow (neighbourhood consensus); message μ_q = Σ_m Ã_{q,m} W'_v ṽ_{q,m}.
3. Refinement: delta = g ⊙ W_o μ_q with a per-channel gate g initialised at 0, so the adapted
   model equals the frozen one at step 0 (``zero_init: gate``, the brief's form). The other
   parameterisation with the same parameters, ``zero_init: projection``, starts W_o at 0 and
   g at 1: also the frozen model at step 0, but W_o is not throttled by a small gate.

Switches (the ablation): ``retrieval`` off = candidates on a fixed stencil at the query's own
position (no anchor, no consensus, no learned offsets); ``rewiring`` off = uniform weights
over the candidates; ``refinement`` off = ungated residual (not the identity at step 0);
``consensus`` and ``learned_offsets`` separately.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

STENCIL = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


@dataclasses.dataclass(frozen=True)
class RelationalConfig:
    candidates: int = 6  # M stencil points (≤ 9), plus the raw anchor when include_anchor
    dim: int = 16  # d' of the rewired relation
    anchor: str = "argmax"  # argmax | soft: where retrieval looks in the frozen relation
    include_anchor: bool = True
    consensus_scale: float = 1.0  # τ (patches) of the flow-agreement kernel
    retrieval: bool = True
    learned_offsets: bool = True
    consensus: bool = True
    rewiring: bool = True
    refinement: bool = True
    zero_init: str = "gate"  # gate: g = 0 (the brief) | projection: W_o = 0, g = 1

    def __post_init__(self):
        if not 1 <= self.candidates <= len(STENCIL):
            raise ValueError(f"candidates must be in 1..{len(STENCIL)}")
        if self.anchor not in ("argmax", "soft"):
            raise ValueError("anchor must be argmax or soft")
        if self.zero_init not in ("gate", "projection"):
            raise ValueError("zero_init must be gate or projection")


@dataclasses.dataclass
class RelationSite:
    """One cross-view attention call, as the relational adapter sees it."""

    query: torch.Tensor  # (B, Nq, d_q) query-side input tokens
    keys: torch.Tensor  # (B, Nk, d_k) the other view's keys (frozen projection)
    values: torch.Tensor  # (B, Nk, d_k)
    relation: torch.Tensor  # (B, Nq, Nk) frozen attention, head-averaged, rows sum to 1
    query_grid: tuple[int, int]  # (h, w) of the query tokens
    key_grid: tuple[int, int]


def grid_positions(grid: tuple[int, int], device=None) -> torch.Tensor:
    """(h·w, 2) patch positions (x = column, y = row), row-major."""
    h, w = grid
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack([cols, rows], dim=-1).reshape(-1, 2).float().to(device)


def sample_tokens(tokens: torch.Tensor, grid: tuple[int, int], positions: torch.Tensor):
    """Bilinear samples of (B, N, C) tokens on an h×w grid at (B, Q, M, 2) (x, y) positions.

    Integer positions give the tokens themselves; positions off the grid are clamped to
    its border. Returns (B, Q, M, C).
    """
    B, N, C = tokens.shape
    h, w = grid
    image = tokens.transpose(1, 2).reshape(B, C, h, w)
    scale = positions.new_tensor([max(w - 1, 1), max(h - 1, 1)])
    normalised = 2 * positions / scale - 1  # align_corners=True: -1 and 1 are the corners
    out = F.grid_sample(
        image, normalised, mode="bilinear", padding_mode="border", align_corners=True
    )
    return out.permute(0, 2, 3, 1)


def neighbours(field: torch.Tensor, grid: tuple[int, int]) -> torch.Tensor:
    """(B, N, 2) → (B, N, 9, 2): each token's 3×3 neighbourhood (edges replicated)."""
    B, N, D = field.shape
    h, w = grid
    image = F.pad(field.transpose(1, 2).reshape(B, D, h, w), (1, 1, 1, 1), mode="replicate")
    patches = F.unfold(image, kernel_size=3)  # (B, D·9, N)
    return patches.reshape(B, D, 9, N).permute(0, 3, 2, 1)


class RelationalAdapter(nn.Module):
    def __init__(self, cfg: RelationalConfig, *, query_dim: int, key_dim: int, out_dim: int):
        super().__init__()
        self.cfg = cfg
        M = cfg.candidates
        self.register_buffer("stencil", torch.tensor(STENCIL[:M], dtype=torch.float32))
        self.offsets = None
        if cfg.retrieval and cfg.learned_offsets:
            self.offsets = nn.Linear(query_dim, 2 * M)
            nn.init.zeros_(self.offsets.weight)
            nn.init.zeros_(self.offsets.bias)
        if cfg.rewiring:
            self.to_q, self.to_k = nn.Linear(query_dim, cfg.dim), nn.Linear(key_dim, cfg.dim)
            self.offset_logit = nn.Linear(2, 1)  # φ(Δ)
            nn.init.zeros_(self.offset_logit.weight)
            nn.init.zeros_(self.offset_logit.bias)
            if cfg.retrieval and cfg.consensus:
                self.consensus_weight = nn.Parameter(torch.ones(()))  # ψ(c) = w·c
        self.to_v = nn.Linear(key_dim, cfg.dim)
        self.out = nn.Linear(cfg.dim, out_dim)
        self.gate = None
        if cfg.refinement and cfg.zero_init == "gate":
            self.gate = nn.Parameter(torch.zeros(out_dim))
        elif cfg.refinement:
            self.gate = nn.Parameter(torch.ones(out_dim))
            nn.init.zeros_(self.out.weight)
            nn.init.zeros_(self.out.bias)

    def candidates(self, site: RelationSite):
        """Candidate positions (B, Nq, M', 2), offsets from the centre, neighbours' flows."""
        B, Nq, _ = site.query.shape
        pq = grid_positions(site.query_grid, site.query.device)
        offsets = self.stencil.expand(B, Nq, -1, -1)
        if not self.cfg.retrieval:
            return pq[:, None] + offsets, offsets, None
        pk = grid_positions(site.key_grid, site.query.device)
        if self.cfg.anchor == "argmax":
            anchor = pk[site.relation.argmax(dim=-1)]
        else:
            anchor = site.relation @ pk
        near = neighbours(anchor - pq, site.query_grid)  # (B, Nq, 9, 2) raw flows around q
        centre = pq + near.mean(dim=2)
        if self.offsets is not None:
            offsets = offsets + self.offsets(site.query).view(B, Nq, -1, 2)
        positions = centre[:, :, None] + offsets
        if self.cfg.include_anchor:
            positions = torch.cat([positions, anchor[:, :, None]], dim=2)
            offsets = torch.cat([offsets, (anchor - centre)[:, :, None]], dim=2)
        return positions, offsets, near

    def agreement(self, positions, near, grid) -> torch.Tensor:
        """c_{q,m}: mean over q's 3×3 neighbours n of exp(−‖(s_{q,m} − p_q) − f_n‖² / τ²)."""
        candidate_flow = positions - grid_positions(grid, positions.device)[:, None]
        dist = (candidate_flow[:, :, :, None] - near[:, :, None]).square().sum(-1)
        return torch.exp(-dist / self.cfg.consensus_scale**2).mean(dim=-1)

    def weights(self, site: RelationSite, keys, positions, offsets, near) -> torch.Tensor:
        """Ã (B, Nq, M'): the rewired relation over the candidates (``keys``: W'_k k̃)."""
        if not self.cfg.rewiring:
            M = positions.shape[2]
            return positions.new_full(positions.shape[:3], 1.0 / M)
        q = self.to_q(site.query)[:, :, None]  # (B, Nq, 1, d')
        logits = (q * keys).sum(-1) / self.cfg.dim**0.5
        logits = logits + self.offset_logit(offsets).squeeze(-1)
        if near is not None and self.cfg.consensus:
            consensus = self.agreement(positions, near, site.query_grid)
            logits = logits + self.consensus_weight * consensus
        return logits.softmax(dim=-1)

    def forward(self, site: RelationSite) -> torch.Tensor:
        """The (B, Nq, out_dim) correction added to the attention's output."""
        positions, offsets, near = self.candidates(site)
        # Bilinear sampling is linear with weights summing to 1, so W'(S(K)) = S(W' K):
        # projecting first samples d' channels instead of the attention's width.
        parts = [self.to_k(site.keys)] if self.cfg.rewiring else []
        sampled = sample_tokens(
            torch.cat([*parts, self.to_v(site.values)], dim=-1), site.key_grid, positions
        )
        keys, values = sampled[..., : self.cfg.dim], sampled[..., -self.cfg.dim :]
        weights = self.weights(site, keys, positions, offsets, near)
        self.last_weights, self.last_positions = weights.detach(), positions.detach()
        delta = self.out((weights[..., None] * values).sum(dim=2))
        return delta * self.gate if self.gate is not None else delta


def splat(weights: torch.Tensor, positions: torch.Tensor, grid: tuple[int, int]) -> torch.Tensor:
    """Spread candidate weights (B, Q, M) at (B, Q, M, 2) positions onto the h×w key grid,
    bilinearly (positions clamped to the grid, as sampling does): (B, Q, h·w)."""
    h, w = grid
    x = positions[..., 0].clamp(0, w - 1)
    y = positions[..., 1].clamp(0, h - 1)
    x0, y0 = x.floor(), y.floor()
    out = weights.new_zeros(*weights.shape[:2], h * w)
    for dx in (0, 1):
        for dy in (0, 1):
            cx, cy = (x0 + dx).clamp(max=w - 1), (y0 + dy).clamp(max=h - 1)
            share = (1 - (x - x0 - dx).abs()) * (1 - (y - y0 - dy).abs())
            out.scatter_add_(2, (cy * w + cx).long(), weights * share.clamp(min=0))
    return out
