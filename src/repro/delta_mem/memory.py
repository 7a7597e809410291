"""One δ-Mem module per attention layer: read → steer (Δq, Δo) → write (brief §2.1).

q_t = normalize(tanh(W_q x)), k_t = normalize(tanh(W_k x)), v_t = W_v x, rankwise
β_t = σ(W_β x + b_β) with W_β = 0 and b_β = −1.5 at init, λ = 1 − β. The read-out
m_t = S_{t−1} q_t (read before write) gives Δq = (α/r) W_Δq m_t, added to the query
projection's output (before q-norm and RoPE), and Δo = (α/r) W_Δo m_t, added after the
output projection. With S = 0, m = 0: the wrapped model equals the base whatever the heads.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from repro.delta_mem.scan import MODES, delta_rule_scan

HEADS = ("q", "o")
INITS = ("zero", "base_slice_fixed")


@dataclasses.dataclass(frozen=True)
class MemoryConfig:
    rank: int = 8
    alpha: float = 16.0  # Δ scale α / r (= 2 at r = 8)
    mode: str = "standard"
    heads: tuple[str, ...] = HEADS  # which corrections are on: Q-only / O-only ablations
    init: str = "zero"  # Δ-head init; base_slice_fixed is the official training scripts'
    init_gain: float = 0.05
    beta_bias: float = -1.5
    chunk_size: int | None = 32  # None = the sequential scan

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if not self.heads or set(self.heads) - set(HEADS):
            raise ValueError(f"heads must be a non-empty subset of {HEADS}, got {self.heads}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")


class DeltaMemory(nn.Module):
    """The per-layer state and its trainable maps. ``state`` is (B, r, r) or None (= zeros).

    ``read_write`` is called with the attention input; it stores the read-out for the
    output side (``delta_o``), which the attention calls later in the same forward.
    """

    def __init__(self, d_model: int, q_out: int, o_out: int, cfg: MemoryConfig):
        super().__init__()
        self.cfg = cfg
        r = cfg.rank
        self.qkv = nn.Linear(d_model, 3 * r, bias=False)
        self.beta = nn.Linear(d_model, r)
        nn.init.zeros_(self.beta.weight)
        nn.init.constant_(self.beta.bias, cfg.beta_bias)
        self.delta_q = nn.Linear(r, q_out, bias=False) if "q" in cfg.heads else None
        self.delta_o = nn.Linear(r, o_out, bias=False) if "o" in cfg.heads else None
        for head in (self.delta_q, self.delta_o):
            if head is not None:
                nn.init.zeros_(head.weight)
        self.state: torch.Tensor | None = None
        self.writes = True
        self.mask: torch.Tensor | None = None  # (B, T) bool, False = padding (never written)
        self._read: torch.Tensor | None = None

    @property
    def scale(self) -> float:
        return self.cfg.alpha / self.cfg.rank

    def init_from_base(self, q_weight: torch.Tensor, o_weight: torch.Tensor) -> None:
        """``base_slice_fixed``: L2-normalised first r columns of the base q/o weights × gain."""
        r, gain = self.cfg.rank, self.cfg.init_gain
        for head, weight in ((self.delta_q, q_weight), (self.delta_o, o_weight)):
            if head is not None:
                head.weight.data.copy_(gain * F.normalize(weight[:, :r].detach(), dim=0))

    def read_write(self, x: torch.Tensor) -> torch.Tensor:
        """Read-outs m (B, T, r) for hidden states x (B, T, d); writes x into the state if on."""
        x = x.to(self.qkv.weight.dtype)  # the memory stays in float32 on a bf16 backbone
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k = F.normalize(torch.tanh(q), dim=-1), F.normalize(torch.tanh(k), dim=-1)
        beta = torch.sigmoid(self.beta(x))
        state = self.state
        if self.writes:
            m, new = delta_rule_scan(
                q,
                k,
                v,
                beta,
                mode=self.cfg.mode,
                chunk_size=self.cfg.chunk_size,
                state=state,
                mask=self.mask,
            )
            self.state = new
        elif state is None:  # nothing written and nothing to write: m = 0
            m = q.new_zeros(*q.shape[:-1], self.cfg.rank)
        else:
            m = q @ state.transpose(-1, -2)  # S q_t for every t
        self._read = m
        self.last_beta = beta
        return m

    def steer_q(self, m: torch.Tensor) -> torch.Tensor | None:
        return None if self.delta_q is None else self.scale * self.delta_q(m)

    def steer_o(self) -> torch.Tensor | None:
        if self.delta_o is None:
            return None
        if self._read is None:
            raise RuntimeError("the output projection ran before the query projection")
        return self.scale * self.delta_o(self._read)


QWEN3_4B = {"hidden": 2560, "q_out": 32 * 128, "layers": 36}


def qwen3_4b_trainable_parameters(rank: int = 8) -> tuple[int, int]:
    """(per layer, total) trainable parameters with Q/O heads at Qwen3-4B's sizes (brief §2.4)."""
    with torch.device("meta"):
        layer = DeltaMemory(
            QWEN3_4B["hidden"], QWEN3_4B["q_out"], QWEN3_4B["hidden"], MemoryConfig(rank=rank)
        )
    per_layer = sum(p.numel() for p in layer.parameters())
    return per_layer, per_layer * QWEN3_4B["layers"]
