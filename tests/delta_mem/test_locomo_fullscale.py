"""LoCoMo parsing, δ-Mem's prompts and scoring on a hand-made fixture; the full-scale paths
(one-pass ingestion, the four conditions, generation) on a tiny random Qwen3 with a
word-level tokenizer (no downloads)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
import torch

from repro.delta_mem import fullscale, generation, locomo
from repro.delta_mem.memory import MemoryConfig
from repro.delta_mem.wrapper import DeltaMem

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_tiny.json"
EPISODE = [  # one training episode: a fact in the history, its question and answer
    {"role": "user", "content": "Ana said, I adopted a dog named Pixel"},
    {"role": "assistant", "content": "Lovely"},
    {"role": "user", "content": "Question: What did Ana adopt? Short answer:"},
    {"role": "assistant", "content": "dog named Pixel"},
]


def _randomise(dm, seed=1):
    g = torch.Generator().manual_seed(seed)
    for p in dm.parameters():
        p.data = torch.randn(p.shape, generator=g) * 0.5


def test_parser_keeps_categories_1_to_4_with_their_numbering():
    conversations = locomo.load(str(FIXTURE))
    assert [c.sample_id for c in conversations] == ["conv-fixture-1", "conv-fixture-2"]
    first = conversations[0]
    assert first.speakers == ("Ana", "Ben")
    assert [s.date for s in first.sessions] == [
        "1:56 pm on 8 May, 2023",
        "10:00 am on 20 June, 2023",
    ]
    assert [q.category for q in first.questions] == [1, 2, 3, 4, 4]  # 5 (adversarial) dropped
    assert first.questions[4].answer == "2021"  # numbers become strings
    for conversation in conversations:  # each question names its conversation (answer rows)
        assert {q.sample_id for q in conversation.questions} == {conversation.sample_id}
    assert locomo.CATEGORIES[1] == "multi_hop" and locomo.CATEGORIES[4] == "single_hop"
    only_temporal = locomo.load(str(FIXTURE), categories=(2,))
    assert [len(c.questions) for c in only_temporal] == [1, 0]


def test_delta_mem_prompts_as_the_official_protocol_writes_them():
    first = locomo.load(str(FIXTURE))[0]
    history = locomo.history_messages(first)
    assert history[0] == {"role": "system", "content": locomo.SYSTEM_PROMPT}
    assert [m["role"] for m in history] == ["system", "user", "user"]
    assert history[1]["content"] == (
        'DATE: 1:56 pm on 8 May, 2023\nCONVERSATION:\nAna said, "I adopted a dog named Pixel '
        'yesterday!"\n\nBen said, "Lovely. I started painting landscapes."\n and shared a photo '
        "of a painting of a lake."
    )
    temporal = locomo.question_prompt(first.questions[1])
    assert temporal.startswith("Based on the above conversations, write a short answer")
    hint = " Use DATE of CONVERSATION to answer with an approximate date."
    assert temporal.endswith("Question: When did Ana adopt Pixel?" + hint)
    assert "approximate date" not in locomo.question_prompt(first.questions[3])
    assert locomo.canonical("\n  Answer: (a) Oslo\nmore text") == "oslo"


def test_official_context_order_and_budget():
    first = locomo.load(str(FIXTURE))[0]

    def words(text):
        return len(text.split())

    full = locomo.official_context(first, words, 10_000, "Q")
    assert full.startswith("Below is a conversation between two people: Ana and Ben.")
    # the official construction puts the latest session first, turns in order inside
    assert full.index("20 June") < full.index("8 May")
    assert full.index("I adopted a dog") < full.index("Lovely.")
    # a budget that holds session 1's last turn only: earlier turns are dropped, and the
    # turns of session 2 are never reached
    start = words(locomo.CONV_START.format("Ana", "Ben")) + 1
    last = locomo.turn_text(first.sessions[0].dialogs[-1])
    header = "DATE: 1:56 pm on 8 May, 2023\nCONVERSATION:\n"
    tight = locomo.official_context(first, words, start + words(header + last) + 1, "Q")
    assert "Lovely." in tight and "adopted" not in tight and "Oslo" not in tight
    messages = locomo.official_prompt_messages(first, first.questions[3], words, 10_000)
    prompt = locomo.question_prompt(first.questions[3])
    assert messages[0]["content"] == locomo.SYSTEM_PROMPT
    context = locomo.official_context(first, words, 10_000 - locomo.ANSWER_RESERVE_TOKENS, prompt)
    assert messages[1]["content"] == context + "\n\n" + prompt


def test_multi_answer_f1_averages_over_the_gold_parts_by_hand():
    """Mean over the gold parts of the best prediction part, with unequal part counts: over
    the predicted parts instead the numbers differ (1/3 and 5/6)."""
    # gold oslo 1, bergen 0 (three predicted parts, two gold)
    assert locomo.multi_answer_f1("oslo, paris, rome", "oslo, bergen") == pytest.approx(1 / 2)
    # gold red: F1("red car", "red") = 2/3; oslo: 1; blue sky: 0 -> 5/9
    assert locomo.multi_answer_f1("red car, oslo", "red, oslo, blue sky") == pytest.approx(5 / 9)


def test_canonical_answer_and_normalisation_by_hand():
    """The official canonical answer: first non-empty line, lower case, escaped quotes as
    apostrophes, option markers and "answer:" removed; commas vanish in normalisation."""
    assert locomo.canonical('(B) Answer: \\"Oslo\\"\nsecond line') == "'oslo'"
    assert locomo.canonical("a) Oslo") == "oslo" and locomo.canonical("b) Bergen") == "bergen"
    assert locomo.canonical("  \n  ") == ""
    assert locomo.normalize("Oslo,Bergen") == "oslobergen"


def test_score_splits_on_semicolons_only_in_category_3():
    q = locomo.Question("s", "when?", "May; June", 2)
    assert locomo.score(q, "May; June") == 1.0
    q3 = locomo.Question("s", "would she?", "Likely yes; because", 3)
    assert locomo.score(q3, "likely yes") == 1.0


def test_summary_of_no_question_and_of_an_absent_category_is_nan():
    q = locomo.Question("s", "where?", "Oslo", 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = locomo.summarise([], [])
        one = locomo.summarise([q], ["Oslo"])
    assert math.isnan(empty["overall"]) and empty["n"] == 0
    assert all(math.isnan(empty[name]) for name in locomo.CATEGORIES.values())
    assert one["single_hop"] == 1.0 and math.isnan(one["temporal"])
    with pytest.raises(ValueError):
        locomo.summarise([q], ["Oslo", "Bergen"])


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


def test_one_pass_ingestion_chunked_equals_one_shot(random_qwen3):
    """The official ingestion is one forward pass; pieces that attend to the earlier ones
    through the KV cache give the same state, separate windows (the old way) do not."""
    model = random_qwen3(max_position_embeddings=128)
    dm = DeltaMem(model, MemoryConfig(rank=4, chunk_size=8))
    _randomise(dm)
    ids = torch.randint(0, 64, (1, 45))
    finals = {}
    for chunk in (None, 16, 7, 1):
        generation.ingest(model, dm, ids, chunk=chunk)
        finals[chunk] = [s.clone() for s in dm.states()]
    for chunk in (16, 7, 1):
        for a, b in zip(finals[chunk], finals[None], strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    dm.reset()
    with torch.no_grad(), dm.phase(writes=True):
        for start in range(0, 45, 16):  # windows that cannot attend to each other
            model(input_ids=ids[:, start : start + 16])
    assert max((a - b).abs().max() for a, b in zip(dm.states(), finals[None], strict=True)) > 1e-3


@pytest.fixture
def tiny_qwen3(word_qwen3):
    """A fresh random Qwen3 (each test attaches its own δ-Mem) and a word-level tokenizer."""
    conversations = locomo.load(str(FIXTURE))
    text = " ".join(m["content"] for c in conversations for m in locomo.history_messages(c))
    words = sorted(set(text.split()) | set(locomo.QA_PROMPT.split()))[:120]
    return word_qwen3(words)


def test_conditions_on_a_tiny_qwen3(tiny_qwen3):
    model, tokenizer = tiny_qwen3
    dm = DeltaMem(model, MemoryConfig(rank=4))  # zero heads: the base model in every condition
    conversation = locomo.load(str(FIXTURE))[0]
    sampling = generation.Sampling(max_new_tokens=4)
    answers = {
        c: fullscale.answer_conversation(model, tokenizer, dm, conversation, c, sampling)
        for c in fullscale.CONDITIONS
    }
    assert answers["state_only"] == answers["truncated"]
    assert answers["history_replay"] != answers["truncated"]  # the history reaches the window
    again = fullscale.answer_conversation(
        model, tokenizer, dm, conversation, "official_prompt", sampling
    )
    assert again == answers["official_prompt"]  # seeded per question
    shifted = generation.Sampling(max_new_tokens=4, seed=sampling.seed + 1000)  # locomo.seed
    other = fullscale.answer_conversation(
        model, tokenizer, dm, conversation, "official_prompt", shifted
    )
    assert other != answers["official_prompt"]  # the config's seed draws the samples
    _randomise(dm)
    fullscale.answer_conversation(model, tokenizer, dm, conversation, "history_replay", sampling)
    replay = [s.clone() for s in dm.states()]  # reads with writes off leave the written state
    generation.ingest(
        model,
        dm,
        generation.encode_chat(
            tokenizer, locomo.history_messages(conversation), "cpu", generation_prompt=False
        ),
    )
    for a, b in zip(replay, dm.states(), strict=True):
        torch.testing.assert_close(a, b)
    fullscale.answer_conversation(model, tokenizer, dm, conversation, "official_prompt", sampling)
    assert all(s.abs().sum() > 0 for s in dm.states())  # the full prompt was written
    result = fullscale.evaluate_locomo(model, tokenizer, dm, [conversation], "state_only", sampling)
    assert result["f1"]["n"] == 5 and len(result["predictions"]) == 5
    with pytest.raises(ValueError, match="condition"):
        fullscale.answer_conversation(model, tokenizer, dm, conversation, "oracle", sampling)


def test_generation_gets_an_attention_mask_and_pad_id_zero(word_qwen3):
    model, tokenizer = word_qwen3(["a", "b"])
    tokenizer.pad_token_id = 0  # a valid id; "or eos" would replace it
    assert generation.pad_id(tokenizer) == 0
    dm = DeltaMem(model, MemoryConfig(rank=4))
    seen = {}
    original = model.generate

    def spy(**kwargs):
        seen.update(kwargs)
        return original(**kwargs)

    model.generate = spy
    ids = torch.tensor([[3, 4, 3]])
    generation.generate(
        model, tokenizer, dm, ids, generation.Sampling(max_new_tokens=2), seed=0, writes=False
    )
    assert torch.equal(seen["attention_mask"], torch.ones_like(ids)) and seen["pad_token_id"] == 0
    assert (seen["temperature"], seen["top_p"], seen["top_k"]) == (0.4, 0.9, 10)


def test_chat_templated_text_gets_no_second_bos(word_qwen3):
    from tokenizers import processors

    model, tokenizer = word_qwen3(["[BOS]", "user:", "hi", "assistant:"])
    bos = tokenizer.convert_tokens_to_ids("[BOS]")
    tokenizer.bos_token = "[BOS]"
    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single="[BOS] $A", special_tokens=[("[BOS]", bos)]
    )
    tokenizer.chat_template = (
        "{{ bos_token }} {% for m in messages %}{{ m['role'] }}: {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    assert tokenizer("hi").input_ids[0] == bos  # the tokenizer adds BOS by itself
    ids = generation.encode_chat(tokenizer, [{"role": "user", "content": "hi"}], "cpu")
    assert ids[0].tolist().count(bos) == 1 and ids[0, 0] == bos


# The generation-prompt ends of the released templates (Qwen3's tokenizer_config.json; SmolLM3
# sets its reasoning mode from the same variable): thinking off writes an empty think block.
QWEN3_THINKING = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n"
    "{% endif %}{% endif %}"
)
SMOLLM3_THINKING = (
    "{% if enable_thinking is defined and enable_thinking is false %}"
    "{% set reasoning_mode = '/no_think' %}{% else %}{% set reasoning_mode = '/think' %}"
    "{% endif %}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}"
    "{% if reasoning_mode == '/think' %}<|im_start|>assistant\n"
    "{% else %}<|im_start|>assistant\n<think>\n\n</think>\n{% endif %}{% endif %}"
)


@pytest.mark.parametrize("template", [QWEN3_THINKING, SMOLLM3_THINKING], ids=["qwen3", "smollm3"])
def test_chat_prompts_turn_thinking_off_in_generation_and_training(template):
    from repro.delta_mem import fulltrain
    from tests.delta_mem.conftest import word_tokenizer

    words = sorted({w for m in EPISODE for w in m["content"].split()} | {"user", "assistant"})
    specials = ["<|im_start|>", "<think>", "</think>"]
    tokenizer = word_tokenizer(words, eos="<|im_end|>", specials=specials)
    tokenizer.chat_template = template
    think, end = tokenizer.convert_tokens_to_ids(["<think>", "</think>"])
    ids = generation.encode_chat(tokenizer, EPISODE[:1], "cpu")[0].tolist()
    assert ids[-2:] == [think, end]  # the answer starts after an empty think block
    cfg = fulltrain.FullTrainConfig(write_length=64, visible_length=64)
    _, visible, labels = fulltrain.episode_tensors(tokenizer, EPISODE, cfg)
    prompt = visible[0, labels[0] == -100].tolist()  # the answer is trained after the same
    assert prompt[-2:] == [think, end]


def test_episode_training_on_a_tiny_qwen3(tiny_qwen3, tmp_path):
    from repro.delta_mem import fulltrain

    model, tokenizer = tiny_qwen3
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(__import__("json").dumps({"messages": EPISODE}) for _ in range(6)))
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
    before = fulltrain.episode_loss(model, dm, history, visible, labels, cfg).item()
    losses = fulltrain.train(model, tokenizer, dm, episodes * 3, cfg)
    assert len(losses) == 18
    assert fulltrain.episode_loss(model, dm, history, visible, labels, cfg).item() < before
    assert all(p.grad is None for n, p in model.named_parameters() if "memory" not in n)


def test_write_sparsity_is_the_official_penalty_on_the_last_forward(tiny_qwen3):
    """loss = CE + 0.01 · mean over layers of (mean β of the visible window − 0.05)²."""
    from repro.delta_mem import fulltrain

    model, tokenizer = tiny_qwen3
    dm = DeltaMem(model, MemoryConfig(rank=4))
    _randomise(dm)
    history, visible = torch.randint(3, 60, (1, 9)), torch.randint(3, 60, (1, 6))
    labels = visible.clone()
    off = fulltrain.FullTrainConfig(write_sparsity_weight=0.0)
    on = fulltrain.FullTrainConfig()
    ce = fulltrain.episode_loss(model, dm, history, visible, labels, off)
    written = [m.last_beta for m in dm.memories]  # from the visible pass (writes off)
    loss = fulltrain.episode_loss(model, dm, history, visible, labels, on)
    by_hand = torch.stack([(b.mean() - 0.05) ** 2 for b in written]).mean()
    torch.testing.assert_close(loss, ce + 0.01 * by_hand)
    assert written[0].shape[1] == visible.shape[1]  # not the write pass's β
    loss.backward()
    assert dm.memories[0].beta.bias.grad.abs().sum() > 0
