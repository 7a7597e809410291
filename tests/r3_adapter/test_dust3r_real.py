"""The adapters on DUSt3R's real module tree: PyPI's ``mini-dust3r`` ships DUSt3R's model code
(``AsymmetricCroCo3DStereo``, CroCo encoder/decoder blocks with RoPE, the heads; CC BY-NC-SA),
built here at a tiny size with random weights. Every adapter finds its modules and is the
identity at step 0; the attention the hooks read is the softmax the block computes from its
own inputs; one training step moves the adapter and nothing else; a checkpoint in DUSt3R's
release format (an ``argparse.Namespace`` inside) loads through the sha256-checked
allow-list. VGGT has no installable code, so its hooks are tested on a look-alike tree
(tests/r3_adapter/trees.py)."""

from __future__ import annotations

import argparse
import sys

import pytest
import torch

# installed by `make install` with --no-deps (its declared extras pull torchvision and gradio)
from mini_dust3r.model import AsymmetricCroCo3DStereo as Dust3R

from repro.r3_adapter.attention import AttentionCapture
from repro.r3_adapter.backbones import (
    BACKBONES,
    constructor_kwargs,
    load_backbone,
    load_dust3r_checkpoint,
    sha256_of,
)
from repro.r3_adapter.methods import build_method

IMAGE, PATCH = 64, 16
GRID = (IMAGE // PATCH, IMAGE // PATCH)
ARGS = (
    "AsymmetricCroCo3DStereo(img_size=(64, 64), patch_size=16, pos_embed='RoPE100', "
    "enc_embed_dim=64, enc_depth=2, enc_num_heads=2, dec_embed_dim=64, dec_depth=2, "
    "dec_num_heads=2, head_type='linear', output_mode='pts3d', depth_mode=('exp', -inf, inf), "
    "conf_mode=('exp', 1, inf), landscape_only=False)"
)
SPECS = {
    "relational": {"adapters": {"relational": {}}},
    "relational_out": {"adapters": {"relational": {"zero_init": "projection"}}},
    "lora": {"adapters": {"lora": {"rank": 2}}},
    "dora": {"adapters": {"dora": {"rank": 2}}},
    "ssf": {"adapters": {"ssf": {}}},
    "vpt": {"adapters": {"vpt": {"prompts": 2}}},
    "adaptformer": {"adapters": {"adaptformer": {"bottleneck": 4}}},
    "relational_lora": {"adapters": {"relational": {}, "lora": {"rank": 2}}},
}


def _model(seed=0):
    torch.manual_seed(seed)
    return Dust3R(**constructor_kwargs(ARGS, "AsymmetricCroCo3DStereo")).eval()


def _views(seed=1):
    g = torch.Generator().manual_seed(seed)
    return [
        {
            "img": torch.randn(2, 3, IMAGE, IMAGE, generator=g),
            "true_shape": torch.tensor([[IMAGE, IMAGE]] * 2),
            "idx": [0, 1],
            "instance": ["0", "1"],
        }
        for _ in range(2)
    ]


def _points(model, views):
    return model(*views)[1]["pts3d_in_other_view"]


def test_every_decoder_block_is_hooked_in_both_decoders_and_not_the_encoder():
    from peft.tuners.lora import LoraLayer

    model, b = _model(), BACKBONES["dust3r"]
    adapted = build_method(
        model, SPECS["relational_lora"], site=b.site(model, GRID), targets=b.targets
    )
    hooked = sorted(adapted.hooks["relational"].adapters)
    assert hooked == [f"dec_blocks{s}/{i}/cross_attn" for s in ("", "2") for i in range(2)]
    lora = {n for n, m in model.named_modules() if isinstance(m, LoraLayer)}
    assert len(lora) == 2 * 2 * 6 and not any(n.startswith("enc_blocks") for n in lora)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_identity_at_step_zero_and_one_step_moves_only_the_adapter(name):
    model, views, b = _model(), _views(), BACKBONES["dust3r"]
    before = _points(model, views)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters()}
    adapted = build_method(model, SPECS[name], site=b.site(model, GRID), targets=b.targets)
    torch.testing.assert_close(_points(model, views), before, rtol=0, atol=1e-5)
    trainable = adapted.trainable()
    start = [p.detach().clone() for p in trainable]
    opt = torch.optim.SGD(trainable, lr=0.1)
    model(*views)[1]["pts3d_in_other_view"].square().mean().backward()
    opt.step()
    assert any((p - s).abs().max() > 0 for p, s in zip(trainable, start, strict=True))
    for n, p in model.named_parameters():
        if not p.requires_grad:
            original = frozen[n.replace(".base_layer", "")]
            torch.testing.assert_close(p, original, rtol=0, atol=0, msg=n)


def test_the_hooked_attention_is_the_blocks_own_softmax():
    model, views = _model(), _views()
    block = model.dec_blocks[1].cross_attn
    seen = {}

    def inputs(_module, args):
        seen["args"] = [a.detach() for a in args]

    handle = block.register_forward_pre_hook(inputs)
    with AttentionCapture(model, r"^dec_blocks\.1\.cross_attn$") as cap:
        model(*views)
    handle.remove()
    query, key, _value, qpos, kpos = seen["args"]
    B, N, C = query.shape
    heads = block.num_heads

    def split(x):
        return x.reshape(B, -1, heads, C // heads).transpose(1, 2)

    q = block.rope(split(block.projq(query)), qpos)
    k = block.rope(split(block.projk(key)), kpos)
    naive = torch.softmax(q @ k.transpose(-2, -1) * block.scale, dim=-1)
    got = cap.probabilities["dec_blocks.1.cross_attn"]
    torch.testing.assert_close(got, naive)
    assert got.shape == (B, heads, GRID[0] * GRID[1], GRID[0] * GRID[1])


def test_a_release_format_checkpoint_loads_only_with_its_pinned_sha256(tmp_path, monkeypatch):
    reference = _model(seed=3)
    path = tmp_path / "dust3r.pth"
    torch.save({"args": argparse.Namespace(model=ARGS), "model": reference.state_dict()}, path)
    with pytest.raises(Exception, match="weights_only"):  # torch's default refuses it
        torch.load(path, weights_only=True)
    pin = sha256_of(str(path))
    loaded = load_dust3r_checkpoint(Dust3R, str(path), pin).eval()
    views = _views()
    torch.testing.assert_close(_points(loaded, views), _points(reference, views))
    with pytest.raises(ValueError, match="not the pinned"):
        load_dust3r_checkpoint(Dust3R, str(path), "0" * 64)
    with pytest.raises(ValueError, match="no sha256 pinned"):
        load_dust3r_checkpoint(Dust3R, str(path), None)
    # the stored constructor call is parsed, never evaluated
    with pytest.raises(ValueError, match="not a AsymmetricCroCo3DStereo"):
        constructor_kwargs("__import__('os').system('true')", "AsymmetricCroCo3DStereo")
    # load_backbone imports the class from a code tree laid out as DUSt3R's repository
    code = tmp_path / "code"
    (code / "dust3r").mkdir(parents=True)
    (code / "dust3r" / "__init__.py").write_text("")
    (code / "dust3r" / "model.py").write_text(
        "from mini_dust3r.model import AsymmetricCroCo3DStereo  # noqa: F401\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    via_tree = load_backbone("dust3r", str(code), str(path), torch.device("cpu"), sha256=pin)
    torch.testing.assert_close(_points(via_tree, views), _points(reference, views))
