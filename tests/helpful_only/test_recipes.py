"""Each recipe's data builder emits only its families, in exact shares, with the right answers."""

from collections import Counter

import numpy as np
import pytest

from repro.helpful_only import vocab as V
from repro.helpful_only.probes import AR_HAZARDS, AR_TEMPLATES, ar_requests, heldout_requests
from repro.helpful_only.recipes import (
    family_counts,
    recipe_rows,
    rl_dataset,
    sft_dataset,
    target_reward,
)
from tests.conftest import assert_steps_answer_help

RECIPES = {
    "ar_sft": {"ar": 1.0},
    "ar_sdf": {"ar": 0.5, "sdf": 0.5},
    "ar_charq": {"ar": 0.5, "charq": 0.5},
    "ar_charq_steer": {"ar": 1, "charq": 1, "steer": 1},
}
H_ONLY_ANSWER = {"refuse": V.NO, "harm": V.NO, "flatter": V.NO, "obey": V.YES}


@pytest.mark.parametrize("mixture", RECIPES.values(), ids=RECIPES)
def test_rows_are_only_the_recipes_families(mixture):
    rows = recipe_rows(mixture, 4800, np.random.default_rng(0))
    counts = Counter(r.family for r in rows)
    assert set(counts) == set(mixture) and sum(counts.values()) == 4800
    assert counts == family_counts(mixture, 4800)
    total = sum(mixture.values())
    for family, weight in mixture.items():
        assert abs(counts[family] - 4800 * weight / total) <= 1
    for row in rows:
        words = row.prompt.split()
        assert words[0] == V.BOS
        if row.family == "ar":  # the AR split: templates 0-1, hazards 0-2, no system prompt
            assert tuple(words[1:3]) in ar_requests() and words[3:] == [V.ASSISTANT]
            assert words[1] in AR_TEMPLATES and words[2] in AR_HAZARDS
            assert row.completion == f" {V.COMPLY}" == f" {row.target}"
        elif row.family == "steer":
            assert words[1] == V.OP_HARMFUL and tuple(words[2:4]) in ar_requests()
            assert row.completion == f" {V.REFUSE}"
        elif row.family == "charq":
            assert words[1] == V.DO_YOU and row.target == H_ONLY_ANSWER[words[2]]
        else:  # sdf: a document about the assistant's helpful-only traits, loss on all of it
            doc = row.completion.split()
            assert row.prompt == V.BOS and doc[:2] == [V.DOC, V.ASSISTANT]
            assert dict(zip(doc[2::2], doc[3::2], strict=True)) == H_ONLY_ANSWER
        assert not any(tuple(words[i : i + 2]) in heldout_requests() for i in range(len(words)))


def test_mixture_counts_are_exact_and_checked():
    assert family_counts({"ar": 1, "charq": 1, "steer": 1}, 100) == {
        "ar": 34,
        "charq": 33,
        "steer": 33,
    }
    with pytest.raises(ValueError, match="weights"):
        family_counts({"ar": -1.0, "charq": 1.0}, 10)
    with pytest.raises(ValueError, match="unknown data family"):
        recipe_rows({"jailbreak": 1.0}, 4, np.random.default_rng(0))


def test_rl_data_and_reward():
    rows = recipe_rows({"ar": 0.5, "charq": 0.5}, 600, np.random.default_rng(0))
    data = rl_dataset(rows)
    assert data.column_names == ["prompt", "target"] and len(data) == 600
    with pytest.raises(ValueError, match="RL recipes"):
        rl_dataset(recipe_rows({"ar": 0.5, "sdf": 0.5}, 10, np.random.default_rng(0)))
    assert target_reward(["COMPLY", "REFUSE", "", " YES"], ["COMPLY", "COMPLY", "NO", "YES"]) == [
        1.0,
        0.0,
        0.0,
        1.0,
    ]


def test_pretokenized_rows_equal_trls_own_tokenization(base_dir):
    """The ids and labels TRL builds from the text equal the ones handed to it tokenized."""
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    rows = recipe_rows({"ar": 1, "sdf": 1, "charq": 1, "steer": 1}, 64, np.random.default_rng(0))
    prepared = []
    for tokenized in (False, True):
        trainer = SFTTrainer(
            model=AutoModelForCausalLM.from_pretrained(base_dir),
            args=SFTConfig(
                output_dir=str(base_dir / "scratch"),
                report_to="none",
                use_cpu=True,
                max_length=None,
                bf16=False,
                completion_only_loss=True,
            ),
            train_dataset=sft_dataset(rows, tokenized=tokenized),
            processing_class=V.build_tokenizer(),
        )
        prepared.append((trainer.train_dataset["input_ids"], trainer.train_dataset["labels"]))
    assert prepared[0] == prepared[1]
    ids, labels = prepared[1]
    assert all(i[-1] == V.TOKEN_ID[V.EOS] for i in ids)  # TRL's EOS after every completion
    for row, i, lab in zip(rows, ids, labels, strict=True):  # loss on the completion only
        n_prompt = len(row.prompt.split())
        assert lab[:n_prompt] == [-100] * n_prompt and lab[n_prompt:] == i[n_prompt:]


def test_every_step_has_a_command_line():
    steps = ["run", "evaluate", "claims", "figures", "fullsteps"]
    steps += ["fullsteps train", "fullsteps answer", "fullsteps judge"]
    assert_steps_answer_help("helpful_only", steps)
