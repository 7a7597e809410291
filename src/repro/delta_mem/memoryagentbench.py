"""MemoryAgentBench (ai-hyz/MemoryAgentBench, parquet): episodes, clipping, official metrics.

Layout (HF dataset card, ``dataset_info``; official ``utils/eval_data_utils.py``): one parquet
file per split, ``data/<Split>-00000-of-00001.parquet``; one row per context with columns
``context`` (str), ``questions`` (list of str), ``answers`` (list, per question a list of
accepted str) and ``metadata`` (struct; ``metadata.source`` names the sub-dataset, e.g.
``ruler_qa1_197K``, ``factconsolidation_sh_6k``, ``icl_banking77_5900shot_balance``).

Metric per source (official README, "Clarification on Evaluation Metrics"): substring exact
match for eventqa / ruler_qa / factconsolidation, exact match for detective_qa and the ICL
sets, Recall@5 for recsys, an LLM judge (GPT-4o) for longmemeval and infbench_sum. Scoring
follows ``utils/eval_other_utils.py``: ``normalize_answer`` (lower case, no punctuation, no
articles), the best over the accepted answers, and the best of the raw output and its
first line / "Answer:" part (``parse_output``; the ICL sets score the parsed output only).
Recsys (needs the ``entity2id.json`` movie map) and the LLM-judged sources are NOT scored
here: their questions are kept in the predictions and left out of every average.

Not confirmed from the official sources (assumptions, see docs/delta_mem.md): which end of a
context the δ-Mem script keeps when clipping to 120k characters (we keep the last 120k
characters, as the official MemoryAgentBench agent keeps the last tokens when it truncates),
the prompt (a plain "context, question, answer" prompt, not the per-source templates of
``utils/templates.py``), and how the paper averages (here: mean per source, mean of the
sources per split, mean of the splits overall).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from repro.delta_mem.locomo import normalize

SPLITS = (
    "Accurate_Retrieval",
    "Test_Time_Learning",
    "Long_Range_Understanding",
    "Conflict_Resolution",
)
CONTEXT_CHARS = 120_000
# source prefix -> official metric (README); None: not scored here (LLM judge or recsys map)
METRICS = (
    ("eventqa", "substring_exact_match"),
    ("ruler_qa", "substring_exact_match"),
    ("factconsolidation", "substring_exact_match"),
    ("detective", "exact_match"),
    ("icl_", "exact_match"),
    ("recsys", None),
    ("longmemeval", None),
    ("infbench", None),
)
PROMPT = (
    "{context}\n\nAnswer the question based on the context above.\n\nQuestion: {question}\nAnswer:"
)


@dataclasses.dataclass(frozen=True)
class Question:
    source: str
    question: str
    answers: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Episode:
    split: str
    row: int
    source: str
    context: str  # clipped to CONTEXT_CHARS
    questions: list[Question]


def metric(source: str) -> str | None:
    for prefix, name in METRICS:
        if source.lower().startswith(prefix):
            return name
    raise ValueError(f"MemoryAgentBench source {source!r}: no official metric known")


def clip(context: str, chars: int = CONTEXT_CHARS) -> str:
    return context[-chars:] if len(context) > chars else context


def _answers(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(a) for a in value)


def load(path: str, split: str, chars: int = CONTEXT_CHARS) -> list[Episode]:
    """Every row of one split's parquet file as an episode (context clipped)."""
    import pandas as pd

    frame = pd.read_parquet(path, columns=["context", "questions", "answers", "metadata"])
    out = []
    for row, rec in enumerate(frame.itertuples(index=False)):
        source = str(rec.metadata["source"])
        questions = [
            Question(source, str(q), _answers(a))
            for q, a in zip(rec.questions, rec.answers, strict=True)
        ]
        out.append(Episode(split, row, source, clip(str(rec.context), chars), questions))
    return out


def shard(episodes: list[Episode], index: int, count: int) -> list[Episode]:
    """Rows ``index``, ``index + count``, ... of a split (an empty shard is fine)."""
    return [e for e in episodes if e.row % count == index]


def prompt(question: Question, context: str = "") -> str:
    return PROMPT.format(context=context, question=question.question)


def parse_output(text: str) -> str:
    """The official ``parse_output``: the text after "Answer:", else the first line."""
    for pattern in (r"(?:Answer:)(.*)(?:\n|$)", r"(?:^)(.*)(?:\n|$)"):
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match:
            return re.sub(r"^Answer:", "", match[1].strip(), flags=re.IGNORECASE).strip()
    return text


def _norm(text: str) -> str:
    return normalize(text, drop="a|an|the")


def exact_match(prediction: str, answers) -> float:
    return float(max(_norm(prediction) == _norm(a) for a in answers))


def substring_exact_match(prediction: str, answers) -> float:
    return float(max(_norm(a) in _norm(prediction) for a in answers))


def score(question: Question, prediction: str) -> float | None:
    name = metric(question.source)
    if name is None:
        return None
    fn = exact_match if name == "exact_match" else substring_exact_match
    parsed = parse_output(prediction)
    if question.source.lower().startswith("icl_"):
        return fn(parsed, question.answers)
    return max(fn(prediction, question.answers), fn(parsed, question.answers))


def summarise(splits: list[str], questions: list[Question], predictions: list[str]) -> dict:
    """Score per source, per split (mean of its sources) and overall (mean of the splits);
    ``n`` counts the scored questions, ``unscored`` the others."""
    scores = [score(q, p) for q, p in zip(questions, predictions, strict=True)]
    by_source: dict[tuple[str, str], list[float]] = {}
    for split, q, s in zip(splits, questions, scores, strict=True):
        if s is not None:
            by_source.setdefault((split, q.source), []).append(s)
    sources = {f"{sp}/{src}": float(np.mean(v)) for (sp, src), v in sorted(by_source.items())}
    per_split = {}
    for split in SPLITS:
        own = [float(np.mean(v)) for (sp, _), v in by_source.items() if sp == split]
        if own:
            per_split[split] = float(np.mean(own))
    overall = float(np.mean(list(per_split.values()))) if per_split else float("nan")
    n = sum(s is not None for s in scores)
    return {
        "overall": overall,
        "n": n,
        "unscored": len(scores) - n,
        "splits": per_split,
        "sources": sources,
    }
