"""State's model and its attention maps: the maps read are the ones the forward used."""

import contextlib
import io
import math

import pytest
import torch

from repro.st_reliability import attention
from repro.st_reliability.model import ModelConfig, build_model, self_only_attention, set_eager

CFG = ModelConfig(hidden=16, layers=2, heads=4, intermediate=32, cell_set_len=8)
G, P = 12, 5


def sharp_model(**overrides):
    """A tiny State model whose attention is far from uniform (random q/k weights)."""
    torch.manual_seed(0)
    model = build_model(CFG, input_dim=G, pert_dim=P, gene_space=True).eval()
    for layer in model.transformer_backbone.layers:
        layer.self_attn.q_proj.weight.data.normal_(0, 1.0)
        layer.self_attn.k_proj.weight.data.normal_(0, 1.0)
    return model


def batch(n_sets=3, seed=1):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(P, (n_sets,), generator=g).repeat_interleave(CFG.cell_set_len)
    return {
        "ctrl_cell_emb": torch.rand(n_sets * CFG.cell_set_len, G, generator=g),
        "pert_emb": torch.nn.functional.one_hot(labels, P).float(),
    }


def test_readout_matches_forward():
    model, b = sharp_model(), batch()
    with torch.no_grad():
        plain = model(b)
        with attention.capture(model) as rec:
            hooked = model(b)
    torch.testing.assert_close(hooked, plain, atol=1e-5, rtol=1e-5)  # eager = SDPA, hooks inert
    assert model.transformer_backbone.config._attn_implementation == "sdpa"  # restored
    for k, maps in rec["maps"].items():
        assert maps.shape == (3, CFG.heads, CFG.cell_set_len, CFG.cell_set_len)
        torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:-1]))
        assert maps.triu(1).sum() > 0.1 * maps.sum()  # bidirectional: mass above the diagonal
        assert attention.map_statistics(maps)["kl_uniform"].min() > 0.05  # not uniform
        layer = model.transformer_backbone.layers[k].self_attn
        with torch.no_grad():
            recomputed = attention.recompute_update(layer, rec["inputs"][k], maps)
        torch.testing.assert_close(recomputed, rec["updates"][k], atol=1e-5, rtol=1e-4)
        # the check can fail: other maps give another update
        with torch.no_grad():
            wrong = attention.recompute_update(layer, rec["inputs"][k], maps.flip(-1))
        assert not torch.allclose(wrong, rec["updates"][k], atol=1e-3)


def test_permutation_equivariant_over_cells():
    model, b = sharp_model(), batch(n_sets=1)
    perm = torch.randperm(CFG.cell_set_len, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        out = model(b)
        out_perm = model({k: v[perm] for k, v in b.items()})
    torch.testing.assert_close(out_perm, out[perm], atol=1e-5, rtol=1e-5)


def test_self_only_attention_is_identity_in_both_paths():
    model, b = sharp_model(), batch()
    with torch.no_grad(), self_only_attention(model):
        sdpa = model(b)
        with attention.capture(model) as rec:
            eager = model(b)
    torch.testing.assert_close(eager, sdpa, atol=1e-5, rtol=1e-5)
    eye = torch.eye(CFG.cell_set_len).expand_as(rec["maps"][0])
    for maps in rec["maps"].values():
        torch.testing.assert_close(maps, eye, atol=1e-6, rtol=0)
    with torch.no_grad():
        assert not torch.allclose(model(b), sdpa, atol=1e-3)  # the hook is gone afterwards


def test_states_mask_attn_flag_means_two_models():
    """State's own ``mask_attn`` is a keep-mask under SDPA but a +1 bias under eager
    attention (transformers 5.24): the reason model.py builds its own self-only mask."""
    torch.manual_seed(0)
    with contextlib.redirect_stdout(io.StringIO()):
        flagged = build_model(CFG, input_dim=G, pert_dim=P, gene_space=True)
    flagged.hparams["mask_attn"] = True
    reference = sharp_model()
    flagged.load_state_dict(reference.state_dict())
    flagged.eval()
    b = batch()
    with torch.no_grad(), self_only_attention(reference):
        self_only = reference(b)
    with torch.no_grad():
        set_eager(flagged, False)
        sdpa = flagged(b)
        with attention.capture(flagged) as rec:
            eager = flagged(b)
    torch.testing.assert_close(sdpa, self_only, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(eager, sdpa, atol=1e-3)
    assert rec["maps"][0].diagonal(dim1=-2, dim2=-1).mean() < 0.8  # far from self-only


def test_map_statistics_closed_forms():
    s = 6
    uniform = torch.full((2, 1, s, s), 1 / s, dtype=torch.float64)
    st = attention.map_statistics(uniform)
    assert st["rank1_energy"].item() == pytest.approx(1.0)
    assert st["kl_uniform"].item() == pytest.approx(0.0, abs=1e-12)
    assert st["row_dispersion"].item() == pytest.approx(0.0, abs=1e-12)
    eye = torch.eye(s).expand(2, 1, s, s)
    st = attention.map_statistics(eye)
    assert st["rank1_energy"].item() == pytest.approx(1 / s)
    assert st["stable_rank"].item() == pytest.approx(s)
    assert st["kl_uniform"].item() == pytest.approx(math.log(s))
    p = torch.tensor([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    same_rows = p.expand(1, 1, s, s)  # every cell reads the same summary: rank 1, not uniform
    st = attention.map_statistics(same_rows)
    assert st["rank1_energy"].item() == pytest.approx(1.0)
    assert st["kl_uniform"].item() == pytest.approx(float((p * torch.log(p * s)).sum()))
    assert st["row_dispersion"].item() == pytest.approx(0.0, abs=1e-12)


def test_set_mean_share_and_leading_direction():
    rows = torch.randn(1, 1, 5).expand(4, 6, 5)
    assert attention.set_mean_share(rows) == pytest.approx(1.0)
    centred = torch.randn(4, 6, 5)
    assert attention.set_mean_share(centred - centred.mean(1, keepdim=True)) == pytest.approx(
        0, abs=1e-12
    )
    g = torch.Generator().manual_seed(0)
    v = torch.nn.functional.normalize(torch.randn(8, generator=g), dim=0)
    m = torch.randn(30, 1, generator=g) * v + 0.01 * torch.randn(30, 8, generator=g)
    direction, fraction, scores = attention.leading_direction(m)
    assert abs(float(direction @ v)) > 0.999 and fraction > 0.99 and scores.shape == (30,)


def test_injection_adds_the_direction_after_the_layer():
    model, b = sharp_model(), batch()
    outputs = []
    hook = model.transformer_backbone.layers[0].register_forward_hook(
        lambda m, a, o: outputs.append(o)
    )
    direction = torch.randn(CFG.hidden)
    with torch.no_grad():
        model(b)
        with attention.injected(model, 0, direction):
            model(b)
    hook.remove()
    # the recording hook ran before the injecting one: compare what the next layer got
    torch.testing.assert_close(outputs[1], outputs[0])
    gene_map = attention.gene_map(model, lambda z: z, b, 0, direction, eps=1e-2)
    flipped = attention.gene_map(model, lambda z: z, b, 0, -direction, eps=1e-2)
    torch.testing.assert_close(flipped, -gene_map)
    assert gene_map.abs().max() > 0


def test_within_model_swap_and_causal_edits():
    """Uniform and identity attention give the same set-mean update (column means of A are
    1/S in both); the mean-row edit keeps the set-mean update; projecting v out removes it
    from the update; an edit changes the model's output only inside its block."""
    model, b = sharp_model(), batch()
    s = CFG.cell_set_len
    with torch.no_grad(), attention.capture(model) as rec:
        plain = model(b)
    layer = model.transformer_backbone.layers[1].self_attn
    hidden, maps = rec["inputs"][1], rec["maps"][1]
    with torch.no_grad():
        updates = {
            kind: attention.recompute_update(layer, hidden, attention.swapped_maps(maps, kind))
            for kind in ("uniform", "identity", "mean_row")
        }
    torch.testing.assert_close(updates["uniform"].mean(1), updates["identity"].mean(1))
    torch.testing.assert_close(updates["mean_row"].mean(1), rec["updates"][1].mean(1))
    assert not torch.allclose(updates["uniform"].mean(1), rec["updates"][1].mean(1), atol=1e-3)
    assert torch.allclose(updates["uniform"][:, 0], updates["uniform"][:, s - 1], atol=1e-6)
    with pytest.raises(ValueError, match="swap"):
        attention.swapped_maps(maps, "causal")
    v = torch.randn(CFG.hidden)
    edited = attention.project_out(v)(layer, hidden, maps, rec["updates"][1])
    torch.testing.assert_close(edited @ (v / v.norm()), torch.zeros(edited.shape[:-1]))
    with torch.no_grad():
        with attention.edited_update(model, 1, attention.swap_maps("uniform")):
            swapped = model(b)
        after = model(b)
    assert not torch.allclose(swapped, plain, atol=1e-4)
    torch.testing.assert_close(after, plain)
    assert model.transformer_backbone.config._attn_implementation == "sdpa"
    rows = torch.randn(6, 4)
    assert attention.between_variance(rows) == pytest.approx(
        float(((rows - rows.mean(0)) ** 2).sum(1).mean())
    )
    assert attention.between_variance(torch.ones(6, 4)) == 0.0
