"""Reading attention probabilities out of a model, and the collapse diagnostics.

CroCo/DUSt3R attention computes ``softmax(q kᵀ · scale)`` explicitly and passes it through
``attn_drop``; VGGT does the same on its non-fused path (``fused_attn = False``), while its
default path calls PyTorch's fused SDPA and never materialises the matrix. So one mechanism
serves all three: switch fused paths off, then a forward hook on ``attn_drop`` sees the
probabilities (its input).

Diagnostics (brief §5), per layer and head-averaged, over co-visible queries q with true
correspondent c(q): GT-mass = A[q, c(q)]; normalised entropy = H(A[q, ·]) / log N_keys;
precision = [argmax_k A[q, k] = c(q)].
"""

from __future__ import annotations

import contextlib
import math
import re

import torch
from torch import nn

FUSED_FLAGS = ("fused_attn", "torch_attn")  # VGGT's and later CroCo forks' SDPA switches


def matching_modules(model: nn.Module, pattern: str) -> list[tuple[str, nn.Module]]:
    """Modules whose qualified name matches ``pattern`` (re.search), in model order."""
    found = [(n, m) for n, m in model.named_modules() if n and re.search(pattern, n)]
    if not found:
        raise ValueError(f"no module name matches {pattern!r}")
    return found


def expose_attention(module: nn.Module) -> None:
    """Route an attention module through its explicit (non-fused) path."""
    if not isinstance(getattr(module, "attn_drop", None), nn.Module):
        raise TypeError(f"{type(module).__name__} has no attn_drop to read probabilities from")
    for flag in FUSED_FLAGS:
        if hasattr(module, flag):
            setattr(module, flag, False)


class AttentionCapture:
    """Keeps the last attention probabilities (B, H, Nq, Nk) of each matched module.

    ``with AttentionCapture(model, r"cross_attn$") as cap: model(...)`` then
    ``cap.probabilities[name]``. Hooks are removed on exit.
    """

    def __init__(self, model: nn.Module, pattern: str):
        self.modules = matching_modules(model, pattern)
        self.probabilities: dict[str, torch.Tensor] = {}
        self._handles: list = []

    def __enter__(self) -> AttentionCapture:
        for name, module in self.modules:
            expose_attention(module)
            self._handles.append(module.attn_drop.register_forward_hook(self._hook(name)))
        return self

    def _hook(self, name: str):
        def record(_module, inputs, _output):
            self.probabilities[name] = inputs[0].detach()

        return record

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


@contextlib.contextmanager
def captured(model: nn.Module, pattern: str):
    with AttentionCapture(model, pattern) as cap:
        yield cap.probabilities


def diagnostics(attn: torch.Tensor, match: torch.Tensor) -> dict[str, float]:
    """GT-mass, normalised entropy and precision of one layer's cross-view attention.

    attn: (B, H, Nq, Nk) or head-averaged (B, Nq, Nk) probabilities; match: (B, Nq) true
    key of each query, negative for queries without one (left out).
    """
    if attn.dim() == 4:
        attn = attn.mean(dim=1)
    valid = match >= 0
    if not valid.any():
        raise ValueError("no query has a true correspondent")
    rows = attn[valid]  # (Q, Nk)
    target = match[valid]
    mass = rows.gather(1, target[:, None]).squeeze(1)
    entropy = -(rows * rows.clamp_min(1e-12).log()).sum(dim=1) / math.log(attn.shape[-1])
    hits = (rows.argmax(dim=1) == target).float()
    return {
        "gt_mass": mass.mean().item(),
        "entropy": entropy.mean().item(),
        "precision": hits.mean().item(),
    }
