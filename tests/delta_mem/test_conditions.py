"""The evaluation conditions against per-episode references: a write that stops at the last
state, the history written once and reused, another episode's state in the window
(``other_replay``), and the evaluation episodes drawn from ``evaluation.seed``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.delta_mem import evaluate, train
from repro.delta_mem.backbone import BackboneConfig, TinyTransformer
from repro.delta_mem.episodes import PAD, VOCAB, make_batch
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.train import TaskConfig
from repro.delta_mem.wrapper import DeltaMem


def _memory_model(seed=0, saved=None):
    """A tiny backbone (its weights saved to ``saved`` first, if given) with δ-Mem whose
    heads and gates are random (so states steer)."""
    torch.manual_seed(seed)
    model = TinyTransformer(BackboneConfig(vocab=VOCAB, d_model=32, heads=2, mlp=64)).eval()
    if saved is not None:
        torch.save(model.state_dict(), saved)
    dm = DeltaMem(model, MemoryConfig())
    g = torch.Generator().manual_seed(seed + 1)
    for p in dm.parameters():
        p.data = torch.randn(p.shape, generator=g) * 0.5
    return model, dm


def test_write_stops_at_the_last_state_with_the_states_of_a_whole_pass():
    model, dm = _memory_model()
    batch = make_batch(np.random.default_rng(0), 6, (1, 6))
    with dm.phase(writes=True, mask=batch.history_mask):
        model(batch.history)
    whole = dm.states()
    calls = []
    hooks = [m.register_forward_hook(lambda *_: calls.append(1)) for m in (model.head, model.norm)]
    dm.reset()
    dm.write(model, batch.history, batch.history_mask)
    for hook in hooks:
        hook.remove()
    assert calls == []  # nothing after the last layer's write ran
    for got, want in zip(dm.states(), whole, strict=True):
        assert torch.equal(got, want)
    assert model(batch.query).shape[-1] == VOCAB  # a later forward runs to the end


def _one(batch, i, field):
    """Episode i's unpadded tokens (history or full window) as a batch of one."""
    tokens = getattr(batch, field)[i]
    mask = tokens != PAD
    return tokens[mask].unsqueeze(0)


def _reference(model, dm, batch, i, written_by):
    """Episode i's answer logits with the window history + query, read (writes off) from the
    state that episode ``written_by``'s history alone writes: one episode at a time, no
    padding, the whole forward."""
    dm.reset()
    with dm.phase(writes=True):
        model(_one(batch, written_by, "history"))
    with dm.phase(writes=False):
        return model(_one(batch, i, "full"))[0, -1]


def test_other_replay_and_history_replay_against_one_episode_at_a_time():
    model, dm = _memory_model(3)
    batch = make_batch(np.random.default_rng(4), 5, (1, 6), overwrite=0.5)
    with torch.no_grad():
        out = evaluate.memory_conditions(model, dm, batch, "cpu")
        fresh = train.answer_logits(model, batch, dm, device="cpu", full_view=True)
        for i in range(5):
            previous = (i - 1) % 5  # the state another episode wrote: the one before
            own = _reference(model, dm, batch, i, i)
            other = _reference(model, dm, batch, i, previous)
            torch.testing.assert_close(out["history_replay"][i], own, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(out["other_replay"][i], other, rtol=1e-5, atol=1e-5)
            assert (own - other).abs().max() > 1e-3  # the wrong state is a different read
    assert torch.equal(out["history_replay"], fresh)  # the reused states: a fresh write's


def _query_reference(model, dm, batch, i, written_by):
    """Episode i's answer logits from its query window alone, read (writes off) from the state
    that episode ``written_by``'s history writes (None: the zero state)."""
    dm.reset()
    if written_by is not None:
        with dm.phase(writes=True):
            model(_one(batch, written_by, "history"))
    with dm.phase(writes=False):
        return model(batch.query[i : i + 1])[0, -1]


def test_state_conditions_read_the_query_from_the_right_state_one_episode_at_a_time():
    """``state_only`` reads the episode's own state, ``other_state`` the previous episode's,
    ``zeroed`` none; each against a fresh single-episode write."""
    model, dm = _memory_model(6)
    batch = make_batch(np.random.default_rng(7), 5, (1, 6))
    with torch.no_grad():
        out = evaluate.memory_conditions(model, dm, batch, "cpu")
        for i in range(5):
            own = _query_reference(model, dm, batch, i, i)
            other = _query_reference(model, dm, batch, i, (i - 1) % 5)
            torch.testing.assert_close(out["state_only"][i], own, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(out["other_state"][i], other, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(
                out["zeroed"][i], _query_reference(model, dm, batch, i, None), rtol=1e-5, atol=1e-5
            )
            assert (own - other).abs().max() > 1e-3  # the other state is a different read


@pytest.mark.parametrize("field", ["history", "query", "answer"])
def test_the_evaluation_seed_draws_the_episodes(field):
    task = TaskConfig()
    a, b = (evaluate.EvalConfig(episodes=50, seed=s) for s in (20260, 1020260))
    same = evaluate.episodes(a, task, 4, False)[0]
    assert torch.equal(
        getattr(same, field), getattr(evaluate.episodes(a, task, 4, False)[0], field)
    )
    assert not torch.equal(
        getattr(same, field), getattr(evaluate.episodes(b, task, 4, False)[0], field)
    )


def test_the_evaluation_seed_changes_the_result(tmp_path):
    spec = {"d_model": 32, "heads": 2, "layers": 2, "mlp": 64, "max_positions": 40}
    _, dm = _memory_model(5, saved=tmp_path / "bb.pt")
    torch.save(dm.memories.state_dict(), tmp_path / "dm.pt")
    method = {"kind": "delta_mem"}

    def accuracy(seed):
        cfg = evaluate.EvalConfig(n_facts=(2,), episodes=200, overwrite_facts=(), seed=seed)
        row = evaluate.evaluate_seed(
            method, spec, TaskConfig(), cfg, 0, tmp_path / "bb.pt", tmp_path / "dm.pt", "cpu"
        )
        return row["accuracy"]

    assert accuracy(20260) == accuracy(20260)
    assert accuracy(20260) != accuracy(1020260)
