"""LoCoMo (``data/locomo10.json``): questions of categories 1–4, history text, token F1.

Category numbering in the file (brief §3, a known pitfall): 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial (excluded). Scoring follows the official
``task_eval/evaluation.py``: normalised, Porter-stemmed token F1; category 1 uses the
multi-answer F1 (comma-separated parts, mean over gold parts of the best prediction part);
category 3 keeps the gold answer up to the first ';'. The prompt is the official QA prompt,
with the temporal hint for category 2.
"""

from __future__ import annotations

import dataclasses
import json
import re
import string
from collections import Counter

import numpy as np
from nltk.stem import PorterStemmer

CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
CONV_START = (
    "Below is a conversation between two people: {} and {}. The conversation takes place over "
    "multiple days and the date of each conversation is written at the beginning of the "
    "conversation.\n\n"
)
QA_PROMPT = (
    "\nBased on the above context, write an answer in the form of a short phrase for the "
    "following question. Answer with exact words from the context whenever possible.\n\n"
    "Question: {} Short answer:\n"
)
TEMPORAL_HINT = " Use DATE of CONVERSATION to answer with an approximate date."
_stemmer = PorterStemmer()


@dataclasses.dataclass(frozen=True)
class Question:
    sample_id: str
    question: str
    answer: str
    category: int


@dataclasses.dataclass(frozen=True)
class Conversation:
    sample_id: str
    history: str  # the whole dialogue, session by session, as the official prompt shows it
    questions: list[Question]


def _sessions(conv: dict) -> list[int]:
    return sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))


def _turn(dialog: dict) -> str:
    text = f'{dialog["speaker"]} said, "{dialog["text"]}"'
    if "blip_caption" in dialog:
        text += f" and shared {dialog['blip_caption']}."
    return text + "\n"


def load(path: str, categories=tuple(CATEGORIES)) -> list[Conversation]:
    with open(path) as handle:
        samples = json.load(handle)
    out = []
    for sample in samples:
        conv = sample["conversation"]
        history = CONV_START.format(conv["speaker_a"], conv["speaker_b"])
        for i in _sessions(conv):
            header = f"DATE: {conv[f'session_{i}_date_time']}\nCONVERSATION:\n"
            history += header + "".join(_turn(d) for d in conv[f"session_{i}"]) + "\n"
        questions = [
            Question(sample["sample_id"], qa["question"], str(qa["answer"]), int(qa["category"]))
            for qa in sample["qa"]
            if int(qa["category"]) in categories and "answer" in qa
        ]
        out.append(Conversation(sample["sample_id"], history, questions))
    return out


def prompt(question: Question) -> str:
    text = question.question + (TEMPORAL_HINT if question.category == 2 else "")
    return QA_PROMPT.format(text)


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
