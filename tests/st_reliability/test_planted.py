"""C1's planted control in a trained model's regime: the planted logit bias is the one
written (naive loop), reaches every layer, and makes attention perturbation-dependent."""

import math

import numpy as np
import torch

from repro.st_reliability import attention
from repro.st_reliability.planted import attention_bias, planted_attention, planted_parameters
from tests.st_reliability.test_model_attention import CFG, G, P, batch, sharp_model


def naive_bias(b, selector, direction, beta, s):
    """β σ_p z_j, z the projection on the direction standardised within each sentence."""
    x = b["ctrl_cell_emb"].numpy().reshape(-1, s, G)
    perts = b["pert_emb"].numpy().reshape(-1, s, P)[:, 0].argmax(-1)
    out = np.zeros((x.shape[0], 1, s, s))
    for k in range(x.shape[0]):
        z = x[k] @ direction.numpy()
        z = (z - z.mean()) / z.std(ddof=1)
        for i in range(s):
            out[k, 0, i] = beta * selector.numpy()[perts[k]] * z
    return out


def test_bias_matches_a_naive_loop():
    b = batch(n_sets=4)
    selector, direction = planted_parameters(P, G, seed=0, model_seed=1)
    got = attention_bias(b, selector, direction, 2.5, CFG.cell_set_len)
    ref = naive_bias(b, selector, direction, 2.5, CFG.cell_set_len)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_zero_dose_leaves_the_model_and_the_plant_reaches_every_layer():
    model, b = sharp_model(), batch(n_sets=6)
    selector, direction = planted_parameters(P, G, seed=0, model_seed=0)
    with torch.no_grad():
        plain = model(b)
        with planted_attention(model, selector=selector, direction=direction, beta=0.0):
            zero = model(b)
        with (
            planted_attention(model, selector=selector, direction=direction, beta=4.0),
            attention.capture(model) as after,
        ):
            model(b)
    torch.testing.assert_close(zero, plain, atol=1e-5, rtol=1e-5)
    bias = attention_bias(b, selector, direction, 4.0, CFG.cell_set_len)
    for k, maps in after["maps"].items():
        # each layer's maps = softmax(q kᵀ / √d + bias) from that layer's own input
        attn = model.transformer_backbone.layers[k].self_attn
        x = after["inputs"][k]
        shape = (x.shape[0], x.shape[1], CFG.heads, -1)
        with torch.no_grad():
            q = attn.q_proj(x).view(shape).transpose(1, 2)
            key = attn.k_proj(x).view(shape).transpose(1, 2)
        logits = q @ key.transpose(-1, -2) / math.sqrt(q.shape[-1])
        torch.testing.assert_close(maps, (logits + bias).softmax(-1), atol=1e-5, rtol=1e-4)
        assert not torch.allclose(maps, logits.softmax(-1), atol=1e-3)  # the plant changed it
    # the hooks are gone after the block
    with torch.no_grad():
        torch.testing.assert_close(model(b), plain, atol=1e-5, rtol=1e-5)


def test_selection_follows_the_perturbation_selector():
    """The same sentence under perturbations with opposite selectors: attention moves to
    cells of high z under one and of low z under the other."""
    model = sharp_model()
    selector = torch.tensor([0.0, 1.0, -1.0, 0.5, -0.5])
    direction = torch.zeros(G)
    direction[0] = 1.0
    cells = torch.rand(CFG.cell_set_len, G, generator=torch.Generator().manual_seed(3))
    b = {
        "ctrl_cell_emb": cells.repeat(2, 1),
        "pert_emb": torch.nn.functional.one_hot(
            torch.tensor([1, 2]).repeat_interleave(CFG.cell_set_len), P
        ).float(),
    }
    with (
        torch.no_grad(),
        planted_attention(model, selector=selector, direction=direction, beta=6.0),
        attention.capture(model) as rec,
    ):
        model(b)
    weight = rec["maps"][0].mean(dim=(1, 2))  # (2, S) column means
    z = cells[:, 0]
    corr = [np.corrcoef(w.numpy(), z.numpy())[0, 1] for w in weight]
    assert corr[0] > 0.5 and corr[1] < -0.5, corr


def test_seeds_change_the_planted_parameters():
    a = planted_parameters(P, G, seed=0, model_seed=0)
    assert not torch.equal(a[0], planted_parameters(P, G, seed=1, model_seed=0)[0])
    assert not torch.equal(a[0], planted_parameters(P, G, seed=0, model_seed=1)[0])
    assert torch.equal(a[1], planted_parameters(P, G, seed=0, model_seed=0)[1])
