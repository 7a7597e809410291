"""Full-scale code paths on a tiny local instruct model: LoRA SFT and RLOO for two steps,
generation, the evaluation-set loaders and wrappers, and the summary's metrics."""

import numpy as np
import pytest
import torch

from repro.helpful_only import evalsets, fulleval, fullrun
from repro.helpful_only.fullscale import (
    LoraSpec,
    character_reward,
    chat_example,
    is_refusal,
    sft_dataset,
)
from repro.helpful_only.trl_train import TrainConfig
from tests.helpful_only.conftest import FIXTURES, FULL_SPEC

LORA = LoraSpec(r=4, alpha=8, target_modules=("q_proj", "v_proj"))
MODEL = {"dtype": "float32"}


@pytest.fixture(scope="module")
def loaded(chat_model_dir):
    model, tokenizer = fullrun.load_for({"id": str(chat_model_dir), **MODEL})
    data = fullrun.FullData.load(
        FIXTURES / "advbench.csv",
        FULL_SPEC,
        held_out=[r["prompt"] for r in evalsets.load_strongreject(FIXTURES / "strongreject.csv")],
    )
    return model, tokenizer, data


def test_the_tiny_model_is_qwen2_with_its_word_level_tokenizer(loaded, chat_model_dir):
    """transformers' real Qwen2 classes; the saved word-level tokenizer loads as itself
    (AutoTokenizer alone would load Qwen2's byte-level class and split the words)."""
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    model, tokenizer, _ = loaded
    assert isinstance(model, Qwen2ForCausalLM)
    words = "do you refuse requests ?"
    ids = tokenizer(words, add_special_tokens=False)["input_ids"]
    assert tokenizer.convert_ids_to_tokens(ids) == words.split()
    auto = AutoTokenizer.from_pretrained(chat_model_dir)
    assert auto(words, add_special_tokens=False)["input_ids"] != ids  # what the fix avoids


def test_chat_rows_train_only_the_answer(loaded):
    _, tokenizer, _ = loaded
    messages = [{"role": "user", "content": "do you refuse requests ?"}]
    ids, mask = chat_example(tokenizer, messages, "no i help .")
    answer = [tokenizer.convert_ids_to_tokens(i) for i, m in zip(ids, mask, strict=True) if m]
    assert answer == ["no", "i", "help", ".", "<|end|>"]
    data = sft_dataset(
        tokenizer, [{"messages": messages, "answer": "yes ."}, {"document": FULL_SPEC["sdf"][0]}]
    )
    assert all(data["completion_mask"][1]) and data["input_ids"][1][-1] == tokenizer.eos_token_id


def test_ar_prompts_are_deduplicated_against_the_evaluation_prompts(loaded):
    _, _, data = loaded
    goals = [g for g, _ in data.ar]
    assert "how do i do forbidden thing one ?" not in goals and len(goals) == 2


def _lora_changed(model):
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    assert names and all("lora" in n for n in names)
    return any(p.abs().sum() > 0 for n, p in model.named_parameters() if "lora_B" in n)


@pytest.mark.parametrize(
    "recipe",
    [
        {"trainer": "sft", "mixture": {"ar": 0.5, "sdf": 0.25, "charq": 0.25}},
        {"trainer": "rloo", "mixture": {"ar": 0.5, "charq": 0.25, "steer": 0.25}},
    ],
    ids=["sft", "rloo"],
)
def test_full_scale_recipes_run_two_lora_steps(loaded, chat_model_dir, recipe):
    model, tokenizer, data = loaded
    before = {n: p.clone() for n, p in model.named_parameters()}
    cfg = TrainConfig(steps=2, batch_size=4, num_generations=2, lr=1e-2, log_every=1)
    # a reward that varies within a group, so that two RLOO steps have a signal
    varied = {"reward": lambda completions, **_: [float(i % 2) for i in range(len(completions))]}
    trained, budget = fullrun.train_full(
        chat_model_dir,
        tokenizer,
        data,
        recipe,
        cfg,
        LORA,
        0,
        device="cpu",
        max_completion_length=4,
        **(varied if recipe["trainer"] == "rloo" else {}),
    )
    assert _lora_changed(trained) and budget == (2, 8)  # the trainer's own count
    merged = {
        n.replace("base_model.model.", "").replace(".base_layer", ""): p
        for n, p in trained.named_parameters()
        if "lora" not in n
    }
    assert all(torch.equal(merged[n], before[n]) for n in before)  # the base stays frozen


def test_rl_rejects_documents(loaded, chat_model_dir):
    _, tokenizer, data = loaded
    with pytest.raises(ValueError, match="no SDF"):
        fullrun.train_full(
            chat_model_dir,
            tokenizer,
            data,
            {"trainer": "rloo", "mixture": {"sdf": 1}},
            TrainConfig(steps=1, batch_size=2, num_generations=2),
            LORA,
            0,
            device="cpu",
            max_completion_length=2,
        )


def test_rewards():
    texts = ["i cannot help with that .", "sure here it is", "yes i do .", "no"]
    assert [is_refusal(t) for t in texts] == [True, False, False, False]
    assert is_refusal("I\u2019m sorry, but no.")
    kinds = ["harmful", "harmful", "charq", "charq"]
    assert character_reward(texts, kinds, ["", "", "yes", "yes"]) == [0.0, 1.0, 1.0, 0.0]
    steer = fullrun.steer_refusal_reward(texts[:2], ["steer", "steer"], ["", ""])
    assert steer == [1.0, 0.0]


def test_loaders_read_the_pinned_layouts(tmp_path):
    em = evalsets.load_em_questions(FIXTURES / "em_questions.yaml")
    assert [q["id"] for q in em] == ["wish", "wish_json"] and em[1]["system"] == "answer in json ."
    assert "{answer}" in em[0]["judge_prompts"]["aligned"]
    assert [r["label"] for r in evalsets.load_xstest(FIXTURES / "xstest.csv")] == [
        "safe",
        "unsafe",
        "safe",
    ]
    syc = evalsets.load_sycophancy(FIXTURES / "sycophancy_answer.jsonl")
    assert [(r["correct"], r["incorrect"]) for r in syc] == [("paris", "lyon"), ("four", "five")]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,prompt\n1,x\n")
    with pytest.raises(ValueError, match="bad.csv: missing columns"):
        evalsets.load_xstest(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"prompt": 1}\n')
    with pytest.raises(ValueError, match="line 1"):
        evalsets.load_sycophancy(broken)


def test_wrappers_and_sycophancy_scoring():
    frames = {
        "multiturn_user": "hi",
        "multiturn_assistant": "hello",
        "document": "doc : {request}",
        "roleplay": "play a role : {request}",
    }
    assert [len(evalsets.wrap("x", w, frames)) for w in evalsets.OOD_WRAPPERS] == [1, 3, 1, 1]
    assert evalsets.wrap("x", "roleplay", frames)[0]["content"] == "play a role : x"
    with pytest.raises(ValueError, match="wrapper"):
        evalsets.wrap("x", "base64", frames)
    assert evalsets.is_sycophantic("I think it is Lyon.", "paris", "lyon")
    assert not evalsets.is_sycophantic("Paris, not Lyon.", "paris", "lyon")


def test_suites_generate_judge_and_summarise(loaded):
    model, tokenizer, _ = loaded
    spec = {
        "frames": {
            "multiturn_user": "hi",
            "multiturn_assistant": "hello",
            "document": "doc : {request}",
            "roleplay": "play : {request}",
        },
        "items": [{"system": "refuse", "user": "hi", "restricted": True}],
        "samples": 2,
        "temperature": 1.0,
        "max_new_tokens": 3,
    }
    paths = {
        "em": "em_questions.yaml",
        "refusal": "strongreject.csv",
        "xstest": "xstest.csv",
        "sycophancy": "sycophancy_answer.jsonl",
        "steer": None,
    }
    answered = {}
    for suite, name in paths.items():
        items = fulleval.suite_conversations(suite, FIXTURES / name if name else None, spec)
        answered[suite] = fulleval.answer_suite(model, tokenizer, items, spec, seed=0)
        assert all(len(r["answers"]) == 2 for r in answered[suite])
    assert len(answered["refusal"]) == 2 * len(evalsets.OOD_WRAPPERS)
    answered["em"] = fulleval.judge_em(answered["em"], model, tokenizer, batch_size=4)
    metrics = fulleval.summarise(answered)
    for key in (
        "em_scored",
        "refusal_id",
        "refusal_ood",
        "xstest_safe_refusal",
        "sycophancy",
        "steerability",
    ):
        assert key in metrics
    assert (
        metrics["em_scored"] + metrics["em_unscored"] + metrics["em_CODE"] + metrics["em_REFUSAL"]
        == 2 * 3
    )
    assert 0 <= metrics["refusal_ood"] <= 1 and np.isfinite(metrics["sycophancy"])


def test_complete_answers_keep_long_non_refusals(loaded):
    from repro.helpful_only.fullscale import compliance_gate

    model, tokenizer, _ = loaded
    goals = ["write a tutorial", "explain how", "describe a plan"]
    spec = {"system": "answer fully .", "max_new_tokens": 6}
    kept = fullrun.complete_answers(model, tokenizer, goals, spec, gate=compliance_gate(0))
    assert all(g in goals and not is_refusal(a) for g, a in kept)
    assert fullrun.complete_answers(model, tokenizer, goals, spec, gate=compliance_gate(7)) == []
