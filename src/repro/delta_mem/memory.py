"""One δ-Mem module per attention layer: read → steer (Δq, Δk, Δv, Δo) → write (brief §2.1).

q_t = normalize(tanh(W_q x)), k_t = normalize(tanh(W_k x)), v_t = W_v x, rankwise
β_t = σ(W_β x + b_β) with W_β = 0 and b_β = −1.5 at init, λ = 1 − β. The read-out
m_t = S_{t−1} q_t (read before write) gives Δq = (α/r) W_Δq m_t, added to the query
projection's output (before q-norm and RoPE), and Δo = (α/r) W_Δo m_t, added after the
output projection; Δk and Δv (off in the released configuration) are added to the key and
value projections' outputs. With S = 0, m = 0: the wrapped model equals the base whatever
the heads. Masked (padding) tokens neither write nor read (m = 0), as in the official code.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from repro.delta_mem.scan import DEFAULT_CHUNK, MODES, delta_rule_scan

HEADS = ("q", "k", "v", "o")
INITS = ("zero", "base_slice_fixed")
NORM_EPS = 1e-6  # the official q/k normalisation's eps


@dataclasses.dataclass(frozen=True)
class MemoryConfig:
    rank: int = 8
    alpha: float = 16.0  # Δ scale α / r (= 2 at r = 8)
    mode: str = "standard"
    heads: tuple[str, ...] = ("q", "o")  # the released configuration; Q-only / O-only ablations
    init: str = "zero"  # Δ-head init; base_slice_fixed is the official training scripts'
    init_gain: float = 0.05
    beta_bias: float = -1.5
    chunk_size: int | None = DEFAULT_CHUNK  # None = the sequential scan

    def __post_init__(self) -> None:
        object.__setattr__(self, "heads", tuple(self.heads))  # config files give lists
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if not self.heads or set(self.heads) - set(HEADS):
            raise ValueError(f"heads must be a non-empty subset of {HEADS}, got {self.heads}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")


class DeltaMemory(nn.Module):
    """The per-layer state and its trainable maps. ``state`` is (B, r, r) or None (= zeros).

    ``read_write`` is called with the attention input (by the query side); it stores the
    read-out for the key, value and output sides, which the attention calls later in the
    same forward. ``outs`` gives each Δ head's output width ({"q": ..., "o": ...}).
    """

    def __init__(self, d_model: int, outs: dict[str, int], cfg: MemoryConfig):
        super().__init__()
        self.cfg = cfg
        r = cfg.rank
        self.qkv = nn.Linear(d_model, 3 * r, bias=False)
        self.beta = nn.Linear(d_model, r)
        nn.init.zeros_(self.beta.weight)
        nn.init.constant_(self.beta.bias, cfg.beta_bias)
        for head in HEADS:
            layer = nn.Linear(r, outs[head], bias=False) if head in cfg.heads else None
            if layer is not None:
                nn.init.zeros_(layer.weight)
            setattr(self, f"delta_{head}", layer)
        self.state: torch.Tensor | None = None
        self.writes = True
        self.mask: torch.Tensor | None = None  # (B, T) bool, False = padding
        self._read: torch.Tensor | None = None
        self.last_beta_mean: torch.Tensor | None = None  # over the last forward's real tokens
        self.stop_after_write = False  # end the forward once written (DeltaMem.write)

    @property
    def scale(self) -> float:
        return self.cfg.alpha / self.cfg.rank

    def init_from_base(self, weights: dict[str, torch.Tensor]) -> None:
        """``base_slice_fixed``: L2-normalised first r columns of the base projection × gain."""
        r, gain = self.cfg.rank, self.cfg.init_gain
        for name, weight in weights.items():
            head = getattr(self, f"delta_{name}")
            if head is not None:
                head.weight.data.copy_(gain * F.normalize(weight[:, :r].detach(), dim=0))

    def read_write(self, x: torch.Tensor) -> torch.Tensor:
        """Read-outs m (B, T, r) for hidden states x (B, T, d); writes x into the state if on."""
        x = x.to(self.qkv.weight.dtype)  # the memory stays in float32 on a bf16 backbone
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k = (F.normalize(torch.tanh(y), dim=-1, eps=NORM_EPS) for y in (q, k))
        beta = torch.sigmoid(self.beta(x))
        mask = self.mask
        if self.writes:
            m, self.state = delta_rule_scan(
                q,
                k,
                v,
                beta,
                mode=self.cfg.mode,
                chunk_size=self.cfg.chunk_size,
                state=self.state,
                mask=mask,
            )
        elif self.state is None:  # nothing written and nothing to write: m = 0
            m = q.new_zeros(*q.shape[:-1], self.cfg.rank)
        else:
            m = q @ self.state.transpose(-1, -2)  # S q_t for every t
            if mask is not None:
                m = m * mask.unsqueeze(-1)
        self._read = m
        self.last_beta = beta
        if mask is None:
            self.last_beta_mean = beta.mean()
        else:
            weight = mask.unsqueeze(-1).to(beta.dtype)
            self.last_beta_mean = (beta * weight).sum() / (weight.sum() * beta.shape[-1]).clamp_min(
                1
            )
        if self.stop_after_write and self.writes:
            raise StateWritten
        return m

    def steer(self, head: str) -> torch.Tensor | None:
        """(α/r) W_Δ m for one head, from this forward's read-out; None if the head is off."""
        layer = getattr(self, f"delta_{head}")
        if layer is None:
            return None
        if self._read is None:
            raise RuntimeError(f"the {head} side ran before the query projection")
        return self.scale * layer(self._read)


class StateWritten(Exception):  # noqa: N818 (a signal, not an error)
    """Raised by the last layer's memory once its state is written (DeltaMem.write)."""


QWEN3_4B = {"hidden": 2560, "q_out": 32 * 128, "kv_out": 8 * 128, "layers": 36}


def qwen3_4b_trainable_parameters(rank: int = 8) -> tuple[int, int]:
    """(per layer, total) trainable parameters with Q/O heads at Qwen3-4B's sizes (brief §2.4)."""
    d, kv = QWEN3_4B["hidden"], QWEN3_4B["kv_out"]
    outs = {"q": QWEN3_4B["q_out"], "k": kv, "v": kv, "o": d}
    with torch.device("meta"):
        layer = DeltaMemory(d, outs, MemoryConfig(rank=rank))
    per_layer = sum(p.numel() for p in layer.parameters())
    return per_layer, per_layer * QWEN3_4B["layers"]
