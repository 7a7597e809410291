"""Reading State's attention: the maps the forward pass used, their spectra, the update.

Maps come from the eager attention path through a forward hook on every
``self_attn`` of the llama backbone (its output is ``(update, maps)``); the hook changes
nothing in the forward. Statistics (brief §2.3): rank-1 energy E₁ = σ₁²/Σσ², stable rank
‖A‖²_F/σ₁², non-uniformity = mean row KL(A_i ‖ uniform), row dispersion = mean total
variation of the rows from the mean row; for the update U_l = A V W_O the share of ‖U‖²_F
carried by the set-mean row; across perturbations, the PC1 variance fraction of the
stacked set-mean updates.
"""

from __future__ import annotations

import contextlib

import torch

from repro.st_reliability.model import set_eager


@contextlib.contextmanager
def capture(model):
    """Record, per layer, the maps (B, H, S, S), the update (B, S, D), the layer input
    to attention (B, S, D) and the residual stream after the layer (B, S, D). Switches the
    backbone to eager attention inside the block."""
    records: list[dict[int, torch.Tensor]] = [{}, {}, {}, {}]

    def hook_for(layer):
        def hook(_module, args, kwargs, out):
            records[0][layer] = out[1].detach()
            records[1][layer] = out[0].detach()
            hidden = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
            records[2][layer] = hidden.detach()

        return hook

    def residual_for(layer):
        def hook(_module, _args, out):
            records[3][layer] = (out[0] if isinstance(out, tuple) else out).detach()

        return hook

    layers = model.transformer_backbone.layers
    handles = [
        layer.self_attn.register_forward_hook(hook_for(i), with_kwargs=True)
        for i, layer in enumerate(layers)
    ] + [layer.register_forward_hook(residual_for(i)) for i, layer in enumerate(layers)]
    set_eager(model, True)
    try:
        yield {
            "maps": records[0],
            "updates": records[1],
            "inputs": records[2],
            "residual": records[3],
        }
    finally:
        for h in handles:
            h.remove()
        set_eager(model, False)


def recompute_update(self_attn, hidden: torch.Tensor, maps: torch.Tensor) -> torch.Tensor:
    """U = concat_h(A_h V_h) W_O from the maps and the layer input (no positions: State's
    llama backbone has an identity rotation, which leaves V untouched anyway)."""
    b, s, _ = hidden.shape
    heads = maps.shape[1]
    v = self_attn.v_proj(hidden).view(b, s, -1, self_attn.head_dim).transpose(1, 2)
    v = v.repeat_interleave(heads // v.shape[1], dim=1)  # grouped KV heads, if any
    mixed = (maps @ v).transpose(1, 2).reshape(b, s, -1)
    return self_attn.o_proj(mixed)


def swapped_maps(maps: torch.Tensor, kind: str) -> torch.Tensor:
    """The attention a within-model swap puts in place of ``maps`` (B, H, S, S): ``uniform``
    (every row 1/S), ``identity`` (each cell attends only to itself) or ``mean_row`` (every
    row the mean row: the set-mean update is kept, the per-cell differences go)."""
    s = maps.shape[-1]
    if kind == "uniform":
        return torch.full_like(maps, 1.0 / s)
    if kind == "identity":
        return torch.eye(s, dtype=maps.dtype, device=maps.device).expand_as(maps)
    if kind == "mean_row":
        return maps.mean(-2, keepdim=True).expand_as(maps)
    raise ValueError(f"swap must be uniform, identity or mean_row, got {kind!r}")


@contextlib.contextmanager
def edited_update(model, layer: int, edit):
    """Within the block, layer ``layer``'s attention update U is replaced in the forward pass
    by ``edit(self_attn, hidden, maps, U)`` (hidden = the attention's input; eager
    attention, so the maps are at hand): the brief's causal check (§2.3.8)."""
    module = model.transformer_backbone.layers[layer].self_attn

    def hook(mod, args, kwargs, out):
        hidden = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        return (edit(mod, hidden, out[1], out[0]), *out[1:])

    handle = module.register_forward_hook(hook, with_kwargs=True)
    set_eager(model, True)
    try:
        yield
    finally:
        handle.remove()
        set_eager(model, False)


def project_out(direction: torch.Tensor):
    """An ``edit`` for :func:`edited_update`: U − (U·v)v for the unit vector v."""
    v = direction / direction.norm()

    def edit(_mod, _hidden, _maps, update):
        v_ = v.to(update)
        return update - (update @ v_)[..., None] * v_

    return edit


def swap_maps(kind: str):
    """An ``edit`` for :func:`edited_update`: U recomputed with :func:`swapped_maps`."""

    def edit(mod, hidden, maps, _update):
        return recompute_update(mod, hidden, swapped_maps(maps, kind))

    return edit


def map_statistics(maps: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per (head) means over sentences of E₁, stable rank, KL from uniform, dispersion."""
    maps = maps.double()
    s = maps.shape[-1]
    sv2 = torch.linalg.svdvals(maps) ** 2
    e1 = sv2[..., 0] / sv2.sum(-1)
    kl = (maps * torch.log(maps.clamp_min(1e-300) * s)).sum(-1).mean(-1)
    dispersion = 0.5 * (maps - maps.mean(-2, keepdim=True)).abs().sum(-1).mean(-1)
    stats = {
        "rank1_energy": e1,
        "stable_rank": 1 / e1,
        "kl_uniform": kl,
        "row_dispersion": dispersion,
    }
    return {k: v.mean(0) for k, v in stats.items()}  # over sentences, per head


def set_mean_share(updates: torch.Tensor) -> float:
    """Share of ‖U‖²_F carried by the set-mean row (S·‖ū‖² / ‖U‖²_F), mean over sentences."""
    u = updates.double()
    mean = u.mean(1, keepdim=True)
    return float((u.shape[1] * (mean**2).sum((1, 2)) / (u**2).sum((1, 2))).mean())


def leading_direction(set_means: torch.Tensor) -> tuple[torch.Tensor, float, torch.Tensor]:
    """PCA of the stacked set-mean updates M (P × D): v₁, its variance fraction, scores."""
    m = set_means.double() - set_means.double().mean(0)
    _, sv, vt = torch.linalg.svd(m, full_matrices=False)
    fraction = float(sv[0] ** 2 / (sv**2).sum()) if sv.sum() > 0 else float("nan")
    return vt[0].float(), fraction, (m @ vt[0]).float()


def between_variance(rows) -> float:
    """Between-perturbation variance: the mean squared distance of the rows (P × D) from
    their mean. Beside a PC1 fraction it tells "one direction" from "no signal"."""
    m = torch.as_tensor(rows).double()
    return float(((m - m.mean(0)) ** 2).sum(1).mean())


@contextlib.contextmanager
def injected(model, layer: int, direction: torch.Tensor, site: str = "layer"):
    """Add ``direction`` to the residual stream after decoder layer ``layer`` (``site =
    "layer"``, brief §2.3.5) or to that layer's attention update, before its MLP
    (``"attention"``)."""
    if site not in ("layer", "attention"):
        raise ValueError(f"site must be 'layer' or 'attention', got {site!r}")

    def hook(_module, _args, out):
        if isinstance(out, tuple):
            return (out[0] + direction.to(out[0]), *out[1:])
        return out + direction.to(out)

    module = model.transformer_backbone.layers[layer]
    handle = (module.self_attn if site == "attention" else module).register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def gene_map(model, decode, batch: dict, layer: int, direction, eps: float, site: str = "layer"):
    """g = mean over cells of [decode(+ε v) − decode(−ε v)] / 2ε (brief §2.3.5)."""
    outs = []
    with torch.no_grad():
        for sign in (1.0, -1.0):
            with injected(model, layer, sign * eps * direction, site):
                outs.append(decode(model(batch)))
    return ((outs[0] - outs[1]) / (2 * eps)).mean(0)
