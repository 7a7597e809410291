"""LoCoMo (``data/locomo10.json``): questions of categories 1–4, δ-Mem's prompts, token F1.

Category numbering in the file (brief §3, a known pitfall): 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial (excluded). Scoring follows the official
``task_eval/evaluation.py``: normalised, Porter-stemmed token F1; category 1 uses the
multi-answer F1 (comma-separated parts, mean over gold parts of the best prediction part);
category 3 keeps the gold answer up to the first ';'.

Prompts are δ-Mem's own (declare-lab/delta-Mem at 5cd5d91, deltamem/eval/locomo_protocol.py):
its system prompt and QA prompt (37–55), the temporal hint for category 2
(``prepare_locomo_question``, 181–193), turns rendered as ``render_locomo_turn`` (246–251),
the history as one user message per non-empty session (``build_session_message``,
``build_locomo_history_messages``, 254–322), the single full prompt of the
``official_prompt`` mode (``build_official_context_text`` and
``build_official_full_history_messages``, 337–405, reproduced with their quirks: sessions
come out latest first, and turns are dropped within a session once the token budget is
spent) and the answer's canonical form (``canonicalize_locomo_prediction``, 219–239).
"""

from __future__ import annotations

import dataclasses
import json
import re
import string
from collections import Counter
from collections.abc import Callable

import numpy as np
from nltk.stem import PorterStemmer

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
SYSTEM_PROMPT = (
    "You are a helpful, respectful and honest assistant whose job is to understand "
    "the following conversation and answer questions based on the conversation. "
    "If you don't know the answer to a question, please don't share false information."
)
QA_PROMPT = (
    "Based on the above conversations, write a short answer for the following question "
    "in a few words. Do not write complete and lengthy sentences. "
    "Answer with exact words from the conversations whenever possible.\n\n"
    "Question: {}"
)
CONV_START = (  # "wriiten" as in the official prompt
    "Below is a conversation between two people: {} and {}. "
    "The conversation takes place over multiple days and the date of each conversation "
    "is wriiten at the beginning of the conversation.\n\n"
)
TEMPORAL_HINT = " Use DATE of CONVERSATION to answer with an approximate date."
ANSWER_RESERVE_TOKENS = 50
_stemmer = PorterStemmer()


@dataclasses.dataclass(frozen=True)
class Question:
    sample_id: str
    question: str
    answer: str
    category: int


@dataclasses.dataclass(frozen=True)
class Session:
    date: str
    dialogs: tuple[dict, ...]


@dataclasses.dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]  # in session order
    questions: list[Question]


def _session_numbers(conv: dict) -> list[int]:
    return sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))


def load(path: str, categories=tuple(CATEGORIES)) -> list[Conversation]:
    with open(path) as handle:
        samples = json.load(handle)
    out = []
    for sample in samples:
        conv = sample["conversation"]
        sessions = tuple(
            Session(conv[f"session_{i}_date_time"], tuple(conv[f"session_{i}"]))
            for i in _session_numbers(conv)
        )
        questions = [
            Question(sample["sample_id"], qa["question"], str(qa["answer"]), int(qa["category"]))
            for qa in sample["qa"]
            if int(qa["category"]) in categories and "answer" in qa
        ]
        speakers = (conv["speaker_a"], conv["speaker_b"])
        out.append(Conversation(sample["sample_id"], speakers, sessions, questions))
    return out


def turn_text(dialog: dict) -> str:
    text = f'{dialog["speaker"]} said, "{dialog["text"]}"\n'
    if dialog.get("blip_caption"):
        text += f" and shared {dialog['blip_caption']}."
    return text + "\n"


def question_prompt(question: Question) -> str:
    text = question.question + (TEMPORAL_HINT if question.category == 2 else "")
    return QA_PROMPT.format(text)


def history_messages(conversation: Conversation) -> list[dict]:
    """The system prompt, then one user message per non-empty session."""
    return [{"role": "system", "content": SYSTEM_PROMPT}] + [
        {
            "role": "user",
            "content": f"DATE: {s.date}\nCONVERSATION:\n"
            + "".join(map(turn_text, s.dialogs)).rstrip(),
        }
        for s in conversation.sessions
        if s.dialogs
    ]


def question_messages(question: Question) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question_prompt(question)},
    ]


def official_context(
    conversation: Conversation, count: Callable[[str], int], budget: int, question: str
) -> str:
    """The official full-history context under a token budget (``count``: tokens of a text)."""
    start = CONV_START.format(*conversation.speakers)
    fixed = count(start) + count(question)
    text, used = "", 0
    for session in conversation.sessions:
        header = f"DATE: {session.date}\nCONVERSATION:\n"
        full = False
        for dialog in reversed(session.dialogs):
            turn = turn_text(dialog)
            if fixed + count(header + turn) + used < budget:
                text, used = turn + text, used + count(turn)
            else:
                full = True
                break
        text = "\n" + header + text
        if full:
            break
    return start + text


def official_prompt_messages(
    conversation: Conversation,
    question: Question,
    count: Callable[[str], int],
    context_window: int,
    reserve: int = ANSWER_RESERVE_TOKENS,
) -> list[dict]:
    """The ``official_prompt`` mode's two messages: system prompt; context + question."""
    prompt = question_prompt(question)
    context = official_context(conversation, count, context_window - reserve, prompt)
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": context + "\n\n" + prompt},
    ]


def canonical(prediction: str) -> str:
    """The official canonical answer (categories 1–4): first non-empty line, lower case,
    option markers and "answer:" removed."""
    lines = [line.strip() for line in prediction.replace('\\"', "'").splitlines() if line.strip()]
    text = (lines[0] if lines else prediction.strip()).lower()
    for marker in ("(a)", "(b)", "a)", "b)", "answer:"):
        text = text.replace(marker, "")
    return text.strip()


def normalize(text: str, drop: str = "a|an|the|and") -> str:
    """Lower case, no punctuation, the words of ``drop`` removed, whitespace collapsed
    (MemoryAgentBench's ``normalize_answer`` is this with ``drop="a|an|the"``)."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return " ".join(re.sub(rf"\b({drop})\b", " ", text).split())


def token_f1(prediction: str, truth: str) -> float:
    pred = [_stemmer.stem(w) for w in normalize(prediction).split()]
    gold = [_stemmer.stem(w) for w in normalize(truth).split()]
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, truth: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in truth.split(",")]
    return float(np.mean([max(token_f1(p, g) for p in preds) for g in golds]))


def score(question: Question, prediction: str) -> float:
    if question.category == 1:
        return multi_answer_f1(prediction, question.answer)
    answer = question.answer.split(";")[0].strip() if question.category == 3 else question.answer
    return token_f1(prediction, answer)


def summarise(questions: list[Question], predictions: list[str]) -> dict:
    """F1 per category name and overall (questions weighted equally)."""
    scores = [score(q, p) for q, p in zip(questions, predictions, strict=True)]
    out = {"overall": float(np.mean(scores)) if scores else float("nan"), "n": len(scores)}
    for cat, name in CATEGORIES.items():
        own = [s for s, q in zip(scores, questions, strict=True) if q.category == cat]
        out[name] = float(np.mean(own)) if own else float("nan")
    return out
