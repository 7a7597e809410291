"""δ-Mem attached to the tiny backbone and to a tiny random Qwen3: zero state = base model,
writes off leave the state alone, padding never writes, the backbone stays frozen."""

from __future__ import annotations

import numpy as np
import torch

from repro.delta_mem.backbone import BackboneConfig, TinyTransformer
from repro.delta_mem.episodes import PAD, VOCAB, make_batch
from repro.delta_mem.memory import MemoryConfig, qwen3_4b_trainable_parameters
from repro.delta_mem.wrapper import DeltaMem


def _tiny(seed=0):
    torch.manual_seed(seed)
    return TinyTransformer(BackboneConfig(vocab=VOCAB, d_model=32, heads=2, mlp=64)).eval()


def _randomise(dm: DeltaMem, seed=1):
    """Non-zero heads and gates, so that only a zero state can explain equal outputs."""
    g = torch.Generator().manual_seed(seed)
    for p in dm.parameters():
        p.data = torch.randn(p.shape, generator=g) * 0.5


def test_zero_state_equals_base_whatever_the_heads():
    model = _tiny()
    tokens = torch.randint(0, VOCAB, (4, 11))
    base = model(tokens)
    dm = DeltaMem(model, MemoryConfig())
    with dm.phase(writes=True):  # zero-init heads: equal even while writing
        torch.testing.assert_close(model(tokens), base, rtol=0, atol=0)
    _randomise(dm)
    dm.reset()
    with dm.phase(writes=False):
        torch.testing.assert_close(model(tokens), base, rtol=0, atol=0)
    with dm.phase(writes=True):  # now the state fills and the heads steer
        assert (model(tokens) - base).abs().max() > 1e-3


def test_base_slice_fixed_init_and_param_count():
    model = _tiny()
    dm = DeltaMem(model, MemoryConfig(init="base_slice_fixed"))
    head = dm.memories[0].delta_q.weight.detach()
    torch.testing.assert_close(torch.linalg.vector_norm(head, dim=0), torch.full((8,), 0.05))
    d, r = 32, 8
    per_layer = 3 * d * r + (d * r + r) + r * d + r * d
    assert sum(p.numel() for p in dm.parameters()) == 2 * per_layer
    assert qwen3_4b_trainable_parameters() == (135_176, 4_866_336)  # brief §2.4


def test_disabled_writes_leave_the_state_and_read_it():
    model = _tiny()
    dm = DeltaMem(model, MemoryConfig())
    _randomise(dm)
    with dm.phase(writes=True):
        model(torch.randint(0, VOCAB, (2, 9)))
    before = [s.clone() for s in dm.states()]
    with dm.phase(writes=False):
        out = model(torch.randint(0, VOCAB, (2, 5)))
    for a, b in zip(dm.states(), before, strict=True):
        assert torch.equal(a, b)
    dm.set_states([torch.zeros_like(s) for s in before])
    with dm.phase(writes=False):
        assert (model(torch.randint(0, VOCAB, (2, 5))) - out).abs().max() > 0


def test_padding_does_not_write():
    model = _tiny()
    dm = DeltaMem(model, MemoryConfig())
    _randomise(dm)
    batch = make_batch(np.random.default_rng(0), 6, (1, 8))
    assert (batch.history == PAD).any()
    with dm.phase(writes=True, mask=batch.history_mask):
        model(batch.history)
    padded = dm.states()
    for i in range(6):  # each history alone, without padding, gives the same state
        n = int(batch.history_mask[i].sum())
        dm.reset()
        with dm.phase(writes=True):
            model(batch.history[i : i + 1, :n])
        for a, b in zip(dm.states(), padded, strict=True):
            torch.testing.assert_close(a[0], b[i], rtol=1e-5, atol=1e-6)


def test_chunkwise_and_sequential_memories_agree():
    tokens = torch.randint(0, VOCAB, (3, 19))
    outs = []
    for chunk in (None, 4):
        model = _tiny()
        dm = DeltaMem(model, MemoryConfig(chunk_size=chunk))
        _randomise(dm)
        with dm.phase(writes=True):
            outs.append(model(tokens))
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-4, atol=1e-5)


def test_qwen3_attention_is_wrapped_before_qnorm_and_after_o_proj(random_qwen3):
    model = random_qwen3()
    tokens = torch.randint(0, 64, (2, 9))
    base = model(tokens).logits
    dm = DeltaMem(model, MemoryConfig(rank=4))
    assert len(dm.memories) == 2
    attn = model.model.layers[0].self_attn
    assert attn.q_proj.base.out_features == 32 and attn.o_proj.base.out_features == 32
    assert not any(p.requires_grad for n, p in model.named_parameters() if "memory" not in n)
    _randomise(dm)
    dm.reset()
    with dm.phase(writes=False):
        torch.testing.assert_close(model(tokens).logits, base, rtol=0, atol=0)
    # a read-out of S q enters before q_norm: the query norm sees the steered projection
    seen = {}
    hook = attn.q_norm.register_forward_hook(lambda m, i, o: seen.setdefault("x", i[0]))
    dm.set_states([torch.randn(2, 4, 4) for _ in dm.memories])
    with dm.phase(writes=False):
        model(tokens)
    hook.remove()
    hidden = model.model.layers[0].input_layernorm(model.model.embed_tokens(tokens))
    plain = attn.q_proj.base(hidden).view(2, 9, -1, 8)
    assert (seen["x"] - plain).abs().max() > 1e-4


def test_float32_memory_on_a_bfloat16_qwen3(random_qwen3):
    model = random_qwen3().to(torch.bfloat16)
    dm = DeltaMem(model, MemoryConfig(rank=4))
    _randomise(dm)
    with dm.phase(writes=True):
        logits = model(torch.randint(0, 64, (1, 7))).logits
    assert logits.dtype == torch.bfloat16 and torch.isfinite(logits).all()
    assert all(s.dtype == torch.float32 for s in dm.states())
