"""Continuous-time neural hazard networks h(t | x) and the quadrature likelihood.

All three share one backbone (a Tanh MLP) and one head initialisation; they differ only
in how time enters, which is what the conditioning ablation compares:

* ``time_lora`` (QSurv): h' = h + (α/r) U(g(v) ⊙ V h). The logit is
  a(x) + (α/r) Σ_j u_j g_j(v) z_j(x) + b(v) with z = V h and u = Uᵀw, so the backbone runs
  once per subject and each of the K time points costs only the small time MLP. The
  covariate-time interaction of the logit therefore has rank at most r.
* ``film``: h' = (1 + γ(v)) ⊙ h + β(v).
* ``concat``: v is appended to the input, so the backbone runs once per time point.

Time enters as v = t / t_max (t_max from the training split), and the networks output the
hazard per unit of *raw* time, as in the official code (qsurv.md, section 2.1): the
quadrature runs on [0, v] and is rescaled by t_max. Where the softplus works (and so where
the head's initial bias -5 puts the starting hazard) depends on that unit: on the
simulation's Gompertz data, the hazard per unit of v gave about twice the hazard error.
``v`` has shape (B, M), or (1, M) for one time grid shared by every subject (prediction),
in which case the time network runs once for all subjects.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from repro.qsurv.quadrature import unit_rule

CONDITIONINGS = ("time_lora", "film", "concat")
# The official code's time MLP uses SiLU in its simulation study and Tanh on tabular data.
ACTIVATIONS = {"tanh": nn.Tanh, "silu": nn.SiLU}
HAZARD_MIN, HAZARD_MAX = 1e-8, 30.0


def mlp(in_features: int, widths: list[int], dropout: float, activation: str = "tanh"):
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose from {sorted(ACTIVATIONS)}")
    layers: list[nn.Module] = []
    for width in widths:
        layers += [nn.Linear(in_features, width), ACTIVATIONS[activation]()]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        in_features = width
    return nn.Sequential(*layers)


def _hazard_head(width: int) -> nn.Linear:
    head = nn.Linear(width, 1)
    nn.init.zeros_(head.weight)
    nn.init.constant_(head.bias, -5.0)  # softplus(-5) ≈ 0.007: a small, flat start
    return head


def _positive(logit: torch.Tensor) -> torch.Tensor:
    return F.softplus(logit).clamp(HAZARD_MIN, HAZARD_MAX)


class TimeMLP(nn.Module):
    """v -> outputs; the last layer is orthogonal so gates start informative."""

    def __init__(self, *, out_features: int, width: int, depth: int, activation: str = "tanh"):
        super().__init__()
        self.body = mlp(1, [width] * max(depth - 1, 1), dropout=0.0, activation=activation)
        self.out = nn.Linear(width, out_features)
        nn.init.orthogonal_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(v.unsqueeze(-1)))


class TimeLoRAHazard(nn.Module):
    def __init__(
        self,
        *,
        in_features: int,
        hidden: list[int],
        dropout: float = 0.0,
        rank: int = 16,
        alpha: float = 16.0,
        time_width: int = 32,
        time_depth: int = 3,
        time_activation: str = "tanh",
    ):
        super().__init__()
        self.backbone = mlp(in_features, hidden, dropout)
        width = hidden[-1]
        self.down = nn.Linear(width, rank, bias=False)  # V
        self.up = nn.Linear(rank, width, bias=False)  # U, zero so h' = h at step 0
        nn.init.zeros_(self.up.weight)
        self.time = TimeMLP(
            out_features=rank + 1, width=time_width, depth=time_depth, activation=time_activation
        )
        with torch.no_grad():
            # gates open: once the head weight w moves off 0 (step 1), U gets gradient
            self.time.out.bias[:rank] = 1.0
        self.head = _hazard_head(width)
        self.scale = alpha / rank
        self.rank = rank

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The per-subject part of the logit, [a(x), z_1 u_1, ..., z_r u_r]: (B, 1 + r).
        Everything that depends on x (the backbone) is in here, computed once per subject."""
        h = self.backbone(x)
        base = self.head(h)  # a(x) = wᵀh + b0, (B, 1)
        zu = self.down(h) * (self.up.weight.T @ self.head.weight.T).squeeze(-1)  # z_j u_j
        return torch.cat([base, zu], dim=-1)

    def logit_from_features(self, features: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """a(x) + (α/r) Σ_j z_j u_j g_j(v) + b(v) from ``features(x)`` (B, 1 + r): (B, M)."""
        base, zu = features[:, :1], features[:, 1:]
        time_out = self.time(v)  # (B or 1, M, r + 1)
        gates, bias = time_out[..., : self.rank], time_out[..., self.rank]
        if v.shape[0] == 1:  # a shared grid: (B, r) @ (r, M)
            interaction = zu @ gates[0].T
        else:
            interaction = torch.einsum("bj,bmj->bm", zu, gates)
        return base + self.scale * interaction + bias

    def logit(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """wᵀh' + b0 + b(v) at times v (shape (B, M)) for subjects x (shape (B, p)): (B, M)."""
        return self.logit_from_features(self.features(x), v)

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return _positive(self.logit(x, v))


class FiLMHazard(nn.Module):
    def __init__(
        self,
        *,
        in_features: int,
        hidden: list[int],
        dropout: float = 0.0,
        time_width: int = 32,
        time_depth: int = 3,
        time_activation: str = "tanh",
    ):
        super().__init__()
        self.backbone = mlp(in_features, hidden, dropout)
        width = hidden[-1]
        self.time = TimeMLP(
            out_features=2 * width, width=time_width, depth=time_depth, activation=time_activation
        )
        nn.init.zeros_(self.time.out.weight)  # γ = β = 0: h' = h at step 0
        self.head = _hazard_head(width)
        self.width = width

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        h = self.backbone(x).unsqueeze(1)  # (B, 1, D)
        gamma, beta = self.time(v).split(self.width, dim=-1)
        return _positive(self.head((1 + gamma) * h + beta).squeeze(-1))


class ConcatHazard(nn.Module):
    def __init__(self, *, in_features: int, hidden: list[int], dropout: float = 0.0):
        super().__init__()
        self.backbone = mlp(in_features + 1, hidden, dropout)
        self.head = _hazard_head(hidden[-1])

    def forward(self, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        v = v.expand(x.shape[0], -1)  # the backbone sees every (subject, time) pair anyway
        xs = x.unsqueeze(1).expand(-1, v.shape[1], -1)
        return _positive(self.head(self.backbone(torch.cat([xs, v.unsqueeze(-1)], -1))).squeeze(-1))


def build_hazard_net(
    conditioning: str,
    *,
    in_features: int,
    hidden: list[int],
    dropout: float,
    rank: int,
    alpha: float,
    time_width: int,
    time_depth: int,
    time_activation: str = "tanh",
) -> nn.Module:
    shared = dict(in_features=in_features, hidden=hidden, dropout=dropout)
    time = dict(time_width=time_width, time_depth=time_depth, time_activation=time_activation)
    if conditioning == "time_lora":
        return TimeLoRAHazard(**shared, rank=rank, alpha=alpha, **time)
    if conditioning == "film":
        return FiLMHazard(**shared, **time)
    if conditioning == "concat":
        return ConcatHazard(**shared)
    raise ValueError(f"unknown conditioning {conditioning!r}; choose from {CONDITIONINGS}")


def build_from_config(conditioning: str, cfg, in_features: int) -> nn.Module:
    """``build_hazard_net`` from the network keys of a step's config (same names everywhere)."""
    return build_hazard_net(
        conditioning,
        in_features=in_features,
        hidden=list(cfg.hidden),
        dropout=cfg.dropout,
        rank=cfg.rank,
        alpha=cfg.alpha,
        time_width=cfg.time_width,
        time_depth=cfg.time_depth,
        time_activation=cfg.time_activation,
    )


class QuadratureLikelihood(nn.Module):
    """Mean negative log-likelihood −(1/n) Σ [e log h(t) − H(t)], H by a K-point rule.

    The network sees v = t / ``time_scale`` and returns h per unit of raw time, so
    H(t) = time_scale · v · Σ_k w_k h(v u_k). One network call per batch evaluates the K
    quadrature points and the event time together.
    """

    def __init__(self, *, rule: str, nodes: int, time_scale: float = 1.0):
        super().__init__()
        u, w = unit_rule(rule, nodes)
        self.register_buffer("u", torch.as_tensor(u, dtype=torch.float32))
        self.register_buffer("w", torch.as_tensor(w, dtype=torch.float32))
        self.time_scale = float(time_scale)

    def forward(self, net: nn.Module, x: torch.Tensor, v: torch.Tensor, event: torch.Tensor):
        times = torch.cat([v.unsqueeze(1), v.unsqueeze(1) * self.u], dim=1)  # (B, 1 + K)
        hazard = net(x, times)
        cumulative = self.time_scale * v * (hazard[:, 1:] @ self.w)
        return -(event * hazard[:, 0].log() - cumulative).mean()
