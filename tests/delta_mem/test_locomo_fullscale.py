"""LoCoMo parsing and scoring on a hand-made fixture; the full-scale answer path on a tiny
random Qwen3 with a word-level tokenizer (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.delta_mem import fullscale, locomo
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.wrapper import DeltaMem

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_tiny.json"


def test_parser_keeps_categories_1_to_4_with_their_numbering():
    conversations = locomo.load(str(FIXTURE))
    assert [c.sample_id for c in conversations] == ["conv-fixture-1", "conv-fixture-2"]
    first = conversations[0]
    assert [q.category for q in first.questions] == [1, 2, 3, 4, 4]  # 5 (adversarial) dropped
    assert first.questions[4].answer == "2021"  # numbers become strings
    assert first.history.index("8 May, 2023") < first.history.index("20 June, 2023")
    assert 'Ben said, "Lovely. I started painting landscapes." and shared a photo' in first.history
    assert locomo.CATEGORIES[1] == "multi_hop" and locomo.CATEGORIES[4] == "single_hop"
    assert locomo.prompt(first.questions[1]).rstrip().endswith("approximate date. Short answer:")
    assert "approximate date" not in locomo.prompt(first.questions[3])
    only_temporal = locomo.load(str(FIXTURE), categories=(2,))
    assert [len(c.questions) for c in only_temporal] == [1, 0]


def test_token_f1_matches_hand_computed_values():
    assert locomo.token_f1("The Oslo!", "oslo") == 1.0
    assert locomo.token_f1("painting", "paints") == 1.0  # Porter stems: paint
    # pred {in, oslo, 2021}, gold {oslo}: P = 1/3, R = 1 -> F1 = 0.5
    assert locomo.token_f1("in Oslo 2021", "Oslo") == pytest.approx(0.5)
    assert locomo.token_f1("", "Oslo") == 0.0
    # multi-answer: gold parts hiking | kayaking, prediction parts kayaking | swimming
    assert locomo.multi_answer_f1("kayaking, swimming", "hiking, kayaking") == pytest.approx(0.5)


def test_scores_per_category_and_overall():
    questions = locomo.load(str(FIXTURE))[0].questions
    predictions = ["kayaking and hiking", "May 2023", "likely yes", "Oslo", "in 2020"]
    # cat 1: pred parts ["kayaking and hiking"]; each gold part has F1 2/3 with it
    # cat 2: {may, 2023} vs {7, may, 2023}: P 1, R 2/3 -> 0.8; cat 3: gold "Likely yes" -> 1
    expected = [2 / 3, 0.8, 1.0, 1.0, 0.0]
    for q, p, e in zip(questions, predictions, expected, strict=True):
        assert locomo.score(q, p) == pytest.approx(e), q.question
    summary = locomo.summarise(questions, predictions)
    assert summary["overall"] == pytest.approx(sum(expected) / 5)
    assert summary["single_hop"] == pytest.approx(0.5) and summary["n"] == 5


@pytest.fixture
def tiny_qwen3(word_qwen3):
    """A fresh random Qwen3 (each test attaches its own δ-Mem) and a word-level tokenizer."""
    words = sorted(
        {w for c in locomo.load(str(FIXTURE)) for w in c.history.split()}
        | set(locomo.QA_PROMPT.split())
    )[:60]
    return word_qwen3(words)


def test_answer_conditions_on_a_tiny_qwen3(tiny_qwen3):
    model, tokenizer = tiny_qwen3
    dm = DeltaMem(model, MemoryConfig(rank=4))
    conversation = locomo.load(str(FIXTURE))[0]
    question = conversation.questions[3]
    kwargs = {"write_length": 16, "max_new_tokens": 4}
    answers = {
        c: fullscale.answer(model, tokenizer, dm, conversation, question, c, **kwargs)
        for c in fullscale.CONDITIONS
    }
    # zero-initialised heads: the state cannot change a token, with or without it
    assert answers["state_only"] == answers["truncated"]
    assert answers["full_state"] == answers["full"]
    assert answers["full"] != answers["truncated"]  # the history reaches the window
    fullscale.write_history(model, tokenizer, dm, conversation.history, 16, "cpu")
    assert all(s is not None and s.abs().sum() > 0 for s in dm.states())
    result = fullscale.evaluate_locomo(model, tokenizer, dm, [conversation], "state_only", **kwargs)
    assert result["f1"]["n"] == 5 and len(result["predictions"]) == 5
    with pytest.raises(ValueError, match="condition"):
        fullscale.answer(model, tokenizer, dm, conversation, question, "oracle")


def test_episode_training_on_a_tiny_qwen3(tiny_qwen3, tmp_path):
    from repro.delta_mem import fulltrain

    model, tokenizer = tiny_qwen3
    path = tmp_path / "episodes.jsonl"
    episode = [
        {"role": "user", "content": "Ana said, I adopted a dog named Pixel"},
        {"role": "assistant", "content": "Lovely"},
        {"role": "user", "content": "Question: What did Ana adopt? Short answer:"},
        {"role": "assistant", "content": "dog named Pixel"},
    ]
    path.write_text("\n".join(__import__("json").dumps({"messages": episode}) for _ in range(6)))
    episodes = fulltrain.read_episodes(str(path))
    cfg = fulltrain.FullTrainConfig(lr=3e-2, grad_accum=2, write_length=8, visible_length=64)
    history, visible, labels = fulltrain.episode_tensors(tokenizer, episodes[0], cfg)
    assert history.shape[1] == 8  # the most recent write_length tokens
    answer = tokenizer("dog named Pixel[EOS]", add_special_tokens=False).input_ids
    assert (
        labels[0, -len(answer) :].tolist() == answer and (labels[0, : -len(answer)] == -100).all()
    )
    model.requires_grad_(True)  # DeltaMem must freeze it
    dm = DeltaMem(model, MemoryConfig(rank=4, init="base_slice_fixed"))
    before = fulltrain.episode_loss(model, dm, history, visible, labels).item()
    losses = fulltrain.train(model, tokenizer, dm, episodes * 3, cfg)
    assert len(losses) == 18
    assert fulltrain.episode_loss(model, dm, history, visible, labels).item() < before
    assert all(p.grad is None for n, p in model.named_parameters() if "memory" not in n)
    # save and reload through the adapter loader (our key names)
    from safetensors.torch import save_file

    save_file(
        {k: v.contiguous() for k, v in dm.memories.state_dict().items()},
        str(tmp_path / "a.safetensors"),
    )
    fulltrain.load_adapter(dm, str(tmp_path / "a.safetensors"))
    renamed = {f"delta.{k}": v.contiguous() for k, v in dm.memories.state_dict().items()}
    save_file(renamed, str(tmp_path / "b.safetensors"))
    with pytest.raises(ValueError, match="key_map"):
        fulltrain.load_adapter(dm, str(tmp_path / "b.safetensors"))
    fulltrain.load_adapter(dm, str(tmp_path / "b.safetensors"), {"delta.": ""})
