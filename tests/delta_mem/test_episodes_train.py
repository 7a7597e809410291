"""Episodes, training (frozen backbone, LoRA budget) and the evaluation conditions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.delta_mem import evaluate, train
from repro.delta_mem.episodes import (
    BOS,
    FILLER0,
    KEY0,
    N_FILLERS,
    N_KEYS,
    N_VALUES,
    PAD,
    VALUE0,
    Q,
    episode,
    make_batch,
)
from repro.delta_mem.train import OptimConfig, TaskConfig

SPEC = {"d_model": 32, "heads": 2, "layers": 2, "mlp": 64, "max_positions": 40}


def test_overwrite_episodes_always_ask_for_the_reassigned_key():
    batch = make_batch(np.random.default_rng(0), 200, (1, 6), overwrite=True)
    for i in range(200):
        h = batch.history[i][batch.history_mask[i]].tolist()
        assert h[0] == BOS and len(h) % 2 == 1
        last_key, last_value = h[-2], h[-1]
        assert batch.query[i].tolist() == [BOS, Q, last_key]
        assert batch.answer[i] == last_value != batch.stale[i]
        earlier = dict(zip(h[1:-2:2], h[2:-2:2], strict=True))
        assert earlier[last_key] == batch.stale[i]  # the old value of that key
        full = batch.full[i].tolist()
        assert full[batch.full_last[i]] == last_key and full[batch.full_last[i] - 1] == Q


def test_plain_episodes_have_distinct_keys_and_the_answer_in_the_history():
    batch = make_batch(np.random.default_rng(1), 100, 4, min_turns=6)
    assert batch.history.shape[1] == 1 + 2 * 6 and not (batch.history == PAD).any()
    for i in range(100):
        h = batch.history[i].tolist()
        facts = {k: v for k, v in zip(h[1::2], h[2::2], strict=True) if KEY0 <= k < VALUE0}
        assert len(facts) == 4
        assert facts[int(batch.query[i, 2])] == batch.answer[i]
    assert (batch.stale == -1).all()


def _episode_turn_by_turn(rng, n_facts, overwrite, min_turns):
    """The generator as first written: one two-token draw per filler turn."""
    n_turns = max(min_turns, n_facts)
    keys = KEY0 + rng.choice(N_KEYS, size=n_facts, replace=False)
    values = VALUE0 + rng.integers(N_VALUES, size=n_facts)
    turns = [[FILLER0 + t for t in rng.integers(N_FILLERS, size=2)] for _ in range(n_turns)]
    slots = rng.choice(n_turns, size=n_facts, replace=False)
    for slot, k, v in zip(slots, keys, values, strict=True):
        turns[slot] = [k, v]
    target = int(rng.integers(n_facts))
    key, answer, stale = int(keys[target]), int(values[target]), -1
    if overwrite:
        stale = answer
        answer = VALUE0 + int((answer - VALUE0 + 1 + rng.integers(N_VALUES - 1)) % N_VALUES)
        turns.append([key, answer])
    return [BOS] + [int(t) for turn in turns for t in turn], key, answer, stale


@pytest.mark.parametrize(
    "n_facts,overwrite,min_turns", [(1, False, 6), (5, True, 6), (16, True, 4)]
)
def test_episodes_are_the_turn_by_turn_draws(n_facts, overwrite, min_turns):
    """Drawing every filler at once keeps each seed's episodes (and the stream after them)."""
    fast, slow = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(50):
        got = episode(fast, n_facts, overwrite, min_turns)
        assert got == _episode_turn_by_turn(slow, n_facts, overwrite, min_turns)
    assert fast.integers(1 << 30) == slow.integers(1 << 30)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny backbone, δ-Mem and LoRA trained for a few steps (runs, not quality)."""
    root = tmp_path_factory.mktemp("dm_train")
    task, optim = TaskConfig(), OptimConfig(steps=3, batch_size=8)
    train.pretrain_backbone(SPEC, task, optim, 0, root / "bb.pt", root / "bb.json", device="cpu")
    runs = {}
    for name, method in {"dm": {"kind": "delta_mem"}, "lora": {"kind": "lora", "rank": 6}}.items():
        train.train_method(
            name,
            method,
            SPEC,
            task,
            optim,
            0,
            root / "bb.pt",
            root / f"{name}.pt",
            root / f"{name}.json",
            device="cpu",
        )
        runs[name] = (method, root / f"{name}.pt", root / f"{name}.json")
    return root, runs


def test_training_leaves_the_backbone_frozen(trained):
    from repro.common.io import read_json

    root, runs = trained
    for _, _, record in runs.values():
        rec = read_json(record)
        assert rec["backbone_max_change"] == 0.0 and not rec["backbone_requires_grad"]
    base = train.load_backbone(SPEC, root / "bb.pt", "cpu")
    model, dm, trainable = train.attach(base, runs["dm"][0])
    trainable.load_state_dict(torch.load(runs["dm"][1], weights_only=True))
    batch = make_batch(np.random.default_rng(0), 4, 3)
    loss = train.answer_logits(model, batch, dm, device="cpu").logsumexp(-1).sum()
    loss.backward()
    assert all(p.grad is None for p in base.parameters() if not p.requires_grad)
    assert all(p.grad is not None for p in trainable.parameters())
    assert any(p.grad.abs().sum() > 0 for p in trainable.parameters())


def test_the_run_seed_draws_the_backbone_and_the_training_batches(tmp_path):
    """papers.delta_mem.seeds: a seed is a backbone (its initialisation and batches) and the
    methods' training batches on it; another seed gives other weights, each step apart."""
    task, optim = TaskConfig(), OptimConfig(steps=3, batch_size=8)

    def weights(step, seed):
        out, record = tmp_path / f"{step}{seed}.pt", tmp_path / "record.json"
        if step == "bb":
            train.pretrain_backbone(SPEC, task, optim, seed, out, record, device="cpu")
        else:  # δ-Mem on the same backbone whatever the seed
            bb = tmp_path / "bb0.pt"
            method = {"kind": "delta_mem"}
            train.train_method("dm", method, SPEC, task, optim, seed, bb, out, record, device="cpu")
        return torch.load(out, weights_only=True)

    for step in ("bb", "dm"):
        first, again, other = (weights(step, s) for s in (0, 0, 1000))
        assert all(torch.equal(first[k], again[k]) for k in first)
        assert not all(torch.equal(first[k], other[k]) for k in first)


def test_lora_budget_matches_delta_mem():
    """The embedded LoRA (rank 12 on q/o) holds δ-Mem's budget within 1%."""
    counts = {}
    for name, method in {"dm": {"kind": "delta_mem"}, "lora": {"kind": "lora", "rank": 12}}.items():
        base = train.TinyTransformer(
            train.backbone_config(
                {"d_model": 64, "heads": 2, "layers": 2, "mlp": 256, "max_positions": 40}
            )
        )
        model, _, _ = train.attach(base, method)
        counts[name] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert counts["dm"] == 6160
    assert abs(counts["lora"] - counts["dm"]) / counts["dm"] < 0.01


def test_evaluation_conditions(trained):
    root, runs = trained
    cfg = evaluate.EvalConfig(n_facts=(1, 3), episodes=20, overwrite_facts=(2,), batch_size=10)
    task = TaskConfig()
    rows = {}
    for name, (method, weights, _) in runs.items():
        rows[name] = evaluate.evaluate_seed(
            method, SPEC, task, cfg, 0, root / "bb.pt", weights, torch.device("cpu")
        )
    dm, lora = rows["dm"]["accuracy"], rows["lora"]["accuracy"]
    assert set(dm) == {
        "truncated",
        "full",
        "state_only",
        "zeroed",
        "other_state",
        "other_replay",
        "history_replay",
        "official_prompt",
    }
    assert set(lora) == {"truncated", "full", "lora_truncated", "lora_full"}
    assert dm["zeroed"] == dm["truncated"]  # zero state: exactly the base
    assert dm["truncated"] == lora["truncated"] and dm["full"] == lora["full"]
    assert set(rows["dm"]["overwrite"]["state_only"][2]) == {"new", "stale"}
    assert len(rows["dm"]["mean_beta_per_layer"]) == 2
    # the same episodes for every method and seed
    a = evaluate.episodes(cfg, task, 3, False)[0]
    b = evaluate.episodes(cfg, task, 3, False)[0]
    assert torch.equal(a.history, b.history)


def test_full_view_reads_the_whole_window_after_writing():
    base = train.TinyTransformer(train.backbone_config(SPEC)).eval()
    batch = make_batch(np.random.default_rng(2), 5, (1, 6))
    plain = train.full_logits(base, batch, device="cpu")
    model, dm, _ = train.attach(base, {"kind": "delta_mem"})
    with torch.no_grad():  # zero heads: writing the history changes no logit
        torch.testing.assert_close(
            train.answer_logits(model, batch, dm, device="cpu", full_view=True), plain
        )
        assert all(s.abs().sum() > 0 for s in dm.states())  # but the state was written


def _first_loss(root, name, method, optim):
    train.train_method(
        name,
        method,
        SPEC,
        TaskConfig(),
        optim,
        0,
        root / "bb.pt",
        root / f"{name}.pt",
        root / f"{name}.json",
        device="cpu",
    )
    from repro.common.io import read_json

    return read_json(root / f"{name}.json")["losses"][0]


def test_each_method_trains_on_its_own_view(trained):
    """Step 0 (zero Δ heads, LoRA B = 0: both are the base): δ-Mem's loss is the base's on the
    query window plus the regulariser, LoRA-SFT's the base's with the history in the window."""
    root, _ = trained
    task, optim = TaskConfig(), OptimConfig(steps=1, batch_size=8, write_sparsity_weight=0.5)
    batch = make_batch(np.random.default_rng(0), 8, task.train_facts, overwrite=task.overwrite)
    base = train.load_backbone(SPEC, root / "bb.pt", "cpu")
    with torch.no_grad():
        query = torch.nn.functional.cross_entropy(base(batch.query)[:, -1], batch.answer)
        full = torch.nn.functional.cross_entropy(
            train.full_logits(base, batch, device="cpu"), batch.answer
        )
    beta0 = torch.sigmoid(torch.tensor(-1.5))  # W_β = 0 at init: β = σ(b_β) everywhere
    penalty = float((beta0 - 0.05) ** 2)
    got = _first_loss(root, "dm1", {"kind": "delta_mem"}, optim)
    assert got == pytest.approx(float(query) + 0.5 * penalty, rel=1e-5)
    got = _first_loss(root, "lora1", {"kind": "lora", "rank": 6}, optim)
    assert got == pytest.approx(float(full), rel=1e-5)
    off = OptimConfig(steps=1, batch_size=8)  # weight 0: the regulariser is off
    assert _first_loss(root, "dm0", {"kind": "delta_mem"}, off) == pytest.approx(
        float(query), rel=1e-5
    )


def test_write_sparsity_pulls_mean_beta_to_its_target(trained):
    root, _ = trained
    betas = {}
    for weight in (0.0, 20.0):
        optim = OptimConfig(steps=40, batch_size=8, lr=3e-2, write_sparsity_weight=weight)
        _first_loss(root, f"w{weight}", {"kind": "delta_mem"}, optim)
        base = train.load_backbone(SPEC, root / "bb.pt", "cpu")
        model, dm, trainable = train.attach(base, {"kind": "delta_mem"})
        trainable.load_state_dict(torch.load(root / f"w{weight}.pt", weights_only=True))
        with torch.no_grad():
            train.answer_logits(
                model, make_batch(np.random.default_rng(5), 64, 3), dm, device="cpu"
            )
        betas[weight] = float(torch.stack([m.last_beta_mean for m in dm.memories]).mean())
    assert abs(betas[20.0] - 0.05) < 0.5 * abs(betas[0.0] - 0.05)
