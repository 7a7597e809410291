"""Every adapter is the identity at step 0 and moves the output once trained; the backbone
stays frozen; LoRA/DoRA come from peft on the attention Linears; 3R-lite's candidates and
rewired relation follow their definitions on hand-built relations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.r3_adapter.data import observed
from repro.r3_adapter.losses import task_loss
from repro.r3_adapter.methods import build_method
from repro.r3_adapter.model import ModelConfig, TwoViewTransformer
from repro.r3_adapter.relational import RelationalAdapter, RelationalConfig, RelationSite
from repro.r3_adapter.scenes import SceneConfig, make_scenes
from repro.r3_adapter.shift import LowLight
from repro.r3_adapter.sites import CrossAttentionSite

SCENE = SceneConfig(grid=4)
SITE = CrossAttentionSite((4, 4))
SPECS = {
    "lora": {"adapters": {"lora": {"rank": 2}}},
    "dora": {"adapters": {"dora": {"rank": 2}}},
    "ssf": {"adapters": {"ssf": {}}},
    "vpt": {"adapters": {"vpt": {"prompts": 3}}},
    "adaptformer": {"adapters": {"adaptformer": {"bottleneck": 4}}},
    "relational": {"adapters": {"relational": {}}},
    "relational_soft": {"adapters": {"relational": {"anchor": "soft"}}},
    "no_retrieval": {"adapters": {"relational": {"retrieval": False}}},
    "no_rewiring": {"adapters": {"relational": {"rewiring": False}}},
    "relational_lora": {"adapters": {"relational": {}, "lora": {"rank": 2}}},
    "relational_out": {"adapters": {"relational": {"zero_init": "projection"}}},
    "heads": {"train": "heads"},
    "dustbin": {"train": "dustbin"},
    "full": {"train": "all"},
}


def _model(seed=0):
    torch.manual_seed(seed)
    cfg = ModelConfig(tokens=SCENE.tokens, channels=SCENE.channels, dim=16, heads=2, depth=2)
    return TwoViewTransformer(cfg).eval()


def _batch():
    rng = np.random.default_rng(0)
    return observed(make_scenes(SCENE, 6, rng), 2, LowLight(), rng)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_identity_at_step_zero_then_live(name):
    model, batch = _model(), _batch()
    before = model(*batch.inputs())
    frozen = {n: p.detach().clone() for n, p in model.named_parameters()}
    adapted = build_method(model, SPECS[name], site=SITE)
    at_init = model(*batch.inputs())
    for key in before:
        torch.testing.assert_close(at_init[key], before[key], rtol=0, atol=1e-6)
    opt = torch.optim.SGD(adapted.trainable(), lr=0.1)
    for _ in range(2):  # a zero gate moves first, the weights behind it next
        opt.zero_grad()
        task_loss(model(*batch.inputs()), batch).backward()
        opt.step()
    assert (model(*batch.inputs())["match"] - before["match"]).abs().max() > 1e-4
    if SPECS[name].get("train") != "all":
        trainable = {n for n, p in model.named_parameters() if p.requires_grad}
        for n, p in model.named_parameters():
            if n in frozen and n not in trainable:
                torch.testing.assert_close(p, frozen[n], rtol=0, atol=0)


def test_both_zero_inits_have_the_same_parameters_and_one_trains_only_the_dustbin_bias():
    gate = build_method(_model(), SPECS["relational"], site=SITE)
    out = build_method(_model(), SPECS["relational_out"], site=SITE)
    assert gate.n_trainable() == out.n_trainable()
    for adapter in out.hooks["relational"].adapters.values():
        assert adapter.out.weight.abs().max() == 0 and torch.all(adapter.gate == 1)
    for adapter in gate.hooks["relational"].adapters.values():
        assert adapter.out.weight.abs().max() > 0 and torch.all(adapter.gate == 0)
    dustbin = build_method(_model(), SPECS["dustbin"], site=SITE)
    assert dustbin.trainable() == [dustbin.model.head_dustbin.bias]


def test_refinement_off_is_not_the_identity():
    model, batch = _model(), _batch()
    before = model(*batch.inputs())["match"]
    build_method(model, {"adapters": {"relational": {"refinement": False}}}, site=SITE)
    assert (model(*batch.inputs())["match"] - before).abs().max() > 1e-4


def test_lora_and_dora_come_from_peft_on_every_attention_linear():
    from peft.tuners.lora import LoraLayer

    model = _model()
    adapted = build_method(model, SPECS["dora"], site=SITE)
    wrapped = sorted(n for n, m in model.named_modules() if isinstance(m, LoraLayer))
    per_block = ["attn.proj", "attn.qkv", "cross_attn.proj", "cross_attn.projk"]
    per_block += ["cross_attn.projq", "cross_attn.projv"]
    assert wrapped == [f"dec_blocks.{i}.{s}" for i in range(2) for s in sorted(per_block)]
    # rank 2 on 16→48 (qkv) and five 16→16 Linears, plus DoRA's magnitude per output
    lora = 2 * ((16 + 48) + 5 * (16 + 16))
    assert adapted.n_trainable() == 2 * (lora + 48 + 5 * 16)
    assert all("lora_" in n for n, p in model.named_parameters() if p.requires_grad)


def test_trainable_state_round_trips():
    model = _model()
    adapted = build_method(model, SPECS["relational_lora"], site=SITE)
    for p in adapted.trainable():
        p.data.normal_()
    batch = _batch()
    want = model(*batch.inputs())["match"]
    fresh = build_method(_model(), SPECS["relational_lora"], site=SITE)
    fresh.load_trainable_state(adapted.trainable_state())
    torch.testing.assert_close(fresh.model(*batch.inputs())["match"], want)
    with pytest.raises(KeyError, match="lacks"):
        fresh.load_trainable_state({})


def _site(relation, grid=(3, 3), dim=4):
    B, N, _ = relation.shape
    g = torch.Generator().manual_seed(0)
    feats = [torch.randn(B, N, dim, generator=g) for _ in range(3)]
    return RelationSite(feats[0], feats[1], feats[2], relation, grid, grid)


def test_candidates_sit_around_the_consensus_flow():
    # on a 4×4 grid every query's frozen relation peaks one column to the right
    # (clamped at the last column): the flow is (1, 0) except in column 3, where it is 0
    N = 16
    relation = torch.zeros(1, N, N)
    for q in range(N):
        r, c = divmod(q, 4)
        relation[0, q, r * 4 + min(c + 1, 3)] = 1.0
    cfg = RelationalConfig(candidates=3)
    adapter = RelationalAdapter(cfg, query_dim=4, key_dim=4, out_dim=4)
    positions, offsets, _ = adapter.candidates(_site(relation, grid=(4, 4)))
    query = torch.tensor([1.0, 1.0])  # token 5: its 3×3 neighbours (columns 0-2) all flow (1, 0)
    stencil = torch.tensor([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    torch.testing.assert_close(positions[0, 5, :3], query + torch.tensor([1.0, 0.0]) + stencil)
    torch.testing.assert_close(positions[0, 5, 3], torch.tensor([2.0, 1.0]))  # raw anchor
    torch.testing.assert_close(offsets[0, 5, 3], torch.zeros(2))  # anchor = consensus centre
    # token 3 (row 0, column 3): flows 1, 1, 0 in its replicated window columns 2, 3, 3
    torch.testing.assert_close(positions[0, 3, 0], torch.tensor([3.0 + 1 / 3, 0.0]))
    no_retrieval = RelationalAdapter(
        RelationalConfig(candidates=3, retrieval=False), query_dim=4, key_dim=4, out_dim=4
    )
    positions, _, near = no_retrieval.candidates(_site(relation, grid=(4, 4)))
    torch.testing.assert_close(positions[0, 5], query + stencil)
    assert near is None


def test_rewired_relation_is_a_distribution_and_uniform_without_rewiring():
    relation = torch.softmax(torch.randn(2, 9, 9), dim=-1)
    site = _site(relation)
    for rewiring in (True, False):
        cfg = RelationalConfig(candidates=5, rewiring=rewiring)
        adapter = RelationalAdapter(cfg, query_dim=4, key_dim=4, out_dim=4)
        adapter(site)
        weights = adapter.last_weights
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, 9))
        if not rewiring:
            torch.testing.assert_close(weights, torch.full_like(weights, 1 / 6))


def test_agreement_counts_neighbours_that_share_the_flow():
    adapter = RelationalAdapter(RelationalConfig(), query_dim=4, key_dim=4, out_dim=4)
    near = torch.zeros(1, 9, 9, 2)
    near[:, :, :4] = torch.tensor([3.0, 0.0])  # 4 of each query's 9 neighbours moved by (3, 0)
    flows = torch.tensor([[0.0, 0.0], [3.0, 0.0]])  # candidate 0 stays, candidate 1 follows
    cells = torch.stack(torch.meshgrid(torch.arange(3), torch.arange(3), indexing="ij"), -1)
    pq = cells.flip(-1).reshape(1, 9, 1, 2).float()  # (x, y) of each query
    c = adapter.agreement(pq + flows, near, (3, 3))
    far = np.exp(-9.0)  # ‖(3, 0)‖² / τ² with τ = 1
    torch.testing.assert_close(c[0, :, 0], torch.full((9,), (5 + 4 * far) / 9))
    torch.testing.assert_close(c[0, :, 1], torch.full((9,), (4 + 5 * far) / 9))


class _Fake:
    def __init__(self):
        self.param = torch.nn.Parameter(torch.zeros(1))

    def trainable(self):
        return [self.param]

    def n_trainable(self):
        return 1

    def remove(self):
        pass


@pytest.mark.parametrize(
    ("peak", "chosen", "edge"),
    [(3e-3, 3e-3, False), (1e-4, 1e-3 / 9, False), (1.0, 1e-2 * (1e-2 / 3e-3) ** 3, True)],
)
def test_rate_grid_widens_past_an_edge_that_holds_the_best_rate(monkeypatch, peak, chosen, edge):
    from repro.r3_adapter import train

    monkeypatch.setattr(
        train, "adapt", lambda adapted, data, cfg, lr, seed: setattr(adapted, "lr_", lr)
    )
    monkeypatch.setattr(
        train, "validation_accuracy", lambda adapted, data: -abs(np.log(adapted.lr_ / peak))
    )
    cfg = train.AdaptConfig(lrs=(1e-3, 3e-3, 1e-2), widen=3)
    _, record = train.search_lr(_Fake, None, None, cfg, 0)
    assert record["lr"] == pytest.approx(chosen) and record["lr_on_edge"] is edge
    # a fixed rate (later seeds) is never widened
    _, fixed = train.search_lr(_Fake, None, None, cfg, 0, lrs=[1e-3])
    assert list(fixed["validation_accuracy"]) == [1e-3] and fixed["lr_on_edge"] is False
