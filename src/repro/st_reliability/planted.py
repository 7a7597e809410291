"""C1's positive control in the trained model's regime (issue 35 §2): a perturbation-dependent
attention selection planted inside a trained model.

The swap's hand-written controls (:mod:`repro.st_reliability.swap_control`) pass in a regime
where the uniform swap leaves the PC1 fraction at 0.18–0.21; the trained HVG model's uniform
swap is at 0.94–0.99, so "own − uniform beats 0.05" may be out of reach there whatever its
attention does. This control asks the question in the trained model itself: the same
weights, data, basal sentences and statistics, with an additive bias on every attention
logit (every layer and head, as the self-only null's mask is injected)

    logit_ij += β · σ_p · z_j,

σ_p ∈ [−1, 1] a random selector per perturbation and z_j a basal feature of cell j (the
projection of its encoded expression on a random direction, standardised within the
sentence). Each perturbation then selects cells with high or low z, so the set-mean
attention update gains a perturbation-dependent component: a planted dependence of dose β.
The causal part of C1 is asked the same way: against the planted model's own predictions
(the planted truth), does projecting the leading direction v₁ of the update out cost more
quality than projecting out a random direction?
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch


def planted_parameters(vocabulary_size: int, input_dim: int, *, seed: int, model_seed: int):
    """(selector σ per vocabulary entry, unit basal direction) from the control's ``seed``
    and the model's seed (one draw per planted model, the same at every dose)."""
    rng = np.random.default_rng([seed, model_seed])
    selector = rng.uniform(-1.0, 1.0, vocabulary_size)
    direction = rng.normal(size=input_dim)
    return (
        torch.as_tensor(selector, dtype=torch.float32),
        torch.as_tensor(direction / np.linalg.norm(direction), dtype=torch.float32),
    )


def attention_bias(batch: dict, selector, direction, beta: float, set_len: int) -> torch.Tensor:
    """The additive (B, 1, S, S) logit bias β σ_p z_j for a State batch (flattened
    (B·S, ·) tensors, one perturbation per sentence)."""
    basal = batch["ctrl_cell_emb"].reshape(-1, set_len, batch["ctrl_cell_emb"].shape[-1])
    z = basal @ direction.to(basal)
    z = (z - z.mean(1, keepdim=True)) / z.std(1, keepdim=True).clamp_min(1e-8)
    perts = batch["pert_emb"].reshape(-1, set_len, batch["pert_emb"].shape[-1])[:, 0].argmax(-1)
    sigma = selector.to(z)[perts]  # (B,)
    bias = beta * sigma[:, None] * z  # (B, S): the same for every query row
    return bias[:, None, None, :].expand(-1, 1, set_len, set_len)


@contextlib.contextmanager
def planted_attention(model, *, selector, direction, beta: float):
    """Within the block, every forward pass of ``model`` (State's class) adds the planted
    bias to its attention logits in every layer and head (eager and SDPA alike)."""
    set_len = model.cell_sentence_len
    state: dict = {}

    def remember(_module, args):
        state["bias"] = attention_bias(args[0], selector, direction, beta, set_len)

    def inject(_module, args, kwargs):
        embeds = kwargs["inputs_embeds"]
        kwargs["attention_mask"] = state["bias"].to(embeds)
        return args, kwargs

    handles = [
        model.register_forward_pre_hook(remember),
        model.transformer_backbone.register_forward_pre_hook(inject, with_kwargs=True),
    ]
    try:
        yield model
    finally:
        for h in handles:
            h.remove()
