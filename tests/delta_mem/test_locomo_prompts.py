"""δ-Mem's LoCoMo prompts (repro.delta_mem.locomo) written out in full, by hand, from the
official code (declare-lab/delta-Mem at 5cd5d91, deltamem/eval/locomo_protocol.py: the
OFFICIAL_* prompts, ``build_official_context_text`` and
``build_official_full_history_messages``) for the hand-made fixture, with a word-count
tokenizer; the token budgets sit exactly on the edges where one more or one fewer token
keeps or drops a turn. The prompt is what the model answers, so its text decides the score."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.delta_mem import locomo

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_tiny.json"

SYSTEM = (
    "You are a helpful, respectful and honest assistant whose job is to understand "
    "the following conversation and answer questions based on the conversation. "
    "If you don't know the answer to a question, please don't share false information."
)
QA = (
    "Based on the above conversations, write a short answer for the following question "
    "in a few words. Do not write complete and lengthy sentences. "
    "Answer with exact words from the conversations whenever possible.\n\n"
    "Question: "
)
START = (
    "Below is a conversation between two people: Ana and Ben. "
    "The conversation takes place over multiple days and the date of each conversation "
    "is wriiten at the beginning of the conversation.\n\n"
)
H1 = "DATE: 1:56 pm on 8 May, 2023\nCONVERSATION:\n"
T1A = 'Ana said, "I adopted a dog named Pixel yesterday!"\n\n'
T1B = (
    'Ben said, "Lovely. I started painting landscapes."\n'
    " and shared a photo of a painting of a lake.\n"
)
H2 = "DATE: 10:00 am on 20 June, 2023\nCONVERSATION:\n"
T2A = 'Ana said, "Pixel and I hiked Mount Tam, then went kayaking."\n\n'
T2B = 'Ben said, "I moved to Oslo in 2021 for work."\n\n'


def words(text: str) -> int:
    return len(text.split())


def _conversation():
    return locomo.load(str(FIXTURE))[0]


def _needs(question: str) -> dict[str, int]:
    """Per turn, in the order the official loop meets them (each session's turns last to
    first, sessions in order), the budget it needs: start + question + its session header
    and itself + the turns already kept must stay strictly below the budget."""
    fixed = words(START) + words(question)
    kept, needs = 0, {}
    for name, header, turn in (("1b", H1, T1B), ("1a", H1, T1A), ("2b", H2, T2B), ("2a", H2, T2A)):
        needs[name] = fixed + words(header + turn) + kept
        kept += words(turn)
    return needs


QUESTION = "What was adopted?"
CASES = {  # budget (as an offset from a turn's need) -> the official context
    ("2a", 1): START + "\n" + H2 + T2A + T2B + "\n" + H1 + T1A + T1B,
    ("2a", 0): START + "\n" + H2 + T2B + "\n" + H1 + T1A + T1B,
    ("2b", 0): START + "\n" + H2 + "\n" + H1 + T1A + T1B,
    ("1a", 0): START + "\n" + H1 + T1B,  # session 2 never reached
    ("1b", 0): START + "\n" + H1,  # the shorter turn before it is not tried
}


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: f"{c[0]}{c[1]:+d}")
def test_official_context_keeps_the_turns_the_budget_holds(case):
    turn, offset = case
    budget = _needs(QUESTION)[turn] + offset
    assert locomo.official_context(_conversation(), words, budget, QUESTION) == CASES[case]


def test_official_prompt_messages_reserve_fifty_tokens_for_the_answer():
    """Context window = the need of session 2's first turn + 50: that turn is dropped; one
    token more and it is kept."""
    question = _conversation().questions[3]
    prompt = QA + "Where did Ben move?"
    need = _needs(prompt)["2a"]
    for window, context in ((need + 50, CASES[("2a", 0)]), (need + 51, CASES[("2a", 1)])):
        messages = locomo.official_prompt_messages(_conversation(), question, words, window)
        assert messages == [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": context + "\n\n" + prompt},
        ]
    tight = locomo.official_prompt_messages(_conversation(), question, words, need + 51, 51)
    assert tight[1]["content"] == CASES[("2a", 0)] + "\n\n" + prompt


def test_question_messages_with_the_temporal_hint():
    conversation = _conversation()
    temporal, single_hop = conversation.questions[1], conversation.questions[3]
    hint = " Use DATE of CONVERSATION to answer with an approximate date."
    assert locomo.question_messages(temporal) == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QA + "When did Ana adopt Pixel?" + hint},
    ]
    assert locomo.question_messages(single_hop)[1]["content"] == QA + "Where did Ben move?"
